//! Battle 13: four players in two camps, a bidding phase, a master player
//! with a servant, and 13 tournaments per joust, until a camp reaches the
//! target crowns. Rules: `docs/rules/battle13.md` (ids `B13-1` … `B13-25`).
//!
//! The engine is pure and deterministic (see [`Game`] for the exact order of
//! random draws). A match runs as:
//!
//! 1. **Deal** (B13-7) 13 knights per seat, then the **opening check**
//!    (B13-9), made by the server itself; nobody with 12 weapons → redeal.
//! 2. **Talking rounds** (B13-10 … B13-14): [`Move::Bid`] / [`Move::Pass`]
//!    until three passes follow a tournaments card (four passes and none →
//!    void joust, redeal). The highest tournaments card makes the master.
//! 3. **Favoured family** (B13-15): [`Move::ChooseFamily`] when the master
//!    has a choice, otherwise settled automatically.
//! 4. **Chaos** (B13-16): [`Move::Chaos`] / [`Move::DeclineChaos`] by the
//!    master's opponents, left first.
//! 5. **Tournaments** (B13-17 … B13-19): [`Move::Play`]; on the servant's
//!    turn the master is to move and plays one of the servant's knights.
//! 6. **Crowns** (B13-20 … B13-24); the next joust starts with the previous
//!    master, until a camp reaches the target.
#![warn(missing_docs)]

mod bidding;
mod chaos;
mod crowns;
mod effects;
mod favoured;
mod info;
mod joust;
mod knights;
mod r#match;
mod moves;
mod narrate;
mod opening;
mod tournaments;
mod view;

pub use bidding::{BID_CARDS, BidCard, Call, Contract, FamilyCard, TOURNAMENTS_CARDS, WEAPONS_CARDS};
pub use chaos::Chaos;
pub use crowns::{Camp, Crowns, bonus, joust_crowns};
pub use effects::{DealtHand, Effect, VoidReason};
pub use info::Info;
pub use joust::{Decision, Turn};
pub use knights::{Family, HAND_SIZE, Knight, MAX_STRENGTH, SEATS, bag, weapons};
pub use r#match::{Game, Options, TARGETS};
pub use moves::Move;
pub use opening::{OPENING_WEAPONS, OpeningAnswer};
pub use tournaments::{Play, TOURNAMENTS, Tournament, tournament_winner};
pub use view::{Hand, Joust, View};
