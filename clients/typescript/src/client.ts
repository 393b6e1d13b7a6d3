import { call, DEFAULT_RETRY, type Request, type RetryPolicy, type Safety, type TransportOptions } from "./http.js";
import { GameStream, type FollowOptions } from "./stream.js";
import type {
  Autopilot,
  BotRequest,
  ConsistencyProof,
  Health,
  JoinedSeat,
  JoinGame,
  LogInfo,
  Receipt,
  ReissuedToken,
  Seat,
  SetSeatBot,
  StreamTicket,
  TableChanged,
} from "./types/common.js";
import type {
  CreatedGame,
  CreateGameOf,
  EventPage,
  GameEvent,
  GameList,
  GameState,
  GameSummary,
  ImportedGame,
  Kind,
  KindList,
  LegalMoves,
  Move,
  MoveAccepted,
  SeatKnowledge,
  StepPage,
  SubmitMove,
  VerifyReport,
} from "./types/kinds.js";

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The bearer token sent with every call: a seat's, a game's admin token, or the operator's. */
  token?: string | undefined;
  /** How transient failures are retried; `false`: never. See `RetryPolicy`. */
  retry?: Partial<RetryPolicy> | false | undefined;
  /** Per try of a call (not a live stream). Default 30000 ms. */
  timeoutMs?: number | undefined;
  /** A `fetch` to use instead of the global one (a test double, a proxy agent). */
  fetch?: typeof fetch | undefined;
}

/** Per call: another token than the client's, and a signal to abort it. */
export interface CallOptions {
  token?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface SubmitOptions extends CallOptions {
  /** Refuse the move (`version_conflict`) unless the game is still at this version. */
  expectedVersion?: number | undefined;
  /**
   * The idempotency key (1 to 128 printable ASCII characters). Default: a
   * new random UUID per submission. Every retry of the submission sends the
   * same key, so the server plays the move at most once.
   */
  requestId?: string | undefined;
  /** Leave the mover's view out of the answer (`Prefer: return=minimal`). */
  minimal?: boolean | undefined;
}

export interface ListGamesQuery {
  kind?: Kind | undefined;
  state?: "in_progress" | "finished" | undefined;
  /** Only public games waiting for players (the lobby). */
  open?: boolean | undefined;
  /** Only games created after this game id: `next_after` of the previous page. */
  after?: string | undefined;
  /** 1 to 1000 (default 50). */
  limit?: number | undefined;
}

export interface PageQuery {
  from?: number | undefined;
  /** 1 to 1000 (default 100). */
  limit?: number | undefined;
}

/**
 * A client of one ludotheque server. Every method is one REST call (`follow`
 * one live stream) and resolves to the answer's typed JSON, or rejects with
 * a `LudoProblem` (a refusal) or a `LudoNetworkError`.
 */
export class LudoClient {
  readonly baseUrl: string;
  readonly token: string | undefined;
  private readonly transport: TransportOptions;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl;
    this.token = options.token;
    this.transport = {
      baseUrl: options.baseUrl,
      // Bound to globalThis: a detached `fetch` throws "Illegal invocation" in browsers.
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      retry: options.retry === false ? { ...DEFAULT_RETRY, attempts: 1 } : { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs ?? 30_000,
    };
  }

  /** The same client with another credential (a seat's token, the admin token …). */
  withToken(token: string | undefined): LudoClient {
    const copy = Object.create(LudoClient.prototype) as LudoClient;
    Object.assign(copy, this, { token });
    return copy;
  }

  // Kinds and games

  /** The game kinds, their player counts, default options and options schema. */
  kinds(o?: CallOptions): Promise<KindList> {
    return this.get("v1/kinds", o);
  }

  /**
   * Creates a game. The answer holds the seats' tokens and the admin token,
   * shown only here. Not retried once it may have reached the server.
   */
  createGame<K extends Kind>(game: CreateGameOf<K>, o?: CallOptions): Promise<CreatedGame<K>> {
    return this.send("POST", "v1/games", "once", o, { json: game });
  }

  /** One page of games, oldest first. */
  listGames(query: ListGamesQuery = {}, o?: CallOptions): Promise<GameList> {
    return this.get("v1/games", o, { ...query });
  }

  /** Every game matching `query`, page after page. */
  async *games(query: ListGamesQuery = {}, o?: CallOptions): AsyncGenerator<GameSummary, void, undefined> {
    let after = query.after;
    for (;;) {
      const page = await this.listGames(after === undefined ? query : { ...query, after }, o);
      yield* page.games;
      if (!page.next_after) return;
      after = page.next_after;
    }
  }

  /** The game as the caller sees it: a seat's view with its token, a spectator's without. */
  getGame(id: string, o?: CallOptions): Promise<GameState> {
    return this.get(game(id), o);
  }

  /** The game rebuilt at version `at`, as the caller may see it. */
  replay(id: string, at: number, o?: CallOptions): Promise<GameState> {
    return this.get(game(id, "replay"), o, { at });
  }

  // Seats

  /** Takes an open seat (by invitation, or in a public game): its token, shown only here. */
  join(id: string, join: JoinGame, o?: CallOptions): Promise<JoinedSeat> {
    return this.send("POST", game(id, "join"), "once", o, { json: join });
  }

  /** Leaves a game that has not started (seat token). */
  leave(id: string, o?: CallOptions): Promise<TableChanged> {
    return this.send("POST", game(id, "leave"), "once", o);
  }

  /** Resigns (seat token). */
  resign(id: string, o?: CallOptions): Promise<TableChanged> {
    return this.send("POST", game(id, "resign"), "once", o);
  }

  /** Cancels a game that has not started (admin token). */
  cancel(id: string, o?: CallOptions): Promise<TableChanged> {
    return this.send("POST", game(id, "cancel"), "once", o);
  }

  /** A seat's new token; the old one, its tickets and streams stop (seat or admin token). */
  reissueToken(id: string, seat: Seat, o?: CallOptions): Promise<ReissuedToken> {
    return this.send("POST", game(id, "seats", seat, "token"), "once", o);
  }

  /** Hands a seat nobody holds to a server bot (admin token). */
  setSeatBot(id: string, seat: Seat, request: SetSeatBot, o?: CallOptions): Promise<TableChanged> {
    return this.send("PUT", game(id, "seats", seat, "bot"), "idempotent", o, { json: request });
  }

  /** Makes a bot leave its seat before the start (admin token). */
  clearSeatBot(id: string, seat: Seat, o?: CallOptions): Promise<TableChanged> {
    return this.send("DELETE", game(id, "seats", seat, "bot"), "idempotent", o);
  }

  /** Hands the caller's seat to a server bot (autopilot); the token still works. */
  setAutopilot(id: string, bot: BotRequest, o?: CallOptions): Promise<Autopilot> {
    return this.send("PUT", game(id, "autopilot"), "idempotent", o, { json: { bot } });
  }

  /** Takes the caller's seat back from its bot. */
  clearAutopilot(id: string, o?: CallOptions): Promise<Autopilot> {
    return this.send("DELETE", game(id, "autopilot"), "idempotent", o);
  }

  // Moves

  /** The caller's legal moves: each is exactly a move `submitMove` accepts. */
  legalMoves(id: string, o?: CallOptions): Promise<LegalMoves> {
    return this.get(game(id, "legal-moves"), o);
  }

  /**
   * Submits a move. It always carries a `request_id` (yours, or a new
   * UUID), and every retry repeats it: a retry returns the first answer and
   * can never make a second move.
   */
  submitMove(id: string, move: Move, o: SubmitOptions = {}): Promise<MoveAccepted> {
    const body: SubmitMove = { move, request_id: o.requestId ?? crypto.randomUUID() };
    if (o.expectedVersion !== undefined) body.expected_version = o.expectedVersion;
    const headers: Record<string, string> = o.minimal ? { prefer: "return=minimal" } : {};
    return this.send("POST", game(id, "moves"), "idempotent", o, { json: body, headers });
  }

  /** What the caller's seat knows (its information set), for a bot of one's own. */
  seatKnowledge(id: string, o?: CallOptions): Promise<SeatKnowledge> {
    return this.get(game(id, "info"), o);
  }

  // The log

  /** A page of the log, redacted for the caller. */
  events(id: string, page: PageQuery = {}, o?: CallOptions): Promise<EventPage> {
    return this.get(game(id, "events"), o, { ...page });
  }

  /** Every record from `from` on, page after page. */
  async *allEvents(id: string, from = 0, o?: CallOptions): AsyncGenerator<GameEvent, void, undefined> {
    for (let next: number | null | undefined = from; next !== undefined && next !== null; ) {
      const page: EventPage = await this.events(id, { from: next, limit: 1000 }, o);
      yield* page.events as GameEvent[];
      next = page.next_from;
    }
  }

  /** What each record did, in words. */
  steps(id: string, page: PageQuery = {}, o?: CallOptions): Promise<StepPage> {
    return this.get(game(id, "steps"), o, { ...page });
  }

  /** A short-lived, read-only ticket to follow the game as the caller's seat. */
  streamTicket(id: string, o?: CallOptions): Promise<StreamTicket> {
    return this.send("POST", game(id, "stream-tickets"), "idempotent", o);
  }

  /**
   * Follows the game live: an async iterable of its records with the
   * caller's view after each, from `from` (default the first), reconnecting
   * with `Last-Event-ID` until the game's end.
   */
  follow(id: string, options: FollowOptions = {}): GameStream {
    return new GameStream(
      {
        baseUrl: this.baseUrl,
        fetch: this.transport.fetch,
        token: this.token,
        streamTicket: (gameId, token, signal) => this.streamTicket(gameId, { token, signal }),
      },
      id,
      options,
    );
  }

  // Audit

  /** The whole record as JSON Lines (`ludotheque-export/1`); a finished game's is a bundle with its receipt. */
  exportGame(id: string, o?: CallOptions): Promise<string> {
    return this.send("GET", game(id, "export"), "idempotent", o, { read: "text" });
  }

  /** Verifies an export on the server: chain, seed, replay, receipt. */
  verify(exported: string, o?: CallOptions): Promise<VerifyReport> {
    return this.send("POST", "v1/verify", "idempotent", o, { ndjson: exported });
  }

  /** Imports a finished game's export (the operator's token). */
  importGame(exported: string, o?: CallOptions): Promise<ImportedGame> {
    return this.send("POST", "v1/games/import", "once", o, { ndjson: exported });
  }

  /** A finished game's receipt from the transparency log. */
  receipt(id: string, o?: CallOptions): Promise<Receipt> {
    return this.get(game(id, "receipt"), o);
  }

  /** The transparency log: origin, public key, latest signed checkpoint. */
  logInfo(o?: CallOptions): Promise<LogInfo> {
    return this.get("v1/log", o);
  }

  /** The latest signed checkpoint (a C2SP signed note). */
  logCheckpoint(o?: CallOptions): Promise<string> {
    return this.send("GET", "v1/log/checkpoint", "idempotent", o, { read: "text" });
  }

  /** The log's public key (C2SP verifier key), from `/.well-known/ludotheque-log-key`. */
  logKey(o?: CallOptions): Promise<string> {
    return this.send("GET", ".well-known/ludotheque-log-key", "idempotent", o, { read: "text" });
  }

  /** Proof that the tree of `from` leaves is a prefix of the tree of `to` leaves. */
  logConsistency(from: number, to: number, o?: CallOptions): Promise<ConsistencyProof> {
    return this.get("v1/log/consistency", o, { from, to });
  }

  // Operations

  health(o?: CallOptions): Promise<Health> {
    return this.get("healthz", o);
  }

  /** Whether the server takes moves (a `not_ready` problem when not). */
  ready(o?: CallOptions): Promise<Health> {
    return this.get("readyz", o);
  }

  /** The server's metrics (OpenMetrics text). */
  metrics(o?: CallOptions): Promise<string> {
    return this.send("GET", "metrics", "idempotent", o, { read: "text" });
  }

  private get<T>(path: string, o: CallOptions | undefined, query?: Request["query"]): Promise<T> {
    return this.send("GET", path, "idempotent", o, query ? { query } : {});
  }

  private send<T>(
    method: Request["method"],
    path: string,
    safety: Safety,
    o: CallOptions | undefined,
    extra: Partial<Pick<Request, "json" | "ndjson" | "query" | "headers" | "read">> = {},
  ): Promise<T> {
    return call<T>(this.transport, {
      method,
      path,
      safety,
      read: "json",
      token: o?.token ?? this.token,
      signal: o?.signal,
      ...extra,
    });
  }
}

/** `v1/games/{id}/…`, each part escaped. */
function game(id: string, ...rest: (string | number)[]): string {
  return ["v1/games", id, ...rest.map(String)].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join("/");
}
