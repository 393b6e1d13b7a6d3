//! The transparency log through the real binaries: `ludo log-key` makes a
//! key, `ludo serve --log-key` signs with it and publishes it, `ludo verify`
//! checks a finished game's bundle offline with a key given or pinned on
//! first use (and fails with another key or any tampering), `ludo verify
//! --consistency` checks checkpoints taken before and after more games, and
//! `ludo serve` refuses to start on a store whose tree disagrees with its
//! last signed checkpoint, or with another key or origin than the store's
//! (on sled, and on PostgreSQL when the machine has it).

#[path = "../../game/tests/support/bundle.rs"]
mod bundle;
mod common;
#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)] // each test binary uses its own share of the harness
mod postgres;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use bundle::{join, split};
use common::{Server, create, play_out, resigned_game, start_command};
use ludo_storage::{AppendRequest, EventStore, PgOptions, PgStore, SledOptions, SledStore, StreamId};
use ludo_transparency::{self as transparency, LogKey};
use serde_json::{Value, json};

/// The log stream's id (the largest UUID).
const LOG_STREAM: StreamId = StreamId([0xff; 16]);

/// What a run of `ludo` left: exit code, standard output and error.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {:?}\n--- stdout\n{}--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

/// Runs `ludo ARGS…`, keys pinned (when no `--known-keys` is given) in
/// `known`, never in the user's own configuration.
fn ludo(args: &[&str], known: &Path) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_ludo")).args(args).env("LUDO_KNOWN_KEYS", known).output().expect("ludo runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// `ludo log-key --origin ORIGIN --out DIR/NAME`: the key file and the
/// verifier key it printed.
fn log_key(dir: &Path, origin: &str, name: &str) -> (PathBuf, String) {
    let out = dir.join(name);
    let run = ludo(&["log-key", "--origin", origin, "--out", path(&out)], &dir.join("unused"));
    assert_eq!(run.code, Some(0), "{run:?}");
    let verifier = run.stdout.trim().to_string();
    assert!(transparency::key_id_of(&verifier).is_some(), "log-key prints a verifier key: {run:?}");
    (out, verifier)
}

/// `ludo serve` on `store` (a sled data directory, or `--store URL`) with `args`.
fn serve(store: &Store, args: &[&str]) -> Server {
    start_command(&mut store.command(args))
}

/// Where a `ludo serve` keeps its log in these tests.
#[derive(Clone)]
enum Store {
    Sled(PathBuf),
    Postgres(String),
}

impl Store {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ludo"));
        command.args(["serve", "--listen", "127.0.0.1:0"]);
        match self {
            Store::Sled(dir) => command.arg("--data-dir").arg(dir),
            Store::Postgres(url) => command.args(["--store", url]),
        };
        command.args(args);
        command
    }

    /// The store, opened directly (no server may be using a sled one).
    /// Blocking: call it outside any async runtime.
    fn open(&self) -> Arc<dyn EventStore> {
        match self {
            Store::Sled(dir) => Arc::new(SledStore::open(dir, SledOptions::default()).expect("open sled")),
            Store::Postgres(url) => {
                Arc::new(PgStore::connect(url, &PgOptions { pool_size: 2, ..PgOptions::default() }).expect("connect to PostgreSQL"))
            }
        }
    }
}

/// `ludo serve` on `store` with `args`, which must exit without serving:
/// its standard error.
fn refused(store: &Store, args: &[&str]) -> String {
    refused_with(store, args, &[])
}

/// [`refused`] with more variables in the server's environment.
fn refused_with(store: &Store, args: &[&str], env: &[(&str, &str)]) -> String {
    let child = store
        .command(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ludo starts");
    let pid = child.id();
    let (send, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(child.wait_with_output());
    });
    match received.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => {
            let out = out.expect("ludo ran");
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(!out.status.success(), "ludo serve exited cleanly: {stderr}");
            assert!(!stderr.contains("serving REST and gRPC"), "ludo serve served: {stderr}");
            stderr
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("ludo serve {args:?} did not refuse to start within a minute");
        }
    }
}

/// A runtime for the HTTP calls of the synchronous tests (the stores they
/// open directly run their own runtimes, which must not be dropped inside one).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let answer = http.get(url).send().await.unwrap();
    assert_eq!(answer.status(), 200, "GET {url}");
    answer.json().await.unwrap()
}

async fn get_text(http: &reqwest::Client, url: &str) -> String {
    let answer = http.get(url).send().await.unwrap();
    assert_eq!(answer.status(), 200, "GET {url}");
    answer.text().await.unwrap()
}

/// A Cardinal game played to its end (first legal move each time); its id.
async fn played_game(http: &reqwest::Client, base: &str) -> String {
    let game = create(http, base, "cardinal", &["Ann", "Bob", "Cid"]).await;
    play_out(http, base, &game).await;
    game["id"].as_str().unwrap().to_string()
}

async fn export(http: &reqwest::Client, base: &str, id: &str) -> Vec<u8> {
    let answer = http.get(format!("{base}/v1/games/{id}/export")).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    answer.bytes().await.unwrap().to_vec()
}

/// `ludo verify --key KEY FILE` on `bundle` written to `file`.
fn verify_with_key(bundle: &[u8], file: &Path, key: &str) -> Run {
    std::fs::write(file, bundle).unwrap();
    ludo(&["verify", "--key", key, path(file)], &file.with_extension("known"))
}

/// `ludo verify` must refuse `bundle` with `reason` in its report.
fn invalid(bundle: &[u8], file: &Path, key: &str, reason: &str, what: &str) {
    let run = verify_with_key(bundle, file, key);
    assert_eq!(run.code, Some(1), "{what}: {run:?}");
    assert!(run.stdout.contains("INVALID at line"), "{what}: {run:?}");
    assert!(run.stdout.contains(reason), "{what}: the report names `{reason}`: {run:?}");
}

/// The issue's checks: "a finished game's bundle verifies offline with the
/// right key and fails with another key, with a record removed, with a
/// record appended, with the leaf or proof altered, and when the checkpoint
/// is re-signed over a different root" — with the real binaries: `ludo
/// log-key` makes the key, `ludo serve --log-key` signs with it and
/// publishes it at `/.well-known/ludotheque-log-key`, and `ludo verify`
/// exits 0 (VALID) or 1 (INVALID, with the reason).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ludo_verify_checks_a_bundle_with_the_published_key_and_refuses_another_key_or_any_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let origin = "audit.example/log";
    let (key_file, verifier) = log_key(dir.path(), origin, "log.key");
    let private = std::fs::read_to_string(&key_file).unwrap();
    assert!(private.starts_with(&format!("PRIVATE+KEY+{origin}+")), "{private}");
    let signer = LogKey::from_private(&private).unwrap();
    assert_eq!(signer.verifier_key(), verifier, "the printed key is the file's public half");
    // The key file is never overwritten.
    let again = ludo(&["log-key", "--origin", origin, "--out", path(&key_file)], &dir.path().join("unused"));
    assert_eq!(again.code, Some(1), "{again:?}");
    assert_eq!(std::fs::read_to_string(&key_file).unwrap(), private);

    let server = serve(&Store::Sled(dir.path().join("data")), &["--log-origin", origin, "--log-key", path(&key_file)]);
    let http = reqwest::Client::new();
    let well_known = get_text(&http, &format!("{}/.well-known/ludotheque-log-key", server.base)).await;
    assert_eq!(well_known, format!("{verifier}\n"));
    assert_eq!(get_json(&http, &format!("{}/v1/log", server.base)).await["key"], verifier);
    resigned_game(&http, &server.base).await;
    let id = played_game(&http, &server.base).await;
    resigned_game(&http, &server.base).await;
    let bundle = export(&http, &server.base, &id).await;
    drop(http);
    server.terminate();

    let file = dir.path().join("bundle.jsonl");
    let key_id = signer.key_id();
    let valid = verify_with_key(&bundle, &file, &verifier);
    assert_eq!(valid.code, Some(0), "{valid:?}");
    for line in [
        format!("key: {key_id} (given)"),
        format!("checkpoint: signed by {key_id} ({origin}), 2 leaves"),
        "leaf 1: this game's head".to_string(),
        "inclusion: the proof leads from the leaf to the checkpoint's root".to_string(),
        "VALID".to_string(),
    ] {
        assert!(valid.stdout.contains(&line), "`{line}` in {valid:?}");
    }
    // The key as served, in a file, does the same.
    let key_text = dir.path().join("well-known.txt");
    std::fs::write(&key_text, &well_known).unwrap();
    assert_eq!(verify_with_key(&bundle, &file, path(&key_text)).code, Some(0));
    let json = ludo(&["verify", "--json", "--key", &verifier, path(&file)], &dir.path().join("unused"));
    let report: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("{e}: {json:?}"));
    assert_eq!(report["valid"], true);
    for check in ["trusted", "signature", "leaf_matches", "included"] {
        assert_eq!(report["receipt"][check], true, "receipt.{check}: {report}");
    }

    // Another key under the same origin.
    let (_, other) = log_key(dir.path(), origin, "other.key");
    invalid(&bundle, &file, &other, "not with the trusted key", "another key");

    let (header, lines) = split::<Value>(&bundle);
    let records = header["records"].as_u64().unwrap() as usize;
    // A record removed (the last), the header's count adjusted to match.
    let mut fewer = lines.clone();
    fewer.remove(records - 1);
    let mut fewer_header = header.clone();
    fewer_header["records"] = json!(records - 1);
    invalid(&join(&fewer_header, &fewer), &file, &verifier, "the replayed game says false", "a record removed");
    // A record removed from the middle.
    let mut gap = lines.clone();
    gap.remove(records / 2);
    let at = records / 2;
    invalid(
        &join(&fewer_header, &gap),
        &file,
        &verifier,
        &format!("(record {at}): record says seq {}", at + 1),
        "a record removed from the middle",
    );
    // A record appended (the last one again).
    let mut more = lines.clone();
    more.insert(records, lines[records - 1].clone());
    let mut more_header = header.clone();
    more_header["records"] = json!(records + 1);
    invalid(
        &join(&more_header, &more),
        &file,
        &verifier,
        &format!("(record {records}): record says seq {}", records - 1),
        "a record appended",
    );

    let with_receipt = |change: &dyn Fn(&mut Value)| {
        let mut header = header.clone();
        change(&mut header["receipt"]);
        join(&header, &lines)
    };
    // The leaf altered: its last hash is another record's.
    let leaf = with_receipt(&|r| {
        let leaf = r["leaf"].as_str().unwrap();
        let last = leaf.lines().find(|l| l.starts_with("last ")).unwrap().to_string();
        r["leaf"] = json!(leaf.replace(&last, &format!("last {}", "0".repeat(64))));
    });
    invalid(&leaf, &file, &verifier, "the receipt's leaf says `last 000", "the leaf altered");
    // The inclusion proof altered.
    let forged = transparency::encode_hash(&transparency::record_hash(b"forged"));
    invalid(&with_receipt(&|r| r["inclusion"][0] = json!(forged)), &file, &verifier, "inclusion proof", "the proof altered");
    // The checkpoint re-signed with the log's own key over another root.
    let size = transparency::open_checkpoint(header["receipt"]["checkpoint"].as_str().unwrap(), &verifier).unwrap().size;
    let resigned = signer.sign_checkpoint(size, transparency::record_hash(b"another root")).unwrap();
    invalid(&with_receipt(&|r| r["checkpoint"] = json!(resigned)), &file, &verifier, "inclusion proof", "re-signed over another root");
    // The checkpoint's size changed under its signature.
    let altered = header["receipt"]["checkpoint"].as_str().unwrap().replacen("\n2\n", "\n3\n", 1);
    invalid(&with_receipt(&|r| r["checkpoint"] = json!(altered)), &file, &verifier, "signature", "the checkpoint altered");

    // Without its receipt the export is an old-style one: it verifies, but
    // `ludo verify` says completeness is not proven.
    let mut bare = header.clone();
    bare.as_object_mut().unwrap().remove("receipt");
    let run = verify_with_key(&join(&bare, &lines), &file, &verifier);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("completeness: not proven"), "{run:?}");
}

/// The "trust on first use": without `--key`, the first bundle of
/// a log pins its key in the known-keys file (printing its id); later
/// bundles of that origin must be signed by it, so a server that signs
/// with another key under the same origin is refused, until the operator
/// gives that key explicitly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_on_first_use_pins_the_key_and_a_second_key_under_the_same_origin_fails() {
    let dir = tempfile::tempdir().unwrap();
    let origin = "tofu.example/log";
    let http = reqwest::Client::new();
    let mut bundles = Vec::new();
    let mut keys = Vec::new();
    for name in ["a", "b"] {
        // Each server makes (and keeps sealed in its store) a key of its own.
        let server = serve(&Store::Sled(dir.path().join(name)), &["--log-origin", origin]);
        let info = get_json(&http, &format!("{}/v1/log", server.base)).await;
        assert_eq!(info["origin"], origin);
        keys.push((info["key"].as_str().unwrap().to_string(), info["key_id"].as_str().unwrap().to_string()));
        let (id, _) = resigned_game(&http, &server.base).await;
        bundles.push(export(&http, &server.base, &id).await);
        server.terminate();
    }
    assert_ne!(keys[0], keys[1]);
    let known = dir.path().join("config").join("ludo").join("known_log_keys");
    let file = dir.path().join("bundle.jsonl");
    let verify = |bundle: &[u8]| {
        std::fs::write(&file, bundle).unwrap();
        ludo(&["verify", "--known-keys", path(&known), path(&file)], &dir.path().join("unused"))
    };

    let first = verify(&bundles[0]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(first.stdout.contains(&format!("key: {} ({origin}) trusted on first use, pinned in", keys[0].1)), "{first:?}");
    assert_eq!(std::fs::read_to_string(&known).unwrap(), format!("{}\n", keys[0].0), "the key is pinned");
    let second = verify(&bundles[0]);
    assert_eq!(second.code, Some(0), "{second:?}");
    assert!(second.stdout.contains(&format!("key: {} ({origin}, pinned in", keys[0].1)), "{second:?}");

    // The other server's bundle, same origin, another key: refused.
    let other = verify(&bundles[1]);
    assert_eq!(other.code, Some(1), "{other:?}");
    assert!(other.stdout.contains(&format!("key: {} is pinned for {origin}", keys[0].1)), "{other:?}");
    assert!(other.stdout.contains("not with the trusted key"), "{other:?}");
    assert_eq!(std::fs::read_to_string(&known).unwrap(), format!("{}\n", keys[0].0), "the pin is not replaced");
    // The same through $LUDO_KNOWN_KEYS.
    std::fs::write(&file, &bundles[1]).unwrap();
    assert_eq!(ludo(&["verify", path(&file)], &known).code, Some(1));
    // Given explicitly, the other key is used (and nothing is pinned).
    let given = ludo(&["verify", "--known-keys", path(&known), "--key", &keys[1].0, path(&file)], &known);
    assert_eq!(given.code, Some(0), "{given:?}");
    assert_eq!(std::fs::read_to_string(&known).unwrap(), format!("{}\n", keys[0].0));
}

/// `ludo verify --consistency OLD NEW [--proof F | --server URL]`.
fn consistency(dir: &Path, old: &str, new: &str, extra: &[&str]) -> Run {
    let (old_file, new_file) = (dir.join("old.txt"), dir.join("new.txt"));
    std::fs::write(&old_file, old).unwrap();
    std::fs::write(&new_file, new).unwrap();
    let mut args = vec!["verify", "--consistency", path(&old_file), path(&new_file)];
    args.extend_from_slice(extra);
    ludo(&args, &dir.join("consistency.known"))
}

/// The issue's check "consistency proofs between checkpoints taken before
/// and after more games", with `ludo verify --consistency`: checkpoints
/// from `/v1/log/checkpoint` after 1 and 4 games are consistent by the
/// proof from `--server` or from a `--proof` file; swapped, forged, re-signed
/// over another root, forked or under another key, they are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ludo_verify_consistency_links_checkpoints_before_and_after_more_games() {
    let dir = tempfile::tempdir().unwrap();
    let origin = "audit.example/log";
    let (key_file, key) = log_key(dir.path(), origin, "log.key");
    let signer = LogKey::from_private(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    let server = serve(&Store::Sled(dir.path().join("data")), &["--log-key", path(&key_file)]);
    let base = server.base.clone();
    let http = reqwest::Client::new();
    let (first_game, _) = resigned_game(&http, &base).await;
    let old = get_text(&http, &format!("{base}/v1/log/checkpoint")).await;
    for _ in 0..3 {
        resigned_game(&http, &base).await;
    }
    let (last_game, _) = resigned_game(&http, &base).await;
    let new = get_text(&http, &format!("{base}/v1/log/checkpoint")).await;
    let proof = get_text(&http, &format!("{base}/v1/log/consistency?from=1&to=5")).await;
    let bundles = (export(&http, &base, &first_game).await, export(&http, &base, &last_game).await);
    let d = dir.path();

    // Asked of the server, or from a file.
    let ok = consistency(d, &old, &new, &["--key", &key, "--server", &base]);
    assert_eq!(ok.code, Some(0), "{ok:?}");
    for line in ["old checkpoint: tree size 1,", "new checkpoint: tree size 5,", "consistent: the new tree extends the old one", "VALID"] {
        assert!(ok.stdout.contains(line), "`{line}` in {ok:?}");
    }
    let proof_file = d.join("proof.json");
    std::fs::write(&proof_file, &proof).unwrap();
    let from_file = consistency(d, &old, &new, &["--key", &key, "--proof", path(&proof_file)]);
    assert_eq!(from_file.code, Some(0), "{from_file:?}");
    // Bundles hold checkpoints too (and name their key: pinned on first use).
    let (old_bundle, new_bundle) = (d.join("old.jsonl"), d.join("new.jsonl"));
    std::fs::write(&old_bundle, &bundles.0).unwrap();
    std::fs::write(&new_bundle, &bundles.1).unwrap();
    let known = d.join("bundles.known");
    let args =
        ["verify", "--consistency", path(&old_bundle), path(&new_bundle), "--proof", path(&proof_file), "--known-keys", path(&known)];
    let run = ludo(&args, &known);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("trusted on first use"), "{run:?}");

    let refused = |run: Run, reason: &str, what: &str| {
        assert_eq!(run.code, Some(1), "{what}: {run:?}");
        assert!(run.stdout.contains("INVALID") && run.stdout.contains(reason), "{what}: `{reason}` in {run:?}");
    };
    // Checkpoint files name no key: one must be given or pinned.
    refused(consistency(d, &old, &new, &["--proof", path(&proof_file)]), "no key is known", "no key");
    // Checkpoints of different sizes need a proof.
    refused(consistency(d, &old, &new, &["--key", &key]), "need a consistency proof", "no proof");
    // Swapped: the old one is the larger.
    let swapped = consistency(d, &new, &old, &["--key", &key, "--server", &base]);
    refused(swapped, "", "swapped, asking the server");
    refused(consistency(d, &new, &old, &["--key", &key, "--proof", path(&proof_file)]), "larger than the new one", "swapped");
    // A proof with a forged hash.
    let mut forged: Value = serde_json::from_str(&proof).unwrap();
    forged["proof"][0] = json!(transparency::encode_hash(&transparency::record_hash(b"forged")));
    let forged_file = d.join("forged.json");
    std::fs::write(&forged_file, forged.to_string()).unwrap();
    refused(consistency(d, &old, &new, &["--key", &key, "--proof", path(&forged_file)]), "prefix", "a forged proof");
    // The new checkpoint re-signed with the log's key over another root.
    let rewritten = signer.sign_checkpoint(5, transparency::record_hash(b"a rewritten log")).unwrap();
    let run = consistency(d, &old, &rewritten, &["--key", &key, "--server", &base]);
    refused(run, "prefix", "re-signed over another root");
    // Two checkpoints of one size: the same is consistent, another root is a fork.
    assert_eq!(consistency(d, &new, &new, &["--key", &key]).code, Some(0));
    refused(consistency(d, &new, &rewritten, &["--key", &key]), "forked", "a fork");
    // Under another key.
    let (_, other) = log_key(d, origin, "other.key");
    refused(consistency(d, &old, &new, &["--key", &other, "--proof", path(&proof_file)]), "the old checkpoint", "another key");
    drop(http);
    server.terminate();
}

/// Copies every stream of `from` into `to` through the store contract (the
/// log's streams too, with their sealed data and summaries), each record of
/// the log stream passed through `alter` (`None` drops it). Blocking.
fn copy_store(from: &dyn EventStore, to: &dyn EventStore, alter: &dyn Fn(u64, Vec<u8>) -> Option<Vec<u8>>) {
    let mut after = None;
    loop {
        let page = from.list_summaries_blocking(after, 100).unwrap();
        let Some(last) = page.last() else { break };
        after = Some(last.stream);
        for listed in page {
            let mut records: Vec<Vec<u8>> = from.read_blocking(listed.stream, 0, None).unwrap().into_iter().map(|r| r.bytes).collect();
            if listed.stream == LOG_STREAM {
                records = records.into_iter().enumerate().filter_map(|(n, bytes)| alter(n as u64, bytes)).collect();
            }
            let sealed = from.sealed_blocking(listed.stream).unwrap();
            let mut request = AppendRequest::create(listed.stream, records, sealed);
            if let Some(summary) = listed.summary {
                request = request.with_summary(summary);
            }
            to.append(request).wait().unwrap();
        }
    }
}

/// Copies `from` into the new store `to`, altered; both closed after.
fn copy_altered(from: &Store, to: &Store, alter: &dyn Fn(u64, Vec<u8>) -> Option<Vec<u8>>) {
    let (source, target) = (from.open(), to.open());
    copy_store(source.as_ref(), target.as_ref(), alter);
    target.close().unwrap();
    source.close().unwrap();
}

/// A log entry's JSON changed by `change` when it is entry `at`.
fn entry_changed(at: u64, change: impl Fn(&mut Value)) -> impl Fn(u64, Vec<u8>) -> Option<Vec<u8>> {
    move |n, bytes| {
        if n != at {
            return Some(bytes);
        }
        let mut entry: Value = serde_json::from_slice(&bytes).unwrap();
        change(&mut entry);
        Some(serde_json::to_vec(&entry).unwrap())
    }
}

/// Ends `games` games on a server started on `store`; answers `/v1/log`
/// and the last checkpoint.
fn games_on(store: &Store, games: usize) -> (Value, String) {
    let server = serve(store, &[]);
    let rt = runtime();
    let info = rt.block_on(async {
        let http = reqwest::Client::new();
        for _ in 0..games {
            resigned_game(&http, &server.base).await;
        }
        get_json(&http, &format!("{}/v1/log", server.base)).await
    });
    drop(rt);
    server.terminate();
    let checkpoint = info["checkpoint"].as_str().unwrap().to_string();
    (info, checkpoint)
}

/// The issue's check "the server refuses to start if its stored tree
/// disagrees with its last signed checkpoint", on `original` (a stopped
/// server's store, 5 leaves) copied into the new stores `copy(name)`
/// through the store contract: unaltered, the copy serves the same log;
/// with a stored hash, a leaf (its hash recomputed) or the last checkpoint
/// altered, `ludo serve` exits non-zero naming the transparency log. A
/// copy cut short by its last append starts (its tree agrees with the
/// checkpoint stored with it), but a client that kept the checkpoint it was
/// shown sees the fork. With another key or origin than the store's, the
/// server refuses too.
fn refuses_to_start(original: &Store, copy: &dyn Fn(&str) -> Store, dir: &Path) {
    let (info, checkpoint) = games_on(original, 5);
    assert_eq!(info["tree"]["size"], 5, "{info}");
    let key = info["key"].as_str().unwrap().to_string();

    // Unaltered: the same log is served.
    let same = copy("same");
    copy_altered(original, &same, &|_, bytes| Some(bytes));
    let server = serve(&same, &[]);
    let served = runtime().block_on(get_json(&reqwest::Client::new(), &format!("{}/v1/log", server.base)));
    assert_eq!(served, info, "a faithful copy serves the same log");
    server.terminate();

    // A stored hash the root is computed from replaced (leaf 3's subtree of leaves 0 to 3).
    let forged = transparency::encode_hash(&transparency::record_hash(b"forged"));
    let altered = copy("hash");
    copy_altered(original, &altered, &entry_changed(3, |e| e["hashes"][2] = json!(forged)));
    let stderr = refused(&altered, &[]);
    assert!(stderr.contains("transparency log") && stderr.contains("is not the root"), "{stderr}");

    // One no root reads (leaf 3's subtree of leaves 2 and 3): the server
    // starts without reading it (it reads the last checkpoint and the
    // roots of the complete subtrees, not every leaf), but serves no proof
    // made from it, and once it found one that does not hold (or its
    // whole-tree check found the hash), adds nothing more to the tree.
    let inner = copy("inner-hash");
    copy_altered(original, &inner, &entry_changed(3, |e| e["hashes"][1] = json!(forged)));
    let server = serve(&inner, &[]);
    runtime().block_on(async {
        let http = reqwest::Client::new();
        // Each game was its own append, so a checkpoint of each size was
        // signed. Proving 1 leaf a prefix of 2 does not read the altered
        // hash: it is served; 2 of 4 does: it is not.
        let served = get_json(&http, &format!("{}/v1/log/consistency?from=1&to=2", server.base)).await;
        assert_eq!(served["proof"].as_array().map(Vec::len), Some(1), "{served}");
        let refused = http.get(format!("{}/v1/log/consistency?from=2&to=4", server.base)).send().await.unwrap();
        assert_eq!(refused.status(), 500);
        let problem: Value = refused.json().await.unwrap();
        assert_eq!(problem["code"], "corrupt_log", "{problem}");
        // The log is marked damaged: a game that ends now gets no leaf.
        let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
        let (id, token) = (game["id"].as_str().unwrap(), game["seats"][1]["token"].as_str().unwrap());
        let resign = http.post(format!("{}/v1/games/{id}/resign", server.base)).bearer_auth(token).json(&json!({}));
        let ended: Value = resign.send().await.unwrap().json().await.unwrap();
        assert_eq!(ended["status"]["state"], "finished", "{ended}");
        assert!(ended.get("receipt").is_none(), "no leaf is added to an altered tree: {ended}");
        let log = get_json(&http, &format!("{}/v1/log", server.base)).await;
        assert_eq!(log["checkpoint"], json!(checkpoint), "nothing more was signed over the altered tree");
    });
    server.terminate();

    // The last leaf rewritten with its own hash recomputed (leaf 4 stores
    // only that one): the hashes agree, the root is not the signed one.
    let rewritten = copy("leaf");
    copy_altered(
        original,
        &rewritten,
        &entry_changed(4, |e| {
            let leaf = e["leaf"].as_str().unwrap().replace("forfeits 1:resigned", "forfeits 0:resigned");
            e["hashes"] = json!([transparency::encode_hash(&transparency::record_hash(leaf.as_bytes()))]);
            e["leaf"] = json!(leaf);
        }),
    );
    let stderr = refused(&rewritten, &[]);
    assert!(stderr.contains("transparency log") && stderr.contains("is not the root"), "{stderr}");

    // The last checkpoint dropped, or replaced by one of another key.
    let cut = copy("checkpoint");
    copy_altered(
        original,
        &cut,
        &entry_changed(4, |e| {
            e.as_object_mut().unwrap().remove("checkpoint");
        }),
    );
    let stderr = refused(&cut, &[]);
    assert!(stderr.contains("transparency log") && stderr.contains("no checkpoint"), "{stderr}");
    let origin = info["origin"].as_str().unwrap();
    let stranger = LogKey::from_seed(origin, &[5; 32]).unwrap();
    let root = transparency::decode_hash(info["tree"]["root"].as_str().unwrap()).unwrap();
    let foreign = stranger.sign_checkpoint(5, root).unwrap();
    let resigned = copy("foreign");
    copy_altered(original, &resigned, &entry_changed(4, |e| e["checkpoint"] = json!(foreign)));
    let stderr = refused(&resigned, &[]);
    assert!(stderr.contains("transparency log") && stderr.contains("does not open with the log's key"), "{stderr}");

    // Another key or origin than the store's.
    let (other_key, _) = log_key(dir, origin, "other.key");
    let stderr = refused(original, &["--log-key", path(&other_key)]);
    assert!(stderr.contains("transparency log") && stderr.contains("is not the store's log key"), "{stderr}");
    let stderr = refused(original, &["--log-origin", "elsewhere.example/log"]);
    assert!(stderr.contains("transparency log") && stderr.contains("a log's origin never changes"), "{stderr}");
    let stderr = refused(original, &["--log-origin", "elsewhere.example/log", "--log-key", path(&other_key)]);
    assert!(stderr.contains("--log-origin is `elsewhere.example/log`"), "{stderr}");

    // The last append dropped whole: the tree agrees with the checkpoint
    // stored with leaf 3, so the server starts, and signs a fifth leaf
    // again; the checkpoint of 5 leaves a client kept shows the fork.
    let rolled_back = copy("rolled-back");
    copy_altered(original, &rolled_back, &|n, bytes| (n < 4).then_some(bytes));
    let (after, again) = games_on(&rolled_back, 1);
    assert_eq!((after["key"].as_str(), after["tree"]["size"].as_u64()), (Some(key.as_str()), Some(5)));
    assert_ne!(again, checkpoint, "another fifth leaf, another root");
    let run = consistency(dir, &checkpoint, &again, &["--key", &key]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.contains("forked"), "{run:?}");

    // The original itself still starts.
    serve(original, &[]).terminate();
}

/// [`refuses_to_start`] on sled data directories.
#[test]
fn ludo_serve_refuses_a_sled_store_whose_tree_disagrees_with_its_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    refuses_to_start(&Store::Sled(root.join("original")), &|name| Store::Sled(root.join(name)), dir.path());
}

/// [`refuses_to_start`] on PostgreSQL databases (skipped without
/// PostgreSQL unless `LUDO_REQUIRE_POSTGRES=1`).
#[test]
fn ludo_serve_refuses_a_postgres_store_whose_tree_disagrees_with_its_last_checkpoint() {
    let Some(cluster) = postgres::Cluster::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let original = Store::Postgres(cluster.new_database("original"));
    let copy = |name: &str| Store::Postgres(cluster.new_database(&name.replace('-', "_")));
    refuses_to_start(&original, &copy, dir.path());
}

/// The key may come from the environment (a secret injected as a
/// variable): `LUDO_LOG_KEY` holds its text; given twice, it is refused.
#[test]
fn the_log_key_may_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (file, verifier) = log_key(dir.path(), "env.example/log", "env.key");
    let text = std::fs::read_to_string(&file).unwrap();
    let store = Store::Sled(dir.path().join("data"));
    let mut server = start_command(store.command(&[]).env("LUDO_LOG_KEY", text.trim()));
    let published = runtime().block_on(async {
        let http = reqwest::Client::new();
        get_text(&http, &format!("{}/.well-known/ludotheque-log-key", server.base)).await
    });
    assert_eq!(published.trim(), verifier);
    let _ = server.child.kill();
    let _ = server.child.wait();
    let twice = refused_with(&store, &["--log-key", path(&file)], &[("LUDO_LOG_KEY", text.trim())]);
    assert!(twice.contains("given twice"), "{twice}");
    let bad = refused_with(&store, &[], &[("LUDO_LOG_KEY", "PRIVATE+KEY+nonsense")]);
    assert!(bad.contains("LUDO_LOG_KEY"), "{bad}");
}

/// `ludo verify` says when a bundle is of a game its server imported, and
/// from where; and a bundle stripped of that mark does not pass for one of
/// a game played there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ludo_verify_says_an_imported_game_s_bundle_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (serve(&Store::Sled(dir.path().join("a")), &[]), serve(&Store::Sled(dir.path().join("b")), &[]));
    let http = reqwest::Client::new();
    let id = played_game(&http, &a.base).await;
    let key_a = get_json(&http, &format!("{}/v1/log", a.base)).await["key"].as_str().unwrap().to_string();
    let imported = http
        .post(format!("{}/v1/games/import", b.base))
        .bearer_auth(common::OPERATOR_TOKEN)
        .header("content-type", "application/x-ndjson")
        .body(export(&http, &a.base, &id).await)
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 201);
    let key_b = get_json(&http, &format!("{}/v1/log", b.base)).await["key"].as_str().unwrap().to_string();
    let bundle = export(&http, &b.base, &id).await;
    let run = verify_with_key(&bundle, &dir.path().join("imported.ndjson"), &key_b);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout
            .contains(&format!("imported: the exporting server did not see this game played; it came from the log whose key is {key_a}")),
        "{run:?}"
    );
    assert!(run.stdout.contains("this game's head as an imported game's"), "{run:?}");
    let text = String::from_utf8(bundle).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    header.as_object_mut().unwrap().remove("imported");
    let stripped = format!("{header}\n{rest}");
    invalid(stripped.as_bytes(), &dir.path().join("stripped.ndjson"), &key_b, "receipt", "a bundle stripped of its import mark");
    a.terminate();
    b.terminate();
}
