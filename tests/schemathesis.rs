//! The OpenAPI document is exact: schemathesis, a property-based API fuzzer
//! from outside the Rust toolchain, reads the document the real server
//! serves and sends every operation requests it generates from it, valid
//! and invalid (every phase: the document's examples, coverage of each
//! bound, random fuzzing, and stateful sequences following the links it
//! infers between operations), with every check: no 5xx, every status,
//! content type, header and body as documented, requests the document
//! allows accepted and those it forbids refused, and so on. It must find
//! nothing.
//!
//! schemathesis is installed at its pinned version
//! (`tests/schemathesis/requirements.txt`) into `.tools/schemathesis` by
//! `.ci/install-client-tools`; `LUDO_SCHEMATHESIS` names another `st`.
//! Without it the test says so and passes (skips), unless
//! `LUDO_REQUIRE_CLIENT_TOOLS=1` (CI). Its settings, and the reason for
//! each check it narrows, are in `tests/schemathesis/schemathesis.toml`;
//! its hooks in `tests/schemathesis/hooks.py`.
//!
//! The run is reproducible: a fixed seed, one worker, no example database.
//! To run it by hand against a server of your own, see `command` below.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_blackbox::TestServer;
use ludo_blackbox::tools::{candidates, missing, pinned_requirement, repo, run};
use ludo_game::webhook::{Delivery, WebhookPolicy, WebhookSink};
use serde_json::Value;

/// The seed of every run (Hypothesis'), so a failure reproduces.
/// `LUDO_SCHEMATHESIS_SEED` runs another, to explore.
const SEED: u64 = 1;

fn seed() -> u64 {
    std::env::var("LUDO_SCHEMATHESIS_SEED").ok().and_then(|seed| seed.parse().ok()).unwrap_or(SEED)
}

/// Test cases per operation and phase: enough to reach every bound of
/// every operation, small enough for the whole run to take about a minute
/// on two cores.
const MAX_EXAMPLES: u32 = 20;

/// Longest one request may take: an event stream is read this long (or
/// for as many events as the settings say), then cut.
const REQUEST_TIMEOUT_SECONDS: u32 = 2;

/// The run is killed past this.
const WALL_CLOCK: Duration = Duration::from_secs(300);

/// The pinned `st`, or why there is none.
fn schemathesis() -> Result<PathBuf, String> {
    let want = pinned_requirement("tests/schemathesis/requirements.txt", "schemathesis");
    let mut tried = Vec::new();
    for st in candidates("LUDO_SCHEMATHESIS", vec![repo().join(".tools/schemathesis/bin/st"), PathBuf::from("st")]) {
        let mut command = Command::new(&st);
        command.arg("--version");
        match run(command, Duration::from_secs(60)) {
            // `st, version 4.32.5`
            Ok(ran) if ran.status.success() && ran.stdout.trim().rsplit(' ').next() == Some(want.as_str()) => return Ok(st),
            Ok(ran) if ran.status.success() => tried.push(format!("{} is {}, not the pinned {want}", st.display(), ran.stdout.trim())),
            Ok(ran) => tried.push(format!("{}: exit {}: {}", st.display(), ran.status, ran.stderr.trim())),
            Err(e) => tried.push(format!("{}: {e}", st.display())),
        }
    }
    Err(format!("no schemathesis {want}: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }))
}

/// Webhook calls go nowhere: the fuzzer makes up webhook URLs, and a test
/// sends traffic only to this machine.
struct Nowhere;

impl WebhookSink for Nowhere {
    fn deliver(&self, _: Delivery) {}
}

/// The command that fuzzes the server at `base`, writing its JSON report
/// into `reports` (also where it runs, so nothing lands in the tree).
fn command(st: &Path, base: &str, reports: &Path) -> Command {
    let config = repo().join("tests/schemathesis/schemathesis.toml");
    let hooks = repo().join("tests/schemathesis/hooks.py");
    let mut command = Command::new(st);
    command
        .current_dir(reports)
        .env("SCHEMATHESIS_HOOKS", &hooks)
        .arg("--config-file")
        .arg(&config)
        .arg("--no-color")
        .arg("run")
        .arg(format!("{base}/openapi.json"))
        .args(["--seed", &seed().to_string()])
        .args(["--max-examples", &MAX_EXAMPLES.to_string()])
        .args(["--request-timeout", &REQUEST_TIMEOUT_SECONDS.to_string()])
        // One worker: the run is the same every time, and two cores are shared.
        .args(["--workers", "1"])
        .args(["--report", "json", "--report-dir"])
        .arg(reports);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_disagreement_between_the_document_and_the_server() {
    let test = "schemathesis_finds_no_disagreement_between_the_document_and_the_server";
    let st = match schemathesis() {
        Ok(st) => st,
        Err(why) => return missing(test, &why),
    };
    let dir = tempfile::tempdir().unwrap();
    // Per-address rate limits off: one fuzzer sends thousands of requests
    // from one address, and 429s would stand in for the answers under test.
    let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
    // Webhooks are accepted for any address (which addresses a server may
    // call is its operator's choice, not the document's) and never called.
    let anywhere = WebhookPolicy::allowing(vec!["0.0.0.0/0".parse().unwrap(), "::/0".parse().unwrap()]);
    let server = TestServer::start_configured(&dir.path().join("data"), config, |service| {
        service.set_webhook_sink(Arc::new(Nowhere));
        service.with_webhook_policy(anywhere)
    })
    .await;
    let reports = dir.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let operations = server.rest().get("/openapi.json", None).await.body["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().map_or(0, |methods| methods.len()))
        .sum::<usize>();
    let fuzz = command(&st, &server.base, &reports);
    let described = format!("{fuzz:?}");
    let started = Instant::now();
    let ran = tokio::task::spawn_blocking(move || run(fuzz, WALL_CLOCK)).await.unwrap();
    let took = started.elapsed();
    server.stop().await;
    let ran = ran.unwrap_or_else(|e| panic!("{described}: {e}"));
    let said = format!("{described}\n({}, {took:?})\n{}", ran.status, ran.output());
    let report = report(&reports).unwrap_or_else(|why| panic!("{why}\n{said}"));

    // What it did: every operation, every phase, to the end.
    assert_eq!(report["complete"], true, "the run stopped early ({}):\n{said}", report["stop_reason"]);
    assert_eq!(report["operations"]["tested"].as_u64(), Some(operations as u64), "every operation is tested:\n{said}");
    for phase in ["examples", "coverage", "fuzzing", "stateful"] {
        assert_ne!(report["phases"][phase]["status"], "skip", "the {phase} phase ran:\n{said}");
    }
    assert!(report["test_cases"]["generated"].as_u64().unwrap_or(0) > 1000, "a real run:\n{said}");
    // What it found: nothing.
    assert_eq!(
        (&report["failures"], &report["errors"], report["exit_code"].as_i64()),
        (&Value::Array(vec![]), &Value::Array(vec![]), Some(0)),
        "schemathesis found disagreements:\n{said}"
    );
    assert!(ran.status.success(), "{said}");
    println!("{said}");
}

/// The JSON report schemathesis wrote into `dir`.
fn report(dir: &Path) -> Result<Value, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "json"))
        .ok_or_else(|| format!("no JSON report in {}", dir.display()))?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
