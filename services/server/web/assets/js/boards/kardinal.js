// Kardinal & König: the map drawn from the board data in game.options.board
// (sites, roads, countries, seals, alliances; custom boards too), the seat's
// hand, the display and the deck. A move is made by picking cards and
// clicking a site or a seal; a card then the deck or a display slot
// exchanges it; while refilling, the deck or a display slot draws.

import { s, h, t, svgRoot, seatName, andList, plural, createBoard, statusLine, SEAT_COLOURS } from './svg.js';

const KIND_ORDER = ['franconia_aragon', 'bavaria_burgundy', 'lotharingia_italy', 'england_swabia', 'france'];

function boardOf(game) {
  return (game && game.options && game.options.board) || { countries: [], card_kinds: [], sites: [], roads: [], alliances: [] };
}

// The engine's narration keeps these words small inside a name (services/kardinal/src/narrate.rs, site_name).
const SMALL = new Set(['am', 'an', 'and', 'da', 'de', 'del', 'della', 'der', 'des', 'di', 'du', 'im', 'la', 'le', 'les', 'of', 'the']);

// Names a site from its id as the engine's narration does (cluny -> Cluny,
// san-juan-de-la-pena -> San Juan de la Pena), so board and steps agree.
function title(id) {
  const text = String(id);
  const words = text.split(/[-_]/).filter(Boolean);
  if (!/^[a-z0-9_-]+$/.test(text) || !words.length) return text;
  return words.map((w, i) => (i > 0 && SMALL.has(w) ? w : w.charAt(0).toUpperCase() + w.slice(1))).join(' ');
}

// Slots as the narration says them: "the first display slot".
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
function ordinal(index) {
  return ORDINALS[index] || `${index + 1}th`;
}

function countryName(board, id) {
  const c = (board.countries || []).find((x) => x.id === id);
  return (c && c.name) || title(id);
}

function kindName(board, kind) {
  const k = (board.card_kinds || []).find((x) => x.id === kind);
  const countries = k ? k.countries : String(kind).split('_');
  return countries.map((c) => countryName(board, c)).join(' / ');
}

function kindClass(board, kind) {
  const i = KIND_ORDER.indexOf(kind);
  if (i >= 0) return `kk-k${i}`;
  const j = (board.card_kinds || []).findIndex((x) => x.id === kind);
  return `kk-k${Math.max(0, j) % 5}`;
}

function kindOfCountry(board, country) {
  const k = (board.card_kinds || []).find((x) => x.countries.includes(country));
  return k ? k.id : country;
}

function siteName(id) {
  return title(id);
}

function payment(board, cards) {
  if (cards.length === 2 && cards[0] === cards[1]) return `a joker of two ${kindName(board, cards[0])} cards`;
  return andList(cards.map((c) => kindName(board, c)));
}

function placementWords(board, pc) {
  const where = pc.piece === 'abbey'
    ? `an abbey at ${siteName(pc.site)} in ${countryName(board, pc.country)}`
    : `a counsellor on the seal of ${countryName(board, pc.country)}`;
  return `${where}, paying with ${payment(board, pc.paid_with || [])}`;
}

function sourceWords(board, game, take) {
  if (take === 'deck') return 'the top card of the deck';
  const slot = Number(String(take).replace('display_', ''));
  const d = game && game.view && (game.view.display || []).find((x) => x.slot === slot);
  return `${d && d.card ? kindName(board, d.card) : 'the card'} from the ${ordinal(slot)} display slot`;
}

export function describeMove(move, game) {
  const board = boardOf(game);
  switch (move && move.type) {
    case 'place': {
      const parts = move.pieces.map((pc) => placementWords(board, pc));
      return `Place ${parts.join('; then ')}`;
    }
    case 'draw_deck':
      return 'Draw the top card of the deck';
    case 'take_display':
      return `Take ${sourceWords(board, game, `display_${move.slot}`)}`;
    case 'exchange':
      return `Discard ${kindName(board, move.discard)} and take ${sourceWords(board, game, move.take)}`;
    case 'pass':
      return 'Pass: place nothing this turn';
    default:
      return JSON.stringify(move);
  }
}

function spell(m) {
  switch (m.type) {
    case 'place': {
      const seq = [];
      for (const pc of m.pieces) {
        for (const c of pc.paid_with) seq.push(`h:${c}`);
        seq.push(pc.piece === 'abbey' ? `site:${pc.site}` : `seal:${pc.country}`);
      }
      return seq;
    }
    case 'draw_deck':
      return ['src:deck'];
    case 'take_display':
      return [`src:display_${m.slot}`];
    case 'exchange':
      return [`h:${m.discard}`, `src:${m.take}`];
    case 'pass':
      return ['pass'];
    default:
      return [JSON.stringify(m)];
  }
}

// --- geometry -------------------------------------------------------------

// The land: each site's (and seal's) Voronoi cell, cut to a disc around it,
// in its country's colour; edges between countries are drawn as borders.
function regions(points, R) {
  const N = 20;
  return points.map((pt, i) => {
    let poly = [];
    for (let k = 0; k < N; k++) {
      const a = (k / N) * 2 * Math.PI;
      poly.push({ x: pt.x + R * Math.cos(a), y: pt.y + R * Math.sin(a), tag: -1 });
    }
    points.forEach((o, j) => {
      if (j === i || Math.abs(o.x - pt.x) > 2 * R || Math.abs(o.y - pt.y) > 2 * R) return;
      const dx = o.x - pt.x;
      const dy = o.y - pt.y;
      if (!dx && !dy) return;
      const mx = (o.x + pt.x) / 2;
      const my = (o.y + pt.y) / 2;
      const side = (q) => (q.x - mx) * dx + (q.y - my) * dy;
      const out = [];
      for (let k = 0; k < poly.length; k++) {
        const a = poly[k];
        const b = poly[(k + 1) % poly.length];
        const sa = side(a);
        const sb = side(b);
        const cut = () => {
          const u = sa / (sa - sb);
          return { x: a.x + u * (b.x - a.x), y: a.y + u * (b.y - a.y) };
        };
        if (sa <= 0 && sb <= 0) out.push(a);
        else if (sa <= 0) out.push(a, { ...cut(), tag: j });
        else if (sb <= 0) out.push({ ...cut(), tag: a.tag });
      }
      poly = out;
    });
    return poly;
  });
}

// Where to put a country's seal and name: a free spot near its sites.
function layout(board) {
  const sites = board.sites || [];
  const byCountry = new Map();
  for (const st of sites) {
    if (!byCountry.has(st.country)) byCountry.set(st.country, []);
    byCountry.get(st.country).push(st);
  }
  const taken = sites.map((st) => ({ x: st.x, y: st.y, r: 24 }));
  const roads = (board.roads || []).map(([a, b]) => [sites.find((x) => x.id === a), sites.find((x) => x.id === b)]).filter((r) => r[0] && r[1]);
  const segDist = (px, py, a, b) => {
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const l = dx * dx + dy * dy || 1;
    const u = Math.max(0, Math.min(1, ((px - a.x) * dx + (py - a.y) * dy) / l));
    return Math.hypot(px - a.x - u * dx, py - a.y - u * dy);
  };
  const place = (cx, cy, rx, ry, own) => {
    let best = null;
    for (let r = 0; r <= 110; r += 10) {
      for (let k = 0; k < (r ? 16 : 1); k++) {
        const a = (k / 16) * 2 * Math.PI;
        const x = cx + r * Math.cos(a);
        const y = cy + r * Math.sin(a) * 0.8;
        let clear = Infinity;
        for (const o of taken) clear = Math.min(clear, Math.max(Math.abs(x - o.x) - rx, Math.abs(y - o.y) * (rx / ry) - rx) - o.r);
        for (const [a1, b1] of roads) clear = Math.min(clear, segDist(x, y, a1, b1) - ry * 0.8);
        const near = own.reduce((m, st) => Math.min(m, Math.hypot(x - st.x, y - st.y)), Infinity);
        const score = Math.min(clear, 12) - r * 0.05 - Math.max(0, near - 90) * 0.3;
        if (!best || score > best.score) best = { x, y, score };
      }
    }
    return best;
  };
  const out = new Map();
  for (const c of board.countries || []) {
    const own = byCountry.get(c.id) || [];
    if (!own.length) continue;
    const cx = own.reduce((m, st) => m + st.x, 0) / own.length;
    const cy = own.reduce((m, st) => m + st.y, 0) / own.length;
    const seal = place(cx, cy, 38, 26, own);
    taken.push({ x: seal.x, y: seal.y, r: 40 });
    const label = place(cx, cy - 30, 45, 12, own);
    taken.push({ x: label.x, y: label.y, r: 30 });
    out.set(c.id, { seal, label, own });
  }
  const pts = sites.map((st) => ({ x: st.x, y: st.y, c: st.country }));
  for (const [c, g0] of out) pts.push({ x: g0.seal.x, y: g0.seal.y, c });
  const polys = regions(pts, 58);
  const lands = s('g', { 'aria-hidden': 'true' });
  const byC = new Map();
  polys.forEach((poly, i) => {
    if (poly.length < 3) return;
    const c = pts[i].c;
    byC.set(c, (byC.get(c) || '') + `M${poly.map((q) => `${q.x.toFixed(1)} ${q.y.toFixed(1)}`).join('L')}Z`);
  });
  for (const [c, d] of byC) lands.append(s('path', { d, class: `kk-land ${kindClass(board, kindOfCountry(board, c))}` }));
  let borders = '';
  polys.forEach((poly, i) => {
    poly.forEach((q, k) => {
      if (q.tag < 0 || pts[q.tag].c === pts[i].c) return;
      const r = poly[(k + 1) % poly.length];
      borders += `M${q.x.toFixed(1)} ${q.y.toFixed(1)}L${r.x.toFixed(1)} ${r.y.toFixed(1)}`;
    });
  });
  lands.append(s('path', { d: borders, class: 'kk-border' }));
  out.lands = lands;
  return out;
}

const layoutCache = new WeakMap();

// --- drawing ----------------------------------------------------------------

function card(board, kind, x, y, extra, label) {
  const g = s('g', { class: `kk-card ${kind ? kindClass(board, kind) : 'kk-back'} ${extra || ''}` });
  g.append(s('rect', { class: 'kk-face', x, y, width: 64, height: 88, rx: 7 }));
  if (kind) {
    const names = kindName(board, kind).split(' / ');
    names.forEach((n, i) => g.append(t(x + 32, y + 34 + i * 20 - (names.length - 1) * 8, n.length > 11 ? `${n.slice(0, 10)}.` : n, n.length > 9 ? 'kk-long' : null)));
  } else if (label !== undefined) {
    g.append(t(x + 32, y + 50, label));
  }
  if (!kind && label === 'empty') g.setAttribute('class', `kk-card kk-empty ${extra || ''}`);
  return g;
}

export function renderBoard(root, ctx) {
  createBoard(root, ctx, spell, (p) => draw(p, ctx.game), 'kardinal-board');
}

function draw(p, game) {
  const board = boardOf(game);
  const v = game.view;
  const wrap = p.wrap;
  const me = game.viewer_seat;
  const myView = (v.seats || []).find((x) => x.seat === me);
  let geo = layoutCache.get(board);
  if (!geo) {
    geo = layout(board);
    layoutCache.set(board, geo);
  }
  const sites = board.sites || [];
  const siteById = new Map(sites.map((st) => [st.id, st]));
  const picks = p.picks;

  // What the picks so far mean: cards chosen, and pieces already placed.
  const used = new Map(); // kind -> count picked
  const ghosts = [];
  let pending = [];
  for (const tok of picks) {
    if (tok.startsWith('h:')) {
      const k = tok.slice(2);
      used.set(k, (used.get(k) || 0) + 1);
      pending.push(k);
    } else if (tok.startsWith('site:') || tok.startsWith('seal:')) {
      ghosts.push(tok);
      pending = [];
    }
  }

  // Header.
  const turn = v.turn;
  let what = '';
  if (turn) {
    if (turn.step === 'draw') what = `draw ${plural(turn.cards_to_draw, 'card')}`;
    else if (turn.step === 'place_or_pass') what = 'last round: place pieces or pass';
    else what = 'place pieces or exchange a card';
  }
  wrap.append(h('p', { class: 'board-status' }, statusLine(game, turn ? turn.seat : null, what)));
  const hand0 = myView && myView.hand;
  if (p.interactive && !p.busy) {
    let hint;
    if (turn && turn.step === 'draw') hint = 'Click the deck or a display card to draw.';
    else if (!picks.length) {
      const types = new Set((p.ctx.legalMoves || []).map((m) => m.type));
      hint = types.has('place') ? 'Pick cards from your hand, then click a site (abbey) or a seal (counsellor).' : '';
      if (types.has('exchange')) hint += ' Or pick one card and click the deck or a display card to exchange it.';
      if (types.has('pass')) hint += ' Or pass.';
      hint = hint.trim();
    }
    else if (pending.length) {
      const more = (hand0 || []).some((k) => p.can(`h:${k}`));
      const exch = picks.length === 1 && (p.can('src:deck') || p.can('src:display_0') || p.can('src:display_1'));
      hint = `With ${payment(board, pending)}: click a highlighted site or seal${exch ? ', or the deck or a display card to exchange the card' : ''}${more ? ', or pick another card' : ''}.`;
    }
    else hint = 'Pick cards for a second piece, or click Place now.';
    if (hint) wrap.append(h('p', { class: 'board-hint' }, hint));
  }
  if (v.end_reason) wrap.append(h('p', { class: 'board-note' }, `The game ended: ${String(v.end_reason).replace(/_/g, ' ')}.`));

  // The map.
  const xs = sites.map((st) => st.x);
  const ys = sites.map((st) => st.y);
  for (const g0 of geo.values()) xs.push(g0.seal.x, g0.label.x), ys.push(g0.seal.y, g0.label.y);
  const x0 = Math.min(0, ...xs.map((x) => x - 60));
  const y0 = Math.min(0, ...ys.map((y) => y - 60));
  const x1 = Math.max(800, ...xs.map((x) => x + 60));
  const y1 = Math.max(720, ...ys.map((y) => y + 60));
  const svg = svgRoot(x1 - x0, y1 - y0, `Map of ${board.name || 'the board'}`, 'kk-map');
  svg.setAttribute('viewBox', `${x0} ${y0} ${x1 - x0} ${y1 - y0}`);
  svg.append(s('rect', { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: 'kk-sea' }));
  svg.append(geo.lands.cloneNode(true));

  // Alliances: a line between the two seals, with the alliance number.
  const alli = s('g', { class: 'kk-alliances' });
  for (const a of board.alliances || []) {
    const A = geo.get(a.countries[0]);
    const B = geo.get(a.countries[1]);
    if (!A || !B) continue;
    const mx = (A.seal.x + B.seal.x) / 2;
    const my = (A.seal.y + B.seal.y) / 2;
    alli.append(s('line', { x1: A.seal.x, y1: A.seal.y, x2: B.seal.x, y2: B.seal.y, class: `kk-alliance${a.by_sea ? ' kk-sea-line' : ''}` }));
    const label = `Alliance ${a.number}: ${countryName(board, a.countries[0])} and ${countryName(board, a.countries[1])}${a.by_sea ? ' (across the sea)' : ''}`;
    alli.append(s('g', { class: 'kk-anum', role: 'img', 'aria-label': label }, s('title', {}, label), s('circle', { cx: mx, cy: my, r: 10 }), t(mx, my + 4, String(a.number))));
  }

  // Roads.
  const roads = s('g', { class: 'kk-roads', 'aria-hidden': 'true' });
  for (const [a, b] of board.roads || []) {
    const A = siteById.get(a);
    const B = siteById.get(b);
    if (A && B) roads.append(s('line', { x1: A.x, y1: A.y, x2: B.x, y2: B.y, class: 'kk-road' }));
  }
  svg.append(roads);
  // Scored chains (final scoring, KK-26), along their roads.
  for (const sc of (v.final_scoring && v.final_scoring.chains) || []) {
    for (const ch of sc.chains || []) {
      const pts = ch.sites.map((id) => siteById.get(id)).filter(Boolean);
      if (pts.length < 2) continue;
      const label = `Chain of ${seatName(game, sc.seat)}: ${ch.sites.map(siteName).join(', ')}`;
      svg.append(s('polyline', { class: `kk-chain c${sc.seat % 5}`, points: pts.map((q) => `${q.x},${q.y}`).join(' '), role: 'img', 'aria-label': label }, s('title', {}, label)));
    }
  }
  svg.append(alli);

  // Country names.
  for (const c of board.countries || []) {
    const g0 = geo.get(c.id);
    if (g0) svg.append(t(g0.label.x, g0.label.y + 6, c.name || title(c.id), 'kk-cname', { 'aria-hidden': 'true' }));
  }

  // Sites and abbeys.
  const owner = new Map((v.abbeys || []).map((a) => [a.site, a.seat]));
  const live = new Set();
  if (p.interactive) for (const m of p.ctx.legalMoves || []) for (const tok of spell(m)) live.add(tok);
  for (const st of sites) {
    const g = s('g', { class: 'kk-site' });
    const own = owner.get(st.id);
    const ghost = ghosts.includes(`site:${st.id}`);
    g.append(s('circle', { class: 'kk-hit', cx: st.x, cy: st.y, r: 19 }), s('circle', { class: 'kk-dot', cx: st.x, cy: st.y, r: 13 }));
    if (own !== undefined) g.append(s('circle', { class: `kk-abbey c${own % 5}`, cx: st.x, cy: st.y, r: 9 }));
    if (ghost && me !== null && me !== undefined) g.append(s('circle', { class: `kk-abbey kk-ghost c${me % 5}`, cx: st.x, cy: st.y, r: 9 }));
    g.append(t(st.x, st.y + 25, siteName(st.id), 'kk-sname', { 'aria-hidden': 'true' }));
    const who = own !== undefined ? `abbey of ${seatName(game, own)} (${SEAT_COLOURS[own % 5]})` : 'free';
    const label = `${siteName(st.id)}, ${countryName(board, st.country)}: ${who}`;
    const token = `site:${st.id}`;
    if (live.has(token)) {
      const on = p.can(token);
      p.part(g, `site ${st.id}`, on ? `Place an abbey at ${siteName(st.id)}, ${countryName(board, st.country)}` : label, on, () => p.pick(token), ghost);
      if (on) g.append(s('circle', { class: 'kk-halo', cx: st.x, cy: st.y, r: 18 }));
    } else {
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', label);
    }
    svg.append(g);
  }

  // Seals and counsellors.
  for (const c of board.countries || []) {
    const g0 = geo.get(c.id);
    if (!g0) continue;
    const seal = (v.seals || []).find((x) => x.country === c.id) || { counsellors: [], abbeys: [], limit: 0 };
    const { x, y } = g0.seal;
    const g = s('g', { class: 'kk-seal' });
    g.append(s('rect', { class: 'kk-seal-bg', x: x - 36, y: y - 22, width: 72, height: 44, rx: 10 }));
    const total = seal.counsellors.reduce((a, b) => a + b, 0);
    g.append(t(x, y - 8, `seal ${total}/${seal.limit}`));
    const pawns = [];
    seal.counsellors.forEach((n, seat) => { for (let i = 0; i < n; i++) pawns.push(seat); });
    const ghost = ghosts.filter((tk) => tk === `seal:${c.id}`).length;
    for (let i = 0; i < ghost; i++) pawns.push(-1);
    const step = Math.min(11, 64 / Math.max(1, pawns.length));
    pawns.forEach((seat, i) => {
      const px = x - ((pawns.length - 1) * step) / 2 + i * step;
      const cls = seat < 0 ? `kk-pawn kk-ghost c${(me || 0) % 5}` : `kk-pawn c${seat % 5}`;
      g.append(s('path', { class: cls, d: `M${px - 5} ${y + 16}L${px - 3} ${y + 4}A4 4 0 1 1 ${px + 3} ${y + 4}L${px + 5} ${y + 16}Z` }));
    });
    const who = seal.counsellors.map((n, seat) => (n ? `${seatName(game, seat)} ${n}` : null)).filter(Boolean);
    const label = `Seal of ${countryName(board, c.id)}: ${who.length ? `counsellors ${andList(who)}` : 'no counsellor'}; at most ${seal.limit}`;
    const token = `seal:${c.id}`;
    if (live.has(token)) {
      const on = p.can(token);
      p.part(g, `seal ${c.id}`, on ? `Place a counsellor on the seal of ${countryName(board, c.id)}` : label, on, () => p.pick(token), ghost > 0);
    } else {
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', label);
    }
    svg.append(g);
  }
  const box = h('div', { class: 'board-scroll kk-map-box' }, svg);
  wrap.append(box);
  // A map wider than its box (phones) keeps its scroll across picks and
  // brings the parts that can be picked into view.
  if (box.scrollWidth > box.clientWidth + 1) {
    box.scrollLeft = p.mapScroll || 0;
    const on = [...svg.querySelectorAll('.kk-site.pick-on, .kk-seal.pick-on')].map((n) => n.getBoundingClientRect());
    const view = box.getBoundingClientRect();
    if (on.length && !on.some((r) => r.left >= view.left && r.right <= view.right)) {
      const mid = (Math.min(...on.map((r) => r.left)) + Math.max(...on.map((r) => r.right))) / 2;
      box.scrollLeft += mid - (view.left + view.right) / 2;
    }
    box.addEventListener('scroll', () => { p.mapScroll = box.scrollLeft; });
    p.mapScroll = box.scrollLeft;
  }

  // Controls: place now (when a longer move could follow), pass, cancel.
  const bar = p.controls((m) => `Place now: ${describeMove(m, game).replace(/^Place /, '')}`);
  if (live.has('pass')) bar.prepend(p.tokenPart(h('span', { class: 'board-btn' }, 'Pass'), 'pass', 'Pass: place nothing this turn', 'pass'));
  if (bar.childNodes.length) wrap.append(bar);

  // Cards: hand, display, deck, discard.
  const cards = h('div', { class: 'kk-cards' });
  const hand = myView && myView.hand;
  if (hand) {
    const hs = svgRoot(Math.max(1, hand.length) * 72 + 8, 104, 'Your hand', 'kk-hand');
    const seen = new Map();
    hand.forEach((kind, i) => {
      const n = seen.get(kind) || 0;
      seen.set(kind, n + 1);
      const chosen = n < (used.get(kind) || 0);
      const g = card(board, kind, 4 + i * 72, 12, chosen ? '' : 'kk-dim');
      const token = `h:${kind}`;
      if (p.interactive) {
        const on = !chosen && p.can(token);
        p.part(g, `hand ${i}`, `${chosen ? 'Picked: ' : on ? 'Pick ' : ''}${kindName(board, kind)} card from your hand`, on, () => p.pick(token), chosen);
      } else {
        g.setAttribute('role', 'img');
        g.setAttribute('aria-label', `${kindName(board, kind)} card`);
      }
      hs.append(g);
    });
    cards.append(h('div', { class: 'kk-group' }, h('h4', {}, `Your hand (${hand.length})`), hs));
  }
  const ds = svgRoot(2 * 72 + 8, 104, 'Display', 'kk-display');
  (v.display || []).forEach((d) => {
    const g = card(board, d.card, 4 + d.slot * 72, 12, '', d.card ? undefined : 'empty');
    const token = `src:display_${d.slot}`;
    const name = d.card ? kindName(board, d.card) : 'nothing';
    if (live.has(token)) {
      const exch = picks.length === 1 && picks[0].startsWith('h:');
      const on = p.can(token);
      p.part(g, `display ${d.slot}`, `${exch ? `Discard ${kindName(board, picks[0].slice(2))} and take` : 'Take'} ${name} from the ${ordinal(d.slot)} display slot`, on, () => p.pick(token));
    } else {
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', `Display slot ${d.slot + 1}: ${name}`);
    }
    ds.append(g);
  });
  cards.append(h('div', { class: 'kk-group' }, h('h4', {}, 'Display'), ds));
  const dk = svgRoot(80 + 72, 104, 'Deck and discard pile', 'kk-deck');
  {
    const g = card(board, null, 4, 12, '', `${v.deck_size}`);
    const token = 'src:deck';
    if (live.has(token)) {
      const exch = picks.length === 1 && picks[0].startsWith('h:');
      const on = p.can(token);
      p.part(g, 'deck', `${exch ? `Discard ${kindName(board, picks[0].slice(2))} and take` : 'Draw'} the top card of the deck (${plural(v.deck_size, 'card')})`, on, () => p.pick(token));
    } else {
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', `Deck: ${plural(v.deck_size, 'card')}`);
    }
    dk.append(g);
    const top = (v.discard || [])[v.discard.length - 1];
    const dg = card(board, top || null, 80, 12, '', top ? undefined : 'empty');
    dg.setAttribute('role', 'img');
    dg.setAttribute('aria-label', `Discard pile: ${plural((v.discard || []).length, 'card')}${top ? `, ${kindName(board, top)} on top` : ''}`);
    dk.append(dg);
  }
  cards.append(h('div', { class: 'kk-group' }, h('h4', {}, `Deck (${v.deck_size}) · discard (${(v.discard || []).length})`), dk));
  wrap.append(cards);

  // Seats.
  const table = h('table', { class: 'board-table kk-seats' });
  table.append(h('caption', {}, v.final_scoring ? 'Final scores' : 'Players'));
  table.append(h('thead', {}, h('tr', {}, ...['Seat', 'Cards', 'Abbeys left', 'Counsellors left', 'Score'].map((x) => h('th', { scope: 'col' }, x)))));
  const body = h('tbody');
  const winners = (game.status && game.status.result && game.status.result.winners) || [];
  for (const st of v.seats || []) {
    const tr = h('tr', { class: turn && turn.seat === st.seat ? 'to-act' : '' });
    tr.append(h('th', { scope: 'row' }, h('span', { class: `swatch c${st.seat % 5}` }), ` ${seatName(game, st.seat)}`,
      st.seat === me ? ' (you)' : '', st.seat === v.first_seat ? ' ●' : ''));
    tr.append(h('td', {}, st.hand && st.seat !== me ? st.hand.map((k) => kindName(board, k)).join(', ') : `${st.hand_size}`));
    tr.append(h('td', {}, `${st.abbeys_left}`), h('td', {}, `${st.counsellors_left}`));
    const won = winners.includes(st.seat) && game.status.state === 'finished';
    tr.append(h('td', { class: won ? 'winner' : '' }, `${st.score}${won ? ' ★' : ''}`));
    body.append(tr);
  }
  table.append(body);
  wrap.append(table);
  const fs = v.final_scoring;
  if (fs && fs.totals) {
    const ft = h('table', { class: 'board-table kk-final' });
    ft.append(h('caption', {}, 'How the scores were made'));
    ft.append(h('thead', {}, h('tr', {}, ...['Seat', 'Interim abbeys', 'Final abbeys', 'Alliances', 'Chains', 'Total', 'Pieces left'].map((x) => h('th', { scope: 'col' }, x)))));
    ft.append(h('tbody', {}, ...fs.totals.map((x) => h('tr', {}, h('th', { scope: 'row' }, seatName(game, x.seat)),
      ...[x.interim, x.abbeys, x.alliances, x.chains, x.total, x.unused_pieces].map((n) => h('td', {}, `${n}`))))));
    wrap.append(ft);
    const scored = (fs.alliances || []).filter((a) => a.points > 0)
      .map((a) => `alliance ${a.number} (${countryName(board, a.countries[0])}–${countryName(board, a.countries[1])}): ${andList(a.scorers.map((x) => seatName(game, x)))} ${a.points}`);
    if (scored.length) wrap.append(h('p', { class: 'board-note' }, `Alliances scored: ${scored.join('; ')}.`));
  }
  const notes = [`● holds the black token (first player).`, `Deck ran out ${plural(v.exhaustions || 0, 'time')}${v.last_round ? '; last round' : ''}.`];
  if (v.variant === 'dynamic') notes.push('Dynamic variant.');
  wrap.append(h('p', { class: 'board-note' }, notes.join(' ')));
}
