// Cardinal: the town grid with its cathedral, the buildings, the cardinal
// and the markers. A move is made by picking a building from the stock and
// clicking a cell (then the bonus marker on the first turn), or by clicking
// a cell for the cardinal.

import { s, h, t, svgRoot, seatName, andList, plural, createBoard, statusLine } from './svg.js';

// The names the engine's narration uses too (colour 0 to 3).
export const COLOUR_NAMES = ['red', 'blue', 'green', 'yellow'];
const SHAPES = { house: 'house', tower: 'tower', square: 'square' };
const C = 40; // cell size in SVG units

export function colourName(c) {
  return COLOUR_NAMES[c] || `colour ${c}`;
}

// Cells as the engine's narration names them: "(x, y)", x growing east and
// y north, the cathedral's nave at (0, 0); the grid's edges show x and y.
export function cellName(x, y) {
  return `(${x}, ${y})`;
}

function squareCells(m) {
  return m.orientation === 'vertical' ? [[m.x, m.y], [m.x, m.y + 1]] : [[m.x, m.y], [m.x + 1, m.y]];
}

export function describeMove(move, game) {
  if (!move) return '';
  if (move.type === 'build') {
    const what = `${colourName(move.colour)} ${SHAPES[move.shape] || move.shape}`;
    let out;
    if (move.shape === 'square') {
      const [a, b] = squareCells(move);
      out = `Build the ${what} on ${cellName(a[0], a[1])} and ${cellName(b[0], b[1])}`;
    } else {
      out = `Build the ${what} at ${cellName(move.x, move.y)}`;
    }
    if (move.bonus_colour !== undefined && move.bonus_colour !== null) {
      out += `, taking the bonus marker in ${colourName(move.bonus_colour)}`;
    }
    return out;
  }
  if (move.type === 'move_cardinal') return `Move the cardinal to ${cellName(move.x, move.y)}`;
  if (move.type === 'keep_cardinal') return 'Leave the cardinal where it stands';
  return JSON.stringify(move);
}

// The picks a move is made of.
function spell(m) {
  if (m.type === 'build') {
    const piece = m.shape === 'square' ? `b:square:${m.colour}:${m.orientation === 'vertical' ? 'v' : 'h'}` : `b:${m.shape}:${m.colour}`;
    const seq = [piece, `at:${m.x}:${m.y}`];
    if (m.bonus_colour !== undefined && m.bonus_colour !== null) seq.push(`bonus:${m.bonus_colour}`);
    return seq;
  }
  if (m.type === 'move_cardinal') return [`at:${m.x}:${m.y}`];
  if (m.type === 'keep_cardinal') return ['keep'];
  return [JSON.stringify(m)];
}

function pieceOf(token) {
  const [, shape, colour, o] = token.split(':');
  return { shape, colour: Number(colour), orientation: shape === 'square' ? (o === 'v' ? 'vertical' : 'horizontal') : null };
}

function pieceWords(pc) {
  const base = `${colourName(pc.colour)} ${pc.shape}`;
  if (pc.shape !== 'square') return base;
  return `${base}, ${pc.orientation === 'vertical' ? 'standing north–south' : 'lying east–west'}`;
}

// The drawing of one building's body at pixel box (x, y, w, hh).
function buildingShape(shape, colourCls, x, y, w, hh, extra) {
  const g = s('g', { class: `cd-bld ${colourCls} ${extra || ''}` });
  const m = 4;
  g.append(s('rect', { x: x + m, y: y + m, width: w - 2 * m, height: hh - 2 * m, rx: 4, class: 'cd-body' }));
  const cx = x + w / 2;
  const cy = y + hh / 2;
  if (shape === 'house') {
    g.append(s('path', { class: 'cd-glyph', d: `M${cx - 10} ${cy + 9}V${cy - 2}L${cx} ${cy - 11}L${cx + 10} ${cy - 2}V${cy + 9}Z` }));
  } else if (shape === 'tower') {
    g.append(s('path', { class: 'cd-glyph', d: `M${cx - 8} ${cy + 11}V${cy - 11}h4v4h4v-4h4v4h4v-4h-0v22Z` }));
  } else if (shape === 'square') {
    g.append(s('rect', { class: 'cd-glyph cd-plaza', x: x + 11, y: y + 11, width: w - 22, height: hh - 22, rx: 3 }));
  }
  return g;
}

function cellsOfBuilding(b) {
  return b.cells.map((c) => [c.x, c.y]);
}

export function renderBoard(root, ctx) {
  const game = ctx.game;
  const v = game.view;
  createBoard(root, ctx, spell, (p) => draw(p, game, v), 'cardinal-board');
}

function draw(p, game, v) {
  const wrap = p.wrap;
  const picks = p.picks;
  const piece = picks.length && picks[0].startsWith('b:') ? pieceOf(picks[0]) : null;
  const spot = picks.length > 1 && picks[1].startsWith('at:') ? picks[1].split(':').slice(1).map(Number) : null;
  const viewer = game.viewer_seat;
  const myTurn = p.interactive;

  // Header: whose turn, and what to do.
  let what = '';
  if (v.phase === 'build') what = 'build';
  else if (v.phase === 'cardinal') what = 'move the cardinal or leave it';
  let hint = '';
  if (myTurn && !p.busy) {
    if (v.phase === 'build') {
      if (!piece) hint = 'Pick a building below, then a highlighted cell.';
      else if (!spot) hint = `Now click a highlighted cell for the ${pieceWords(piece)}.`;
      else hint = 'Now choose the colour of your bonus marker.';
    } else if (v.phase === 'cardinal') {
      hint = 'Click a highlighted cell to move the cardinal, or leave it where it stands.';
    }
  }
  wrap.append(h('p', { class: 'board-status' }, statusLine(game, v.to_act, what)));
  if (hint) wrap.append(h('p', { class: 'board-hint' }, hint));

  // The grid's extent: the town, the cardinal and every cell a legal move names.
  const pts = [[v.cathedral.nave.x, v.cathedral.nave.y], [v.cathedral.tower.x, v.cathedral.tower.y]];
  for (const b of v.buildings) pts.push(...cellsOfBuilding(b));
  if (v.cardinal) pts.push([v.cardinal.x, v.cardinal.y]);
  const targets = new Map(); // "x:y" -> token usable there now or later
  for (const m of p.ctx.legalMoves || []) {
    if (!p.interactive) break;
    if (m.type === 'build') {
      const cells = m.shape === 'square' ? squareCells(m) : [[m.x, m.y]];
      pts.push(...cells);
      targets.set(`${m.x}:${m.y}`, `at:${m.x}:${m.y}`);
    } else if (m.type === 'move_cardinal') {
      pts.push([m.x, m.y]);
      targets.set(`${m.x}:${m.y}`, `at:${m.x}:${m.y}`);
    }
  }
  let minX = Math.min(...pts.map((q) => q[0])) - 1;
  let maxX = Math.max(...pts.map((q) => q[0])) + 1;
  let minY = Math.min(...pts.map((q) => q[1])) - 1;
  let maxY = Math.max(...pts.map((q) => q[1])) + 1;
  // At least 6 x 6 cells, centred on the town.
  while (maxX - minX < 5) (maxX - minX) % 2 ? minX-- : maxX++;
  while (maxY - minY < 5) (maxY - minY) % 2 ? minY-- : maxY++;
  const cols = maxX - minX + 1;
  const rows = maxY - minY + 1;
  const M = 24; // margin for labels
  const W = cols * C + 2 * M;
  const H = rows * C + 2 * M;
  const px = (x) => M + (x - minX) * C;
  const py = (y) => M + (maxY - y) * C;
  const svg = svgRoot(W, H, 'The town', 'cd-town');
  svg.append(s('rect', { x: M, y: M, width: cols * C, height: rows * C, class: 'cd-ground' }));
  const grid = s('g', { class: 'cd-grid' });
  for (let i = 0; i <= cols; i++) grid.append(s('line', { x1: M + i * C, y1: M, x2: M + i * C, y2: M + rows * C }));
  for (let j = 0; j <= rows; j++) grid.append(s('line', { x1: M, y1: M + j * C, x2: M + cols * C, y2: M + j * C }));
  svg.append(grid);
  const labels = s('g', { class: 'cd-label', 'aria-hidden': 'true' });
  for (let x = minX; x <= maxX; x++) labels.append(t(px(x) + C / 2, M - 7, `${x}`), t(px(x) + C / 2, H - 7, `${x}`));
  for (let y = minY; y <= maxY; y++) labels.append(t(M / 2, py(y) + C / 2 + 5, `${y}`), t(W - M / 2, py(y) + C / 2 + 5, `${y}`));

  svg.append(labels);

  // The cathedral: the nave counts as a house, the tower as a tower.
  const cat = s('g', { class: 'cd-cathedral', role: 'img', 'aria-label': `The cathedral: nave at ${cellName(v.cathedral.nave.x, v.cathedral.nave.y)}, tower at ${cellName(v.cathedral.tower.x, v.cathedral.tower.y)}` });
  {
    const n = v.cathedral.nave;
    const tw = v.cathedral.tower;
    const x0 = Math.min(px(n.x), px(tw.x));
    const y0 = Math.min(py(n.y), py(tw.y));
    const w = Math.abs(px(n.x) - px(tw.x)) + C;
    const hh = Math.abs(py(n.y) - py(tw.y)) + C;
    cat.append(s('rect', { x: x0 + 3, y: y0 + 3, width: w - 6, height: hh - 6, rx: 5, class: 'cd-body' }));
    const tx = px(tw.x) + C / 2;
    const ty = py(tw.y) + C / 2;
    cat.append(s('path', { class: 'cd-cross', d: `M${tx - 2} ${ty - 12}h4v7h7v4h-7v13h-4v-13h-7v-4h7z` }));
    const nx = px(n.x) + C / 2;
    const ny = py(n.y) + C / 2;
    cat.append(s('path', { class: 'cd-nave', d: `M${nx - 11} ${ny + 10}V${ny - 3}L${nx} ${ny - 12}L${nx + 11} ${ny - 3}V${ny + 10}Z` }));
  }
  svg.append(cat);

  // The buildings.
  const last = v.buildings.length - 1;
  v.buildings.forEach((b, i) => {
    const cells = cellsOfBuilding(b);
    const xs = cells.map((c) => px(c[0]));
    const ys = cells.map((c) => py(c[1]));
    const x0 = Math.min(...xs);
    const y0 = Math.min(...ys);
    const w = Math.max(...xs) - x0 + C;
    const hh = Math.max(...ys) - y0 + C;
    const g = buildingShape(b.shape, `c${b.colour}`, x0, y0, w, hh, i === last ? 'cd-last' : '');
    g.setAttribute('role', 'img');
    g.setAttribute('aria-label', `${colourName(b.colour)} ${b.shape} built by ${seatName(game, b.seat)} on ${andList(cells.map((c) => cellName(c[0], c[1])))}${i === last ? ' (last built)' : ''}`);
    svg.append(g);
  });

  // The cardinal.
  if (v.cardinal) {
    const cx = px(v.cardinal.x) + C / 2;
    const cy = py(v.cardinal.y) + C / 2;
    svg.append(s('g', { class: 'cd-cardinal', role: 'img', 'aria-label': `The cardinal at ${cellName(v.cardinal.x, v.cardinal.y)}` },
      s('path', { d: `M${cx - 13} ${cy + 12}L${cx} ${cy - 13}L${cx + 13} ${cy + 12}Z` }),
      s('circle', { cx, cy: cy - 9, r: 5 })));
  }

  // A ghost of the building being placed.
  if (piece && spot) {
    const cells = piece.shape === 'square' ? squareCells({ x: spot[0], y: spot[1], orientation: piece.orientation }) : [spot];
    const xs = cells.map((c) => px(c[0]));
    const ys = cells.map((c) => py(c[1]));
    const x0 = Math.min(...xs);
    const y0 = Math.min(...ys);
    svg.append(buildingShape(piece.shape, `c${piece.colour}`, x0, y0, Math.max(...xs) - x0 + C, Math.max(...ys) - y0 + C, 'cd-ghost'));
  }

  // Clickable cells: every cell some legal move names.
  if (p.interactive) {
    for (const [key, token] of targets) {
      const [x, y] = key.split(':').map(Number);
      const enabled = p.can(token);
      const chosen = spot && spot[0] === x && spot[1] === y;
      let label;
      if (v.phase === 'cardinal') label = `Move the cardinal to ${cellName(x, y)}`;
      else if (piece) {
        label = piece.shape === 'square'
          ? `Build the ${pieceWords(piece)} on ${andList(squareCells({ x, y, orientation: piece.orientation }).map((c) => cellName(c[0], c[1])))}`
          : `Build the ${pieceWords(piece)} at ${cellName(x, y)}`;
      } else label = `Cell ${cellName(x, y)}: pick a building first`;
      const g = s('g', { class: 'cd-cell' }, s('rect', { x: px(x) + 2, y: py(y) + 2, width: C - 4, height: C - 4, rx: 4 }));
      svg.append(p.tokenPart(g, `cell ${cellName(x, y)}`, label, token, chosen));
      if (!enabled && !chosen) g.classList.add('cd-cell-idle');
    }
  }
  wrap.append(h('div', { class: 'board-scroll cd-town-box' }, svg));

  // The stock: buildings left, and the picker's pieces.
  wrap.append(stock(p, game, v, piece));
  // Bonus markers (first turn), cardinal keeping, done/cancel.
  const bar = p.controls();
  if (p.interactive && (p.ctx.legalMoves || []).some((m) => m.type === 'keep_cardinal')) {
    bar.prepend(p.tokenPart(h('span', { class: 'board-btn' }, 'Leave the cardinal'), 'keep cardinal', 'Leave the cardinal where it stands', 'keep'));
  }
  if (bar.childNodes.length) wrap.append(bar);
  wrap.append(scores(p, game, v, spot));
}

// Buildings left per colour; the seat's own colours are pickable.
function stock(p, game, v, piece) {
  const box = h('div', { class: 'cd-stock' });
  const mine = new Set();
  const me = v.seats.find((x) => x.seat === game.viewer_seat);
  if (me) me.colours.forEach((c) => mine.add(c));
  if (v.fourth_colour !== undefined && v.fourth_colour !== null && me) mine.add(v.fourth_colour);
  const order = [...v.buildings_left].sort((a, b) => (mine.has(b.colour) ? 1 : 0) - (mine.has(a.colour) ? 1 : 0) || a.colour - b.colour);
  for (const left of order) {
    const c = left.colour;
    const owner = v.seats.filter((x) => x.colours.includes(c)).map((x) => seatName(game, x.seat));
    const whose = owner.length ? owner.join(', ') : 'anyone (fourth colour)';
    const row = h('div', { class: `cd-stock-row${mine.has(c) ? ' cd-mine' : ''}` });
    row.append(h('span', { class: 'cd-stock-name' }, h('span', { class: `swatch c${c}` }), ` ${colourName(c)}`, h('small', {}, ` · ${whose}`)));
    const items = [
      ['house', null, left.houses],
      ['tower', null, left.towers],
      ['square', 'horizontal', left.squares],
      ['square', 'vertical', left.squares],
    ];
    const svg = svgRoot(4 * 58, 50, `${colourName(c)} buildings left`, 'cd-stock-svg');
    items.forEach(([shape, o, n], i) => {
      const token = shape === 'square' ? `b:square:${c}:${o === 'vertical' ? 'v' : 'h'}` : `b:${shape}:${c}`;
      const x = i * 58 + 4;
      const g = s('g', { class: 'cd-stock-item' });
      const w = shape === 'square' && o === 'horizontal' ? 44 : 24;
      const hh = shape === 'square' && o === 'vertical' ? 44 : 24;
      g.append(s('rect', { x, y: 1, width: 54, height: 48, rx: 6, class: 'cd-slot' }));
      const bx = x + 3 + (44 - w) / 2;
      const by = 3 + (44 - hh) / 2;
      const b = buildingShape(shape, `c${c}`, 0, 0, shape === 'square' ? (o === 'horizontal' ? 2 * C : C) : C, shape === 'square' && o === 'vertical' ? 2 * C : C, n ? '' : 'cd-empty');
      b.setAttribute('transform', `translate(${bx} ${by}) scale(${w / (shape === 'square' && o === 'horizontal' ? 2 * C : C)})`);
      g.append(b, t(x + 49, 46, `${n}`, 'cd-count', { 'text-anchor': 'end' }));
      const pc = { shape, colour: c, orientation: o };
      const selected = piece && piece.shape === shape && piece.colour === c && piece.orientation === o;
      if (p.interactive && mine.has(c)) {
        p.tokenPart(g, `stock ${colourName(c)} ${shape}${o ? ` ${o}` : ''}`, `${n ? 'Pick' : 'No'} ${pieceWords(pc)} (${n} left)`, token, selected);
      } else {
        g.setAttribute('role', 'img');
        g.setAttribute('aria-label', `${plural(n, `${colourName(c)} ${shape}`)} left`);
      }
      svg.append(g);
    });
    row.append(svg);
    box.append(row);
  }
  return box;
}

// Markers per seat, supply (the bonus marker is picked there), scores.
function scores(p, game, v, spot) {
  const box = h('div', { class: 'cd-scores' });
  const sc = v.scoring || { seats: [], winners: [] };
  const table = h('table', { class: 'board-table' });
  table.append(h('caption', {}, sc.provisional === false ? 'Final scores' : 'Markers and scores so far'));
  const head = h('tr', {}, h('th', { scope: 'col' }, 'Seat'));
  for (let c = 0; c < 4; c++) head.append(h('th', { scope: 'col' }, h('span', { class: `swatch c${c}` }), ` ${colourName(c)}`));
  head.append(h('th', { scope: 'col' }, 'Total'));
  table.append(h('thead', {}, head));
  const body = h('tbody');
  for (const seat of v.seats) {
    const score = sc.seats.find((x) => x.seat === seat.seat);
    const tr = h('tr', { class: seat.seat === v.to_act ? 'to-act' : '' });
    const name = `${seatName(game, seat.seat)}${seat.seat === game.viewer_seat ? ' (you)' : ''}`;
    tr.append(h('th', { scope: 'row' }, name, h('br'), ...seat.colours.map((c) => h('span', { class: `swatch c${c}`, title: colourName(c) }))));
    for (let c = 0; c < 4; c++) {
      const taken = (seat.markers_taken.find((m) => m.colour === c) || { count: 0 }).count;
      tr.append(h('td', {}, `${taken}`));
    }
    const won = sc.winners && sc.winners.includes(seat.seat) && sc.provisional === false;
    const dbl = score && score.doubled_colour !== undefined && score.doubled_colour !== null ? score.doubled_colour : null;
    tr.append(h('td', { class: won ? 'winner' : '' }, score ? `${score.total}${won ? ' ★' : ''}` : '–',
      dbl !== null ? h('small', { class: 'doubled' }, h('br'), `${colourName(dbl)} ×2`) : ''));
    body.append(tr);
  }
  const supply = h('tr', { class: 'cd-supply' }, h('th', { scope: 'row' }, 'Supply'));
  for (let c = 0; c < 4; c++) {
    const n = (v.supply.find((m) => m.colour === c) || { count: 0 }).count;
    const cell = h('td');
    const token = `bonus:${c}`;
    if (p.interactive && spot && p.can(token)) {
      cell.append(p.tokenPart(h('span', { class: 'board-btn cd-bonus' }, h('span', { class: `swatch c${c}` }), ` ${n}`), `bonus ${colourName(c)}`, `Take the bonus marker in ${colourName(c)} (${n} in the supply)`, token));
    } else cell.append(`${n}`);
    supply.append(cell);
  }
  supply.append(h('td'));
  body.append(supply);
  table.append(body);
  box.append(table);
  if (v.last_built) {
    box.append(h('p', { class: 'board-note' }, `Last built: a ${colourName(v.last_built.colour)} ${v.last_built.shape}; the next building must differ in shape and colour.`));
  }
  box.append(h('p', { class: 'board-note' }, 'Cells are named (x, y): x along the top and bottom, y along the sides; the cathedral\'s nave is (0, 0).'));
  if (sc.provisional !== false) box.append(h('p', { class: 'board-note' }, 'Totals count the own colours still in the supply and double the best colour.'));
  return box;
}
