//! What a live game's log holds, kept beside the game once a read needs it,
//! so that no read replays the game from record 0: each record's move and
//! unredacted effects, and the game itself every [`SNAPSHOT_EVERY`] records.
//!
//! A seat's page of events, a page of steps, a replay at version N and a
//! retried request id then cost what they return (a replay at N applies at
//! most `SNAPSHOT_EVERY - 1` moves to the snapshot before it), not the
//! game's length. The history is built once, by one full replay of the log
//! (off the async workers, under the game's writer lock so no append falls
//! between), and then kept in step by the writer. It lives and dies with the
//! game's place in the cache; games nobody reads that way never build one.

use std::sync::Arc;

use ludo_engine::Seat;

use ludo_record::kinds::{AnyEffect, AnyGame, AnyMove};
use ludo_record::record::Record;
use ludo_record::replay::{Applied, ReplayError, Replayer};
use ludo_record::table::Table;

/// Records between two kept states of the game.
pub(super) const SNAPSHOT_EVERY: u64 = 32;

/// One record as the history keeps it.
#[derive(Debug)]
struct Entry {
    /// Who moved and what (none for record 0 and seat records).
    mv: Option<(Seat, AnyMove)>,
    /// What happened, unredacted.
    effects: Vec<AnyEffect>,
}

/// A live game's log, typed and indexed by seq.
#[derive(Debug)]
pub(super) struct History {
    entries: Vec<Entry>,
    /// The game after records 0, `SNAPSHOT_EVERY`, 2 × `SNAPSHOT_EVERY` …
    snapshots: Vec<AnyGame>,
    /// The table after record 0 and after each seat record (and, in a game
    /// with a clock, after every record), with the record's seq.
    tables: Vec<(u64, Arc<Table>)>,
}

impl History {
    /// The history of a log (record 0 first), checked as any replay is.
    ///
    /// # Errors
    /// [`ReplayError`] naming the first record that does not replay.
    pub(super) fn build(records: &[Record], seed: &ludo_engine::Seed) -> Result<History, ReplayError> {
        let first = records.first().ok_or_else(|| ReplayError { seq: 0, reason: "the log is empty".into() })?;
        let (mut replayer, effects) = Replayer::start(first, seed)?;
        let mut history = History::new(&replayer.game, effects, Arc::clone(&replayer.table));
        for record in &records[1..] {
            let (applied, effects) = replayer.step(record)?;
            history.push_replayed(applied, effects, &replayer.game, &replayer.table);
        }
        Ok(history)
    }

    /// The history of a game just set up, with its set-up's effects and table.
    pub(super) fn new(game: &AnyGame, effects: Vec<AnyEffect>, table: Arc<Table>) -> History {
        History { entries: vec![Entry { mv: None, effects }], snapshots: vec![game.clone()], tables: vec![(0, table)] }
    }

    /// Records kept (the game's version + 1).
    pub(super) fn len(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Forgets the records from `len` on (what a catch-up that failed
    /// part-way had kept).
    pub(super) fn truncate(&mut self, len: u64) {
        let len = usize::try_from(len).unwrap_or(usize::MAX).max(1);
        self.entries.truncate(len);
        self.snapshots.truncate((len - 1) / SNAPSHOT_EVERY as usize + 1);
        self.tables.retain(|(seq, _)| *seq < len as u64);
    }

    /// Keeps the next record as replay or a commit applied it, the table left as
    /// `table`: the table is kept when the record changed it (a seat record;
    /// in a game with a clock, every record).
    pub(super) fn push_replayed(&mut self, applied: Applied, effects: Vec<AnyEffect>, after: &AnyGame, table: &Arc<Table>) {
        let changed = matches!(applied, Applied::Table) || table.clocks().is_some();
        self.push(applied, effects, after, changed.then(|| Arc::clone(table)));
    }

    /// Keeps the next record, which did `applied` and `effects` and left
    /// the game as `after`, and (a seat record) the table as `table`.
    pub(super) fn push(&mut self, applied: Applied, effects: Vec<AnyEffect>, after: &AnyGame, table: Option<Arc<Table>>) {
        if let Some(table) = table {
            self.tables.push((self.len(), table));
        }
        let mv = match applied {
            Applied::Move { seat, mv } => Some((seat, mv)),
            Applied::Table => None,
        };
        self.entries.push(Entry { mv, effects });
        if (self.len() - 1).is_multiple_of(SNAPSHOT_EVERY) {
            self.snapshots.push(after.clone());
        }
    }

    /// The unredacted effects of record `seq` (empty past the end).
    pub(super) fn effects(&self, seq: u64) -> &[AnyEffect] {
        usize::try_from(seq).ok().and_then(|i| self.entries.get(i)).map_or(&[], |entry| &entry.effects)
    }

    /// Who played record `seq`, and what (none for record 0 or past the end).
    pub(super) fn move_of(&self, seq: u64) -> Option<&(Seat, AnyMove)> {
        usize::try_from(seq).ok().and_then(|i| self.entries.get(i)).and_then(|entry| entry.mv.as_ref())
    }

    /// The table after record `at`.
    pub(super) fn table_at(&self, at: u64) -> Arc<Table> {
        let after = self.tables.partition_point(|(seq, _)| *seq <= at);
        Arc::clone(&self.tables[after.max(1) - 1].1)
    }

    /// The game after record `at`: the snapshot before it and the moves
    /// since, applied again.
    ///
    /// # Errors
    /// Past the end, or when a kept move no longer applies (it applied
    /// when it was recorded: a bug, reported rather than panicking).
    pub(super) fn game_at(&self, at: u64) -> Result<AnyGame, String> {
        if at >= self.len() {
            return Err(format!("version {at} is past the history's end ({})", self.len()));
        }
        let base = at - at % SNAPSHOT_EVERY;
        let mut game = self.snapshots[(base / SNAPSHOT_EVERY) as usize].clone();
        // Records without a move (seat records) change nothing in the game.
        for seq in base + 1..=at {
            if let Some((seat, mv)) = self.move_of(seq) {
                game.apply(*seat, mv).map_err(|err| format!("record {seq} no longer applies: {err:?}"))?;
            }
        }
        Ok(game)
    }
}

#[cfg(test)]
mod tests {
    use ludo_engine::Seed;

    use super::*;
    use ludo_record::kinds::KINDS;

    /// Every hosted kind, played at random for more than a few snapshots'
    /// worth of records: the game at each version is the state the game was
    /// in then, and each record's effects are the ones it had.
    #[test]
    fn the_game_at_any_version_is_the_game_as_it_was_then() {
        let mut across_snapshots = 0;
        for kind in KINDS {
            let new = kind.create(kind.min_players, &kind.default_options(), &Seed([3; 32])).expect("default set-up");
            let mut game = new.game;
            let created = ludo_record::record::GameCreated {
                game_id: "g".into(),
                kind: kind.id.into(),
                ruleset: kind.ruleset.into(),
                options: kind.default_options(),
                seats: vec![Some("P".into()); kind.min_players],
                bots: vec![None; kind.min_players],
                public: false,
                clock: None,
                seed_commitment: String::new(),
            };
            let table = Arc::new(Table::new(&created, kind.sides(kind.min_players)));
            let mut history = History::new(&game, new.effects.clone(), Arc::clone(&table));
            let mut states = vec![game.clone()];
            let mut effects = vec![new.effects];
            let mut moves = Vec::new();
            // A table of its own after every tenth record, as seat records would leave.
            let mut tables = vec![Some(table)];
            for i in 0..(3 * SNAPSHOT_EVERY + 5) as usize {
                let Some(&seat) = game.status().to_move().first() else { break };
                let legal = game.legal_moves(seat);
                let mv = legal[(i * 7 + 3) % legal.len()].clone();
                let did = game.apply(seat, &mv).expect("a legal move applies");
                let seated = (i % 10 == 9).then(|| Arc::new(Table::clone(tables[0].as_deref().expect("the first"))));
                history.push(Applied::Move { seat, mv: mv.clone() }, did.clone(), &game, seated.clone());
                tables.push(seated);
                moves.push((seat, mv));
                states.push(game.clone());
                effects.push(did);
            }
            across_snapshots += usize::from(history.len() > 2 * SNAPSHOT_EVERY);
            for (at, state) in states.iter().enumerate() {
                assert_eq!(history.game_at(at as u64).as_ref(), Ok(state), "{} at {at}", kind.id);
                assert_eq!(history.effects(at as u64), effects[at].as_slice(), "{} effects of {at}", kind.id);
            }
            assert!(history.game_at(history.len()).is_err(), "past the end");
            assert!(history.effects(history.len()).is_empty());
            let table_at =
                |tables: &[Option<Arc<Table>>], at: u64| tables[..=at as usize].iter().rev().flatten().next().cloned().expect("the first");
            for at in 0..history.len() {
                assert!(Arc::ptr_eq(&history.table_at(at), &table_at(&tables, at)), "{} table at {at}", kind.id);
            }

            // Truncated (a catch-up that failed part-way), it is the history
            // of the records it keeps, and grows again from there.
            let len = history.len();
            for cut in [len - 1, 2 * SNAPSHOT_EVERY + 1, SNAPSHOT_EVERY + 1, SNAPSHOT_EVERY, 2, 1].into_iter().filter(|&cut| cut < len) {
                history.truncate(cut);
                assert_eq!(history.len(), cut, "{} cut at {cut}", kind.id);
                assert!(history.game_at(cut).is_err(), "{} past the cut {cut}", kind.id);
                for at in 0..cut {
                    assert_eq!(history.game_at(at).as_ref(), Ok(&states[at as usize]), "{} at {at} after a cut at {cut}", kind.id);
                }
                for at in cut..len {
                    let (seat, mv) = moves[at as usize - 1].clone();
                    // A table made again: the one kept before the cut must not be found.
                    tables[at as usize] = tables[at as usize].as_deref().map(|table| Arc::new(table.clone()));
                    let (effects, table) = (effects[at as usize].clone(), tables[at as usize].clone());
                    history.push(Applied::Move { seat, mv }, effects, &states[at as usize], table);
                }
                for (at, state) in states.iter().enumerate() {
                    assert_eq!(history.game_at(at as u64).as_ref(), Ok(state), "{} at {at} after a cut at {cut}, grown again", kind.id);
                    assert_eq!(history.effects(at as u64), effects[at].as_slice());
                    assert!(
                        Arc::ptr_eq(&history.table_at(at as u64), &table_at(&tables, at as u64)),
                        "{} table at {at} after a cut at {cut}",
                        kind.id
                    );
                }
            }
        }
        // A short game (two-seat Cardinal) may end before its second snapshot; the others go past it.
        assert!(across_snapshots >= 2, "only {across_snapshots} kinds were played past two snapshots");
    }
}
