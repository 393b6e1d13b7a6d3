// Kardinal & König (`kind: "kardinal"`): the `kardinal.*` schemas. Rules: docs/rules/kardinal.md.
import type { Seat } from "./common.js";

/** One of the nine countries (KK-1). */
export type KardinalCountry =
  | "england"
  | "france"
  | "aragon"
  | "lotharingia"
  | "franconia"
  | "swabia"
  | "bavaria"
  | "burgundy"
  | "italy";

/** One of the five kinds of card (KK-4); a two-country card pays for either country. */
export type KardinalCardKind =
  | "franconia_aragon"
  | "bavaria_burgundy"
  | "lotharingia_italy"
  | "england_swabia"
  | "france";

export type KardinalPiece = "abbey" | "counsellor";
export type KardinalVariant = "standard" | "dynamic";
/** A display slot. */
export type KardinalSlot = 0 | 1;
/** Where an exchanged card is taken from. */
export type KardinalSource = "deck" | "display_0" | "display_1";
export type KardinalTurnStep = "place_or_exchange" | "draw" | "place_or_pass";
export type KardinalEndReason = "last_round_over" | "no_placement_left";

// The board is data: its JSON shape is the board file format.

export interface KardinalCountryInfo {
  id: KardinalCountry;
  /** English display name (at most 40 characters). */
  name: string;
  /** German display name, as printed on the board. */
  german?: string;
}

export interface KardinalCardKindInfo {
  id: KardinalCardKind;
  countries: KardinalCountry[];
  /** Cards of this kind in the full 5-player deck (KK-4). */
  count: number;
}

/** A monastery site: one abbey may stand on it (KK-14). */
export interface KardinalSite {
  /** Unique id used in moves and views, e.g. `cluny`. */
  id: string;
  country: KardinalCountry;
  /** Drawing coordinates (canvas units, y growing downwards). */
  x?: number;
  y?: number;
}

/** A road between two sites (chains run along them, KK-26). */
export type KardinalRoad = [string, string];

/** A numbered pair of neighbouring countries (KK-2). */
export interface KardinalAlliance {
  number: number;
  countries: KardinalCountry[];
  /** Drawing only: the line crosses the sea (it is not a road). */
  by_sea?: boolean;
}

export interface KardinalBoard {
  name: string;
  note?: string;
  countries: KardinalCountryInfo[];
  card_kinds: KardinalCardKindInfo[];
  sites: KardinalSite[];
  roads: KardinalRoad[];
  alliances: KardinalAlliance[];
  /** The order in which countries are scored for abbeys (KK-24). */
  interim_scoring_order: KardinalCountry[];
}

/** Options of a Kardinal & König game (every field defaulted by the server). */
export interface KardinalOptions {
  /** Default `standard`. */
  variant?: KardinalVariant;
  /** The seat that keeps the black token and plays first (KK-8); `null`: drawn from the seed. */
  first_seat?: Seat | null;
  /** `null`: the server's board; a game's recorded options always carry it. */
  board?: KardinalBoard | null;
}

// Moves: a turn is a `place` or an `exchange`, then one draw move per card drawn.

/** One piece of a `place` move and the cards paying for it (KK-11). */
export interface KardinalPlacement {
  piece: KardinalPiece;
  country: KardinalCountry;
  /** For an abbey: the monastery site (KK-14); absent for a counsellor. */
  site?: string | null;
  /** One card naming `country`, or two cards of one kind (a joker). */
  paid_with: KardinalCardKind[];
}

/** Play 1–3 cards to place 1 or 2 pieces, in order (KK-9, KK-11 … KK-17). */
export interface KardinalPlace {
  type: "place";
  pieces: KardinalPlacement[];
}

/** Draw the deck's top card while refilling the hand (KK-18). */
export interface KardinalDrawDeck {
  type: "draw_deck";
}

/** Take a face-up display card while refilling the hand (KK-18). */
export interface KardinalTakeDisplay {
  type: "take_display";
  slot: KardinalSlot;
}

/** Discard one card and take the deck's top card or a display card (KK-10). */
export interface KardinalExchange {
  type: "exchange";
  discard: KardinalCardKind;
  take: KardinalSource;
}

/** Place nothing: only in the last round (KK-20). */
export interface KardinalPass {
  type: "pass";
}

export type KardinalMove =
  | KardinalPlace
  | KardinalDrawDeck
  | KardinalTakeDisplay
  | KardinalExchange
  | KardinalPass;

// The view: each seat sees its own hand; the others' are `null`.

export interface KardinalSeatView {
  seat: Seat;
  hand_size: number;
  /** Its hand in kind order; `null` unless the viewer may see it. */
  hand?: KardinalCardKind[] | null;
  abbeys_left: number;
  counsellors_left: number;
  score: number;
}

export interface KardinalDisplaySlot {
  slot: KardinalSlot;
  /** The face-up card; `null` when empty. */
  card?: KardinalCardKind | null;
}

export interface KardinalSealView {
  country: KardinalCountry;
  /** Indexed by seat. */
  abbeys: number[];
  /** Indexed by seat. */
  counsellors: number[];
  /** The most counsellors the seal may hold now (KK-15). */
  limit: number;
}

export interface KardinalAbbeyView {
  site: string;
  country: KardinalCountry;
  seat: Seat;
}

export interface KardinalTurn {
  seat: Seat;
  step: KardinalTurnStep;
  /** While drawing: cards still to draw to hold 3. */
  cards_to_draw: number;
}

/** Abbey scoring of one country (KK-24), per seat. */
export interface KardinalCountryScoring {
  country: KardinalCountry;
  abbeys: number[];
  points: number[];
}

export interface KardinalAllianceScoring {
  number: number;
  countries: KardinalCountry[];
  counsellors: number;
  leaders_first: Seat[];
  leaders_second: Seat[];
  scorers: Seat[];
  points: number;
}

export interface KardinalChain {
  /** Site ids in road order (at least 4). */
  sites: string[];
}

export interface KardinalSeatChains {
  seat: Seat;
  chains: KardinalChain[];
  points: number;
}

export interface KardinalSeatTotal {
  seat: Seat;
  interim: number;
  abbeys: number;
  alliances: number;
  chains: number;
  total: number;
  /** The tie-break (KK-27). */
  unused_pieces: number;
}

/** The final scoring in full (KK-24 … KK-27). */
export interface KardinalFinalScoring {
  abbeys: KardinalCountryScoring[];
  alliances: KardinalAllianceScoring[];
  chains: KardinalSeatChains[];
  totals: KardinalSeatTotal[];
  winners: Seat[];
}

export interface KardinalView {
  players: number;
  variant: KardinalVariant;
  /** The name of the board in play (the board itself is in the game's options). */
  board: string;
  first_seat: Seat;
  /** The viewer's seat; `null` for a spectator. */
  viewer?: Seat | null;
  /** Whose turn and what they must do; `null` once the game is over. */
  turn?: KardinalTurn | null;
  seats: KardinalSeatView[];
  seals: KardinalSealView[];
  abbeys: KardinalAbbeyView[];
  display: KardinalDisplaySlot[];
  deck_size: number;
  /** The deck, top card first; only once the game is over. */
  deck?: KardinalCardKind[] | null;
  discard: KardinalCardKind[];
  /** Cards put back in the box at set-up (KK-6). */
  removed: KardinalCardKind[];
  /** How often the deck has run out (0, 1 or 2). */
  exhaustions: 0 | 1 | 2;
  last_round: boolean;
  interim?: KardinalCountryScoring[] | null;
  final_scoring?: KardinalFinalScoring | null;
  end_reason?: KardinalEndReason | null;
}

// Effects: those carrying a hidden card hold `null` for anyone but its owner.

export type KardinalEffect =
  | { type: "cards_removed"; cards: KardinalCardKind[] }
  | { type: "dealt"; seat: Seat; cards?: KardinalCardKind[] | null }
  | { type: "display_refilled"; slot: KardinalSlot; card: KardinalCardKind }
  | { type: "first_seat"; seat: Seat; drawn: boolean }
  | {
      type: "placed";
      seat: Seat;
      piece: KardinalPiece;
      country: KardinalCountry;
      site?: string | null;
      paid_with: KardinalCardKind[];
    }
  | { type: "discarded"; seat: Seat; card: KardinalCardKind }
  | { type: "drew_from_deck"; seat: Seat; card?: KardinalCardKind | null }
  | { type: "took_from_display"; seat: Seat; slot: KardinalSlot; card: KardinalCardKind }
  | { type: "passed"; seat: Seat }
  | { type: "refill_stopped"; seat: Seat; hand_size: number }
  | { type: "deck_exhausted"; count: 1 | 2 }
  | { type: "interim_scoring"; countries: KardinalCountryScoring[]; scores: number[] }
  | { type: "reshuffled"; deck_size: number }
  | { type: "last_round"; ends_before: Seat }
  | { type: "turn_started"; seat: Seat }
  | { type: "game_ended"; reason: KardinalEndReason; scoring: KardinalFinalScoring };
