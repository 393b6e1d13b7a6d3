//! Each game's evaluation, written from its rules: how good a full state
//! (a determinization, never the real game) is for one seat, in `0..=1`.
//!
//! A finished game is worth its result ([`crate::result_value`]). A game in
//! progress is scored by the seat's lead over its best opponent in what the
//! rules count, squashed by a logistic so that a lead of `scale` points is
//! worth about 0.73.

use ludo_engine::{Engine, Seat, Viewer};

use crate::result_value;

/// A game's evaluation for bots.
pub trait Evaluate: Engine {
    /// Random moves a search's playout makes before [`Evaluate::value`]
    /// scores where it ended: as far as the evaluation reads the position
    /// well (measured with `ludo simulate`, docs/bots.md).
    const PLAYOUT_DEPTH: u32;

    /// How good this state is for `seat`, from 0 (lost) to 1 (won).
    fn value(&self, seat: Seat) -> f64;
}

fn squash(lead: f64, scale: f64) -> f64 {
    1.0 / (1.0 + (-lead / scale).exp())
}

/// `mine` against the best of `others`.
fn lead(mine: f64, others: impl Iterator<Item = f64>) -> f64 {
    mine - others.fold(f64::NEG_INFINITY, f64::max).max(f64::MIN)
}

/// Cardinal: the provisional score (CA-22, CA-23: markers taken, one
/// colour doubled), which the view computes as the rules do.
impl Evaluate for ludo_cardinal::Game {
    /// The provisional score reads a position well: short playouts
    /// searched more often beat long ones.
    const PLAYOUT_DEPTH: u32 = 8;

    fn value(&self, seat: Seat) -> f64 {
        if let Some(value) = result_value(&self.status(), seat) {
            return value;
        }
        let view = self.view(Viewer::Omniscient);
        let total = |s: Seat| view.scoring.seats.iter().find(|x| x.seat == s).map_or(0.0, |x| f64::from(x.total));
        let others = view.scoring.seats.iter().filter(|x| x.seat != seat).map(|x| total(x.seat));
        squash(lead(total(seat), others), 4.0)
    }
}

/// Kardinal & König: points already scored (KK-23), plus what the abbeys
/// would score now, country by country (KK-24), plus half of each
/// country's counsellors to those who lead there (alliances pay the
/// counsellors of two countries to whoever leads in both, KK-25).
impl Evaluate for ludo_kardinal::Game {
    const PLAYOUT_DEPTH: u32 = 8;

    fn value(&self, seat: Seat) -> f64 {
        if let Some(value) = result_value(&self.status(), seat) {
            return value;
        }
        let view = self.view(Viewer::Omniscient);
        let players = usize::from(view.players);
        let mut points: Vec<f64> = view.seats.iter().map(|s| f64::from(s.score)).collect();
        points.resize(players, 0.0);
        for seal in &view.seals {
            // KK-24: groups by abbey count, highest first; the first group
            // scores the country's abbeys, each later one the count above it.
            let total: u32 = seal.abbeys.iter().map(|&n| u32::from(n)).sum();
            let mut counts: Vec<u8> = seal.abbeys.iter().copied().filter(|&n| n > 0).collect();
            counts.sort_unstable_by(|a, b| b.cmp(a));
            counts.dedup();
            for (s, &n) in seal.abbeys.iter().enumerate().filter(|(_, n)| **n > 0) {
                let rank = counts.iter().position(|&c| c == n).unwrap_or(0);
                let scored = if rank == 0 { total } else { u32::from(counts[rank - 1]) };
                if let Some(p) = points.get_mut(s) {
                    *p += f64::from(scored);
                }
            }
            let most = seal.counsellors.iter().copied().max().unwrap_or(0);
            if most > 0 {
                let counsellors: u32 = seal.counsellors.iter().map(|&n| u32::from(n)).sum();
                for (s, _) in seal.counsellors.iter().enumerate().filter(|(_, n)| **n == most) {
                    if let Some(p) = points.get_mut(s) {
                        *p += f64::from(counsellors) / 2.0;
                    }
                }
            }
        }
        let mine = points.get(seat.index()).copied().unwrap_or(0.0);
        let others = points.iter().enumerate().filter(|(s, _)| *s != seat.index()).map(|(_, p)| *p);
        squash(lead(mine, others), 6.0)
    }
}

/// Battle 13: the camps' crowns (B13-20 … B13-23), and in the joust in
/// play, tournaments won against the contract: the master's camp is on
/// course for the bonus when it has won as many as the contract still
/// allows, the other camp when it has won enough to break it.
impl Evaluate for ludo_battle13::Game {
    /// To the end of the joust (bidding and 52 knights): a joust's crowns
    /// are settled only by its last tournaments, which the evaluation can
    /// only guess at.
    const PLAYOUT_DEPTH: u32 = 64;

    fn value(&self, seat: Seat) -> f64 {
        if let Some(value) = result_value(&self.status(), seat) {
            return value;
        }
        let camp = seat.index() % 2;
        let crowns = self.crowns();
        let mut lead = f64::from(crowns[camp]) - f64::from(crowns[1 - camp]);
        // The game's own accessors, not its view: this runs once per playout.
        if let Some(contract) = self.contract() {
            let won = self.tournaments_won();
            let master = contract.master.index() % 2;
            let bonus = f64::from(ludo_battle13::bonus(contract.tournaments));
            let needed = f64::from(contract.tournaments);
            let played = f64::from(won[0]) + f64::from(won[1]);
            let remaining = 13.0 - played;
            // How far along each side is, as a share of what it needs.
            let master_won = f64::from(won[master]);
            let defence_needed = 14.0 - needed;
            let master_share = (master_won / needed).min(1.0);
            let defence_share = (f64::from(won[1 - master]) / defence_needed).min(1.0);
            let expected = bonus * (master_share - defence_share) * (1.0 - remaining / 26.0);
            lead += if master == camp { expected } else { -expected };
        }
        let target = f64::from(self.options().target_crowns).max(1.0);
        squash(lead, target / 2.0)
    }
}
