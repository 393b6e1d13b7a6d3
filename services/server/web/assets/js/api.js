// Every call the app makes to the public REST API (/v1/...): fetch with the
// seat's bearer token, problems (application/problem+json) as errors, stream
// tickets and live streams (Server-Sent Events).

/** An API refusal or a network failure, carrying the problem's fields. */
export class ApiError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || 'The request failed');
    this.problem = problem;
    this.status = problem.status || 0;
    this.code = problem.code || 'error';
  }
}

/** The seat token this tab holds for a game (from its seat link), or null. */
export function storedToken(id) {
  try {
    return sessionStorage.getItem(`ludo.token.${id}`);
  } catch {
    return null;
  }
}

export function storeToken(id, token) {
  try {
    sessionStorage.setItem(`ludo.token.${id}`, token);
    return true;
  } catch {
    return false;
  }
}

export function forgetToken(id) {
  try {
    sessionStorage.removeItem(`ludo.token.${id}`);
  } catch {
    /* storage unavailable: nothing to forget */
  }
}

/** The game-admin token this tab keeps for a game it created (`ludo.admin.{id}`), or null. */
export function storedAdmin(id) {
  try {
    return sessionStorage.getItem(`ludo.admin.${id}`);
  } catch {
    return null;
  }
}

export function storeAdmin(id, token) {
  try {
    sessionStorage.setItem(`ludo.admin.${id}`, token);
  } catch {
    /* storage unavailable: this tab cannot cancel the game later */
  }
}

export function forgetAdmin(id) {
  try {
    sessionStorage.removeItem(`ludo.admin.${id}`);
  } catch {
    /* nothing to forget */
  }
}

const enc = encodeURIComponent;

/**
 * One request. Answers `{ json, text, response }` (json is null when the
 * body is not JSON); throws an ApiError for a problem or a network failure.
 */
export async function request(method, path, { token, body, contentType, signal, prefer } = {}) {
  const headers = { accept: 'application/json, application/problem+json, application/x-ndjson' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (prefer) headers.prefer = prefer;
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string' || body instanceof Blob) {
      payload = body;
      headers['content-type'] = contentType || 'text/plain';
    } else {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload, signal, cache: 'no-store' });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError({
      status: 0,
      code: 'network',
      title: 'Network error',
      detail: 'The server could not be reached. Check your connection; the page retries when you act again.',
    });
  }
  const text = await response.text();
  let json = null;
  if (text && /json/.test(response.headers.get('content-type') || '')) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!response.ok) {
    const problem = json && typeof json === 'object' && json.code ? json : {
      status: response.status,
      code: `http_${response.status}`,
      title: response.statusText || 'Error',
      detail: `The server answered ${response.status} ${response.statusText}`.trim(),
    };
    if (!problem.status) problem.status = response.status;
    const retry = response.headers.get('retry-after');
    if (retry && problem.retry_after_ms == null) problem.retry_after_ms = Number(retry) * 1000;
    throw new ApiError(problem);
  }
  return { json, text, response };
}

async function getJson(path, token) {
  return (await request('GET', path, { token })).json;
}

export const api = {
  kinds: () => getJson('/v1/kinds'),
  listGames({ kind, state, open, after, limit } = {}) {
    const q = new URLSearchParams();
    if (kind) q.set('kind', kind);
    if (state) q.set('state', state);
    if (open) q.set('open', 'true');
    if (after) q.set('after', after);
    if (limit) q.set('limit', String(limit));
    const qs = q.toString();
    return getJson(`/v1/games${qs ? `?${qs}` : ''}`);
  },
  createGame: async (body) => (await request('POST', '/v1/games', { body })).json,
  /** Takes an open seat: `{ name, invitation? }`; answers `{ version, seat, name, token, status }`. */
  join: async (id, body) => (await request('POST', `/v1/games/${enc(id)}/join`, { body })).json,
  /** The token's seat leaves a game still waiting, resigns, or (admin token) cancels the game. */
  seatAction: async (id, action, token) => (await request('POST', `/v1/games/${enc(id)}/${action}`, { token })).json,
  /** The game as the caller sees it; `{ json, text }` so pages can show the raw answer. */
  game: (id, token) => request('GET', `/v1/games/${enc(id)}`, { token }),
  legalMoves: (id, token) => getJson(`/v1/games/${enc(id)}/legal-moves`, token),
  /** Submits a move. The answer leaves out the view (`Prefer: return=minimal`):
   *  the page reads the game again, with its seats and clocks, after a move. */
  submitMove: async (id, token, move, expectedVersion) => {
    const body = { move, request_id: newRequestId() };
    if (expectedVersion != null) body.expected_version = expectedVersion;
    return (await request('POST', `/v1/games/${enc(id)}/moves`, { token, body, prefer: 'return=minimal' })).json;
  },
  /** Hands the token's seat to a server bot of `level` (autopilot). */
  handToBot: async (id, token, level) =>
    (await request('PUT', `/v1/games/${enc(id)}/autopilot`, { token, body: { bot: { level } } })).json,
  /** Takes the token's seat back from its bot. */
  takeBack: async (id, token) => (await request('DELETE', `/v1/games/${enc(id)}/autopilot`, { token })).json,
  steps: (id, token, from = 0, limit = 1000) =>
    getJson(`/v1/games/${enc(id)}/steps?from=${from}&limit=${limit}`, token),
  /** Every step, following `next_from` until the last page. */
  async allSteps(id, token) {
    const steps = [];
    let from = 0;
    let page;
    for (let guard = 0; guard < 10000; guard++) {
      page = await api.steps(id, token, from, 1000);
      steps.push(...page.steps);
      if (page.next_from == null || page.next_from <= from) break;
      from = page.next_from;
    }
    return { kind: page.kind, version: page.version, steps };
  },
  /** The game at version `at`; `{ json, text }` (the raw text is shown as is). */
  replay: (id, at, token, signal) => request('GET', `/v1/games/${enc(id)}/replay?at=${at}`, { token, signal }),
  exportText: async (id, token) => (await request('GET', `/v1/games/${enc(id)}/export`, { token })).text,
  verify: async (text) =>
    (await request('POST', '/v1/verify', { body: text, contentType: 'application/x-ndjson' })).json,
  /** A game's receipt from the transparency log (a problem `game_not_over` until it ends). */
  receipt: (id) => getJson(`/v1/games/${enc(id)}/receipt`),
  /** The transparency log: `{ origin, key, key_id, checkpoint?, tree? }`. */
  logInfo: () => getJson('/v1/log'),
  /** The proof that the log's tree of `from` leaves is a prefix of its tree of `to`. */
  logConsistency: (from, to) => getJson(`/v1/log/consistency?from=${from}&to=${to}`),
  streamTicket: async (id, token) =>
    (await request('POST', `/v1/games/${enc(id)}/stream-tickets`, { token })).json,
};

/** A fresh idempotency key for one submission. */
export function newRequestId() {
  if (globalThis.crypto && typeof crypto.randomUUID === 'function') return `web-${crypto.randomUUID()}`;
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Follows a game live. A seat (with `token`) opens its stream with a fresh
 * short-lived ticket each time (the token itself never goes in a URL); a
 * spectator opens the public stream. On an error the stream is closed and
 * reopened after a pause, from the record after the last one received.
 *
 * Callbacks: onRecord(update), onEnd(end), onLive(bool), onTrouble(error),
 * onRevoked(problem) (the seat changed hands: its token, renewed or left,
 * opens nothing now; the stream ends), and stillWanted() → Promise<bool>,
 * asked before a reopen (answer false once the game is over and everything
 * was received).
 * Returns { close() }.
 */
export function follow(id, { token, from = 0, onRecord, onEnd, onLive, onTrouble, onRevoked, stillWanted }) {
  let source = null;
  let closed = false;
  let next = from;
  let delay = 1000;
  let timer = null;
  let ticketsMissing = false;

  const setLive = (on) => onLive && onLive(on);

  async function open() {
    if (closed) return;
    let url = `/v1/games/${enc(id)}/stream?from=${next}`;
    if (token && !ticketsMissing) {
      try {
        const t = await api.streamTicket(id, token);
        url += `&ticket=${enc(t.ticket)}`;
      } catch (err) {
        if (err.status === 404 || err.status === 405) {
          // This server has no stream tickets: follow the public stream and
          // let the page refetch its own view with the token on each record.
          ticketsMissing = true;
        } else {
          if (onTrouble) onTrouble(err);
          return retry();
        }
      }
    }
    if (closed) return;
    const es = new EventSource(url);
    source = es;
    es.addEventListener('open', () => {
      delay = 1000;
      setLive(true);
    });
    es.addEventListener('record', (ev) => {
      let update;
      try {
        update = JSON.parse(ev.data);
      } catch {
        return;
      }
      const seq = update && update.event ? update.event.seq : Number(ev.lastEventId);
      if (Number.isFinite(seq)) next = Math.max(next, seq + 1);
      delay = 1000;
      if (onRecord) onRecord(update);
    });
    es.addEventListener('end', (ev) => {
      let end = null;
      try {
        end = JSON.parse(ev.data);
      } catch {
        /* an end without data still ends */
      }
      stop();
      if (onEnd) onEnd(end);
    });
    es.addEventListener('seat_revoked', (ev) => {
      let problem = null;
      try {
        problem = JSON.parse(ev.data);
      } catch {
        /* the event alone says it */
      }
      stop();
      if (onRevoked) onRevoked(problem);
      else if (onEnd) onEnd(null);
    });
    es.addEventListener('problem', (ev) => {
      let problem;
      try {
        problem = JSON.parse(ev.data);
      } catch {
        problem = { code: 'stream', detail: String(ev.data || 'The live stream reported a problem') };
      }
      if (onTrouble) onTrouble(new ApiError(problem));
    });
    es.addEventListener('error', () => {
      if (source !== es) return;
      // Reopen by ourselves: a ticket is short-lived, and we resume from
      // the record after the last one we saw.
      es.close();
      source = null;
      setLive(false);
      retry();
    });
  }

  async function retry() {
    if (closed) return;
    let wanted = true;
    try {
      wanted = stillWanted ? await stillWanted() : true;
    } catch {
      wanted = true;
    }
    if (!wanted || closed) {
      stop();
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(open, delay);
    delay = Math.min(delay * 2, 15000);
  }

  function stop() {
    closed = true;
    clearTimeout(timer);
    if (source) source.close();
    source = null;
    setLive(false);
  }

  open();
  return { close: stop };
}
