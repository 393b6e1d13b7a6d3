// Following a game live: `GET /v1/games/{id}/stream` read over `fetch`,
// parsed by `SseParser`, reconnected with `Last-Event-ID` until the game's
// `end` event.
import { LudoNetworkError, LudoProblem } from "./errors.js";
import { problemOf, sleep, url } from "./http.js";
import { SseParser, type SseEvent } from "./sse.js";
import type { Problem, StreamEnd, StreamTicket } from "./types/common.js";
import type { GameUpdate } from "./types/kinds.js";

export interface FollowOptions {
  /** Follow as this seat (its token); default the client's token; `null`: as a spectator. */
  token?: string | null | undefined;
  /**
   * How a seat's stream is opened: `"ticket"` (default) trades the token for
   * a short-lived, read-only stream ticket before each connection, as the
   * API guide asks of long-lived streams; `"header"` sends the token itself.
   */
  auth?: "ticket" | "header" | undefined;
  /** First record to send (default 0: the whole log, then live). */
  from?: number | undefined;
  /** Resume after this record (its seq), as a reconnect does. Wins over `from`. */
  lastEventId?: number | string | undefined;
  /** Reconnections in a row without a record before giving up. Default 5. */
  reconnectAttempts?: number | undefined;
  /** Wait before a reconnection (the server's `retry:` wins). Default 500 ms. */
  reconnectDelayMs?: number | undefined;
  /** A connection silent this long is presumed dead and replaced. Default 45 s (the server pings every 15 s). */
  idleTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface StreamContext {
  baseUrl: string;
  fetch: typeof fetch;
  token: string | undefined;
  streamTicket(id: string, token: string, signal: AbortSignal): Promise<StreamTicket>;
}

/**
 * A game's records, in order, each exactly once, as they become durable:
 * `for await (const update of stream)`. The loop ends after the game's last
 * record (`end` then holds the result); breaking out of it closes the
 * connection. A dropped connection is reopened after `lastEventId`; a seat
 * that changed hands ends the loop with a `LudoProblem` (`seat_revoked`).
 */
export class GameStream implements AsyncIterable<GameUpdate> {
  /** The seq of the last record received, as text (the SSE id). */
  lastEventId: string | undefined;
  /** The game's end, once the stream delivered it. */
  end: StreamEnd | undefined;
  /** How many times the connection was reopened. */
  reconnects = 0;

  private readonly controller = new AbortController();
  private started = false;

  constructor(
    private readonly ctx: StreamContext,
    private readonly gameId: string,
    private readonly options: FollowOptions = {},
  ) {
    if (options.lastEventId !== undefined) this.lastEventId = String(options.lastEventId);
    if (options.signal?.aborted) this.close();
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /** Stops following: the loop ends, the connection closes. */
  close(): void {
    this.controller.abort();
  }

  [Symbol.asyncIterator](): AsyncGenerator<GameUpdate, void, undefined> {
    if (this.started) throw new Error("a GameStream can be iterated once; follow again to resume");
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<GameUpdate, void, undefined> {
    const signal = this.controller.signal;
    const attempts = this.options.reconnectAttempts ?? 5;
    let delay = this.options.reconnectDelayMs ?? 500;
    let failures = 0;
    try {
      while (!signal.aborted) {
        const parser = new SseParser(this.lastEventId);
        let received = false;
        let failure: unknown;
        try {
          const body = await this.connect(signal);
          if (body === undefined) return; // 204: the game is over and everything was sent
          for await (const event of events(body, parser, signal, this.options.idleTimeoutMs ?? 45_000)) {
            if (event.event === "record") {
              const update = JSON.parse(event.data) as GameUpdate;
              this.lastEventId = event.id ?? String(update.event.seq);
              received = true;
              failures = 0;
              yield update;
            } else if (event.event === "end") {
              this.end = JSON.parse(event.data) as StreamEnd;
              return;
            } else if (event.event === "seat_revoked") {
              throw new LudoProblem(JSON.parse(event.data) as Problem);
            }
          }
        } catch (error) {
          if (signal.aborted) return;
          if (!retriable(error)) throw error;
          failure = error;
          if (error instanceof LudoProblem && error.retry_after_ms != null) delay = error.retry_after_ms;
        }
        // The connection ended without `end` (a server restart, a proxy's
        // timeout, a reset): reconnect after the last record received.
        if (parser.retry !== undefined) delay = parser.retry;
        if (!received && ++failures > attempts) {
          throw failure ?? new LudoNetworkError("the stream kept closing without a record", { cause: undefined, maybeReached: true });
        }
        await sleep(delay, signal).catch(() => undefined);
        this.reconnects++;
      }
    } finally {
      this.controller.abort();
    }
  }

  /** Opens one connection: its body, or undefined on 204. */
  private async connect(signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    const query: Record<string, string | number | undefined> = {};
    if (this.lastEventId !== undefined) headers["last-event-id"] = this.lastEventId;
    else if (this.options.from !== undefined) query.from = this.options.from;
    const token = this.options.token === null ? undefined : (this.options.token ?? this.ctx.token);
    if (token !== undefined) {
      if ((this.options.auth ?? "ticket") === "ticket") {
        query.ticket = (await this.ctx.streamTicket(this.gameId, token, signal)).ticket;
      } else {
        headers.authorization = `Bearer ${token}`;
      }
    }
    let res: Response;
    try {
      res = await this.ctx.fetch(url(this.ctx.baseUrl, `v1/games/${encodeURIComponent(this.gameId)}/stream`, query), {
        headers,
        signal,
      });
    } catch (error) {
      throw new LudoNetworkError("could not open the stream", { cause: error, maybeReached: false });
    }
    if (res.status === 204) return undefined;
    if (!res.ok || res.body === null) throw new LudoProblem(problemOf(res, await res.text()));
    return res.body;
  }
}

/** Worth reconnecting after: the network, or a refusal that says "later". */
function retriable(error: unknown): boolean {
  if (error instanceof LudoNetworkError) return true;
  if (error instanceof LudoProblem) {
    return error.code !== "seat_revoked" && (error.status === 429 || error.status >= 500);
  }
  // A body read that failed mid-stream (a reset connection).
  return error instanceof TypeError;
}

/** The body's events; a silence longer than `idleMs` ends it as a failure. */
async function* events(
  body: ReadableStream<Uint8Array>,
  parser: SseParser,
  signal: AbortSignal,
  idleMs: number,
): AsyncGenerator<SseEvent> {
  // `getReader()` rather than `for await` on the stream: Safari's streams are not async-iterable.
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new LudoNetworkError("the stream went silent", { cause: undefined, maybeReached: true })),
          idleMs,
        );
      });
      try {
        const { done, value } = await Promise.race([reader.read(), idle]);
        if (done) break;
        yield* parser.push(decoder.decode(value, { stream: true }));
      } finally {
        clearTimeout(timer);
      }
    }
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}
