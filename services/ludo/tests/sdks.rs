//! The official SDKs against the real binary: each SDK's own suite
//! (`clients/typescript`: `npm test`; `clients/python`: `mypy --strict`,
//! then `pytest`) runs against a `ludo serve` started here on a loopback
//! port, with the server's default limits (the SDKs' retry rules meet its
//! real 429s). Each suite plays a whole game of every kind with the bot its
//! docs page shows, follows it live from a second client, exports it and
//! verifies the export.
//!
//! The binary is this build's `ludo`, or `LUDO_SDK_SERVER` (CI points it at
//! the release build). The SDKs' tools are installed by
//! `.ci/install-client-tools` (through `clients/*/install-tools.sh`) into
//! `.tools/`; without them each test says so and passes, unless
//! `LUDO_REQUIRE_CLIENT_TOOLS=1`, which makes that a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ludo_blackbox::tools::{missing, repo, run};

/// The tools directory `.ci/install-client-tools` installs into.
fn tools() -> PathBuf {
    match std::env::var_os("LUDO_TOOLS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repo().join(".tools"),
    }
}

/// The server the SDKs are tested against.
fn serve(data_dir: &Path) -> common::Server {
    let binary = match std::env::var_os("LUDO_SDK_SERVER") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_ludo")),
    };
    eprintln!("the SDKs' server: {}", binary.display());
    let mut command = Command::new(binary);
    command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(data_dir);
    common::start_command(&mut command)
}

/// Runs `command` to its end within `limit` (killed beyond it), shows
/// its output, and fails the test unless it exits 0.
fn check(what: &str, command: Command, limit: Duration) {
    eprintln!("running {what}: {command:?}");
    let ran = run(command, limit).unwrap_or_else(|e| panic!("{what}: {e}"));
    eprintln!("{}", ran.output());
    assert!(ran.status.success(), "{what} failed: {}\n{}", ran.status, ran.output());
}

#[test]
fn the_typescript_sdk_plays_follows_exports_and_verifies_every_kind() {
    let test = "the_typescript_sdk_plays_follows_exports_and_verifies_every_kind";
    let sdk = repo().join("clients/typescript");
    if !sdk.join("node_modules/typescript/package.json").exists() || !sdk.join("dist/index.js").exists() {
        return missing(test, &format!("the TypeScript SDK is not built: no {}/node_modules/typescript or dist/", sdk.display()));
    }
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("data"));
    let mut npm = Command::new("npm");
    npm.current_dir(&sdk).args(["test", "--silent"]).env("LUDO_BASE", &server.base);
    check("the TypeScript SDK's suite (npm test)", npm, Duration::from_secs(900));
    server.terminate();
}

#[test]
fn the_python_sdk_is_typed_and_plays_follows_exports_and_verifies_every_kind() {
    let test = "the_python_sdk_is_typed_and_plays_follows_exports_and_verifies_every_kind";
    let venv = tools().join("sdk-python/venv/bin");
    let sdk = repo().join("clients/python");
    if !venv.join("pytest").exists() || !venv.join("mypy").exists() {
        return missing(test, &format!("no pytest and mypy in {} (clients/python/install-tools.sh)", venv.display()));
    }
    let mut mypy = Command::new(venv.join("mypy"));
    mypy.current_dir(&sdk);
    check("mypy --strict over the Python SDK, its tests and its example bot", mypy, Duration::from_secs(600));
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("data"));
    let mut pytest = Command::new(venv.join("pytest"));
    pytest.current_dir(&sdk).args(["-p", "no:cacheprovider"]).env("LUDO_BASE", &server.base);
    check("the Python SDK's suite (pytest)", pytest, Duration::from_secs(900));
    server.terminate();
}
