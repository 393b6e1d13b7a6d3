//! `ludo copy`: every game from one store to another (sled to PostgreSQL
//! and back), each game's hash chain verified in the target afterwards,
//! with the transparency log (its key and tree) copied as it is.
//!
//! A game already whole in the target is skipped and one the target holds
//! a prefix of gets the rest, so an interrupted copy is resumed by running
//! the same command again. A game the target holds more of than the source,
//! or other bytes, is an error: the copy never overwrites a record.

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use ludo_record::record::{GENESIS, Record};
use ludo_storage::{AppendRequest, EventStore, StoreError, StoredRecord, StreamSummary};

/// Games listed per page of the source.
const PAGE: usize = 256;

/// What a copy did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Copied {
    /// Games written (whole, or their missing tail).
    pub games: u64,
    /// Records written.
    pub records: u64,
    /// Games already whole in the target.
    pub skipped: u64,
}

/// Copies every game of `from` into `to`, showing `progress` (hidden when
/// not on a terminal), and verifies each game's chain in `to`.
///
/// # Errors
/// The first game that cannot be read, written or verified, by id.
pub fn copy(from: &Arc<dyn EventStore>, to: &Arc<dyn EventStore>, progress: &ProgressBar) -> Result<Copied, String> {
    let mut streams: Vec<StreamSummary> = Vec::new();
    let mut after = None;
    loop {
        let page = from.list_summaries_blocking(after, PAGE).map_err(|e| format!("cannot list the source's games: {e}"))?;
        let Some(last) = page.last() else { break };
        after = Some(last.stream);
        streams.extend(page);
    }
    progress.set_length(streams.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} games, {msg} ({eta} left)").unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut copied = Copied::default();
    for summary in &streams {
        let stream = summary.stream;
        let game = ludo_game::GameId::from(stream);
        let records = from.read_blocking(stream, 0, None).map_err(|e| format!("game {game}: cannot read it: {e}"))?;
        let there = to.next_seq(stream).map_err(|e| format!("game {game}: cannot look at the target: {e}"))?;
        let length = records.len() as u64;
        if there > length {
            return Err(format!("game {game}: the target holds {there} records, more than the source's {length}: not overwritten"));
        }
        let existing = to.read_blocking(stream, 0, Some(there)).map_err(|e| format!("game {game}: cannot read the target: {e}"))?;
        if existing.iter().zip(&records).any(|(t, s)| t.bytes != s.bytes) {
            return Err(format!("game {game}: the target's records differ from the source's: not overwritten"));
        }
        if there == length {
            // Whole already; its summary may not be (a copy cut short
            // between records and summary, or a game described since).
            if summary.next_seq == length
                && let Some(described) = &summary.summary
            {
                to.append(AppendRequest::describe(stream, length, described.clone()))
                    .wait()
                    .map_err(|e| format!("game {game}: cannot write its summary: {e}"))?;
            }
            copied.skipped += 1;
        } else {
            let tail: Vec<Vec<u8>> = records[usize::try_from(there).unwrap_or(usize::MAX)..].iter().map(|r| r.bytes.clone()).collect();
            let mut request = if there == 0 {
                let sealed = from.sealed_blocking(stream).map_err(|e| format!("game {game}: cannot read its secrets: {e}"))?;
                AppendRequest::create(stream, tail, sealed)
            } else {
                AppendRequest::at(stream, there, tail)
            };
            // The summary describes the game at the source's length.
            if summary.next_seq == length
                && let Some(described) = &summary.summary
            {
                request = request.with_summary(described.clone());
            }
            let written = request.records.len() as u64;
            to.append(request).wait().map_err(|e| match e {
                StoreError::Conflict { actual_next, .. } => {
                    format!("game {game}: the target grew to {actual_next} records meanwhile (is a server writing to it?)")
                }
                other => format!("game {game}: cannot write it: {other}"),
            })?;
            copied.games += 1;
            copied.records += written;
        }
        // What was already there was just read; what was written is read back.
        let stored = if there == length {
            existing
        } else {
            to.read_blocking(stream, 0, None).map_err(|e| format!("game {game}: cannot read it back: {e}"))?
        };
        if ludo_game::is_reserved(stream) {
            // The transparency log's key and tree: copied as they are (the
            // server checks the tree against its checkpoint when it starts).
            if stored.iter().map(|r| &r.bytes).ne(records.iter().map(|r| &r.bytes)) {
                return Err(format!("the transparency log's stream {game}: what was read back is not what was copied"));
            }
        } else {
            verify(&stored, length).map_err(|e| format!("game {game}: {e}"))?;
        }
        progress.set_message(format!("{} records written", copied.records));
        progress.inc(1);
    }
    progress.finish_with_message(format!("{} records written", copied.records));
    Ok(copied)
}

/// Checks a game as the target holds it: `length` records, each canonical
/// and linked to the one before.
fn verify(stored: &[StoredRecord], length: u64) -> Result<(), String> {
    if stored.len() as u64 != length {
        return Err(format!("{} records read back, {length} copied", stored.len()));
    }
    let mut prev = GENESIS;
    for (seq, record) in stored.iter().enumerate() {
        let parsed = Record::from_bytes(&record.bytes).map_err(|e| format!("record {seq} read back: {e}"))?;
        prev = parsed.verify_link(seq as u64, &prev).map_err(|e| format!("record {seq} read back breaks the chain: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludo_game::api::CreateGame;
    use ludo_game::{GameService, SystemClock};
    use ludo_storage::MemoryStore;

    /// A store with `games` games of a few moves each.
    async fn played(games: usize) -> Arc<dyn EventStore> {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
        let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
        for _ in 0..games {
            let created = service.create(CreateGame::new("battle13", ["A", "B", "C", "D"])).await.unwrap();
            let id = created.id.parse().unwrap();
            for _ in 0..5 {
                let state = service.get(&id, None).await.unwrap();
                let seat = state.status.to_move()[0].index();
                let token = created.seats[seat].token.as_str();
                let mv = service.legal_moves(&id, Some(token)).await.unwrap().moves[0].clone();
                let submission = ludo_game::api::Submission {
                    mv: ludo_game::api::MoveInput::Typed(mv),
                    expected_version: None,
                    request_id: None,
                    answer: ludo_game::api::Answer::Minimal,
                };
                service.submit(&id, Some(token), submission).await.unwrap();
            }
        }
        store
    }

    #[tokio::test]
    async fn every_game_is_copied_verified_and_a_second_run_resumes() {
        let from = played(5).await;
        let to: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
        // A first run cut short: one game whole, one with a prefix only.
        let first = from.list_streams(None, 2).unwrap();
        let copy_first = |stream, records: Option<u64>| {
            let bytes = from.read_blocking(stream, 0, records).unwrap().into_iter().map(|r| r.bytes).collect();
            to.append(AppendRequest::create(stream, bytes, from.sealed_blocking(stream).unwrap())).wait().unwrap();
        };
        copy_first(first[0], None);
        copy_first(first[1], Some(2));
        let (from2, to2) = (Arc::clone(&from), Arc::clone(&to));
        let copied = tokio::task::spawn_blocking(move || copy(&from2, &to2, &ProgressBar::hidden())).await.unwrap().unwrap();
        assert_eq!(copied, Copied { games: 4, records: 4 + 3 * 6, skipped: 1 });
        for stream in from.list_streams(None, 10).unwrap() {
            assert_eq!(to.read_blocking(stream, 0, None), from.read_blocking(stream, 0, None));
            assert_eq!(to.sealed_blocking(stream), from.sealed_blocking(stream));
        }
        assert_eq!(to.list_summaries_blocking(None, 10).unwrap(), from.list_summaries_blocking(None, 10).unwrap(), "summaries too");
        // Run again: nothing left to do.
        let again = tokio::task::spawn_blocking(move || copy(&from, &to, &ProgressBar::hidden())).await.unwrap().unwrap();
        assert_eq!(again, Copied { games: 0, records: 0, skipped: 5 });
    }

    #[tokio::test]
    async fn the_transparency_log_goes_with_the_games_and_opens_in_the_target() {
        let from: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
        let service = GameService::new(Arc::clone(&from), Arc::new(SystemClock));
        for _ in 0..3 {
            let created = service.create(CreateGame::new("cardinal", ["A", "B"])).await.unwrap();
            service.resign(&created.id.parse().unwrap(), Some(&created.seats[1].token)).await.unwrap();
        }
        let before = service.log_info().await.unwrap();
        let to: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
        let (from2, to2) = (Arc::clone(&from), Arc::clone(&to));
        let copied = tokio::task::spawn_blocking(move || copy(&from2, &to2, &ProgressBar::hidden())).await.unwrap().unwrap();
        // Three games, the log's key and its tree.
        assert_eq!(copied.games, 5);
        let moved = GameService::new(to, Arc::new(SystemClock));
        let after = moved.open_log().await.expect("the copied tree checks out against its checkpoint");
        assert_eq!((after.key, after.checkpoint), (before.key, before.checkpoint));
    }

    #[tokio::test]
    async fn a_target_that_differs_is_never_overwritten() {
        let from = played(1).await;
        let to = played(0).await;
        let stream = from.list_streams(None, 1).unwrap()[0];
        to.append(AppendRequest::create(stream, vec![b"something else".to_vec()], None)).wait().unwrap();
        let err = tokio::task::spawn_blocking(move || copy(&from, &to, &ProgressBar::hidden())).await.unwrap().unwrap_err();
        assert!(err.contains("differ"), "{err}");
    }
}
