// Small helpers the three boards share: building SVG and HTML nodes, seat
// names, and the picker that turns clicks on board parts into one of the
// legal moves (see ../../README.md, "The board contract").

export const SVGNS = 'http://www.w3.org/2000/svg';

function fill(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'object' ? c : String(c));
  }
  return node;
}

// An SVG element: s('circle', {cx: 1, class: 'x'}, ...children).
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVGNS, tag), attrs, children);
}

// An HTML element.
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// An <svg> scaled to its container by a viewBox.
export function svgRoot(w, h0, label, cls) {
  return s('svg', { viewBox: `0 0 ${w} ${h0}`, class: `board-svg ${cls || ''}`, role: 'group', 'aria-label': label });
}

// Text at (x, y), centred unless told otherwise.
export function t(x, y, str, cls, attrs) {
  return s('text', { x, y, class: cls || null, 'text-anchor': 'middle', ...(attrs || {}) }, str);
}

// The name a person reads for a seat: its name, else "seat N".
export function seatName(game, seat) {
  if (seat === null || seat === undefined) return 'nobody';
  const entry = (game && game.seats || []).find((x) => x.seat === seat);
  const name = entry && entry.name && String(entry.name).trim();
  return name || `seat ${seat}`;
}

// "a", "a and b", "a, b and c".
export function andList(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function plural(n, noun, many) {
  return `${n} ${n === 1 ? noun : many || `${noun}s`}`;
}

// Seat colours (Kardinal & König pieces, Battle 13 camps): distinguishable
// hues, each also told apart by its name in labels.
export const SEAT_COLOURS = ['red', 'blue', 'green', 'yellow', 'purple'];

// The seat whose turn the view says it is, for the header line.
export function statusLine(game, toAct, what) {
  if (game.status && game.status.state === 'finished') return 'The game is over.';
  if (toAct === null || toAct === undefined) return '';
  const who = toAct === game.viewer_seat ? 'Your turn' : `${seatName(game, toAct)}'s turn`;
  return what ? `${who}: ${what}` : who;
}

// ---------------------------------------------------------------------------
// The picker.
//
// Every legal move is spelled as a sequence of tokens (what the player picks,
// in order: a piece, then a cell...). After the picks so far, a part whose
// token is T is enabled when some legal move's sequence continues with T.
// When the picks spell a whole move and no longer move continues them, that
// move is submitted (the exact object from legalMoves); when a longer one
// could continue them, a "done" part submits the shorter one. So clicking
// any enabled part, one after another, always ends in a legal move.

let current = null;
let escapeHooked = false;

function hookEscape() {
  if (escapeHooked) return;
  escapeHooked = true;
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || !current || !current.wrap.isConnected) return;
    if (current.picks.length) {
      current.cancel();
      e.preventDefault();
    }
  });
}

export function createBoard(root, ctx, spell, draw, cls) {
  const interactive = !!ctx.interactive && typeof ctx.submit === 'function';
  const entries = interactive ? (ctx.legalMoves || []).map((move) => ({ move, seq: spell(move) })) : [];
  const wrap = h('div', { class: `board ${cls || ''}` });
  root.append(wrap);
  const handlers = new Map();
  const p = {
    wrap,
    ctx,
    game: ctx.game,
    interactive: interactive && entries.length > 0,
    picks: [],
    busy: false,
    live() {
      return entries.filter((e) => e.seq.length >= p.picks.length && p.picks.every((x, i) => e.seq[i] === x));
    },
    // Whether token can be picked next.
    can(token) {
      if (p.busy) return false;
      const n = p.picks.length;
      return p.live().some((e) => e.seq.length > n && e.seq[n] === token);
    },
    // Whether some live move has token anywhere after the picks (for hints).
    ahead(token) {
      const n = p.picks.length;
      return p.live().some((e) => e.seq.indexOf(token, n) >= 0);
    },
    // The move the picks spell completely, if any.
    complete() {
      const n = p.picks.length;
      if (!n) return null;
      const done = p.live().filter((e) => e.seq.length === n);
      return done.length ? done[0].move : null;
    },
    count(token) {
      return p.picks.filter((x) => x === token).length;
    },
    pick(token) {
      if (!p.can(token)) return;
      p.picks.push(token);
      const live = p.live();
      const n = p.picks.length;
      const longer = live.some((e) => e.seq.length > n);
      const done = live.filter((e) => e.seq.length === n);
      if (done.length && !longer) p.send(done[0].move);
      else p.redraw();
    },
    finish() {
      const m = p.complete();
      if (m && !p.busy) p.send(m);
    },
    cancel() {
      if (p.busy) return;
      p.picks = [];
      p.redraw();
    },
    send(move) {
      p.picks = [];
      p.busy = true;
      p.redraw();
      let r;
      try {
        r = ctx.submit(move);
      } catch (err) {
        r = null;
      }
      const reopen = () => {
        if (!wrap.isConnected) return;
        p.busy = false;
        p.redraw();
      };
      if (r && typeof r.then === 'function') r.then(reopen, reopen);
      else reopen();
    },
    // A clickable part: node gets the contract's attributes; token is what it
    // picks (or a function to run); enabled decides aria-disabled.
    part(node, name, label, enabled, action, selected) {
      node.setAttribute('data-pick', name);
      node.setAttribute('role', 'button');
      node.setAttribute('tabindex', '0');
      node.setAttribute('aria-label', label);
      const on = !!enabled && !p.busy;
      node.setAttribute('aria-disabled', on ? 'false' : 'true');
      node.classList.add('pick', on ? 'pick-on' : 'pick-off');
      if (selected) {
        node.classList.add('picked');
        node.setAttribute('aria-pressed', 'true');
      }
      if (node.namespaceURI === SVGNS) node.prepend(s('title', {}, label));
      handlers.set(name, action);
      return node;
    },
    // A part that picks token.
    tokenPart(node, name, label, token, selected) {
      return p.part(node, name, label, p.can(token), () => p.pick(token), selected);
    },
    // The "done" part for a move that could go on, and the cancel control.
    controls(doneLabel) {
      const bar = h('div', { class: 'board-controls' });
      const m = p.complete();
      if (m) {
        const done = h('span', { class: 'board-btn board-done' }, doneLabel ? doneLabel(m) : 'Done');
        bar.append(p.part(done, 'done', `${doneLabel ? doneLabel(m) : 'Done'}`, true, () => p.finish()));
      }
      if (p.picks.length && !p.busy) {
        const cancel = h('button', { type: 'button', class: 'board-btn board-cancel', 'aria-label': 'Cancel the picks (Escape)' }, 'Cancel');
        cancel.addEventListener('click', () => p.cancel());
        bar.append(cancel);
      }
      return bar;
    },
    redraw() {
      const act = document.activeElement;
      const focused = act && wrap.contains(act) ? act.getAttribute('data-pick') : null;
      handlers.clear();
      wrap.replaceChildren();
      draw(p);
      wrap.classList.toggle('board-picking', p.picks.length > 0);
      wrap.classList.toggle('board-busy', p.busy);
      if (focused) {
        const again = [...wrap.querySelectorAll('[data-pick]')].find((n) => n.getAttribute('data-pick') === focused);
        if (again) again.focus({ preventScroll: true });
      }
    },
  };
  const act = (target) => {
    const node = target && target.closest ? target.closest('[data-pick]') : null;
    if (!node || !wrap.contains(node)) return false;
    if (node.getAttribute('aria-disabled') === 'true') return true;
    const f = handlers.get(node.getAttribute('data-pick'));
    if (f) f();
    return true;
  };
  wrap.addEventListener('click', (e) => {
    if (act(e.target)) e.preventDefault();
  });
  wrap.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ' || e.key === 'Spacebar') {
      if (act(e.target)) e.preventDefault();
    } else if (e.key === 'Escape' && p.picks.length) {
      p.cancel();
      e.preventDefault();
      e.stopPropagation();
    }
  });
  if (p.interactive) {
    current = p;
    hookEscape();
  }
  p.redraw();
  return p;
}
