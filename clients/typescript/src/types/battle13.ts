// Battle 13 (`kind: "battle13"`): the `battle13.*` schemas. Rules: docs/rules/battle13.md.
import type { Seat } from "./common.js";

/** One of the four families of knights (B13-1). */
export type Battle13Family = "eagle" | "wolf" | "dragon" | "lion";
/** A family card: a family, or Neutral (as the favoured family: none). */
export type Battle13FamilyCard = Battle13Family | "neutral";
/** A knight's strength, 1 (weakest) to 13. */
export type Battle13Strength = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13;
/** A camp (B13-5): camp 0 is seats 0 and 2, camp 1 is seats 1 and 3. */
export type Battle13Camp = 0 | 1;
/** What kind of decision is awaited. */
export type Battle13Decision =
  | "open_bidding"
  | "bid"
  | "choose_family"
  | "chaos"
  | "play"
  | "play_for_servant";
/** Why a deal was abandoned and dealt again. */
export type Battle13VoidReason = "no_opener" | "all_passed";

export interface Battle13Knight {
  family: Battle13Family;
  strength: Battle13Strength;
}

/** A bid card (B13-3): every player holds the full set and lays each at most once per joust. */
export type Battle13BidCard =
  | { kind: "family"; family: Battle13FamilyCard }
  /** Information only; 25 means "25 or more". */
  | { kind: "weapons"; value: 6 | 9 | 12 | 15 | 18 | 21 | 25 }
  /** How many tournaments the camp expects to win. */
  | { kind: "tournaments"; value: 7 | 8 | 9 | 10 | 11 | 12 | 13 };

/** Options of a match (every field defaulted by the server). */
export interface Battle13Options {
  /** Crowns a camp must reach to win the match (B13-6); default 20. */
  target_crowns?: 20 | 50 | 100;
  /** First player of the first joust; `null`: drawn from the seed (B13-8). */
  first_seat?: 0 | 1 | 2 | 3 | null;
}

// Moves. On the servant's turn the master submits, with one of the servant's knights.

export interface Battle13Bid {
  type: "bid";
  card: Battle13BidCard;
}
/** Pass in the talking rounds (refused on the opener's first call). */
export interface Battle13Pass {
  type: "pass";
}
/** The master chooses the favoured family, Neutral for none (B13-15). */
export interface Battle13ChooseFamily {
  type: "choose_family";
  family: Battle13FamilyCard;
}
/** An opponent of the master activates the Chaos card (B13-16). */
export interface Battle13Chaos {
  type: "chaos";
}
export interface Battle13DeclineChaos {
  type: "decline_chaos";
}
/** Play a knight in the current tournament (B13-17, B13-18). */
export interface Battle13Play {
  type: "play";
  knight: Battle13Knight;
}

export type Battle13Move =
  | Battle13Bid
  | Battle13Pass
  | Battle13ChooseFamily
  | Battle13Chaos
  | Battle13DeclineChaos
  | Battle13Play;

// The view (B13-25): a seat sees its own knights, and the servant's once public.

export interface Battle13Contract {
  master: Seat;
  servant: Seat;
  /** Tournaments the master's camp must win. */
  tournaments: number;
}

export interface Battle13Crowns {
  camp: Battle13Camp;
  crowns: number;
}

/** One turn of the talking rounds: a bid card laid, or a pass (`card: null`). */
export interface Battle13Call {
  seat: Seat;
  card?: Battle13BidCard | null;
}

export interface Battle13ChaosDecision {
  activated_by?: Seat | null;
  declined: Seat[];
}

export interface Battle13Hand {
  seat: Seat;
  /** Always public. */
  held_count: number;
  /** `null` when hidden from the viewer. */
  held?: Battle13Knight[] | null;
  /** The 13 knights dealt; `null` when hidden from the viewer. */
  dealt?: Battle13Knight[] | null;
}

export interface Battle13OpeningAnswer {
  seat: Seat;
  twelve_weapons: boolean;
}

export interface Battle13KnightPlay {
  /** Whose knight it is (the servant's, even when the master chose it). */
  seat: Seat;
  knight: Battle13Knight;
}

export interface Battle13Tournament {
  number: number;
  leader: Seat;
  plays: Battle13KnightPlay[];
  /** Once all four knights are down. */
  winner?: Seat | null;
}

export interface Battle13Joust {
  number: number;
  /** Which deal of this joust is in play, from 1. */
  deal: number;
  first_player: Seat;
  opener: Seat;
  opening: Battle13OpeningAnswer[];
  calls: Battle13Call[];
  contract?: Battle13Contract | null;
  /** Neutral means none (B13-15). */
  favoured?: Battle13FamilyCard | null;
  chaos?: Battle13ChaosDecision | null;
  hands: Battle13Hand[];
  servant_public: boolean;
  tournaments: Battle13Tournament[];
  /** Indexed by camp. */
  tournaments_won: number[];
  crowns?: Battle13Crowns | null;
}

export interface Battle13Turn {
  /** The seat that must submit the move. */
  seat: Seat;
  /** The seat the decision is for: the servant when the master plays for it. */
  for_seat: Seat;
  decision: Battle13Decision;
}

export interface Battle13View {
  target_crowns: number;
  /** Indexed by camp. */
  crowns: number[];
  /** The viewer's seat; `null` for a spectator. */
  seat?: Seat | null;
  /** `null` once the match is over. */
  turn?: Battle13Turn | null;
  /** The joust in play (the last one once the match is over). */
  joust: Battle13Joust;
  /** Every finished joust, hands included. */
  history: Battle13Joust[];
  winner?: Battle13Camp | null;
}

// Effects: only a deal carries hidden knights, blanked for who may not see them.

export interface Battle13DealtHand {
  seat: Seat;
  knights?: Battle13Knight[] | null;
}

export type Battle13Effect =
  | { type: "joust_started"; joust: number; first_player: Seat }
  | { type: "dealt"; joust: number; deal: number; hands: Battle13DealtHand[] }
  | { type: "opening_answered"; seat: Seat; twelve_weapons: boolean }
  | { type: "deal_voided"; joust: number; deal: number; reason: Battle13VoidReason }
  | { type: "bid_laid"; seat: Seat; card: Battle13BidCard }
  | { type: "passed"; seat: Seat }
  | { type: "bidding_ended"; contract: Battle13Contract }
  | { type: "family_favoured"; master: Seat; family: Battle13FamilyCard; chosen: boolean }
  | { type: "chaos_activated"; seat: Seat }
  | { type: "chaos_declined"; seat: Seat }
  | { type: "knight_played"; seat: Seat; by: Seat; knight: Battle13Knight }
  | { type: "servant_revealed"; servant: Seat; knights: Battle13Knight[] }
  | { type: "tournament_won"; number: number; winner: Seat; camp: Battle13Camp }
  | {
      type: "joust_scored";
      joust: number;
      contract: Battle13Contract;
      chaos: boolean;
      tournaments_won: number[];
      crowns: Battle13Crowns;
      totals: number[];
    }
  | { type: "match_won"; camp: Battle13Camp; winners: Seat[]; crowns: number[] };
