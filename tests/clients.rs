//! External checks of the OpenAPI document, with tools from outside the Rust
//! toolchain:
//!
//! - a Python client generated from the served document (openapi-python-client)
//!   round-trips every kind's options, answers and moves against a real server
//!   (`tests/clients/python/roundtrip.py`);
//! - `redocly lint` with its recommended ruleset passes on
//!   `openapi/openapi.json` (config: `redocly.yaml`).
//!
//! The tools are installed at pinned versions into `.tools/` by
//! `.ci/install-client-tools`. Where they are missing, each test says so and
//! passes (skips) — unless `LUDO_REQUIRE_CLIENT_TOOLS=1`, which makes a missing
//! tool a failure. `LUDO_PYTHON` names the Python that has the generator (by
//! default `.tools/venv/bin/python3`, then `python3`), `LUDO_REDOCLY` the
//! redocly executable (by default `.tools/npm/node_modules/.bin/redocly`, then
//! `redocly` on `PATH`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use ludo_blackbox::TestServer;

fn repo() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

fn required() -> bool {
    std::env::var("LUDO_REQUIRE_CLIENT_TOOLS").is_ok_and(|v| v == "1")
}

/// A tool is missing: the test is skipped, or fails under `LUDO_REQUIRE_CLIENT_TOOLS=1`.
fn missing(test: &str, why: &str) {
    assert!(
        !required(),
        "{test}: {why}\n(LUDO_REQUIRE_CLIENT_TOOLS=1 makes this a failure; install the tools with `.ci/install-client-tools`)"
    );
    // Straight to the process's stderr, past the test harness's capture, so a skip is seen.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {why}\n  Install the tools with `.ci/install-client-tools`; LUDO_REQUIRE_CLIENT_TOOLS=1 makes a missing tool a failure."
    );
}

/// What a finished command did.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Ran {
    /// stdout, then stderr without Node.js's boxed deprecation banners.
    fn output(&self) -> String {
        let stderr: Vec<&str> = self.stderr.lines().filter(|line| !line.contains(['╔', '║', '╚'])).collect();
        let stderr = stderr.join("\n");
        let stderr = stderr.trim();
        if stderr.is_empty() { self.stdout.clone() } else { format!("{}\n--- stderr ---\n{stderr}\n", self.stdout) }
    }
}

/// Runs `command` to its end, killing it after `limit`.
fn run(mut command: Command, limit: Duration) -> std::io::Result<Ran> {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, format!("{command:?} did not finish within {limit:?}; killed")));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Ran { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() })
}

/// The value of `NAME=value` in `.ci/install-client-tools` (the pins live there).
fn pinned(name: &str) -> String {
    let path = repo().join(".ci/install-client-tools");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= in {}", path.display()))
        .trim()
        .to_string()
}

/// The generator's pinned version, from its requirements file.
fn pinned_generator() -> String {
    let path = repo().join("tests/clients/python/requirements.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|line| line.trim().strip_prefix("openapi-python-client=="))
        .unwrap_or_else(|| panic!("no openapi-python-client== in {}", path.display()))
        .trim()
        .to_string()
}

/// `LUDO_NAME` if set, else the first of `candidates` that exists (a bare name: looked up on `PATH`).
fn candidates(variable: &str, defaults: Vec<PathBuf>) -> Vec<PathBuf> {
    match std::env::var_os(variable) {
        Some(value) if !value.is_empty() => vec![PathBuf::from(value)],
        _ => defaults.into_iter().filter(|p| p.components().count() == 1 || p.exists()).collect(),
    }
}

/// A Python with the pinned generator (and the generated client's needs), or why there is none.
fn python_with_generator() -> Result<PathBuf, String> {
    let want = pinned_generator();
    let probe =
        "import openapi_python_client, httpx, attrs; from importlib.metadata import version; print(version('openapi-python-client'))";
    let mut tried = Vec::new();
    for python in candidates("LUDO_PYTHON", vec![repo().join(".tools/venv/bin/python3"), PathBuf::from("python3")]) {
        let mut command = Command::new(&python);
        command.args(["-c", probe]);
        match run(command, Duration::from_secs(60)) {
            Ok(ran) if ran.status.success() && ran.stdout.trim() == want => return Ok(python),
            Ok(ran) if ran.status.success() => {
                tried.push(format!("{} has openapi-python-client {}, not the pinned {want}", python.display(), ran.stdout.trim()))
            }
            Ok(ran) => {
                tried.push(format!("{}: {}", python.display(), ran.stderr.trim().lines().last().unwrap_or("the generator does not import")))
            }
            Err(e) => tried.push(format!("{}: {e}", python.display())),
        }
    }
    Err(format!("no Python with openapi-python-client {want}: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }))
}

/// The pinned redocly, or why there is none.
fn redocly() -> Result<PathBuf, String> {
    let want = pinned("REDOCLY_VERSION");
    let mut tried = Vec::new();
    for redocly in candidates("LUDO_REDOCLY", vec![repo().join(".tools/npm/node_modules/.bin/redocly"), PathBuf::from("redocly")]) {
        let mut command = Command::new(&redocly);
        command.arg("--version").env("REDOCLY_TELEMETRY", "off").env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true");
        match run(command, Duration::from_secs(60)) {
            Ok(ran) if ran.status.success() && ran.stdout.trim() == want => return Ok(redocly),
            Ok(ran) if ran.status.success() => {
                tried.push(format!("{} is version {}, not the pinned {want}", redocly.display(), ran.stdout.trim()))
            }
            Ok(ran) => tried.push(format!("{}: exit {}: {}", redocly.display(), ran.status, ran.stderr.trim())),
            Err(e) => tried.push(format!("{}: {e}", redocly.display())),
        }
    }
    Err(format!("no @redocly/cli {want}: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_python_client_round_trips_every_kind() {
    let test = "a_generated_python_client_round_trips_every_kind";
    let python = match python_with_generator() {
        Ok(python) => python,
        Err(why) => return missing(test, &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    let script = repo().join("tests/clients/python/roundtrip.py");
    let mut command = Command::new(&python);
    command
        .arg(&script)
        .arg("--openapi")
        .arg(format!("{}/openapi.json", server.base))
        .arg("--base")
        .arg(&server.base)
        .arg("--out")
        .arg(dir.path().join("client"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let ran = tokio::task::spawn_blocking(move || run(command, Duration::from_secs(600))).await.unwrap();
    server.stop().await;
    let ran = ran.unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    // The failed checks and the summary (every check is listed when it passes, with --nocapture).
    let failures: Vec<&str> = ran.stdout.lines().filter(|line| !line.starts_with("ok ")).collect();
    assert!(
        ran.status.success(),
        "the generated Python client does not round-trip ({}, {}):\n{}{}",
        ran.status,
        Path::new("tests/clients/python/roundtrip.py").display(),
        failures.join("\n"),
        ran.output().strip_prefix(ran.stdout.as_str()).unwrap_or_default()
    );
    println!("{}", ran.output());
}

#[test]
fn redocly_lint_passes_with_the_recommended_rules() {
    let test = "redocly_lint_passes_with_the_recommended_rules";
    let redocly = match redocly() {
        Ok(redocly) => redocly,
        Err(why) => return missing(test, &why),
    };
    let mut command = Command::new(&redocly);
    command
        .current_dir(repo())
        .args(["lint", "--config", "redocly.yaml", "--max-problems", "1000", "openapi/openapi.json"])
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0");
    let ran = run(command, Duration::from_secs(300)).unwrap_or_else(|e| panic!("{}: {e}", redocly.display()));
    assert!(
        ran.status.success(),
        "`redocly lint --config redocly.yaml openapi/openapi.json` ({}) found problems:\n{}",
        ran.status,
        ran.output()
    );
    println!("{}", ran.output());
}
