// Replay: a timeline over every version, frames from GET /v1/games/{id}/replay?at=N.
import { api, ApiError, follow, storedToken } from './api.js';
import { drawBoard, loadBoard } from './game.js';
import {
  el, endedByForfeit, errorPanel, gamePath, isOver, kindName, listJoin, scoreLine, seatLabel, seatName, statusText,
} from './words.js';

const MAX_CACHED = 400;

export async function show(app, { id }) {
  let token = storedToken(id);
  const spectatorInfo = await api.game(id).then((r) => r.json);
  const kind = spectatorInfo.kind;
  const seats = spectatorInfo.seats;
  const mod = await loadBoard(kind);
  document.title = `Replay · ${kindName(kind)} · Ludothèque`;

  const state = {
    at: 0,
    latest: spectatorInfo.latest_version ?? spectatorInfo.version,
    perspective: token ? 'seat' : 'spectator',
    steps: [],
    finished: isOver(spectatorInfo.status),
  };
  const frames = new Map();

  // Controls.
  const scrubber = el('input', {
    type: 'range', id: 'scrubber', min: '0', max: String(state.latest), step: '1', value: '0',
    'aria-label': 'Version', class: 'scrubber',
  });
  const prev = el('button', { type: 'button', id: 'prev', class: 'btn', 'aria-label': 'Step back' }, '◀ Back');
  const next = el('button', { type: 'button', id: 'next', class: 'btn', 'aria-label': 'Step forward' }, 'Next ▶');
  const first = el('button', { type: 'button', id: 'first', class: 'btn btn-quiet', 'aria-label': 'Go to the start' }, '«');
  const last = el('button', { type: 'button', id: 'last', class: 'btn btn-quiet', 'aria-label': 'Go to the latest version' }, '»');
  const playBtn = el('button', { type: 'button', id: 'play-toggle', class: 'btn btn-quiet', 'aria-pressed': 'false' }, 'Play');
  const position = el('output', { id: 'position', for: 'scrubber', class: 'position' });
  const perspective = el('select', { id: 'perspective', 'aria-label': 'Whose view' });
  const perspectiveNote = el('p', { class: 'muted small', id: 'perspective-note' });
  const statusTextEl = el('span', { class: 'status-text' }, 'Loading…');
  const statusBox = el('div', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' }, statusTextEl);
  const scores = el('p', { class: 'scores small' });
  const board = el('div', { id: 'board', class: 'board', role: 'region', 'aria-label': 'Board' });
  const stepsList = el('ol', { id: 'steps', class: 'steps', 'aria-label': 'Steps' });
  const stepsBox = el('div', { class: 'steps-box', tabindex: '-1' }, stepsList);
  const rawPre = el('pre', { class: 'raw' });
  const raw = el('details', { id: 'raw-view', class: 'raw-view' }, el('summary', {}, 'Raw frame (JSON from the API)'), rawPre);
  const notice = el('div', { id: 'frame-problem', 'aria-live': 'polite' });

  function perspectiveOptions(seatLabel) {
    const options = [el('option', { value: 'spectator' }, 'Spectator (public only)')];
    if (token) options.unshift(el('option', { value: 'seat' }, seatLabel || 'Your seat'));
    perspective.replaceChildren(...options);
    perspective.value = state.perspective;
    perspective.disabled = options.length < 2;
  }
  perspectiveOptions();
  function notePerspective() {
    perspectiveNote.textContent = state.finished
      ? 'The game is over: every view shows everything.'
      : token
        ? 'Your seat sees its own hidden items; a spectator sees only public ones.'
        : 'Open your seat link in this tab to see your own hand; a spectator sees only public information.';
  }
  notePerspective();

  app.replaceChildren(
    el('div', { class: 'game-head' },
      el('div', {},
        el('h1', { class: 'game-title' }, `Replay: ${kindName(kind)}, ${listJoin(seats.map(seatLabel))}`),
        el('p', { class: 'muted small' }, el('a', { href: gamePath(id, 'watch') }, 'Current state'), ' · ', el('a', { href: gamePath(id, 'audit') }, 'Audit'))),
      statusBox),
    el('div', { class: 'panel replay-controls', role: 'group', 'aria-label': 'Timeline' },
      el('div', { class: 'row gap wrap timeline-buttons' }, first, prev, playBtn, next, last, position),
      scrubber,
      el('div', { class: 'row gap wrap perspective' }, el('label', { for: 'perspective' }, 'View as'), perspective, perspectiveNote)),
    notice,
    scores,
    el('div', { class: 'game-layout' },
      el('div', { class: 'board-wrap' }, board),
      el('aside', { class: 'side' }, el('section', { class: 'panel', 'aria-labelledby': 'steps-title' },
        el('h2', { id: 'steps-title' }, 'Steps'), el('p', { class: 'muted tiny' }, 'Keys: ← → step, Home / End jump.'), stepsBox))),
    raw);

  const viewerToken = () => (state.perspective === 'seat' ? token : null);

  // Steps (in the words the caller may see).
  async function loadSteps() {
    const { version, steps } = await api.allSteps(id, viewerToken());
    state.steps = steps;
    setLatest(version);
    stepsList.replaceChildren(...steps.map(stepItem));
    highlight();
  }

  function stepItem(step) {
    return el('li', { dataset: { seq: String(step.seq) } },
      el('button', { type: 'button', class: 'step', 'aria-label': `Step ${step.seq}: ${step.lines.join('. ')}`, onclick: () => go(step.seq) },
        el('span', { class: 'seq' }, String(step.seq)),
        el('span', { class: 'lines' }, ...step.lines.map((line) => el('span', { class: 'line' }, line)))));
  }

  function setLatest(version) {
    if (version == null || version < 0) return;
    state.latest = Math.max(state.latest, version);
    scrubber.max = String(state.latest);
    syncButtons();
  }

  function syncButtons() {
    prev.disabled = state.at <= 0;
    first.disabled = state.at <= 0;
    next.disabled = state.at >= state.latest;
    last.disabled = state.at >= state.latest;
    position.textContent = `Version ${state.at} of ${state.latest}`;
    scrubber.setAttribute('aria-valuetext', `Version ${state.at} of ${state.latest}`);
  }

  let current = null;
  function highlight() {
    if (current) {
      current.classList.remove('current');
      current.removeAttribute('aria-current');
    }
    current = stepsList.querySelector(`li[data-seq="${state.at}"]`);
    if (!current) return;
    current.classList.add('current');
    current.setAttribute('aria-current', 'step');
    // Scroll the list only, never the page.
    const top = current.offsetTop - stepsBox.offsetTop;
    if (top < stepsBox.scrollTop) stepsBox.scrollTop = top;
    else if (top + current.offsetHeight > stepsBox.scrollTop + stepsBox.clientHeight) {
      stepsBox.scrollTop = top + current.offsetHeight - stepsBox.clientHeight;
    }
  }

  // Frames: cached per perspective and version; only the latest asked is drawn.
  function frame(at, persp = state.perspective) {
    const key = `${persp}:${at}`;
    let entry = frames.get(key);
    if (!entry) {
      entry = api.replay(id, at, persp === 'seat' ? token : null);
      entry.catch(() => frames.delete(key));
      frames.set(key, entry);
      if (frames.size > MAX_CACHED) frames.delete(frames.keys().next().value);
    }
    return entry;
  }

  const lateTries = new Map();
  let wanted = 0;
  let timer = null;
  const settled = new Set();
  function go(n, { fromScrubber = false } = {}) {
    const at = Math.max(0, Math.min(state.latest, Number.isFinite(n) ? Math.trunc(n) : 0));
    state.at = at;
    if (!fromScrubber) scrubber.value = String(at);
    syncButtons();
    highlight();
    history.replaceState(history.state, '', `${location.pathname}?at=${at}`);
    const ticket = ++wanted;
    clearTimeout(timer);
    const key = `${state.perspective}:${at}`;
    // A frame already fetched draws at once; otherwise wait for the scrubbing to pause.
    const delay = settled.has(key) ? 0 : fromScrubber ? 60 : 0;
    statusBox.setAttribute('aria-busy', 'true');
    timer = setTimeout(async () => {
      try {
        const result = await frame(at);
        settled.add(key);
        if (ticket !== wanted) return;
        drawFrame(result);
        notice.replaceChildren();
        prefetch(at);
      } catch (err) {
        if (ticket !== wanted) return;
        if (err instanceof ApiError && err.status === 401 && state.perspective === 'seat') {
          token = null;
          state.perspective = 'spectator';
          perspectiveOptions();
          notice.replaceChildren(el('p', { class: 'notice notice-warn small' }, 'The seat token in this tab does not open this game; showing the spectator’s view.'));
          await loadSteps();
          go(state.at);
          return;
        }
        // A record the stream just sent may not be replayable for a moment
        // (the game's state catches up with its log): try again shortly.
        if (err instanceof ApiError && err.status === 400 && at <= state.latest && (lateTries.get(at) || 0) < 10) {
          lateTries.set(at, (lateTries.get(at) || 0) + 1);
          setTimeout(() => {
            if (state.at === at) go(at);
          }, 200);
          return;
        }
        notice.replaceChildren(errorPanel(err, { retry: () => go(state.at) }));
      } finally {
        if (ticket === wanted) statusBox.removeAttribute('aria-busy');
      }
    }, delay);
  }

  function prefetch(at) {
    for (const n of [at + 1, at - 1, at + 2]) {
      if (n < 0 || n > state.latest) continue;
      const key = `${state.perspective}:${n}`;
      if (!frames.has(key)) frame(n).then(() => settled.add(key), () => {});
    }
  }

  let labelled = null;
  function drawFrame({ json, text }) {
    const game = json;
    statusBox.dataset.version = String(game.version);
    statusBox.dataset.state = game.status.state;
    const mine = game.viewer_seat != null && game.status.state === 'in_progress' && (game.status.to_move || []).includes(game.viewer_seat);
    statusTextEl.textContent = `Version ${game.version}: ${statusText(game, { viewer: null })}${mine ? ' (you)' : ''}`;
    scores.textContent = game.status.state === 'finished' && !endedByForfeit(game.status) ? `Final scores: ${scoreLine(game.status.result, game.seats)}` : '';
    const seatLabel = game.viewer_seat != null && token ? `${seatName(game.seats, game.viewer_seat)} (your seat)` : null;
    if (seatLabel && seatLabel !== labelled) {
      labelled = seatLabel;
      perspectiveOptions(seatLabel);
    }
    if (game.seed && !state.finished) {
      state.finished = true;
      notePerspective();
    }
    drawBoard(board, mod, { game, legalMoves: [], submit: () => {}, interactive: false });
    rawPre.textContent = text;
  }

  // Wiring.
  scrubber.addEventListener('input', () => {
    stopPlaying();
    go(Number(scrubber.value), { fromScrubber: true });
  });
  prev.addEventListener('click', () => {
    stopPlaying();
    go(state.at - 1);
  });
  next.addEventListener('click', () => {
    stopPlaying();
    go(state.at + 1);
  });
  first.addEventListener('click', () => {
    stopPlaying();
    go(0);
  });
  last.addEventListener('click', () => {
    stopPlaying();
    go(state.latest);
  });
  perspective.addEventListener('change', async () => {
    state.perspective = perspective.value;
    try {
      await loadSteps();
    } catch (err) {
      notice.replaceChildren(errorPanel(err));
    }
    go(state.at);
  });

  let playing = null;
  function stopPlaying() {
    if (!playing) return;
    clearInterval(playing);
    playing = null;
    playBtn.textContent = 'Play';
    playBtn.setAttribute('aria-pressed', 'false');
  }
  playBtn.addEventListener('click', () => {
    if (playing) return stopPlaying();
    if (state.at >= state.latest) go(0);
    playBtn.textContent = 'Pause';
    playBtn.setAttribute('aria-pressed', 'true');
    playing = setInterval(() => {
      if (state.at >= state.latest) return stopPlaying();
      go(state.at + 1);
    }, 900);
  });

  const onKey = (ev) => {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target;
    if (t === scrubber) return; // the range moves by itself and fires `input`
    if (t && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName))) return;
    const moves = { ArrowLeft: state.at - 1, ArrowRight: state.at + 1, Home: 0, End: state.latest };
    if (!(ev.key in moves)) return;
    ev.preventDefault();
    stopPlaying();
    go(moves[ev.key]);
  };
  document.addEventListener('keydown', onKey);

  // A running game grows while you watch its replay.
  if (!state.finished) {
    follow(id, {
      from: state.latest + 1,
      onRecord: (update) => {
        const seq = update.event.seq;
        const follows = state.at === state.latest;
        setLatest(seq);
        // Every frame names the game's latest version: those cached are stale now.
        frames.clear();
        settled.clear();
        if (update.status && isOver(update.status)) {
          // Once it is over everyone sees everything: earlier frames and
          // steps fetched while it ran showed less, so fetch them afresh.
          state.finished = true;
          notePerspective();
          loadSteps().then(() => go(state.at), () => {});
        }
        api.steps(id, viewerToken(), seq, 1).then((page) => {
          for (const s of page.steps) {
            if (!stepsList.querySelector(`li[data-seq="${s.seq}"]`)) stepsList.append(stepItem(s));
          }
          highlight();
        }, () => {});
        go(follows && !playing ? seq : state.at);
      },
      stillWanted: async () => !state.finished,
    });
  }

  try {
    await loadSteps();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && token) {
      token = null;
      state.perspective = 'spectator';
      perspectiveOptions();
      await loadSteps();
    } else {
      notice.replaceChildren(errorPanel(err, { retry: () => location.reload() }));
    }
  }
  const asked = new URLSearchParams(location.search).get('at');
  go(asked == null || asked === '' ? 0 : Number(asked));
}
