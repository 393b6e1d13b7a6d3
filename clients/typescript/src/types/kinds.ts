// The kind-scoped envelopes (`cardinal.GameState`, `kardinal.MoveAccepted` …).
//
// Each is written once, generic in the kind. `GameState<"battle13">` is one
// kind's; plain `GameState` is the union of the three, discriminated by
// `kind`, so `if (game.kind === "battle13") game.view.joust` narrows.
import type { Battle13Effect, Battle13Move, Battle13Options, Battle13View } from "./battle13.js";
import type { CardinalEffect, CardinalMove, CardinalOptions, CardinalView } from "./cardinal.js";
import type {
  BotMark,
  BotSeat,
  ClockRequest,
  ExportFault,
  Handover,
  Imported,
  Invitation,
  PlayerSeat,
  Receipt,
  ReceiptReport,
  Seat,
  SeatInfo,
  SeatToken,
  SeedCheck,
  Status,
  Step,
  TimeControl,
  TokenBy,
} from "./common.js";
import type { KardinalEffect, KardinalMove, KardinalOptions, KardinalView } from "./kardinal.js";

/** What differs between the kinds: everything else is shared. */
export interface KindTypes {
  cardinal: { options: CardinalOptions; move: CardinalMove; view: CardinalView; effect: CardinalEffect };
  kardinal: { options: KardinalOptions; move: KardinalMove; view: KardinalView; effect: KardinalEffect };
  battle13: { options: Battle13Options; move: Battle13Move; view: Battle13View; effect: Battle13Effect };
}

export type Kind = keyof KindTypes;
export const KINDS: readonly Kind[] = ["cardinal", "kardinal", "battle13"];

export type Options<K extends Kind = Kind> = KindTypes[K]["options"];
export type Move<K extends Kind = Kind> = KindTypes[K]["move"];
export type View<K extends Kind = Kind> = KindTypes[K]["view"];
export type Effect<K extends Kind = Kind> = KindTypes[K]["effect"];

// `K extends Kind ? … : never` distributes over a union of kinds: that is
// what turns the default `Kind` into a union of three object types.

/** Request to create a game of kind `K`. */
export interface CreateGameOf<K extends Kind> {
  kind: K;
  /** The seats in order: a name, `{ name, bot }` for a server bot, or `null` for an open seat (cardinal 2–4, kardinal 3–5, battle13 4). */
  players: (PlayerSeat | null)[];
  /** Omitted or null: the kind's defaults. */
  options?: Options<K> | null;
  /** Whether anyone may join the open seats from the lobby (needs an open seat). */
  public?: boolean;
  /** Omitted: no clock. */
  clock?: ClockRequest | null;
  /** An `http(s)` URL called on each person's turn and at the end. */
  webhook?: string | null;
}

/** Request to create a game: the union over the kinds, discriminated by `kind`. */
export type CreateGame<K extends Kind = Kind> = K extends Kind ? CreateGameOf<K> : never;

/** A created game, with each seat's secret token, shown only here. */
export interface CreatedGame<K extends Kind = Kind> {
  id: string;
  kind: K;
  version: number;
  /** The seats a person took at creation (open and bot seats are not here). */
  seats: SeatToken[];
  admin_token: string;
  /** For a game with open seats: one invitation per seat. */
  invitations?: Invitation[];
  seed_commitment: string;
  status: Status;
  /** With a webhook: the key of its calls' signatures, shown only here. */
  webhook_secret?: string | null;
}

/** Record 0: everything needed to set the game up again, except the secret seed. */
export type GameCreated<K extends Kind = Kind> = K extends Kind
  ? {
      game_id: string;
      kind: K;
      ruleset: string;
      /** Defaults filled in (a Kardinal & König board included). */
      options: Options<K>;
      /** Seat names; `null` for a seat left open. */
      seats: (string | null)[];
      bots?: (BotSeat | null)[];
      public?: boolean;
      clock?: TimeControl | null;
      seed_commitment: string;
    }
  : never;

/** One record of a game's log, as the caller may see it. */
export type GameEvent<K extends Kind = Kind> = K extends Kind
  ? {
      seq: number;
      /** `game_created`, `move`, `seat_bot`, `seat_joined`, `seat_left`, `game_cancelled`, `seat_token`, `seat_resigned`, `timeout`. */
      type: string;
      at: string;
      /** Hex SHA-256 of the record in the hash chain. */
      hash: string;
      effects: Effect<K>[];
      seat?: Seat | null;
      move?: Move<K> | null;
      request_id?: string | null;
      bot?: BotMark | null;
      game?: GameCreated<K> | null;
      name?: string | null;
      handover?: Handover | null;
      by?: TokenBy | null;
      forfeit?: boolean | null;
    }
  : never;

/** A game as the caller sees it (a seat's view with its token, a spectator's without). */
export type GameState<K extends Kind = Kind> = K extends Kind
  ? {
      id: string;
      kind: K;
      ruleset: string;
      /** The record this state follows (for a replay: the version asked for). */
      version: number;
      latest_version: number;
      status: Status;
      seats: SeatInfo[];
      created_at: string;
      options: Options<K>;
      view: View<K>;
      seed_commitment: string;
      /** The hex seed, once the game is over. */
      seed?: string | null;
      /** The caller's seat, or null for a spectator. */
      viewer_seat?: Seat | null;
      /** Present (true) only for a public game. */
      public?: boolean;
      clock?: TimeControl | null;
      /** Once the game is over (latest state only): its transparency-log receipt. */
      receipt?: Receipt | null;
      imported?: Imported | null;
    }
  : never;

/** The caller's legal moves: each exactly a `move` that `submitMove` accepts. */
export type LegalMoves<K extends Kind = Kind> = K extends Kind
  ? { kind: K; version: number; seat: Seat; moves: Move<K>[] }
  : never;

/** A move submission (`SubmitOptions` of `submitMove` fills it in). */
export interface SubmitMove<K extends Kind = Kind> {
  move: Move<K>;
  /** Refuse the move unless the game is at this version. */
  expected_version?: number | null;
  /** Idempotency key (1–128 printable ASCII characters): a repeat returns the first answer. */
  request_id?: string | null;
}

/** An accepted move. */
export type MoveAccepted<K extends Kind = Kind> = K extends Kind
  ? {
      kind: K;
      version: number;
      status: Status;
      effects: Effect<K>[];
      /** The mover's view after the move; absent when asked for a minimal answer. */
      view?: View<K>;
      /** On the move that ended the game. */
      receipt?: Receipt | null;
    }
  : never;

/** A page of a game's log. */
export type EventPage<K extends Kind = Kind> = K extends Kind
  ? {
      kind: K;
      version: number;
      events: GameEvent<K>[];
      /** Pass as `from` for the next page; absent at the end. */
      next_from?: number | null;
    }
  : never;

/** One record as it is appended, with the caller's new view: an item of a live stream. */
export type GameUpdate<K extends Kind = Kind> = K extends Kind
  ? { kind: K; event: GameEvent<K>; status: Status; view: View<K> }
  : never;

/** A game kind this server hosts. */
export type KindInfo<K extends Kind = Kind> = K extends Kind
  ? {
      kind: K;
      name: string;
      ruleset: string;
      min_players: number;
      max_players: number;
      default_options: Options<K>;
      /** JSON Schema of the options. */
      options_schema: unknown;
    }
  : never;

export interface KindList {
  kinds: KindInfo[];
}

/** One game in a listing. */
export interface GameSummary {
  id: string;
  kind: Kind;
  version: number;
  status: Status;
  seats: SeatInfo[];
  created_at: string;
  finished_at?: string | null;
  public?: boolean;
  imported?: Imported | null;
}

/** A page of games, oldest first. */
export interface GameList {
  games: GameSummary[];
  /** Pass as `after` for the next page; absent on the last page. */
  next_after?: string | null;
}

/** What a seat knows (its information set), for a computer player of one's own. */
export interface SeatKnowledge {
  kind: Kind;
  version: number;
  seat: Seat;
  status: Status;
  /** The engine's information set; its shape is the engine's (`ludo-bots`). */
  info: Record<string, unknown>;
}

/** What each record did, in words. */
export interface StepPage {
  kind: Kind;
  version: number;
  steps: Step[];
  next_from?: number | null;
}

/** An imported game. */
export interface ImportedGame {
  id: string;
  kind: Kind;
  version: number;
  status: Status;
  imported: Imported;
}

interface VerifyReportBase {
  /** Whether everything checked out. */
  valid: boolean;
  chain_intact: boolean;
  records: number;
  replayed: boolean;
  revealed: number;
  seed: SeedCheck;
  game_id?: string | null;
  last_hash?: string | null;
  status?: Status | null;
  fault?: ExportFault | null;
  receipt?: ReceiptReport | null;
  imported?: Imported | null;
}

/**
 * The outcome of verifying an export: per kind, or without `kind` (and
 * `view`) when the header could not be read or names a kind not hosted.
 */
export type VerifyReport<K extends Kind = Kind> =
  | (K extends Kind ? VerifyReportBase & { kind: K; view?: View<K> | null } : never)
  | (VerifyReportBase & { kind?: undefined });
