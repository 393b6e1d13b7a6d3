// Play (as a seat, token from the link's fragment) and watch (as a spectator), live.
import { api, ApiError, follow, forgetAdmin, forgetToken, storedAdmin, storedToken, storeToken } from './api.js';
import {
  clockTime, clockWords, el, endedByForfeit, errorPanel, gamePath, gameWords, genericMove, isOver, kindName, listJoin, openSeats, players,
  problemMeta, problemText, resultText, scoreLine, seatLabel, seatName, seatProblem, statusText,
} from './words.js';

const boardModules = new Map();

/** The board module of a kind, or null when it is missing or fails to load. */
export function loadBoard(kind) {
  if (!/^[a-z0-9_]+$/.test(kind)) return Promise.resolve(null);
  if (!boardModules.has(kind)) {
    boardModules.set(kind, import(`./boards/${kind}.js`).then(
      (mod) => (mod && typeof mod.renderBoard === 'function' ? mod : null),
      (err) => {
        console.warn(`No board for ${kind}:`, err);
        return null;
      },
    ));
  }
  return boardModules.get(kind);
}

/** Draws a board into `root`, or says why it cannot. */
export function drawBoard(root, mod, ctx) {
  const focused = document.activeElement && root.contains(document.activeElement)
    ? document.activeElement.getAttribute('data-pick') : null;
  root.replaceChildren();
  if (!mod) {
    root.append(el('p', { class: 'board-missing muted' },
      'The drawing of this board is not available here; the list of moves and the raw state show the game.'));
    return;
  }
  try {
    mod.renderBoard(root, ctx);
  } catch (err) {
    console.error(err);
    root.replaceChildren(el('p', { class: 'board-missing notice notice-error' },
      `The board could not be drawn (${err.message}); the list of moves still works.`));
    return;
  }
  if (focused != null) {
    const again = Array.from(root.querySelectorAll('[data-pick]')).find((n) => n.getAttribute('data-pick') === focused);
    if (again) again.focus({ preventScroll: true });
  }
}

/** Words for a move: the board's own, or generic ones. */
export function describe(mod, move, game) {
  if (mod && typeof mod.describeMove === 'function') {
    try {
      const words = mod.describeMove(move, game);
      if (words) return String(words);
    } catch (err) {
      console.warn('describeMove failed', err);
    }
  }
  return genericMove(move);
}

function takeTokenFromFragment(id) {
  if (!location.hash) return;
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (token) storeToken(id, token);
  // The fragment never reaches the server, but keep it out of the history too.
  history.replaceState(history.state, '', location.pathname + location.search);
}

export async function show(app, { id, page }) {
  const playing = page === 'play';
  if (playing) takeTokenFromFragment(id);
  const token = playing ? storedToken(id) : null;
  if (playing && !token) {
    document.title = 'No seat · Ludothèque';
    app.replaceChildren(
      el('h1', {}, 'No seat in this tab'),
      el('div', { class: 'notice' },
        el('p', {}, 'This tab holds no seat for this game. Open your seat link (with #token=…) or your join link (…/join#…) that the game’s creator gave you to play.'),
        el('p', {}, el('a', { href: gamePath(id, 'watch') }, 'Watch the game instead'), ' · ', el('a', { href: '/' }, 'All games'))));
    return;
  }

  const title = el('h1', { class: 'game-title' }, playing ? 'Your game' : 'Watching');
  const subtitle = el('p', { class: 'muted small game-sub' });
  const statusText_ = el('span', { class: 'status-text' }, 'Loading…');
  const statusBox = el('div', {
    id: 'status', class: 'status', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true', 'data-live': 'off',
  }, statusText_);
  const scores = el('p', { class: 'scores small', id: 'scores' });
  // Clocks: `.clock[data-seat]` per seat (running: `.clock-run`), then the control in words.
  const clocks = el('p', { class: 'clocks small', id: 'clocks', hidden: true });
  const board = el('div', { id: 'board', class: 'board', role: 'region', 'aria-label': 'Board' });
  const problem = el('div', { id: 'problem', class: 'problem', role: 'alert', 'aria-live': 'assertive' });
  const connection = el('div', { id: 'connection', class: 'connection', 'aria-live': 'polite' });
  const moves = el('ul', { id: 'legal-moves', class: 'legal-moves', 'aria-label': 'Your legal moves' });
  const movesHint = el('p', { class: 'muted small', id: 'moves-hint' });
  const movesFilter = el('input', {
    type: 'search', id: 'moves-filter', class: 'moves-filter', placeholder: 'Filter moves', 'aria-label': 'Filter the moves', hidden: true,
  });
  const recent = el('ol', { id: 'recent', class: 'recent small', 'aria-label': 'Latest steps' });
  const rawPre = el('pre', { class: 'raw' });
  const raw = el('details', { id: 'raw-view', class: 'raw-view' }, el('summary', {}, 'Raw state (JSON from the API)'), rawPre);

  // Autopilot: the seat's player hands the seat to the server's bot and takes it back.
  const autopilotLevel = el('select', { id: 'autopilot-level', 'aria-label': 'How well the computer plays' },
    el('option', { value: 'random' }, 'random'),
    el('option', { value: 'greedy' }, 'greedy'),
    el('option', { value: 'strong', selected: true }, 'strong'));
  const autopilotText = el('p', { class: 'small', id: 'autopilot-text' });
  const autopilotOn = el('button', { type: 'button', class: 'btn btn-small', id: 'autopilot-on' }, 'Let the computer play for me');
  const autopilotOff = el('button', { type: 'button', class: 'btn btn-small', id: 'autopilot-off' }, 'Take my seat back');
  const autopilot = el('section', { class: 'panel', id: 'autopilot', 'aria-labelledby': 'autopilot-title', hidden: true },
    el('h2', { id: 'autopilot-title' }, 'Autopilot'), autopilotText,
    el('p', { class: 'row gap wrap' }, autopilotLevel, autopilotOn, autopilotOff));

  async function setAutopilot(level) {
    if (busy || gone || !playing) return;
    busy = true;
    showProblem(null);
    try {
      if (level) await api.handToBot(id, token, level);
      else await api.takeBack(id, token);
      await refresh();
    } catch (err) {
      showProblem(err instanceof ApiError ? err.problem : { detail: String(err), code: 'error' });
      await refresh();
    } finally {
      busy = false;
    }
  }
  autopilotOn.addEventListener('click', () => setAutopilot(autopilotLevel.value));
  autopilotOff.addEventListener('click', () => setAutopilot(null));

  // The table: who is missing while seats are open, leaving, cancelling
  // (the creator's tab, holding the admin token), resigning; each confirmed first.
  const tableText = el('p', { class: 'small', id: 'table-text' });
  const leave = el('button', { type: 'button', class: 'btn btn-small', id: 'leave-game' }, 'Leave');
  const cancel = el('button', { type: 'button', class: 'btn btn-small', id: 'cancel-game' }, 'Cancel game');
  const resign = el('button', { type: 'button', class: 'btn btn-small', id: 'resign' }, 'Resign');
  const confirmText = el('span', { class: 'small' });
  const confirmYes = el('button', { type: 'button', class: 'btn btn-small btn-primary', id: 'confirm-yes' });
  const confirmNo = el('button', { type: 'button', class: 'btn btn-small btn-quiet', id: 'confirm-no' }, 'No, go back');
  const confirmBox = el('div', { class: 'notice notice-warn confirm', id: 'confirm', hidden: true, role: 'group' },
    el('p', {}, confirmText), el('p', { class: 'row gap wrap' }, confirmYes, confirmNo));
  const tablePanel = el('section', { class: 'panel', id: 'table-panel', 'aria-labelledby': 'table-title', hidden: true },
    el('h2', { id: 'table-title' }, 'The table'), tableText, el('p', { class: 'row gap wrap' }, leave, cancel, resign), confirmBox);
  let confirmed = null;

  function ask(question, yes, action) {
    confirmText.textContent = question;
    confirmYes.textContent = yes;
    confirmed = action;
    confirmBox.hidden = false;
    confirmYes.focus();
  }
  confirmNo.addEventListener('click', () => {
    confirmBox.hidden = true;
    confirmed = null;
  });
  confirmYes.addEventListener('click', async () => {
    const action = confirmed;
    confirmBox.hidden = true;
    confirmed = null;
    if (!action || busy || gone) return;
    busy = true;
    showProblem(null);
    try {
      await action();
    } catch (err) {
      showProblem(seatProblem(err instanceof ApiError ? err.problem : { detail: String(err), code: 'error' }));
    } finally {
      busy = false;
    }
    if (!gone) await refresh();
  });
  leave.addEventListener('click', () => ask('Leave this game? Your seat opens again for someone else; coming back takes a join link.', 'Yes, leave', async () => {
    await api.seatAction(id, 'leave', token);
    forgetToken(id);
    gone = true;
    if (stream) stream.close();
    app.replaceChildren(el('h1', {}, 'You left the game'),
      el('p', { class: 'notice notice-info', id: 'left' }, 'Your seat is open again and this tab no longer holds it.'),
      el('p', {}, el('a', { href: gamePath(id, 'watch') }, 'Watch the game'), ' · ', el('a', { href: '/' }, 'All games')));
  }));
  cancel.addEventListener('click', () => ask('Cancel this game for everyone? It cannot be undone.', 'Yes, cancel the game', async () => {
    await api.seatAction(id, 'cancel', storedAdmin(id));
    forgetAdmin(id);
  }));
  resign.addEventListener('click', () => ask(
    game.seats.length > 2 && !gameWords(game.kind).camps ? 'Resign? A bot plays your seat from now on, and you cannot take it back.'
      : 'Resign? Your side loses the game; this cannot be undone.',
    'Yes, resign', () => api.seatAction(id, 'resign', token)));

  function drawTable() {
    const me = game.viewer_seat;
    const mine = me != null ? game.seats[me] || {} : {};
    const st = game.status.state;
    const open = openSeats(game.status);
    const admin = st === 'waiting' && storedAdmin(id);
    leave.hidden = !(playing && me != null && st === 'waiting');
    cancel.hidden = !admin;
    resign.hidden = !(playing && me != null && st === 'in_progress' && !mine.resigned);
    const words = [];
    if (st === 'waiting') {
      const joined = game.seats.filter((s) => s.name != null).map((s) => s.name);
      words.push(`Waiting for ${players(open.length)}: ${listJoin(open.map((s) => `seat ${s + 1}`))} ${open.length === 1 ? 'is' : 'are'} open${joined.length ? ` (${listJoin(joined)} ${joined.length === 1 ? 'has' : 'have'} joined)` : ''}. The game starts when every seat is taken.`);
      if (admin) words.push('You created it: you may cancel it until it starts.');
    } else if (st === 'cancelled') {
      words.push('The game was cancelled before it started.');
    } else if (mine.resigned) {
      words.push(st === 'finished' ? 'You resigned: the game is over.' : `You resigned: ${mine.bot ? `a ${mine.bot.level} bot` : 'a bot'} plays your seat now. You can keep watching.`);
    } else if (st === 'in_progress' && playing && me != null) {
      words.push('You may resign at any time.');
    }
    tableText.textContent = words.join(' ');
    tableText.dataset.state = mine.resigned ? 'resigned' : st;
    tablePanel.hidden = !words.length && leave.hidden && cancel.hidden && resign.hidden;
    if (tablePanel.hidden) confirmBox.hidden = true;
  }

  function drawAutopilot() {
    const me = game.viewer_seat;
    const inPlay = game.status.state === 'in_progress';
    const bot = me != null ? (game.seats[me] || {}).bot : null;
    autopilot.hidden = !playing || me == null || !inPlay || Boolean((game.seats[me] || {}).resigned);
    autopilot.dataset.bot = bot ? bot.level : '';
    autopilotText.textContent = bot
      ? `The computer (${bot.level}) plays your seat. Your moves still count if you make one.`
      : 'You play your seat. The computer can take it over, and you can take it back at any time.';
    autopilotOn.hidden = Boolean(bot);
    autopilotLevel.hidden = Boolean(bot);
    autopilotOff.hidden = !bot;
  }

  const movesTitle = el('h2', { id: 'moves-title' }, playing ? 'Your moves' : 'Moves');
  const movesSection = el('section', { class: 'panel moves', 'aria-labelledby': 'moves-title' },
    movesTitle, movesHint, movesFilter, moves);
  const side = el('aside', { class: 'side' }, problem, tablePanel, movesSection, autopilot,
    el('section', { class: 'panel', 'aria-labelledby': 'recent-title' }, el('h2', { id: 'recent-title' }, 'Latest'), recent));

  app.replaceChildren(
    el('div', { class: 'game-head' }, el('div', {}, title, subtitle), statusBox),
    connection,
    scores,
    clocks,
    el('div', { class: 'game-layout' }, el('div', { class: 'board-wrap' }, board), side),
    raw);

  let game = null;
  let legal = [];
  let mod = null;
  let busy = false;
  let stream = null;
  let recentFrom = -1;
  let drawn = { text: null, legal: null };
  let gone = false;
  // The seat changed hands (its stream said `seat_revoked`).
  let revoked = false;

  function showProblem(p, { info = false } = {}) {
    problem.replaceChildren();
    problem.removeAttribute('data-code');
    problem.removeAttribute('data-rule');
    if (!p) return;
    problem.dataset.code = p.code || 'error';
    if (p.rule) problem.dataset.rule = p.rule;
    problem.append(el('div', { class: `notice ${info ? 'notice-info' : 'notice-error'}` },
      el('p', { class: 'problem-detail' }, problemText(p)),
      problemMeta(p) ? el('p', { class: 'problem-meta muted small' }, problemMeta(p)) : null,
      el('button', { type: 'button', class: 'btn btn-small btn-quiet', onclick: () => showProblem(null) }, 'Dismiss')));
    // On a phone the list sits below the board: bring the refusal into sight.
    const box = problem.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) problem.scrollIntoView({ block: 'nearest' });
  }

  function setConnection(message, { retry } = {}) {
    connection.replaceChildren();
    if (!message) return;
    connection.append(el('p', { class: 'notice notice-warn small' }, message,
      retry ? el('button', { type: 'button', class: 'btn btn-small', onclick: retry }, 'Retry now') : null));
  }

  async function submit(move) {
    if (busy || gone || !game || !playing) return;
    busy = true;
    setBusy(true);
    showProblem(null);
    try {
      await api.submitMove(id, token, move, game.version);
      await refresh();
    } catch (err) {
      const p = err instanceof ApiError ? err.problem : { detail: String(err), code: 'error' };
      if (p.code === 'time_up') {
        showProblem({ ...p, detail: `Your time ran out before this move arrived, so it does not count: ${game.clock && game.clock.on_timeout === 'lose' ? 'your seat lost on time' : 'a bot makes the move for you'}.` });
      } else if (p.code === 'version_conflict') {
        showProblem({ ...p, detail: 'The game had moved on before your move arrived; the view is up to date now, so choose again.' }, { info: true });
      } else {
        showProblem(p);
      }
      if (['time_up', 'version_conflict', 'not_your_turn', 'game_finished', 'rule_violation'].includes(p.code)) await refresh();
    } finally {
      busy = false;
      setBusy(false);
    }
  }

  function setBusy(on) {
    for (const b of moves.querySelectorAll('button.legal-move')) b.disabled = on;
    board.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  function draw(text) {
    const finished = game.status.state === 'finished';
    const names = game.seats.map(seatLabel);
    const me = game.viewer_seat;
    title.textContent = `${kindName(game.kind)}: ${listJoin(names)}`;
    subtitle.replaceChildren(...[
      playing && me != null ? el('strong', {}, `You are ${seatName(game.seats, me)}. `) : (playing ? '' : 'Watching as a spectator. '),
      `Version ${game.version}`,
      !playing && storedToken(id) ? el('span', {}, ' · ', el('a', { href: gamePath(id, 'play') }, 'Play your seat')) : null,
      !playing && game.public && game.status.state === 'waiting' ? el('span', {}, ' · ', el('a', { href: gamePath(id, 'join') }, 'Join this game')) : null,
    ].filter(Boolean));
    // A resigned seat's bot moves for it: its turn is not "your turn".
    const seen = me != null && (game.seats[me] || {}).resigned ? { ...game, viewer_seat: null } : game;
    statusText_.textContent = statusText(seen);
    statusBox.dataset.version = String(game.version);
    statusBox.dataset.state = game.status.state;
    statusBox.classList.toggle('my-turn', !finished && seen.viewer_seat != null && (game.status.to_move || []).includes(me));
    scores.textContent = finished && !endedByForfeit(game.status) ? `Final scores: ${scoreLine(game.status.result, game.seats)}` : '';
    document.title = `${statusText(seen)} · ${kindName(game.kind)} · Ludothèque`;

    const idle = { waiting: 'Play begins once every seat is taken.', cancelled: 'The game was cancelled before it started.' }[game.status.state];
    if (idle) board.replaceChildren(el('p', { class: 'board-missing muted' }, idle));
    else drawBoard(board, mod, { game, legalMoves: legal, submit, interactive: playing });

    moves.replaceChildren(...legal.map((move, i) => {
      const words = describe(mod, move, game);
      return el('li', {}, el('button', {
        type: 'button', class: 'legal-move', dataset: { index: String(i) }, onclick: () => submit(move),
      }, words));
    }));
    if (game.status.state === 'cancelled') {
      movesHint.textContent = 'This game was cancelled before it started.';
    } else if (game.status.state === 'waiting') {
      movesHint.textContent = 'The game starts when every seat is taken.';
    } else if (finished) {
      movesHint.replaceChildren(`${resultText(game.status.result, game.seats, game.kind, game.status.forfeits)}. The game is over: `,
        el('a', { href: gamePath(id, 'replay') }, 'replay it'), ' or ', el('a', { href: gamePath(id, 'audit') }, 'check its record'), '.');
    } else if (!playing) {
      movesHint.textContent = 'Spectators see the moves as they are made.';
    } else if (legal.length === 0) {
      movesHint.textContent = seen === game && (game.status.to_move || []).includes(me) ? 'No move is possible.' : statusText(seen);
    } else {
      movesHint.textContent = `${legal.length} legal move${legal.length === 1 ? '' : 's'}. Act on the board, or pick one here.`;
    }
    movesTitle.textContent = finished ? 'Result' : playing ? 'Your moves' : 'Moves';
    ticking = (game.status.clock || {}).seats || [];
    clocks.hidden = !game.clock;
    clocks.replaceChildren(...ticking.map((c) => el('span', { class: c.deadline ? 'clock clock-run' : 'clock', dataset: { seat: String(c.seat) } },
      `${seatName(game.seats, c.seat)} `, el('b', {}))), game.clock ? clockWords(game.clock) : '');
    tick();
    drawAutopilot();
    drawTable();
    movesFilter.hidden = legal.length <= 12;
    applyFilter();
    rawPre.textContent = text;
  }

  /** The running clock shows its deadline − now, the others their banks. */
  function tick() {
    for (const [i, c] of ticking.entries()) {
      const left = c.deadline ? Date.parse(c.deadline) - Date.now() : c.bank_ms;
      const span = clocks.children[i];
      span.hidden = left == null;
      span.classList.toggle('clock-low', left < 1e4);
      span.lastChild.textContent = clockTime(left);
    }
  }
  let ticking = [];
  setInterval(tick, 250);

  function applyFilter() {
    const q = movesFilter.value.trim().toLowerCase();
    for (const li of moves.children) li.hidden = q !== '' && !li.textContent.toLowerCase().includes(q);
  }
  movesFilter.addEventListener('input', applyFilter);

  let heard = -1;
  let lagging = 0;
  let lagTimer = null;
  let retryTimer = null;
  let retryDelay = 1000;
  let refreshing = null;
  let again = false;
  /** Refetches the state and the legal moves and redraws; calls coalesce. */
  function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        await refreshOnce();
      } while (again);
    })().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  async function refreshOnce() {
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const { json, text } = await api.game(id, token);
        let moveList = [];
        const mine = playing && json.status.state === 'in_progress' && (json.status.to_move || []).includes(json.viewer_seat)
          && !(json.seats[json.viewer_seat] || {}).resigned;
        if (mine) {
          const lm = await api.legalMoves(id, token);
          if (lm.version !== json.version && attempt < 2) continue;
          moveList = lm.moves || [];
        }
        const legalText = JSON.stringify(moveList);
        game = json;
        legal = moveList;
        if (!mod) mod = await loadBoard(game.kind);
        // Unchanged: keep the board as it is (a pick in progress survives).
        if (text !== drawn.text || legalText !== drawn.legal) {
          drawn = { text, legal: legalText };
          draw(text);
        }
        setConnection(null);
        retryDelay = 1000;
        loadRecent();
        // This server sends a record only once reads return it; a server
        // whose reads lag its stream (a replica behind) is asked again
        // shortly until the state catches up.
        if (game.version < heard && lagging < 40) {
          lagging += 1;
          clearTimeout(lagTimer);
          lagTimer = setTimeout(() => refresh(), Math.min(50 * lagging, 1000));
        } else {
          lagging = 0;
        }
        return;
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && playing) {
        const title = revoked ? 'This seat is no longer yours in this tab' : 'This seat link does not open this game';
        app.replaceChildren(el('h1', {}, title),
          revoked ? el('p', { class: 'notice notice-info', id: 'revoked' }, 'The seat changed hands: its token was renewed, or a bot took it over when its time ran out. This tab stopped following it as that seat.') : errorPanel(err),
          el('p', {}, el('button', {
            type: 'button', class: 'btn', onclick: () => {
              forgetToken(id);
              location.assign(gamePath(id, 'watch'));
            },
          }, 'Forget it and watch instead')));
        if (stream) stream.close();
        gone = true;
        return;
      }
      if (!game) throw err;
      setConnection(`Could not refresh the game: ${problemText(err.problem || { detail: err.message })}. Trying again…`, { retry: refresh });
      // Try again by itself: a record may not follow soon to ask for it.
      clearTimeout(retryTimer);
      retryTimer = setTimeout(() => refresh(), retryDelay);
      retryDelay = Math.min(retryDelay * 2, 15000);
      return;
    }
  }

  async function loadRecent() {
    const v = game.version;
    if (v === recentFrom) return;
    recentFrom = v;
    try {
      const page = await api.steps(id, token, Math.max(0, v - 5), 6);
      if (recentFrom !== v) return;
      recent.replaceChildren(...page.steps.slice().reverse().map((s) => el('li', { dataset: { seq: String(s.seq) } },
        el('a', { href: `${gamePath(id, 'replay')}?at=${s.seq}`, class: 'step-link', 'aria-label': `Replay from step ${s.seq}` }, `#${s.seq}`),
        ' ', s.lines.join('. '))));
    } catch {
      recentFrom = -1;
    }
  }

  function startStream() {
    if (stream || gone || !game || isOver(game.status)) return;
    stream = follow(id, {
      token: playing ? token : null,
      from: game.version + 1,
      onRecord: (update) => {
        const seq = update && update.event ? update.event.seq : null;
        if (Number.isFinite(seq)) heard = Math.max(heard, seq);
        refresh();
      },
      onEnd: () => {
        stream = null;
        refresh();
      },
      onRevoked: () => {
        stream = null;
        revoked = true;
        refresh();
      },
      onLive: (on) => {
        statusBox.dataset.live = on ? 'on' : 'off';
        statusBox.title = on ? 'Updates arrive live' : '';
        if (on) setConnection(null);
      },
      onTrouble: (err) => setConnection(`Live updates interrupted (${problemText(err.problem || {})}); reconnecting…`),
      stillWanted: async () => {
        await refresh();
        if (isOver(game.status)) return false;
        setConnection('Live updates interrupted; reconnecting…');
        return true;
      },
    });
  }

  // The page returns to the board after a while away: catch up at once.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && game) refresh();
  });

  await refresh();
  startStream();
}
