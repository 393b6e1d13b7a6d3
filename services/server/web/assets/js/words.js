// Shared wording: seat names, statuses, results, problems and small DOM helpers.

/** The hosted kinds as `GET /v1/kinds` lists them (main.js remembers them before a page shows). */
let knownKinds = [];

export function rememberKinds(kinds) {
  knownKinds = Array.isArray(kinds) ? kinds : [];
}

/** A kind's display name, from the server's list (its id when the list is not at hand). */
export function kindName(kind, kinds) {
  const info = [...(kinds || []), ...knownKinds].find((k) => k.kind === kind);
  return (info && info.name) || kind;
}

/**
 * The words that differ from game to game, keyed by kind: what a final
 * score is counted in, and whether the seats play in camps (two sides, so
 * resigning loses the game). A game not named here counts points, seat
 * against seat.
 */
const GAME_WORDS = { battle13: { score: ['crown', 'crowns'], camps: true } };

export const gameWords = (kind) => ({ score: ['point', 'points'], camps: false, ...GAME_WORDS[kind] });

/** "Ann", "Ann and Bob", "Ann, Bob and Cid". */
export function listJoin(items, last = 'and') {
  const list = items.filter((x) => x != null && x !== '');
  if (list.length <= 1) return list.join('');
  return `${list.slice(0, -1).join(', ')} ${last} ${list[list.length - 1]}`;
}

export function seatName(seats, seat) {
  const found = seats && seats.find((s) => s.seat === seat);
  return found && found.name != null ? found.name : `Seat ${Number(seat) + 1}`;
}

/** A seat as a list shows it: "Ann", "Rob (strong bot)", "open seat". */
export function seatLabel(s) {
  if (s.name == null) return 'open seat';
  if (s.resigned) return `${s.name} (resigned${s.bot ? `; a ${s.bot.level} bot plays` : ''})`;
  return s.bot ? `${s.name} (${s.bot.level} bot)` : s.name;
}

/** The open seats of a waiting game. */
export const openSeats = (status) => (status && status.state === 'waiting' && status.open_seats) || [];

/** "1 player", "2 players". */
export const players = (n) => `${n} player${n === 1 ? '' : 's'}`;

/** Finished or cancelled: nothing more happens. */
export const isOver = (status) => !!status && (status.state === 'finished' || status.state === 'cancelled');

export function points(n, kind) {
  const [one, many] = gameWords(kind).score;
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * A game's status in words. `game` has `seats`, `status`, `kind` and
 * optionally `viewer_seat`.
 */
export function statusText(game, { viewer } = {}) {
  const { status, seats, kind } = game;
  const me = viewer === undefined ? game.viewer_seat : viewer;
  if (!status) return '';
  if (status.state === 'finished') return resultText(status.result, seats, kind, status.forfeits);
  if (status.state === 'cancelled') return 'Cancelled before it started';
  if (status.state === 'waiting') return `Waiting for ${players(openSeats(status).length)}`;
  const toMove = status.to_move || [];
  if (toMove.length === 0) return 'Waiting';
  const names = toMove.map((s) => (s === me ? 'you' : seatName(seats, s)));
  if (me != null && toMove.includes(me)) {
    if (toMove.length === 1) return 'Your turn';
    return `Your turn (with ${listJoin(names.filter((n) => n !== 'you'))})`;
  }
  return `Waiting for ${listJoin(names)}`;
}

/** "Bob won with 34 points", "Ann and Bob won with 30 points", "Ann resigned. Bob won", and the rest. */
export function resultText(result, seats, kind, forfeits) {
  const gaveUp = (forfeits || []).map((f) => `${seatName(seats, f.seat)} ${f.reason === 'timed_out' ? 'ran out of time' : 'resigned'}`);
  if (gaveUp.length) {
    const ended = endedByForfeit({ result, forfeits });
    return `${listJoin(gaveUp)}. ${resultText(ended ? { winners: result.winners } : result, seats, kind)}`;
  }
  if (!result) return 'The game is over';
  const scores = result.scores || [];
  const winners = result.winners || [];
  const names = winners.map((s) => seatName(seats, s));
  if (winners.length === 0) return 'The game is over, with no winner';
  const best = scores[winners[0]];
  const same = winners.every((w) => scores[w] === best);
  if (best == null || !same) return `${listJoin(names)} won`;
  if (winners.length > 1 && winners.length === seats.length) return `A draw: everyone has ${points(best, kind)}`;
  return `${listJoin(names)} won with ${points(best, kind)}`;
}

/** A forfeit (resigned, out of time) ended the game: the scores (all 0) say nothing. */
export function endedByForfeit(status) {
  return !!(status.forfeits && status.forfeits.length && status.result && (status.result.scores || []).every((n) => !n));
}

/** A duration in words: "60 s", "5 min", "2 h". */
const span = (ms) => (ms < 12e4 ? `${ms / 1e3} s` : ms % 36e5 ? `${+(ms / 6e4).toFixed(1)} min` : `${ms / 36e5} h`);

/** A time control in words: "60 s per move, the seat loses on timeout". */
export function clockWords(c) {
  return `${listJoin([c.move_ms && `${span(c.move_ms)} per move`,
    c.bank_ms && `${span(c.bank_ms)} each${c.increment_ms ? ` + ${span(c.increment_ms)} a move` : ''}`])}, ${c.on_timeout === 'lose' ? 'the seat loses' : 'a bot moves'} on timeout`;
}

/** Time left as a clock shows it: "0:05", "1:02:03"; never below 0. */
export function clockTime(ms) {
  const s = Math.max(0, Math.ceil(ms / 1e3));
  const mmss = `${Math.floor(s / 60) % 60}:${String(s % 60).padStart(2, '0')}`;
  return s < 3600 ? mmss : `${Math.floor(s / 3600)}:${mmss.padStart(5, '0')}`;
}

/** Everyone's score, best first: "Bob 34 · Ann 31". */
export function scoreLine(result, seats) {
  if (!result || !result.scores) return '';
  return seats
    .map((s) => ({ name: s.name, score: result.scores[s.seat] }))
    .filter((x) => x.score != null)
    .sort((a, b) => b.score - a.score)
    .map((x) => `${x.name} ${x.score}`)
    .join(' · ');
}

export function stateWord(status) {
  return { finished: 'Finished', cancelled: 'Cancelled', waiting: 'Waiting' }[status && status.state] || 'In progress';
}

/** What a refusal about seats means, in words. */
export const SEAT_CODES = {
  seat_taken: 'That seat is already taken: someone joined it first, or this invitation was already used.',
  game_started: 'The game has already started: every seat is taken.',
  game_cancelled: 'The game was cancelled by its creator.',
  game_finished: 'The game is over.',
  game_waiting: 'The game has not started yet: seats are still open.',
  seat_resigned: 'You resigned from this game.',
  unauthorized: 'This link opens no seat of this game: it is wrong, incomplete or no longer valid.',
};

/** A seat refusal with its meaning in words before the server's detail. */
export function seatProblem(p) {
  let words = SEAT_CODES[p.code];
  if (p.code === 'invalid_input' && p.field === 'name') words = 'Choose a name of 1 to 40 characters.';
  return words ? { ...p, detail: `${words} (${p.detail || p.code})` } : p;
}

/** Words for a move when no board module describes it. */
export function genericMove(move) {
  if (!move || typeof move !== 'object') return String(move);
  const { type, ...rest } = move;
  const head = type ? String(type).replace(/_/g, ' ') : 'move';
  const parts = Object.entries(rest).map(([k, v]) => `${k.replace(/_/g, ' ')} ${plain(v)}`);
  return parts.length ? `${head[0].toUpperCase()}${head.slice(1)}: ${parts.join(', ')}` : `${head[0].toUpperCase()}${head.slice(1)}`;
}

function plain(v) {
  if (v == null) return 'none';
  if (Array.isArray(v)) return v.map(plain).join(' + ');
  if (typeof v === 'object') return Object.values(v).map(plain).join(',');
  return String(v).replace(/_/g, ' ');
}

/** A problem in words: detail, then the rule and code. */
export function problemText(problem) {
  if (!problem) return '';
  return problem.detail || problem.title || 'Something went wrong';
}

export function problemMeta(problem) {
  const meta = [];
  if (problem.rule) meta.push(`Rule ${problem.rule}`);
  if (problem.code) meta.push(`code ${problem.code}`);
  if (problem.field) meta.push(`field ${problem.field}`);
  if (problem.retry_after_ms) meta.push(`try again in ${Math.ceil(problem.retry_after_ms / 1000)} s`);
  return meta.join(' · ');
}

const dateFmt = typeof Intl !== 'undefined'
  ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
  : null;

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return dateFmt ? dateFmt.format(d) : d.toLocaleString();
}

/** Small element builder: el('a', { href, class: 'x', dataset: {...} }, 'text', child). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (v === true) node.setAttribute(k, '');
    else node.setAttribute(k, String(v));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A visible notice for a failed load: never a blank page. */
export function errorPanel(err, { retry } = {}) {
  const problem = err && err.problem ? err.problem : { detail: (err && err.message) || String(err) };
  const box = el('div', { class: 'notice notice-error', role: 'alert' },
    el('p', { class: 'notice-title' }, problem.status === 404 ? 'Not found' : 'Something went wrong'),
    el('p', {}, problemText(problem)),
    problemMeta(problem) ? el('p', { class: 'muted small' }, problemMeta(problem)) : null);
  if (retry) box.append(el('p', {}, el('button', { type: 'button', class: 'btn', onclick: retry }, 'Try again')));
  return box;
}

export const gamePath = (id, page) => `/games/${encodeURIComponent(id)}/${page}`;
