// Shapes every game kind shares, as `openapi/openapi.json` defines them.
//
// Conventions of these files: a field the server may leave out is optional
// (`?`); a field it writes as `null` says so (`| null`). Integers are
// `number`: every count, seat and version fits in a double. Where a
// description names a closed set (a colour 0 to 3, a target of 20, 50 or
// 100) the type is that literal union, so a mistake is a compile error.

/** A place at the table, numbered from 0 in clockwise order. */
export type Seat = number;

/** How well a server bot plays. */
export type BotLevel = "random" | "greedy" | "strong";

/** A bot for a seat, as a request asks for it. */
export interface BotRequest {
  level: BotLevel;
  /** Least milliseconds before each move (0 to 10000); omitted: the server's default. */
  think_ms?: number | null;
}

/** A seat the server plays, as the log records it. */
export interface BotSeat {
  level: BotLevel;
  think_ms: number;
}

/** Which bot made a move, as its record says. */
export interface BotMark {
  level: BotLevel;
  /** The version of the bots' library that chose the move. */
  version: string;
}

/** A player's name: 1 to 40 visible characters. */
export type PlayerName = string;

/** A seat of a new game given as an object: its name, and the bot that plays it (none: a person). */
export interface BotPlayer {
  name: PlayerName;
  bot?: BotRequest | null;
}

/** A seat of a new game: a person's name, a bot's seat, or `null` for a seat left open. */
export type PlayerSeat = PlayerName | BotPlayer;

/** What happens when a seat's time runs out. */
export type OnTimeout = "bot" | "lose";

/** Time controls as a request asks for them: `move_ms` and/or `bank_ms`. */
export interface ClockRequest {
  /** Each seat's bank for the game (1000 to 2592000000 ms). */
  bank_ms?: number | null;
  /** Added to the bank after each move (0 to 86400000 ms; needs a bank). */
  increment_ms?: number | null;
  /** Most milliseconds per move (1000 to 2592000000). */
  move_ms?: number | null;
  /** `bot` (default: a server bot makes the move) or `lose`. */
  on_timeout?: OnTimeout | null;
}

/** A game's time controls, as its `game_created` record holds them. */
export interface TimeControl {
  bank_ms?: number | null;
  increment_ms: number;
  move_ms?: number | null;
  on_timeout: OnTimeout;
}

/** One seat's clock. Clients count down to `deadline` themselves. */
export interface SeatClock {
  seat: Seat;
  /** What is left of its bank after its last turn (ms); absent without a bank. */
  bank_ms?: number | null;
  /** When its time for the move it owes runs out (RFC 3339); absent while its clock is stopped. */
  deadline?: string | null;
}

/** The seats' clocks after the last record. */
export interface ClockStatus {
  seats: SeatClock[];
}

/** How a seat gave up. */
export type ForfeitReason = "resigned" | "timed_out";

export interface Forfeit {
  seat: Seat;
  reason: ForfeitReason;
}

/** The result of a finished game. */
export interface Outcome {
  /** Final score of each seat, indexed by seat. */
  scores: number[];
  /** The winning seats (more than one on a shared win or a draw). */
  winners: Seat[];
}

/** Seats are still open: the game starts once every seat is taken. */
export interface StatusWaiting {
  state: "waiting";
  open_seats: Seat[];
}

/** The game goes on; these seats may act now. */
export interface StatusInProgress {
  state: "in_progress";
  /** Seats whose move is awaited (usually exactly one). */
  to_move: Seat[];
  clock?: ClockStatus | null;
}

/** The game is over. */
export interface StatusFinished {
  state: "finished";
  result: Outcome;
  /** The seats that gave up, in the order they did. */
  forfeits?: Forfeit[];
}

/** Called off by its creator before it started. */
export interface StatusCancelled {
  state: "cancelled";
}

/** Whose turn it is, or how the game ended: narrow it on `state`. */
export type Status = StatusWaiting | StatusInProgress | StatusFinished | StatusCancelled;

/** A seat's public identity. */
export interface SeatInfo {
  seat: Seat;
  /** Player name; null while the seat is open. */
  name?: string | null;
  /** The server bot that plays the seat, when one does. */
  bot?: BotSeat | null;
  /** Present (true) only when its player resigned. */
  resigned?: boolean;
}

/** A seat and its secret token. */
export interface SeatToken {
  seat: Seat;
  name: string;
  token: string;
}

/** An invitation to take a seat. */
export interface Invitation {
  seat: Seat;
  /** Whether the seat is open now. */
  open: boolean;
  /** The secret code: `join(id, { invitation: code, name })`. */
  code: string;
  /** The web app's page that joins with it (the code after `#`). */
  link: string;
}

/** Where an imported game came from, as far as this server can tell. */
export interface Imported {
  /** The transparency-log key that signed the receipt of the bundle it came in; absent: unknown. */
  key?: string | null;
}

/** Proof that a game's head is in the transparency log. */
export interface Receipt {
  checkpoint: string;
  inclusion: string[];
  key: string;
  leaf: string;
  leaf_index: number;
}

/** Takes an open seat: by invitation, or in a public game. */
export interface JoinGame {
  name: PlayerName;
  invitation?: string | null;
  /** Which open seat of a public game to take (default: the lowest). */
  seat?: Seat | null;
}

/** A seat taken: its token, shown only here, once. */
export interface JoinedSeat {
  version: number;
  seat: Seat;
  name: string;
  token: string;
  status: Status;
}

/** What a change of the table left: the game's version and how it stands. */
export interface TableChanged {
  version: number;
  status: Status;
  /** When the change ended the game (a resignation, a cancel): its receipt. */
  receipt?: Receipt | null;
}

/** A seat's new token (the old one no longer opens it). */
export interface ReissuedToken {
  version: number;
  seat: Seat;
  token: string;
}

/** Hands the caller's seat to a server bot (`bot`), or takes it back (`bot` null or omitted). */
export interface SetAutopilot {
  bot?: BotRequest | null;
}

/** Hands a seat to a server bot, as the game's admin. */
export interface SetSeatBot {
  bot?: BotRequest | null;
  /** For an open seat, the name the bot takes it under (default "Bot N"). */
  name?: PlayerName | null;
}

/** Who plays a seat now. */
export interface Autopilot {
  version: number;
  seat: Seat;
  /** The server bot that plays it; absent: its player. */
  bot?: BotSeat | null;
}

/** A `seat_bot` record: who plays its seat from then on. */
export interface Handover {
  bot?: BotSeat | null;
}

/** Who asked for a seat's new token. */
export type TokenBy = "admin" | "seat";

/** A ticket that opens one game's live stream as one seat, for a short while. */
export interface StreamTicket {
  ticket: string;
  seat: Seat;
  expires_at: string;
  expires_in_ms: number;
}

/** The last message of a live stream: the game is over and every record was sent. */
export interface StreamEnd {
  version: number;
  status: Status;
}

/** What one record did, in words a viewer can show. */
export interface Step {
  seq: number;
  at: string;
  lines: string[];
  seat?: Seat | null;
}

/** Liveness or readiness answer. */
export interface Health {
  status: string;
}

/** A checkpoint whose signature checked out. */
export interface SignedTree {
  origin: string;
  root: string;
  size: number;
}

/** The transparency log's public face. */
export interface LogInfo {
  origin: string;
  key: string;
  key_id: string;
  /** The latest signed checkpoint; absent while the log is empty. */
  checkpoint?: string | null;
  tree?: SignedTree | null;
}

/** A proof that the tree of `from` leaves is a prefix of the tree of `to`. */
export interface ConsistencyProof {
  from: number;
  to: number;
  proof: string[];
}

/** How the seed in an export compares with the game's commitment. */
export type SeedCheck = "unchecked" | "matches" | "absent" | "mismatch";

/** The first problem found in an export. */
export interface ExportFault {
  line: number;
  reason: string;
  seq?: number | null;
}

/** What checking a receipt found. */
export interface ReceiptReport {
  included: boolean;
  key: string;
  key_id?: string | null;
  leaf_index: number;
  leaf_matches: boolean;
  signature: boolean;
  tree?: SignedTree | null;
  /** Whether the key is the one the verifier trusts (online: this server's). */
  trusted: boolean;
}

/** The stable machine codes of refusals (`LudoProblem.code`); others may come. */
export type ProblemCode =
  | "invalid_input"
  | "unauthorized"
  | "seat_revoked"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "request_timeout"
  | "not_your_turn"
  | "game_finished"
  | "game_waiting"
  | "game_started"
  | "game_cancelled"
  | "game_not_over"
  | "seat_taken"
  | "seat_open"
  | "seat_resigned"
  | "time_up"
  | "version_conflict"
  | "game_exists"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rule_violation"
  | "request_id_reused"
  | "invalid_export"
  | "rate_limited"
  | "corrupt_log"
  | "storage_unavailable"
  | "too_many_connections"
  | "not_ready"
  | "internal";

/** An error answer (`application/problem+json`, RFC 9457). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  // `string & {}` keeps completion on the known codes while accepting new ones.
  code: ProblemCode | (string & {});
  current_version?: number | null;
  expected_version?: number | null;
  field?: string | null;
  line?: number | null;
  open_seats?: Seat[] | null;
  retry_after_ms?: number | null;
  rule?: string | null;
  seat?: Seat | null;
  seq?: number | null;
  to_move?: Seat[] | null;
}
