//! The transparency log through the game service: every game that ends gets
//! a leaf and a receipt before its last answer; a finished game's export is
//! a bundle that verifies offline with the log's key and with no other;
//! consistency proofs between checkpoints; and a server whose stored tree
//! disagrees with its last checkpoint does not open its log.

#[path = "support/bundle.rs"]
mod bundle;

use std::sync::Arc;

use ludo_game::api::CreateGame;
use ludo_game::{GameId, GameService, LogSettings, ServiceError, SystemClock, TransparencyLog};
use ludo_record::export::{self, ExportHeader};
use ludo_storage::{AppendRequest, EventStore, MemoryStore, StreamId};
use ludo_transparency::{self as transparency, LogKey, Receipt};

use bundle::{join, split};

/// A two-player Cardinal game ended by seat 1's resignation: its id, the
/// receipt the resignation answered with.
async fn ended_game(service: &GameService) -> (GameId, Receipt) {
    let created = service.create(CreateGame::new("cardinal", ["Ada", "Bo"])).await.unwrap();
    let id: GameId = created.id.parse().unwrap();
    let changed = service.resign(&id, Some(&created.seats[1].token)).await.unwrap();
    assert!(changed.status.is_finished(), "{:?}", changed.status);
    (id, changed.receipt.expect("the answer that ends a game carries its receipt"))
}

fn service(store: &Arc<dyn EventStore>) -> GameService {
    GameService::new(Arc::clone(store), Arc::new(SystemClock))
}

#[tokio::test]
async fn a_game_that_ends_gets_a_receipt_and_its_export_is_a_bundle() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    let (id, receipt) = ended_game(&service).await;
    let info = service.log_info().await.unwrap();
    assert_eq!(receipt.key, info.key);
    assert_eq!(receipt.leaf_index, 0);
    assert_eq!(transparency::leaf_game(&receipt.leaf), Some(id.to_string().as_str()));
    // The game's state, its receipt and its export carry the same receipt.
    assert_eq!(service.get(&id, None).await.unwrap().receipt.as_ref(), Some(&receipt));
    assert_eq!(service.receipt(&id).await.unwrap(), receipt);
    let bundle = service.export(&id, None).await.unwrap();
    let (header, _) = split::<ExportHeader>(&bundle);
    assert_eq!(header.receipt.as_ref(), Some(&receipt));

    let report = export::verify_with(&bundle, Some(&info.key));
    assert!(report.valid, "{:?}", report.fault);
    let checked = report.receipt.expect("the receipt was checked");
    assert!(checked.trusted && checked.signature && checked.leaf_matches && checked.included, "{checked:?}");
    assert_eq!(checked.tree.map(|t| t.size), Some(1));
}

#[tokio::test]
async fn a_bundle_fails_with_another_key_a_record_less_or_more_an_altered_leaf_or_proof_and_a_re_signed_root() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let key = LogKey::from_seed("test.example/log", &[3; 32]).unwrap();
    let service = service(&store).with_log(LogSettings { origin: None, key: Some(key.clone()) });
    // Three games, so the proof of the middle one has hashes to alter.
    ended_game(&service).await;
    let (id, _) = ended_game(&service).await;
    ended_game(&service).await;
    let bundle = service.export(&id, None).await.unwrap();
    assert!(export::verify_with(&bundle, Some(key.verifier_key())).valid);
    let fails = |bytes: &[u8], what: &str| {
        let report = export::verify_with(bytes, Some(key.verifier_key()));
        assert!(!report.valid, "{what}: verified");
        report.fault.unwrap().reason
    };

    let other = LogKey::from_seed("test.example/log", &[4; 32]).unwrap();
    let report = export::verify_with(&bundle, Some(other.verifier_key()));
    assert!(!report.valid && report.fault.unwrap().reason.contains("not with the trusted key"));

    let (header, lines) = split::<ExportHeader>(&bundle);
    let records = header.records as usize;
    // A record removed (the last one): the game is no longer over, or the head differs.
    let mut fewer = lines.clone();
    fewer.remove(records - 1);
    let header_fewer = ExportHeader { records: header.records - 1, ..header.clone() };
    fails(&join(&header_fewer, &fewer), "a record removed");
    // A record appended: a copy of the last one breaks the chain.
    let mut more = lines.clone();
    more.insert(records, lines[records - 1].clone());
    let header_more = ExportHeader { records: header.records + 1, ..header.clone() };
    fails(&join(&header_more, &more), "a record appended");

    let mut receipt = header.receipt.clone().unwrap();
    let altered = |receipt: Receipt| join(&ExportHeader { receipt: Some(receipt), ..header.clone() }, &lines);
    // The leaf altered: it no longer says what the re-played game says.
    let leaf = receipt.leaf.replace("outcome finished", "outcome cancelled");
    let reason = fails(&altered(Receipt { leaf, ..receipt.clone() }), "an altered leaf");
    assert!(reason.contains("outcome"), "{reason}");
    // The proof altered.
    receipt.inclusion[0] = transparency::encode_hash(&tlog_tiles_hash(7));
    let reason = fails(&altered(receipt.clone()), "an altered proof");
    assert!(reason.contains("inclusion proof"), "{reason}");
    // The checkpoint re-signed, with the right key, over another root.
    let original = header.receipt.clone().unwrap();
    let tree = transparency::open_checkpoint(&original.checkpoint, key.verifier_key()).unwrap();
    let resigned = key.sign_checkpoint(tree.size, tlog_tiles_hash(9)).unwrap();
    let reason = fails(&altered(Receipt { checkpoint: resigned, ..original.clone() }), "a re-signed root");
    assert!(reason.contains("inclusion proof"), "{reason}");
    // A leaf index the proof is not for.
    fails(&altered(Receipt { leaf_index: original.leaf_index + 1, ..original }), "another index");
}

fn tlog_tiles_hash(byte: u8) -> tlog_tiles::Hash {
    tlog_tiles::Hash([byte; 32])
}

#[tokio::test]
async fn consistency_proofs_link_checkpoints_taken_before_and_after_more_games() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    let key = service.log_info().await.unwrap().key;
    let mut checkpoints = Vec::new();
    for _ in 0..6 {
        ended_game(&service).await;
        checkpoints.push(service.log_info().await.unwrap().checkpoint.unwrap());
    }
    for (i, old) in checkpoints.iter().enumerate() {
        for new in &checkpoints[i..] {
            let old = transparency::open_checkpoint(old, &key).unwrap();
            let new = transparency::open_checkpoint(new, &key).unwrap();
            let proof = service.consistency_proof(old.size, new.size).await.unwrap();
            transparency::check_consistency(&old, &new, &proof).unwrap();
            if old.size < new.size {
                // A proof of the wrong pair of trees does not pass.
                let mut wrong = proof.clone();
                if let Some(first) = wrong.proof.first_mut() {
                    *first = transparency::encode_hash(&tlog_tiles_hash(1));
                    assert!(transparency::check_consistency(&old, &new, &wrong).is_err());
                }
            }
        }
    }
    let err = service.consistency_proof(3, 99).await.unwrap_err();
    assert_eq!(err.code(), "invalid_input");
}

#[tokio::test]
async fn a_running_game_has_no_receipt_and_reserved_ids_are_no_games() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    let created = service.create(CreateGame::new("cardinal", ["Ada", "Bo"])).await.unwrap();
    let id: GameId = created.id.parse().unwrap();
    assert_eq!(service.receipt(&id).await.unwrap_err(), ServiceError::GameNotOver);
    assert!(service.get(&id, None).await.unwrap().receipt.is_none());
    ended_game(&service).await;
    for reserved in ["ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-fffffffffffe"] {
        assert!(matches!(reserved.parse::<GameId>(), Err(ServiceError::NotFound { .. })), "{reserved}");
    }
    // Listings show games only.
    let list = service.list(ludo_game::api::ListFilter { limit: 100, ..Default::default() }).await.unwrap();
    assert_eq!(list.games.len(), 2);
}

/// Copies every stream of `from` into a new store, the log stream's
/// records passed through `alter` first.
async fn copy_altered(from: &Arc<dyn EventStore>, alter: impl Fn(u64, Vec<u8>) -> Vec<u8>) -> Arc<dyn EventStore> {
    let to: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    for listed in from.list_summaries(None, 1000).await.unwrap() {
        let mut records: Vec<Vec<u8>> = from.read(listed.stream, 0, None).await.unwrap().into_iter().map(|r| r.bytes).collect();
        if listed.stream == StreamId([0xff; 16]) {
            records = records.into_iter().enumerate().map(|(i, bytes)| alter(i as u64, bytes)).collect();
        }
        let sealed = from.sealed(listed.stream).await.unwrap();
        let mut request = AppendRequest::create(listed.stream, records, sealed);
        if let Some(summary) = listed.summary {
            request = request.with_summary(summary);
        }
        to.append(request).await.unwrap();
    }
    to
}

/// A copy of `store` whose leaf `leaf` stores another hash at `place`
/// (0: the leaf's own; 1, 2…: the subtrees it completes, smallest first).
async fn hash_replaced(store: &Arc<dyn EventStore>, leaf: u64, place: usize) -> Arc<dyn EventStore> {
    copy_altered(store, |n, bytes| {
        if n != leaf {
            return bytes;
        }
        let mut entry: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        entry["hashes"][place] = transparency::encode_hash(&tlog_tiles_hash(5)).into();
        serde_json::to_vec(&entry).unwrap()
    })
    .await
}

#[tokio::test]
async fn a_log_whose_stored_tree_disagrees_with_its_last_checkpoint_does_not_open() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    for _ in 0..5 {
        ended_game(&service).await;
    }
    // Unaltered, the copy opens: same key, same tree.
    let same = copy_altered(&store, |_, bytes| bytes).await;
    let reopened = TransparencyLog::open(same, &LogSettings::default(), "now".into()).await.unwrap();
    assert_eq!(reopened.info().tree.map(|t| t.size), Some(5));

    // A stored hash that the root of five leaves is computed from replaced
    // (leaf 3's subtree of leaves 0 to 3): the log does not open.
    let altered = hash_replaced(&store, 3, 2).await;
    let err = TransparencyLog::open(altered, &LogSettings::default(), "now".into()).await.unwrap_err();
    assert!(err.to_string().contains("not the root"), "{err}");

    // The last leaf's text changed and its stored hash recomputed to
    // match (it completes no subtree of five leaves): every stored hash
    // agrees with the leaves, but the root is not the one the checkpoint signs.
    let rewritten = copy_altered(&store, |n, bytes| {
        if n != 4 {
            return bytes;
        }
        let mut entry: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let leaf = entry["leaf"].as_str().unwrap().replace("outcome finished", "outcome cancelled");
        let own = transparency::record_hash(leaf.as_bytes());
        entry["hashes"] = serde_json::json!([transparency::encode_hash(&own)]);
        entry["leaf"] = leaf.into();
        serde_json::to_vec(&entry).unwrap()
    })
    .await;
    let err = TransparencyLog::open(rewritten, &LogSettings::default(), "now".into()).await.unwrap_err();
    assert!(err.to_string().contains("not the root"), "{err}");

    // The last checkpoint dropped: a log cut short of its checkpoint.
    let cut = copy_altered(&store, |n, bytes| {
        if n != 4 {
            return bytes;
        }
        let mut entry: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        entry.as_object_mut().unwrap().remove("checkpoint");
        serde_json::to_vec(&entry).unwrap()
    })
    .await;
    let err = TransparencyLog::open(cut, &LogSettings::default(), "now".into()).await.unwrap_err();
    assert!(err.to_string().contains("no checkpoint"), "{err}");

    // Another key than the store's: refused, whatever the tree.
    let origin = service.log_info().await.unwrap().origin;
    let other = LogKey::from_seed(&origin, &[9; 32]).unwrap();
    let same = copy_altered(&store, |_, bytes| bytes).await;
    let err = TransparencyLog::open(same, &LogSettings { origin: None, key: Some(other) }, "now".into()).await.unwrap_err();
    assert!(err.to_string().contains("is not the store's log key"), "{err}");
}

/// A stored hash inside a complete subtree (leaf 3's of leaves 2 and 3) is
/// read by no root, so the log opens without reading it: opening reads the
/// last checkpoint and the roots of the complete subtrees, not every leaf.
/// But no proof made from it is served, the whole-tree check finds it, and
/// a service that ran that check adds no leaf to the altered tree.
#[tokio::test]
async fn a_hash_no_root_reads_altered_is_found_before_any_proof_from_it_is_served() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    for _ in 0..5 {
        ended_game(&service).await;
    }
    let altered = hash_replaced(&store, 3, 1).await;
    let log = TransparencyLog::open(Arc::clone(&altered), &LogSettings::default(), "now".into()).await.unwrap();
    assert_eq!(log.info().tree.map(|t| t.size), Some(5));
    // Leaf 4's proof does not read the altered hash: it is served. Leaf 0's
    // does: it is not, and the log is marked damaged.
    assert_eq!(log.receipt(4, 5).await.unwrap().leaf_index, 4);
    assert!(log.damage().is_none());
    let err = log.receipt(0, 5).await.unwrap_err();
    assert!(matches!(err, ServiceError::CorruptLog { .. }) && err.to_string().contains("does not prove leaf 0"), "{err}");
    assert_eq!(log.damage(), Some(&err));
    // The whole-tree check finds it too, on a log opened afresh.
    let log = Arc::new(TransparencyLog::open(Arc::clone(&altered), &LogSettings::default(), "now".into()).await.unwrap());
    let err = log.check_tree().await.unwrap_err();
    assert!(err.to_string().contains("tree was altered"), "{err}");
    assert_eq!(log.damage(), Some(&err));
    assert!(log.append("another leaf".into()).await.unwrap_err().to_string().contains("tree was altered"));

    // A service on the altered store checks the whole tree once its log
    // opens, in the background, then signs nothing more.
    let service = self::service(&altered);
    service.open_log().await.unwrap();
    let mut refused = None;
    for _ in 0..50 {
        let created = service.create(CreateGame::new("cardinal", ["Ada", "Bo"])).await.unwrap();
        let id: GameId = created.id.parse().unwrap();
        let changed = service.resign(&id, Some(&created.seats[1].token)).await.unwrap();
        if changed.receipt.is_none() {
            refused = Some(service.receipt(&id).await.unwrap_err());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let refused = refused.expect("a game that ended after the check got no leaf");
    assert!(refused.to_string().contains("tree was altered"), "{refused}");
    assert_eq!(service.log_info().await.unwrap().tree.map(|t| t.size), Some(5), "nothing was added to the altered tree");
}

#[tokio::test]
async fn leaves_from_many_games_at_once_share_appends_and_each_gets_its_own_place() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = Arc::new(service(&store));
    let mut tasks = Vec::new();
    for _ in 0..24 {
        let service = Arc::clone(&service);
        tasks.push(tokio::spawn(async move { ended_game(&service).await }));
    }
    let mut indexes = Vec::new();
    let key = service.log_info().await.unwrap().key;
    for task in tasks {
        let (id, receipt) = task.await.unwrap();
        let bundle = service.export(&id, None).await.unwrap();
        assert!(export::verify_with(&bundle, Some(&key)).valid, "{id}");
        indexes.push(receipt.leaf_index);
    }
    indexes.sort_unstable();
    assert_eq!(indexes, (0..24).collect::<Vec<_>>(), "one leaf per game");
}

/// A log restored from a backup that lacks its last append: the game whose
/// leaf was lost still has its place noted in its summary, and that place
/// may go to another game. Its receipt must stay its own: it is added again.
#[tokio::test]
async fn a_game_whose_leaf_a_restored_log_lost_is_added_again() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service(&store);
    let mut ended = Vec::new();
    for _ in 0..5 {
        ended.push(ended_game(&service).await);
    }
    // The copy keeps leaves 0 to 3: game 4's summary still says leaf 4.
    let to: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    for listed in store.list_summaries(None, 1000).await.unwrap() {
        let mut records: Vec<Vec<u8>> = store.read(listed.stream, 0, None).await.unwrap().into_iter().map(|r| r.bytes).collect();
        let mut summary = listed.summary;
        if listed.stream == StreamId([0xff; 16]) {
            records.truncate(4);
            summary = None;
        }
        let mut request = AppendRequest::create(listed.stream, records, store.sealed(listed.stream).await.unwrap());
        if let Some(summary) = summary {
            request = request.with_summary(summary);
        }
        to.append(request).await.unwrap();
    }
    let restored = self::service(&to);
    assert_eq!(restored.open_log().await.unwrap().tree.map(|t| t.size), Some(4));
    // Another game ends first and takes leaf 4.
    let (newcomer, receipt) = ended_game(&restored).await;
    assert_eq!(receipt.leaf_index, 4);
    // Game 4's receipt is not the newcomer's: the game is added again.
    let (lost, _) = &ended[4];
    let again = restored.receipt(lost).await.unwrap();
    assert_eq!(again.leaf_index, 5);
    assert_eq!(transparency::leaf_game(&again.leaf), Some(lost.to_string().as_str()));
    let key = restored.log_info().await.unwrap().key;
    for id in [lost, &newcomer, &ended[0].0] {
        let bundle = restored.export(id, None).await.unwrap();
        assert!(export::verify_with(&bundle, Some(&key)).valid, "{id}");
    }
}
