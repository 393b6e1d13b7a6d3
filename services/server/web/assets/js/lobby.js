// The lobby: list, filter and page games; create a game and hand out its seat links.
import { api, ApiError, storeAdmin, storedAdmin, storeToken, forgetAdmin } from './api.js';
import {
  el, errorPanel, gamePath, kindName, listJoin, openSeats, players as nPlayers, problemMeta, problemText, scoreLine, seatLabel,
  seatProblem, stateWord, statusText, when,
} from './words.js';

const PAGE_SIZE = 20;
const PLACEHOLDER_NAMES = ['Ann', 'Bob', 'Cid', 'Dee', 'Eve'];

export async function show(app) {
  document.title = 'Games · Ludothèque';
  const params = new URLSearchParams(location.search);
  const state = {
    kinds: [],
    kind: params.get('kind') || '',
    filter: params.get('state') || '',
    // The `after` of each page seen so far; the last one is the current page.
    pages: [params.get('after') || ''],
    nextAfter: null,
  };

  const listStatus = el('p', { id: 'list-status', class: 'muted', role: 'status', 'aria-live': 'polite' });
  const tbody = el('tbody');
  const table = el('table', { id: 'lobby-list', class: 'games' },
    el('caption', { class: 'visually-hidden' }, 'Games on this server'),
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'Game'),
      el('th', { scope: 'col' }, 'Players'),
      el('th', { scope: 'col' }, 'State'),
      el('th', { scope: 'col' }, 'Moves'),
      el('th', { scope: 'col' }, 'Created'),
      el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Links')))),
    tbody);
  const filterKind = el('select', { id: 'filter-kind', name: 'kind' }, el('option', { value: '' }, 'All games'));
  const filterState = el('select', { id: 'filter-state', name: 'state' },
    el('option', { value: '' }, 'Any state'),
    el('option', { value: 'in_progress' }, 'In progress'),
    el('option', { value: 'finished' }, 'Finished'));
  filterState.value = state.filter;
  const prev = el('button', { type: 'button', id: 'prev-page', class: 'btn' }, '← Previous');
  const next = el('button', { type: 'button', id: 'next-page', class: 'btn' }, 'Next →');
  const pageNo = el('span', { class: 'muted small', 'aria-live': 'polite' });
  const refresh = el('button', { type: 'button', class: 'btn btn-quiet', id: 'refresh-list' }, 'Refresh');

  const openList = el('ul', { id: 'open-list', class: 'open-list' });
  const openStatus = el('p', { class: 'muted small', role: 'status' }, 'Loading…');
  const openProblem = el('div', { id: 'open-problem', role: 'alert' });
  const joinName = el('input', {
    type: 'text', id: 'join-name', maxlength: '40', autocomplete: 'nickname', spellcheck: 'false', value: rememberedName(),
  });
  const openSection = el('section', { class: 'panel', id: 'open-games', 'aria-labelledby': 'open-title' },
    el('h2', { id: 'open-title' }, 'Open games'),
    el('p', { class: 'small muted' }, 'Public games waiting for players: anyone may take a seat.'),
    el('div', { class: 'row gap wrap' }, el('label', { for: 'join-name' }, 'Your name'), joinName),
    openProblem, openStatus, openList);

  const createSection = el('section', { class: 'panel create', 'aria-labelledby': 'create-title' },
    el('h2', { id: 'create-title' }, 'New game'),
    el('p', { class: 'muted' }, 'Loading the game kinds…'));

  const listSection = el('section', { class: 'panel list', 'aria-labelledby': 'list-title' },
    el('div', { class: 'list-head' },
      el('h2', { id: 'list-title' }, 'Games'),
      el('div', { class: 'filters', role: 'group', 'aria-label': 'Filter the games' },
        el('span', { class: 'filter' }, el('label', { for: 'filter-kind' }, 'Kind'), filterKind),
        el('span', { class: 'filter' }, el('label', { for: 'filter-state' }, 'State'), filterState),
        refresh)),
    listStatus,
    el('div', { class: 'table-wrap' }, table),
    el('nav', { class: 'pager', 'aria-label': 'Pages of games' }, prev, pageNo, next));

  app.replaceChildren(
    el('h1', { class: 'visually-hidden' }, 'Ludothèque'),
    el('div', { class: 'lobby' }, createSection, el('div', { class: 'side' }, openSection, listSection)));

  let openSeq = 0;
  async function loadOpen() {
    const mine = ++openSeq;
    try {
      const { games } = await api.listGames({ open: true, limit: 50 });
      if (mine !== openSeq) return;
      openList.replaceChildren(...games.map((g) => openRow(g, state.kinds, join)));
      openStatus.textContent = games.length ? '' : 'No open games right now. Create one with an open seat and make it public.';
    } catch (err) {
      if (mine === openSeq) openStatus.replaceChildren(errorPanel(err, { retry: loadOpen }));
    }
  }

  async function join(game, button) {
    openProblem.replaceChildren();
    const name = joinName.value.trim();
    const problem = !name ? { detail: 'Type your name first: the other players see it.', code: 'invalid_input', field: 'name' }
      : game.seats.some((s) => s.name === name) ? { detail: `Someone at that table is already called ${name}: choose another name.`, code: 'invalid_input', field: 'name' }
        : null;
    if (problem) {
      showNotice(openProblem, problem);
      joinName.focus();
      return;
    }
    button.disabled = true;
    try {
      const seat = await api.join(game.id, { name });
      storeToken(game.id, seat.token);
      rememberName(name);
      location.assign(gamePath(game.id, 'play'));
    } catch (err) {
      button.disabled = false;
      showNotice(openProblem, seatProblem(err.problem || { detail: String(err) }));
      loadOpen();
    }
  }
  setInterval(() => document.visibilityState === 'visible' && loadOpen(), 15000);

  function syncUrl() {
    const q = new URLSearchParams();
    if (state.kind) q.set('kind', state.kind);
    if (state.filter) q.set('state', state.filter);
    const after = state.pages[state.pages.length - 1];
    if (after) q.set('after', after);
    const qs = q.toString();
    history.replaceState(null, '', qs ? `/?${qs}` : '/');
  }

  let loadSeq = 0;
  async function load() {
    const mine = ++loadSeq;
    const after = state.pages[state.pages.length - 1];
    listStatus.textContent = 'Loading games…';
    table.setAttribute('aria-busy', 'true');
    prev.disabled = true;
    next.disabled = true;
    try {
      let page = await api.listGames({ kind: state.kind, state: state.filter, after, limit: PAGE_SIZE });
      // A filter may leave a page empty while more follow: show the next one instead.
      for (let hop = 0; hop < 20 && page.games.length === 0 && page.next_after && mine === loadSeq; hop++) {
        state.pages[state.pages.length - 1] = page.next_after;
        page = await api.listGames({ kind: state.kind, state: state.filter, after: page.next_after, limit: PAGE_SIZE });
      }
      if (mine !== loadSeq) return;
      state.nextAfter = page.next_after || null;
      tbody.replaceChildren(...page.games.map((g) => row(g, state.kinds)));
      if (page.games.length === 0) {
        listStatus.textContent = state.nextAfter
          ? 'No game on this page matched the filters; later pages may.'
          : state.pages.length > 1 ? 'No more games.' : 'No games yet. Create one!';
      } else {
        const n = page.games.length;
        listStatus.textContent = `${n} game${n === 1 ? '' : 's'} on this page.`;
      }
    } catch (err) {
      if (mine !== loadSeq) return;
      tbody.replaceChildren();
      listStatus.replaceChildren(errorPanel(err, { retry: load }));
    } finally {
      if (mine === loadSeq) {
        table.removeAttribute('aria-busy');
        prev.disabled = state.pages.length <= 1 && !state.pages[0];
        next.disabled = !state.nextAfter;
        pageNo.textContent = `Page ${state.pages.length}`;
        syncUrl();
      }
    }
  }

  filterKind.addEventListener('change', () => {
    state.kind = filterKind.value;
    state.pages = [''];
    load();
  });
  filterState.addEventListener('change', () => {
    state.filter = filterState.value;
    state.pages = [''];
    load();
  });
  next.addEventListener('click', () => {
    if (!state.nextAfter) return;
    state.pages.push(state.nextAfter);
    load();
  });
  prev.addEventListener('click', () => {
    if (state.pages.length > 1) state.pages.pop();
    else if (state.pages[0]) state.pages = [''];
    else return;
    load();
  });
  refresh.addEventListener('click', () => {
    load();
    loadOpen();
  });

  // The kinds fill the filter and the creation form; the list loads meanwhile.
  const listLoaded = load();
  try {
    const { kinds } = await api.kinds();
    state.kinds = kinds;
    for (const k of kinds) filterKind.append(el('option', { value: k.kind }, k.name));
    loadOpen();
    filterKind.value = state.kind;
    createSection.replaceChildren(...createForm(kinds, () => {
      state.pages = [''];
      load();
      loadOpen();
    }));
    await listLoaded;
  } catch (err) {
    createSection.replaceChildren(el('h2', { id: 'create-title' }, 'New game'), errorPanel(err, { retry: () => location.reload() }));
  }
}

function rememberedName() {
  try {
    return sessionStorage.getItem('ludo.name') || '';
  } catch {
    return '';
  }
}

function rememberName(name) {
  try {
    sessionStorage.setItem('ludo.name', name);
  } catch {
    /* not remembered */
  }
}

function showNotice(box, problem) {
  box.dataset.code = problem.code || 'error';
  box.replaceChildren(el('div', { class: 'notice notice-error' },
    el('p', {}, problemText(problem)),
    problemMeta(problem) ? el('p', { class: 'muted small' }, problemMeta(problem)) : null));
}

/** A game of "Open games": who sits, who is awaited, and a Join button. */
function openRow(game, kinds, join) {
  const open = openSeats(game.status).length;
  const taken = game.seats.filter((s) => s.name != null).map(seatLabel);
  const button = el('button', {
    type: 'button', class: 'btn btn-small btn-primary join-open', dataset: { gameId: game.id },
    'aria-label': `Join ${kindName(game.kind, kinds)} ${game.id.slice(-8)}`,
  }, 'Join');
  button.addEventListener('click', () => join(game, button));
  return el('li', { class: 'open-row', dataset: { gameId: game.id } },
    el('span', {}, el('strong', {}, kindName(game.kind, kinds)), ' ',
      el('span', { class: 'small' }, taken.length ? `with ${listJoin(taken)}, ` : '', `waiting for ${nPlayers(open)}`),
      el('span', { class: 'muted tiny mono' }, ` ${game.id.slice(-8)}`)),
    button);
}

const BADGES = { finished: 'badge-done', cancelled: 'badge-done', waiting: 'badge-wait' };

function row(game, kinds) {
  const players = game.seats.map(seatLabel);
  const st = game.status.state;
  const finished = st === 'finished';
  const stateCell = el('td', { 'data-label': 'State' },
    el('span', { class: `badge ${BADGES[st] || 'badge-live'}` }, stateWord(game.status)),
    ' ',
    el('span', { class: 'small' }, statusText({ ...game, viewer_seat: null })));
  if (finished) {
    const scores = scoreLine(game.status.result, game.seats);
    if (scores) stateCell.append(el('div', { class: 'muted small' }, scores));
  }
  const label = `${kindName(game.kind, kinds)} with ${listJoin(players)} (${game.id.slice(-8)})`;
  return el('tr', { dataset: { gameId: game.id, kind: game.kind, state: game.status.state } },
    el('td', { 'data-label': 'Game' }, el('strong', {}, kindName(game.kind, kinds)),
      el('div', { class: 'muted tiny mono', title: game.id }, game.id.slice(-8))),
    el('td', { 'data-label': 'Players' }, listJoin(players)),
    stateCell,
    el('td', { 'data-label': 'Moves', class: 'num' }, String(game.version)),
    el('td', { 'data-label': 'Created', class: 'small' }, el('time', { datetime: game.created_at }, when(game.created_at))),
    el('td', { class: 'links' },
      game.public && st === 'waiting' ? el('a', { href: gamePath(game.id, 'join'), 'aria-label': `Join ${label}` }, 'Join') : null,
      el('a', { href: gamePath(game.id, 'watch'), 'aria-label': `Watch ${label}` }, finished ? 'View' : 'Watch'),
      el('a', { href: gamePath(game.id, 'replay'), 'aria-label': `Replay ${label}` }, 'Replay'),
      el('a', { href: gamePath(game.id, 'audit'), 'aria-label': `Audit ${label}` }, 'Audit')));
}

/** The creation form, then the links for each seat once the game exists. */
function createForm(kinds, onCreated) {
  const kindSelect = el('select', { id: 'new-kind', name: 'kind', required: true },
    ...kinds.map((k) => el('option', { value: k.kind }, `${k.name} (${k.min_players === k.max_players ? k.min_players : `${k.min_players}–${k.max_players}`} players)`)));
  const seatList = el('ol', { class: 'seat-names', id: 'seat-names' });
  const addSeat = el('button', { type: 'button', id: 'add-seat', class: 'btn btn-small' }, '+ Add player');
  const removeSeat = el('button', { type: 'button', id: 'remove-seat', class: 'btn btn-small' }, '− Remove player');
  const seatHint = el('p', { class: 'muted small', id: 'seat-hint' });
  const firstSeat = el('select', { id: 'first-seat', name: 'first_seat' });
  const variant = el('select', { id: 'opt-variant', name: 'variant' });
  const board = el('input', { type: 'file', id: 'opt-board', name: 'board', accept: '.json,application/json' });
  const boardInfo = el('p', { class: 'muted small', id: 'opt-board-info', 'aria-live': 'polite' }, 'Leave empty to play on the standard map of Europe.');
  const target = el('select', { id: 'opt-target', name: 'target_crowns' });
  const publicBox = el('input', { type: 'checkbox', id: 'opt-public', name: 'public' });
  const publicRow = el('div', { class: 'field check-field' }, publicBox,
    el('label', { for: 'opt-public' }, 'Public (anyone may join from the lobby)'),
    el('p', { class: 'muted small', id: 'opt-public-hint' }, 'Needs an open seat. Otherwise only those you send a join link can take an open seat.'));
  // The time control: an empty field is no limit; `clock` is sent only with one.
  const clockIn = (name, text, scale) => el('label', {}, text,
    Object.assign(el('input', { type: 'number', id: `clock-${name.split('_')[0]}`, name, min: '0', step: 'any' }), { scale }));
  const onTimeout = el('select', { id: 'clock-timeout' }, el('option', { value: 'bot' }, 'a bot moves'), el('option', { value: 'lose' }, 'the seat loses'));
  const clockProblem = el('div', { id: 'clock-problem', role: 'alert' });
  const clockRow = el('fieldset', { class: 'field clock-fields' }, el('legend', {}, 'Clock'),
    clockIn('move_ms', 'per move (seconds)', 1e3), clockIn('bank_ms', 'bank (minutes)', 6e4), clockIn('increment_ms', 'increment (seconds)', 1e3),
    el('label', {}, 'on timeout', onTimeout), clockProblem);
  const submit = el('button', { type: 'submit', id: 'create-submit', class: 'btn btn-primary' }, 'Create the game');
  const formProblem = el('div', { id: 'create-problem', role: 'alert', 'aria-live': 'assertive' });
  const created = el('section', { id: 'created', class: 'created', hidden: true, 'aria-live': 'polite', tabindex: '-1' });

  const variantRow = el('div', { class: 'field', dataset: { for: 'kardinal' } },
    el('label', { for: 'opt-variant' }, 'Variant'), variant);
  const clearBoard = el('button', { type: 'button', id: 'clear-board', class: 'btn btn-small btn-quiet', hidden: true }, 'Use the standard board');
  const boardRow = el('div', { class: 'field', dataset: { for: 'kardinal' } },
    el('label', { for: 'opt-board' }, 'Custom board (JSON file)'), board, boardInfo, clearBoard);
  const targetRow = el('div', { class: 'field', dataset: { for: 'battle13' } },
    el('label', { for: 'opt-target' }, 'Crowns to win the match'), target);

  const form = el('form', { id: 'create-game', novalidate: true, 'aria-describedby': 'create-help' },
    el('div', { class: 'field' }, el('label', { for: 'new-kind' }, 'Game'), kindSelect),
    el('fieldset', { class: 'field' },
      el('legend', {}, 'Players, in seat order'),
      seatList,
      el('div', { class: 'row gap' }, addSeat, removeSeat),
      seatHint),
    el('div', { class: 'field' }, el('label', { for: 'first-seat' }, 'Who plays first'), firstSeat),
    variantRow, boardRow, targetRow, publicRow, clockRow,
    formProblem,
    el('div', { class: 'row' }, submit));

  let customBoard = null;

  const kindInfo = () => kinds.find((k) => k.kind === kindSelect.value) || kinds[0];

  function seatInputs() {
    return Array.from(seatList.querySelectorAll('input.seat-name'));
  }

  /// Who plays each seat: '' for a person, 'open' for an open seat, else the server bot's level.
  function playedBy() {
    return Array.from(seatList.querySelectorAll('select.seat-bot')).map((select) => select.value);
  }

  /// Each seat's name; null for an open seat.
  function names() {
    const by = playedBy();
    return seatInputs().map((input, i) => (by[i] === 'open' ? null : input.value.trim() || PLACEHOLDER_NAMES[i] || `Player ${i + 1}`));
  }

  function addSeatInput() {
    const i = seatInputs().length;
    const id = `seat-name-${i}`;
    const input = el('input', {
      type: 'text', id, class: 'seat-name', name: `player${i}`, placeholder: PLACEHOLDER_NAMES[i] || `Player ${i + 1}`,
      maxlength: '40', autocomplete: 'off', spellcheck: 'false', 'aria-label': `Name of player ${i + 1}`,
    });
    input.addEventListener('input', syncFirstSeat);
    const bot = el('select', { class: 'seat-bot', id: `seat-bot-${i}`, 'aria-label': `Who plays seat ${i + 1}` },
      el('option', { value: '' }, 'a person'),
      el('option', { value: 'open' }, 'open: someone joins'),
      el('option', { value: 'random' }, 'the computer (random)'),
      el('option', { value: 'greedy' }, 'the computer (greedy)'),
      el('option', { value: 'strong' }, 'the computer (strong)'));
    bot.addEventListener('change', () => {
      const open = bot.value === 'open';
      input.disabled = open;
      input.placeholder = open ? 'open seat' : PLACEHOLDER_NAMES[i] || `Player ${i + 1}`;
      syncFirstSeat();
    });
    seatList.append(el('li', {}, el('label', { for: id, class: 'visually-hidden' }, `Player ${i + 1}`), input, ' ', bot));
  }

  function syncSeats() {
    const info = kindInfo();
    const inputs = seatInputs();
    const min = info.min_players;
    const max = info.max_players;
    for (let n = inputs.length; n < min; n++) addSeatInput();
    for (let n = seatInputs().length; n > max; n--) seatList.lastElementChild.remove();
    const count = seatInputs().length;
    addSeat.disabled = count >= max;
    removeSeat.disabled = count <= min;
    seatHint.textContent = min === max
      ? `${info.name} is played by exactly ${min}.`
      : `${info.name} is played by ${min} to ${max}. Empty names take the grey suggestion.`;
    syncFirstSeat();
  }

  function syncFirstSeat() {
    const keep = firstSeat.value;
    firstSeat.replaceChildren(el('option', { value: '' }, 'Drawn at random'),
      ...names().map((n, i) => el('option', { value: String(i) }, n ?? `Seat ${i + 1} (open)`)));
    firstSeat.value = Number(keep) < names().length ? keep : '';
    const open = names().includes(null);
    publicBox.disabled = !open;
    if (!open) publicBox.checked = false;
  }

  function syncOptions() {
    const info = kindInfo();
    const defaults = info.default_options || {};
    for (const rowEl of [variantRow, boardRow, targetRow]) rowEl.hidden = rowEl.dataset.for !== info.kind;
    const props = (info.options_schema && info.options_schema.properties) || {};
    if (info.kind === 'kardinal') {
      const variants = enumOf(props.variant) || ['standard', 'dynamic'];
      variant.replaceChildren(...variants.map((v) => el('option', { value: v }, v === 'standard' ? 'Standard rules' : v === 'dynamic' ? 'Dynamic variant' : v)));
      variant.value = defaults.variant || variants[0];
    }
    if (info.kind === 'battle13') {
      const targets = [20, 50, 100];
      target.replaceChildren(...targets.map((t) => el('option', { value: String(t) }, `${t} crowns`)));
      target.value = String(defaults.target_crowns || 20);
    }
    showProblem(null);
  }

  kindSelect.addEventListener('change', () => {
    firstSeat.value = '';
    syncSeats();
    syncOptions();
  });
  addSeat.addEventListener('click', () => {
    if (seatInputs().length < kindInfo().max_players) addSeatInput();
    syncSeats();
    const inputs = seatInputs();
    inputs[inputs.length - 1].focus();
  });
  removeSeat.addEventListener('click', () => {
    if (seatInputs().length > kindInfo().min_players) seatList.lastElementChild.remove();
    syncSeats();
  });
  board.addEventListener('change', async () => {
    customBoard = null;
    const file = board.files && board.files[0];
    clearBoard.hidden = !file;
    if (!file) {
      boardInfo.textContent = 'Leave empty to play on the standard map of Europe.';
      return;
    }
    try {
      const parsed = JSON.parse(await file.text());
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
      customBoard = parsed;
      boardInfo.textContent = `Board “${parsed.name || file.name}”: ${(parsed.sites || []).length} sites, ${(parsed.countries || []).length} countries. The server checks it when the game is created.`;
    } catch (err) {
      boardInfo.textContent = `${file.name} is not a JSON board file (${err.message}).`;
    }
  });

  clearBoard.addEventListener('click', () => {
    board.value = '';
    board.dispatchEvent(new Event('change'));
    board.focus();
  });

  function showProblem(problem) {
    const box = problem && /^clock/.test(problem.field) ? clockProblem : formProblem;
    for (const b of [formProblem, clockProblem]) {
      b.replaceChildren();
      b.removeAttribute('data-code');
    }
    if (!problem) return;
    box.dataset.code = problem.code || '';
    box.append(el('div', { class: 'notice notice-error' },
      el('p', {}, problemText(problem)),
      problemMeta(problem) ? el('p', { class: 'muted small' }, problemMeta(problem)) : null));
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const info = kindInfo();
    const players = names();
    const named = players.filter((n) => n != null);
    if (new Set(named).size !== named.length) {
      showProblem({ detail: 'Each player needs a different name.' });
      return;
    }
    const options = {};
    if (firstSeat.value !== '') options.first_seat = Number(firstSeat.value);
    if (info.kind === 'kardinal') {
      options.variant = variant.value;
      if (board.files && board.files.length) {
        if (!customBoard) {
          showProblem({ detail: 'The board file is not valid JSON: choose another file or clear it.', code: 'invalid_input', field: 'options.board' });
          return;
        }
        options.board = customBoard;
      }
    }
    if (info.kind === 'battle13') options.target_crowns = Number(target.value);
    const bots = playedBy();
    const body = {
      kind: info.kind,
      players: players.map((name, i) => (name == null ? null : bots[i] ? { name, bot: { level: bots[i] } } : name)),
    };
    if (Object.keys(options).length) body.options = options;
    if (publicBox.checked && !publicBox.disabled) body.public = true;
    const clock = {};
    for (const i of clockRow.querySelectorAll('input')) if (i.value !== '') clock[i.name] = Math.round(i.value * i.scale);
    if (Object.keys(clock).length) body.clock = { ...clock, on_timeout: onTimeout.value };
    submit.disabled = true;
    submit.textContent = 'Creating…';
    showProblem(null);
    try {
      const game = await api.createGame(body);
      showCreated(created, game, kinds, onCreated, body.players);
      created.hidden = false;
      created.focus();
      onCreated();
    } catch (err) {
      showProblem(err instanceof ApiError ? err.problem : { detail: String(err) });
    } finally {
      submit.disabled = false;
      submit.textContent = 'Create the game';
    }
  });

  syncSeats();
  syncOptions();
  return [el('h2', { id: 'create-title' }, 'New game'), form, created];
}

function enumOf(schema) {
  if (!schema) return null;
  if (Array.isArray(schema.enum)) return schema.enum;
  for (const alt of schema.oneOf || schema.anyOf || []) {
    const found = enumOf(alt);
    if (found) return found;
  }
  return null;
}

/**
 * The seat links (each opens that seat; the token stays in the fragment), the join links of open seats and the watch link.
 * A seat the computer plays has no link: no token opens it. `players` is what the game was created with.
 */
function showCreated(box, game, kinds, onChanged, players) {
  const origin = location.origin;
  const id = game.id;
  storeAdmin(id, game.admin_token);
  const seatUrl = (s) => `${origin}${gamePath(id, 'play')}#token=${encodeURIComponent(s.token)}`;
  const linkRow = (who, href, cls, seat, text, label) => el('li', { class: 'seat-row' },
    el('span', { class: 'seat-who' }, who),
    el('a', { href, class: cls, dataset: { seat: String(seat) }, target: '_blank', rel: 'noopener noreferrer', 'aria-label': `${label} (opens in a new tab)` }, text),
    copyButton(href, `Copy ${label}`),
    el('input', { type: 'text', readonly: true, class: 'link-text mono', value: href, 'aria-label': label, onfocus: (ev) => ev.target.select() }));
  const items = game.seats.map((s) => linkRow(s.name, seatUrl(s), 'seat-link', s.seat, `Play as ${s.name}`, `${s.name}'s seat link`));
  const invites = (game.invitations || []).filter((inv) => inv.open);
  const joins = invites.map((inv) => linkRow(`Seat ${inv.seat + 1}`, origin + inv.link, 'join-link', inv.seat, `Join link for seat ${inv.seat + 1}`, `the join link of seat ${inv.seat + 1}`));
  const open = openSeats(game.status).length;
  const allLinks = [
    ...game.seats.map((s) => `${s.name}: ${seatUrl(s)}`),
    ...invites.map((inv) => `Seat ${inv.seat + 1} (join): ${origin}${inv.link}`),
  ].join('\n');
  const named = (players || []).filter((p) => p != null).map((p) => (typeof p === 'string' ? p : `${p.name} (computer)`));
  const who = listJoin([...(named.length ? named : game.seats.map((s) => s.name)), open ? `${nPlayers(open).replace('player', 'open seat')}` : null]);
  const cancel = el('button', { type: 'button', id: 'cancel-created', class: 'btn btn-quiet' }, 'Cancel the game');
  const cancelNote = el('span', { class: 'small', role: 'status' });
  cancel.addEventListener('click', async () => {
    if (cancel.dataset.confirm !== 'yes') {
      cancel.dataset.confirm = 'yes';
      cancel.textContent = 'Really cancel it? Click again';
      return;
    }
    cancel.disabled = true;
    try {
      await api.seatAction(id, 'cancel', storedAdmin(id));
      forgetAdmin(id);
      cancelNote.textContent = 'The game is cancelled: its links open nothing now.';
      cancel.remove();
      onChanged();
    } catch (err) {
      cancel.disabled = false;
      cancelNote.textContent = problemText(seatProblem(err.problem || { detail: String(err) }));
    }
  });
  box.replaceChildren(...[
    el('h3', {}, `${kindName(game.kind, kinds)} for ${who} ${open ? 'is waiting for players' : 'is ready'}`),
    el('p', { class: 'small' }, 'Hand each player their own link. A link is the key to its seat: whoever opens it plays that seat, and it is shown only here, once. Opening one in this tab would make this tab that seat, so the links open in new tabs.'),
    items.length ? el('ul', { class: 'seat-links' }, ...items) : null,
    open ? el('p', { class: 'small' }, `Open seats: send each join link to one person. The game starts once every seat is taken${game.public ? '; as a public game it is also listed under “Open games”' : ''}.`) : null,
    joins.length ? el('ul', { class: 'seat-links', id: 'join-links' }, ...joins) : null,
    el('p', { class: 'row gap wrap' },
      copyButton(allLinks, 'Copy all links'),
      el('a', { id: 'watch-link', class: 'btn', href: gamePath(id, 'watch') }, 'Watch the game'),
      el('a', { class: 'btn btn-quiet', href: gamePath(id, 'audit') }, 'Audit'),
      open ? cancel : null, cancelNote,
      el('span', { class: 'muted tiny mono' }, `Seed commitment ${game.seed_commitment.slice(0, 16)}…`)),
  ].filter(Boolean));
}

function copyButton(text, label) {
  const button = el('button', { type: 'button', class: 'btn btn-small copy', 'aria-label': label }, label.startsWith('Copy all') ? label : 'Copy link');
  button.addEventListener('click', async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = legacyCopy(text);
    }
    const before = button.textContent;
    button.textContent = ok ? 'Copied ✓' : 'Copy failed: select the link';
    setTimeout(() => {
      button.textContent = before;
    }, 1800);
  });
  return button;
}

function legacyCopy(text) {
  const area = el('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
