// Battle 13: four seats around the table, the seat's own knights (others as
// backs with counts, the servant's face up once public), the tournament in
// progress, the bids, tournaments won and crowns. Click a knight to play it;
// bids, the favoured family and the Chaos card are parts below the table.

import { s, h, t, svgRoot, seatName, andList, plural, createBoard, statusLine } from './svg.js';

const FAMILIES = ['eagle', 'wolf', 'dragon', 'lion'];
const FAMILY_NAMES = { eagle: 'Eagle', wolf: 'Wolf', dragon: 'Dragon', lion: 'Lion', neutral: 'Neutral' };
const WEAPONS = [6, 9, 12, 15, 18, 21, 25];
const TOURNAMENTS = [7, 8, 9, 10, 11, 12, 13];

function famName(f) {
  return FAMILY_NAMES[f] || String(f);
}

function knightName(k) {
  return `${famName(k.family)} ${k.strength}`;
}

function bidWords(card) {
  if (!card) return 'pass';
  if (card.kind === 'family') return `the ${famName(card.family)} family card`;
  if (card.kind === 'weapons') return `the weapons card ${card.value === 25 ? '25+' : card.value}`;
  if (card.kind === 'tournaments') return `the tournaments card ${card.value}`;
  return JSON.stringify(card);
}

function bidShort(card) {
  if (!card) return 'pass';
  if (card.kind === 'family') return famName(card.family);
  if (card.kind === 'weapons') return `weapons ${card.value === 25 ? '25+' : card.value}`;
  return `${card.value} tournaments`;
}

function campName(game, camp) {
  return `${seatName(game, camp)} & ${seatName(game, camp + 2)}`;
}

export function describeMove(move, game) {
  const v = game && game.view;
  switch (move && move.type) {
    case 'play': {
      const turn = v && v.turn;
      if (turn && turn.decision === 'play_for_servant' && turn.for_seat !== turn.seat) {
        return `Play ${seatName(game, turn.for_seat)}'s ${knightName(move.knight)}`;
      }
      return `Play the ${knightName(move.knight)}`;
    }
    case 'bid':
      return `Lay ${bidWords(move.card)}`;
    case 'pass':
      return 'Pass';
    case 'choose_family':
      return move.family === 'neutral' ? 'Choose Neutral: no favoured family' : `Favour the ${famName(move.family)} family`;
    case 'chaos':
      return 'Activate the Chaos card';
    case 'decline_chaos':
      return 'Decline the Chaos card';
    default:
      return JSON.stringify(move);
  }
}

function bidToken(card) {
  return card.kind === 'family' ? `bid:family:${card.family}` : `bid:${card.kind}:${card.value}`;
}

function spell(m) {
  switch (m.type) {
    case 'play':
      return [`k:${m.knight.family}:${m.knight.strength}`];
    case 'bid':
      return [bidToken(m.card)];
    case 'pass':
      return ['pass'];
    case 'choose_family':
      return [`fam:${m.family}`];
    case 'chaos':
      return ['chaos'];
    case 'decline_chaos':
      return ['decline'];
    default:
      return [JSON.stringify(m)];
  }
}

// One knight, face up, at (x, y) of size w x hh.
function knight(k, x, y, w, hh, extra) {
  const g = s('g', { class: `bt-card bt-${k.family} ${extra || ''}` });
  g.append(s('rect', { class: 'bt-face', x, y, width: w, height: hh, rx: 6 }));
  const band = Math.min(16, hh * 0.28);
  g.append(s('rect', { class: 'bt-band', x: x + 2, y: y + 2, width: w - 4, height: band, rx: 4 }));
  g.append(s('text', { class: 'bt-fam', x: x + w / 2, y: y + band - 3.5, 'text-anchor': 'middle' }, w < 50 ? famName(k.family).charAt(0) : famName(k.family)));
  g.append(s('text', { class: 'bt-str', x: x + w / 2, y: y + band + (hh - band) / 2 + 8, 'text-anchor': 'middle' }, String(k.strength)));
  return g;
}

function back(x, y, w, hh, label) {
  const g = s('g', { class: 'bt-card bt-back' });
  g.append(s('rect', { class: 'bt-face', x, y, width: w, height: hh, rx: 6 }));
  if (label !== undefined) g.append(t(x + w / 2, y + hh / 2 + 5, label));
  return g;
}

export function renderBoard(root, ctx) {
  createBoard(root, ctx, spell, (p) => draw(p, ctx.game), 'battle13-board');
}

function draw(p, game) {
  const v = game.view;
  const j = v.joust;
  const wrap = p.wrap;
  const me = game.viewer_seat;
  const bottom = me === null || me === undefined ? 0 : me;
  const turn = v.turn;
  const contract = j.contract;

  // Header.
  const decisions = {
    open_bidding: 'open the bidding with a bid card',
    bid: 'lay a bid card or pass',
    choose_family: 'choose the favoured family',
    chaos: 'activate the Chaos card or decline',
    play: 'play a knight',
    play_for_servant: turn ? `play a knight for ${seatName(game, turn.for_seat)}` : '',
  };
  wrap.append(h('p', { class: 'board-status' }, statusLine(game, turn ? turn.seat : null, turn ? decisions[turn.decision] : '')));
  if (p.interactive && !p.busy && turn) {
    const hint = turn.decision === 'play' ? 'Click one of your highlighted knights.'
      : turn.decision === 'play_for_servant' ? `Click one of ${seatName(game, turn.for_seat)}'s highlighted knights.`
        : 'Choose below the table.';
    wrap.append(h('p', { class: 'board-hint' }, hint));
  }

  // The table.
  // A wide table, or a narrow one (phones) with the hand in two rows.
  const narrow = (wrap.parentNode && wrap.parentNode.clientWidth ? wrap.parentNode.clientWidth : 800) < 560;
  const W = narrow ? 420 : 800;
  const H = narrow ? 610 : 540;
  const handY = narrow ? [H - 176, H - 90] : [H - 86];
  const G = narrow
    ? { side: [8, 150, 44, 62, 44, 28, 20], top: [52, 30, 44, 29], nameY: [handY[0] - 44, 18, 108], cy: 250, dx: 122 }
    : { side: [14, 100, 58, 80, 58, 34, 28], top: [60, 38, 54, 40], nameY: [H - 146, 20, 44], cy: 245, dx: 150 };
  const svg = svgRoot(W, H, `Battle 13 table, joust ${j.number}`, 'bt-table');
  svg.append(s('rect', { class: 'bt-felt', x: 0, y: 0, width: W, height: H, rx: 24 }));
  const pos = (seat) => (seat - bottom + 4) % 4; // 0 bottom, 1 left, 2 top, 3 right
  const lastCall = new Map();
  for (const c of j.calls || []) lastCall.set(c.seat, c.card);
  const biddingOn = !contract && turn && (turn.decision === 'bid' || turn.decision === 'open_bidding');

  for (const hand of j.hands) {
    const seat = hand.seat;
    const where = pos(seat);
    const camp = seat % 2;
    const role = contract ? (contract.master === seat ? ' · master' : contract.servant === seat ? ' · servant' : '') : '';
    const you = seat === me ? ' (you)' : '';
    const label = `${seatName(game, seat)}${you}${role}`;
    const info = `camp ${camp === 0 ? 'A' : 'B'} · ${plural(hand.held_count, 'knight')}`;
    const active = turn && (turn.seat === seat || turn.for_seat === seat);
    const anchor = [[W / 2, G.nameY[0]], [G.side[0], G.nameY[2]], [W / 2, G.nameY[1]], [W - G.side[0], G.nameY[2]]][where];
    const ta = where === 1 ? 'start' : where === 3 ? 'end' : 'middle';
    svg.append(s('text', { class: `bt-seat-name${active ? ' bt-turn' : ''}`, x: anchor[0], y: anchor[1], 'text-anchor': ta }, `${active ? '▶ ' : ''}${label}`));
    svg.append(s('text', { class: 'bt-seat-info', x: anchor[0], y: anchor[1] + 17, 'text-anchor': ta }, info));
    if (lastCall.has(seat) && (!contract || biddingOn)) {
      svg.append(s('text', { class: 'bt-lastcall', x: anchor[0], y: anchor[1] + 34, 'text-anchor': ta }, `bid: ${bidShort(lastCall.get(seat))}`));
    }
    const held = hand.held;
    const forMe = turn && turn.for_seat === seat && turn.seat === me && p.interactive && (turn.decision === 'play' || turn.decision === 'play_for_servant');
    const partFor = (g, k) => {
      const token = `k:${k.family}:${k.strength}`;
      if (forMe) {
        const on = p.can(token);
        const whose = seat === me ? '' : `${seatName(game, seat)}'s `;
        p.part(g, `knight ${k.family} ${k.strength}`, `${on ? 'Play' : 'Cannot play'} ${whose}${knightName(k)}`, on, () => p.pick(token));
        if (!on) g.classList.add('bt-dim');
      } else {
        g.setAttribute('role', 'img');
        g.setAttribute('aria-label', `${seatName(game, seat)}'s ${knightName(k)}`);
      }
      return g;
    };
    if (where === 0) {
      if (held) {
        const rows = narrow && held.length > 7 ? [held.slice(0, Math.ceil(held.length / 2)), held.slice(Math.ceil(held.length / 2))] : [held];
        rows.forEach((row, r) => {
          const n = row.length;
          const step = n > 1 ? Math.min(60, (W - 16 - 56) / (n - 1)) : 0;
          const x0 = (W - (step * (n - 1) + 56)) / 2;
          row.forEach((k, i) => svg.append(partFor(knight(k, x0 + i * step, handY[handY.length - rows.length + r], 56, 80), k)));
        });
      } else backRow(svg, hand.held_count, W / 2, handY[handY.length - 1], seatName(game, seat));
    } else if (where === 2) {
      if (held) {
        const n = held.length;
        const [ty, tw, th, ts] = G.top;
        const step = n > 1 ? Math.min(ts, (W - 40 - tw) / (n - 1)) : 0;
        const x0 = (W - (step * (n - 1) + tw)) / 2;
        held.forEach((k, i) => svg.append(partFor(knight(k, x0 + i * step, ty, tw, th), k)));
      } else backRow(svg, hand.held_count, W / 2, G.top[0], seatName(game, seat));
    } else {
      const [sx, sy, bw, bh, cw, ch, cs] = G.side;
      if (held) {
        const x = where === 1 ? sx : W - sx - cw;
        const n = held.length;
        const step = n > 1 ? Math.min(cs, (cs * 12) / (n - 1)) : 0;
        held.forEach((k, i) => svg.append(partFor(knight(k, x, sy + i * step, cw, ch), k)));
      } else {
        const g = back(where === 1 ? sx : W - sx - bw, sy, bw, bh, `${hand.held_count}`);
        g.setAttribute('role', 'img');
        g.setAttribute('aria-label', `${seatName(game, seat)} holds ${plural(hand.held_count, 'knight')}`);
        svg.append(g);
      }
    }
  }

  // The tournament in progress (or the one just finished).
  const tours = j.tournaments || [];
  const cur = tours[tours.length - 1];
  let tourLine = '';
  if (cur) {
    const cx = W / 2;
    const cy = G.cy;
    const spots = [[cx - 28, cy + 40], [cx - G.dx, cy - 40], [cx - 28, cy - 125], [cx + G.dx - 56, cy - 40]];
    for (const play of cur.plays) {
      const [x, y] = spots[pos(play.seat)];
      const g = knight(play.knight, x, y, 56, 80, cur.winner === play.seat ? 'bt-win' : '');
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', `${seatName(game, play.seat)} played ${knightName(play.knight)}${cur.winner === play.seat ? ' and won the tournament' : ''}`);
      svg.append(g);
    }
    const line = cur.winner !== null && cur.winner !== undefined
      ? `Tournament ${cur.number} won by ${seatName(game, cur.winner)}`
      : `Tournament ${cur.number}, led by ${seatName(game, cur.leader)}`;
    tourLine = line;
  } else if (!contract) {
    svg.append(t(W / 2, 250, `Joust ${j.number}, deal ${j.deal}: talking rounds`, 'bt-center'));
    const opened = (j.opening || []).map((o) => `${seatName(game, o.seat)} ${o.twelve_weapons ? 'yes' : 'no'}`);
    if (opened.length) svg.append(t(W / 2, 272, `12 weapons or more? ${opened.join(', ')}`, 'bt-center'));
  }
  wrap.append(h('div', { class: 'board-scroll' }, svg));

  // Decisions below the table: bids, the favoured family, the Chaos card.
  const live = new Set();
  if (p.interactive) for (const m of p.ctx.legalMoves || []) live.add(spell(m)[0]);
  if (p.interactive && turn && turn.seat === me) {
    if (turn.decision === 'bid' || turn.decision === 'open_bidding') {
      const box = h('div', { class: 'bt-bids' });
      const group = (title0, cards) => {
        box.append(h('h4', {}, title0));
        for (const c of cards) {
          const token = bidToken(c);
          const label = c.kind === 'family' ? famName(c.family) : c.kind === 'weapons' ? (c.value === 25 ? '25+' : `${c.value}`) : `${c.value}`;
          const el = h('span', { class: `board-btn bt-bid${c.kind === 'family' ? ` bt-${c.family}` : ''}` }, label);
          box.append(p.tokenPart(el, `bid ${c.kind} ${c.family || c.value}`, `${p.can(token) ? 'Lay' : 'Cannot lay'} ${bidWords(c)}`, token));
        }
      };
      group('Family cards', FAMILIES.concat('neutral').map((f) => ({ kind: 'family', family: f })));
      group('Weapons cards', WEAPONS.map((x) => ({ kind: 'weapons', value: x })));
      group('Tournaments cards', TOURNAMENTS.map((x) => ({ kind: 'tournaments', value: x })));
      if (live.has('pass')) {
        box.append(h('h4', {}, 'Or'));
        box.append(p.tokenPart(h('span', { class: 'board-btn' }, 'Pass'), 'pass', 'Pass', 'pass'));
      }
      wrap.append(box);
    } else if (turn.decision === 'choose_family') {
      const box = h('div', { class: 'bt-bids' }, h('h4', {}, 'Favoured family'));
      for (const f of FAMILIES.concat('neutral')) {
        const token = `fam:${f}`;
        box.append(p.tokenPart(h('span', { class: 'board-btn bt-bid' }, famName(f)), `family ${f}`, f === 'neutral' ? 'Choose Neutral: no favoured family' : `Favour the ${famName(f)} family`, token));
      }
      wrap.append(box);
    } else if (turn.decision === 'chaos') {
      const box = h('div', { class: 'bt-bids' }, h('h4', {}, 'The Chaos card'));
      box.append(p.tokenPart(h('span', { class: 'board-btn' }, 'Activate Chaos'), 'chaos', 'Activate the Chaos card', 'chaos'));
      box.append(p.tokenPart(h('span', { class: 'board-btn' }, 'Decline'), 'decline chaos', 'Decline the Chaos card', 'decline'));
      wrap.append(box);
    }
  }

  // The joust and the match in words.
  const facts = [];
  facts.push(`Joust ${j.number}${j.deal > 1 ? `, deal ${j.deal}` : ''}`);
  if (contract) {
    facts.push(`contract ${contract.tournaments} by ${seatName(game, contract.master)} (servant ${seatName(game, contract.servant)})`);
    if (j.favoured) facts.push(j.favoured === 'neutral' ? 'no favoured family' : `favoured family ${famName(j.favoured)}`);
    if (j.chaos && j.chaos.activated_by !== null && j.chaos.activated_by !== undefined) facts.push(`Chaos activated by ${seatName(game, j.chaos.activated_by)}`);
  }
  if (tourLine) facts.push(tourLine);
  wrap.append(h('p', { class: 'board-note' }, facts.join(' · ')));
  const table = h('table', { class: 'board-table' });
  table.append(h('caption', {}, v.winner !== null && v.winner !== undefined ? `Camp ${v.winner === 0 ? 'A' : 'B'} won the match` : `Crowns (target ${v.target_crowns})`));
  table.append(h('thead', {}, h('tr', {}, ...['Camp', 'Tournaments won', 'Crowns'].map((x) => h('th', { scope: 'col' }, x)))));
  const body = h('tbody');
  for (const camp of [0, 1]) {
    const won = v.winner === camp;
    body.append(h('tr', {}, h('th', { scope: 'row' }, `${camp === 0 ? 'A' : 'B'}: ${campName(game, camp)}`),
      h('td', {}, `${(j.tournaments_won || [])[camp] || 0}`), h('td', { class: won ? 'winner' : '' }, `${(v.crowns || [])[camp] || 0}${won ? ' ★' : ''}`)));
  }
  table.append(body);
  wrap.append(table);
  if (j.crowns) wrap.append(h('p', { class: 'board-note' }, `This joust earned camp ${j.crowns.camp === 0 ? 'A' : 'B'} ${plural(j.crowns.crowns, 'crown')}.`));
  const prev = (v.history || [])[v.history.length - 1];
  if (prev && prev.number !== j.number && prev.contract) {
    const made = prev.tournaments_won[prev.contract.master % 2] >= prev.contract.tournaments;
    wrap.append(h('p', { class: 'board-note' }, `Joust ${prev.number}: ${seatName(game, prev.contract.master)}'s contract of ${prev.contract.tournaments} was ${made ? 'made' : 'failed'}${prev.crowns ? `; camp ${prev.crowns.camp === 0 ? 'A' : 'B'} earned ${plural(prev.crowns.crowns, 'crown')}` : ''}.`));
  }

  // Once a joust is over its hands are public: what each seat was dealt.
  if (j.crowns && j.hands.every((x) => x.dealt)) {
    const lines = j.hands.map((x) => h('li', {}, `${seatName(game, x.seat)}: ${FAMILIES.map((f) => {
      const ks = x.dealt.filter((k) => k.family === f).map((k) => k.strength);
      return ks.length ? `${famName(f)} ${ks.join('/')}` : null;
    }).filter(Boolean).join(', ')}`));
    wrap.append(h('details', { class: 'bt-dealt' }, h('summary', {}, 'Hands dealt in this joust'), h('ul', {}, ...lines)));
  }

  // The talking rounds, seat by seat.
  if ((j.calls || []).length) {
    const calls = h('table', { class: 'board-table bt-calls' });
    calls.append(h('caption', {}, 'Bids'));
    const order = [0, 1, 2, 3].map((i) => (j.opener + i) % 4);
    calls.append(h('thead', {}, h('tr', {}, ...order.map((seat) => h('th', { scope: 'col' }, seatName(game, seat))))));
    const body2 = h('tbody');
    let row = null;
    (j.calls || []).forEach((c, i) => {
      const col = order.indexOf(c.seat);
      if (!row || col === 0 || i === 0) {
        row = h('tr');
        for (let k = 0; k < 4; k++) row.append(h('td'));
        body2.append(row);
      }
      row.children[col].textContent = bidShort(c.card);
    });
    calls.append(body2);
    wrap.append(h('details', { class: 'bt-calls-box', open: !contract }, h('summary', {}, `Bids (${j.calls.length})`), calls));
  }
}

function backRow(svg, n, cx, y, name) {
  const w = 38;
  const step = Math.min(14, 300 / Math.max(1, n));
  const x0 = cx - ((n - 1) * step + w) / 2;
  const g = s('g', { role: 'img', 'aria-label': `${name} holds ${plural(n, 'knight')}` });
  for (let i = 0; i < n; i++) g.append(back(x0 + i * step, y, w, 54, i === n - 1 ? `${n}` : undefined));
  svg.append(g);
}
