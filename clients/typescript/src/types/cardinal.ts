// Cardinal (`kind: "cardinal"`): the `cardinal.*` schemas. Rules: docs/rules/cardinal.md.
import type { Seat } from "./common.js";

/** One of the four colours (CA-1). */
export type CardinalColour = 0 | 1 | 2 | 3;
/** A building's form (CA-1). */
export type CardinalShape = "house" | "tower" | "square";
/** How a square (two cells) lies. */
export type CardinalOrientation = "horizontal" | "vertical";
/** The step of the game. */
export type CardinalPhase = "build" | "cardinal" | "finished";

/** One square of the grid: x grows east, y grows north; the cathedral's nave is at (0, 0). */
export interface CardinalCell {
  x: number;
  y: number;
}

/** How a game of Cardinal is set up (every field defaulted by the server). */
export interface CardinalOptions {
  /** The seat that plays first; `null` or absent: drawn from the game's seed. */
  first_seat?: Seat | null;
}

// Moves: a turn is a `build`, then `move_cardinal` or `keep_cardinal` by the same seat.

/** Build one building (CA-8); its markers are taken automatically (CA-9). */
export interface CardinalBuild {
  type: "build";
  shape: CardinalShape;
  colour: CardinalColour;
  /** Column of the building's cell (a square's west or south cell). */
  x: number;
  /** Row of the building's cell (a square's west or south cell). */
  y: number;
  /** Squares only (required for them, absent otherwise). */
  orientation?: CardinalOrientation | null;
  /** The game's first building only (required then): the bonus marker's colour (CA-11). */
  bonus_colour?: CardinalColour | null;
}

/** After building, move the cardinal to a free building zone (CA-10). */
export interface CardinalMoveCardinal {
  type: "move_cardinal";
  x: number;
  y: number;
}

/** After building, leave the cardinal where it stands (not on the first turn, CA-10). */
export interface CardinalKeepCardinal {
  type: "keep_cardinal";
}

export type CardinalMove = CardinalBuild | CardinalMoveCardinal | CardinalKeepCardinal;

// The view: the whole public state (Cardinal hides nothing).

export interface CardinalMarkerCount {
  colour: CardinalColour;
  count: number;
}

export interface CardinalBuilding {
  seat: Seat;
  shape: CardinalShape;
  colour: CardinalColour;
  /** One cell, or two for a square (anchor cell first). */
  cells: CardinalCell[];
}

export interface CardinalBuildingsLeft {
  colour: CardinalColour;
  houses: number;
  squares: number;
  towers: number;
}

export interface CardinalCathedral {
  /** Counts as a house. */
  nave: CardinalCell;
  /** Counts as a tower. */
  tower: CardinalCell;
}

/** The last building's shape and colour, which the next must differ from (CA-17, CA-18). */
export interface CardinalLastBuilt {
  shape: CardinalShape;
  colour: CardinalColour;
}

export interface CardinalSeatView {
  seat: Seat;
  /** The colours it owns and scores (CA-5 … CA-7). */
  colours: CardinalColour[];
  markers_taken: CardinalMarkerCount[];
}

export interface CardinalSeatScore {
  seat: Seat;
  total: number;
  markers: CardinalMarkerCount[];
  /** The colour counted double (CA-23); none without markers. */
  doubled_colour?: CardinalColour | null;
  /** The tie-break (CA-24). */
  cathedral_contacts: number;
}

export interface CardinalScoring {
  /** True while the game runs: what the players would get if it ended now. */
  provisional: boolean;
  seats: CardinalSeatScore[];
  winners: Seat[];
}

export interface CardinalView {
  players: number;
  first_seat: Seat;
  phase: CardinalPhase;
  /** The seat to act; absent once the game is over. */
  to_act?: Seat | null;
  seats: CardinalSeatView[];
  cathedral: CardinalCathedral;
  /** The cardinal's cell; absent until the first player places it (CA-10). */
  cardinal?: CardinalCell | null;
  buildings: CardinalBuilding[];
  buildings_left: CardinalBuildingsLeft[];
  supply: CardinalMarkerCount[];
  last_built?: CardinalLastBuilt | null;
  /** Three players only: the colour anyone may build and nobody scores (CA-6). */
  fourth_colour?: CardinalColour | null;
  scoring: CardinalScoring;
}

// Effects: what a record did.

export type CardinalEffect =
  | { type: "game_started"; first_seat: Seat }
  | {
      type: "built";
      seat: Seat;
      shape: CardinalShape;
      colour: CardinalColour;
      cells: CardinalCell[];
      /** Per colour, colours with none left out. */
      markers_taken: CardinalMarkerCount[];
      /** On the game's first building: the bonus marker taken (CA-11). */
      bonus_colour?: CardinalColour | null;
    }
  | { type: "cardinal_moved"; seat: Seat; x: number; y: number }
  | { type: "cardinal_kept"; seat: Seat }
  /** The seat could not build and was passed by the server (CA-20). */
  | { type: "forced_pass"; seat: Seat }
  | { type: "game_ended"; scoring: CardinalScoring };
