// Join: take an open seat with an invitation (`/games/{id}/join#code`), or
// any open seat of a public game; then play it.
import { api, storedToken, storeToken } from './api.js';
import {
  el, errorPanel, gamePath, kindName, listJoin, openSeats, players, problemMeta, problemText, seatLabel, seatProblem, SEAT_CODES,
} from './words.js';

const store = (op, key, value) => {
  try {
    return sessionStorage[op](key, value);
  } catch {
    return null;
  }
};

/** The code after `#` (bare, or `invitation=`), kept in this tab and removed from the address bar at once. */
function takeCode(id) {
  const key = `ludo.invite.${id}`;
  if (location.hash.length > 1) {
    const hash = decodeURIComponent(location.hash.slice(1));
    const params = new URLSearchParams(hash);
    const code = hash.includes('=') ? params.get('invitation') || params.get('code') : hash;
    if (code) store('setItem', key, code.trim());
    history.replaceState(history.state, '', location.pathname + location.search);
  }
  return store('getItem', key);
}

export async function show(app, { id }) {
  const code = takeCode(id);
  document.title = 'Join · Ludothèque';
  const title = el('h1', {}, 'Join a game');
  const about = el('div', { id: 'join-game', 'aria-live': 'polite' }, el('p', { class: 'muted' }, 'Loading the game…'));
  const problem = el('div', { id: 'join-problem', role: 'alert' });
  const name = el('input', {
    type: 'text', id: 'join-name', maxlength: '40', required: true, autocomplete: 'nickname', spellcheck: 'false',
    value: store('getItem', 'ludo.name') || '',
  });
  const submit = el('button', { type: 'submit', id: 'join-submit', class: 'btn btn-primary' }, 'Join the game');
  const form = el('form', { id: 'join-form', class: 'join-form', novalidate: true, hidden: true },
    el('div', { class: 'field' }, el('label', { for: 'join-name' }, 'Your name (the other players see it)'), name),
    el('div', { class: 'row gap' }, submit));
  app.replaceChildren(el('section', { class: 'panel join' }, title, about, problem, form));

  let game = null;

  function showProblem(p) {
    problem.replaceChildren();
    problem.removeAttribute('data-code');
    if (!p) return;
    problem.dataset.code = p.code || 'error';
    problem.append(el('div', { class: 'notice notice-error' }, el('p', {}, problemText(p)),
      problemMeta(p) ? el('p', { class: 'muted small' }, problemMeta(p)) : null));
  }

  async function load() {
    const { json } = await api.game(id);
    game = json;
    const open = openSeats(game.status);
    const kind = kindName(game.kind);
    title.textContent = `Join ${kind}`;
    document.title = `Join ${kind} · Ludothèque`;
    const seats = game.seats.map((s) => el('li', { dataset: { seat: String(s.seat), open: String(s.name == null) } },
      `Seat ${s.seat + 1}: `, s.name == null ? el('em', {}, 'open, waiting for someone') : seatLabel(s)));
    const taken = game.seats.filter((s) => s.name != null).map((s) => s.name);
    const stop = { in_progress: 'game_started', cancelled: 'game_cancelled', finished: 'game_finished' }[game.status.state];
    let why = stop ? { code: stop, detail: SEAT_CODES[stop] } : null;
    if (!why && !code && !game.public) {
      why = { code: 'unauthorized', detail: 'Joining this game takes its join link (…/join#code), which its creator sends to each player. Ask them for yours.' };
    }
    const mine = storedToken(id);
    about.replaceChildren(...[
      el('p', {}, `${kind}${taken.length ? ` with ${listJoin(taken)}` : ''}. `,
        open.length ? el('strong', { id: 'join-missing' }, `Waiting for ${players(open.length)}.`) : null,
        game.public ? ' Anyone may join this public game.' : ''),
      el('ul', { id: 'join-seats', class: 'join-seats' }, ...seats),
      mine ? el('p', { class: 'notice notice-info' }, 'This tab already holds a seat of this game: ',
        el('a', { href: gamePath(id, 'play') }, 'go to your seat'), '.') : null,
      el('p', { class: 'small' }, el('a', { href: gamePath(id, 'watch') }, 'Watch the game'), ' · ', el('a', { href: '/' }, 'All games')),
    ].filter(Boolean));
    form.hidden = Boolean(why);
    if (why) showProblem(why);
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    showProblem(null);
    const who = name.value.trim();
    if (!who) {
      showProblem({ code: 'invalid_input', field: 'name', detail: 'Type your name first.' });
      name.focus();
      return;
    }
    if (game && game.seats.some((s) => s.name === who)) {
      showProblem({ code: 'invalid_input', field: 'name', detail: `Someone at this table is already called ${who}: choose another name.` });
      name.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Joining…';
    try {
      const body = { name: who };
      if (code) body.invitation = code;
      const seat = await api.join(id, body);
      storeToken(id, seat.token);
      store('removeItem', `ludo.invite.${id}`);
      store('setItem', 'ludo.name', who);
      location.replace(gamePath(id, 'play'));
    } catch (err) {
      const p = seatProblem(err.problem || { detail: String(err) });
      await load().catch(() => {});
      showProblem(p);
      submit.disabled = false;
      submit.textContent = 'Join the game';
    }
  });

  try {
    await load();
  } catch (err) {
    if (err.status === 404) throw err;
    about.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
    return;
  }
  if (!form.hidden) name.focus();
  setInterval(() => {
    if (document.visibilityState === 'visible' && !submit.disabled) load().catch(() => {});
  }, 10000);
}
