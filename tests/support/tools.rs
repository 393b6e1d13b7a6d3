//! External tools of the API checks (`tests/clients.rs`,
//! `tests/schemathesis.rs`): where they are, how a missing one is reported,
//! and how they are run.
//!
//! The tools are installed at pinned versions into `.tools/` by
//! `.ci/install-client-tools`. Where one is missing, a test says so and
//! passes (skips), unless `LUDO_REQUIRE_CLIENT_TOOLS=1` (CI), which makes a
//! missing tool a failure.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
pub fn repo() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// Whether a missing tool is a failure (`LUDO_REQUIRE_CLIENT_TOOLS=1`).
pub fn required() -> bool {
    std::env::var("LUDO_REQUIRE_CLIENT_TOOLS").is_ok_and(|v| v == "1")
}

/// A tool is missing: the test is skipped, or fails under `LUDO_REQUIRE_CLIENT_TOOLS=1`.
pub fn missing(test: &str, why: &str) {
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
pub struct Ran {
    /// Its exit status.
    pub status: ExitStatus,
    /// All it wrote to stdout.
    pub stdout: String,
    /// All it wrote to stderr.
    pub stderr: String,
}

impl Ran {
    /// stdout, then stderr without Node.js's boxed deprecation banners.
    pub fn output(&self) -> String {
        let stderr: Vec<&str> = self.stderr.lines().filter(|line| !line.contains(['╔', '║', '╚'])).collect();
        let stderr = stderr.join("\n");
        let stderr = stderr.trim();
        if stderr.is_empty() { self.stdout.clone() } else { format!("{}\n--- stderr ---\n{stderr}\n", self.stdout) }
    }
}

/// Runs `command` to its end, killing it after `limit`.
///
/// # Errors
/// When it cannot be started, or did not end within `limit`.
pub fn run(mut command: Command, limit: Duration) -> std::io::Result<Ran> {
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

/// `LUDO_NAME` if set, else those of `defaults` that exist (a bare name: looked up on `PATH`).
pub fn candidates(variable: &str, defaults: Vec<PathBuf>) -> Vec<PathBuf> {
    match std::env::var_os(variable) {
        Some(value) if !value.is_empty() => vec![PathBuf::from(value)],
        _ => defaults.into_iter().filter(|p| p.components().count() == 1 || p.exists()).collect(),
    }
}

/// The version pinned for `package` (`package==version`) in the
/// requirements file `path` (relative to the repository's root).
pub fn pinned_requirement(path: &str, package: &str) -> String {
    let path = repo().join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|line| line.trim().strip_prefix(&format!("{package}==")))
        .unwrap_or_else(|| panic!("no {package}== in {}", path.display()))
        .trim()
        .to_string()
}
