//! The server under test: a `ludo serve` child process on a free loopback
//! port with its own temporary data directory, killed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every per-address and per-seat throttle off: all the load comes from
/// 127.0.0.1, so with them on the bench would measure the limiter. Every
/// other limit keeps its default.
const UNTHROTTLED: &[&str] = &[
    "--rate-create",
    "off",
    "--rate-records",
    "off",
    "--rate-moves-per-ip",
    "off",
    "--rate-moves-per-seat",
    "off",
    "--max-connections-per-ip",
    "0",
];

/// How long the server may take to answer `/readyz` after it is started.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// Clock ticks per second of `/proc/<pid>/stat`'s times: USER_HZ, which is
/// 100 on every Linux the project runs on whatever the kernel's own tick
/// rate (assumed rather than asked of `sysconf`, as the soak bench does).
const TICKS_PER_SECOND: f64 = 100.0;

/// A running server.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The data directory and the server's log file; removed after the process.
    dir: tempfile::TempDir,
}

/// The operator token the bench's servers take imports with.
pub const OPERATOR_TOKEN: &str = "ludo_bench_operator_0123456789abcdef0123456789abcdef";

impl Server {
    /// Starts `binary serve` and waits until it answers `/readyz`.
    ///
    /// # Errors
    /// When the binary cannot be started, exits, or is not ready in time.
    pub async fn start(binary: &Path) -> Result<Server, String> {
        Server::start_with(binary, &[]).await
    }

    /// [`Server::start`] with more flags (`--store postgres://…`).
    ///
    /// # Errors
    /// As [`Server::start`].
    pub async fn start_with(binary: &Path, flags: &[String]) -> Result<Server, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a data directory: {e}"))?;
        let port = free_port()?;
        let log = std::fs::File::create(dir.path().join("server.log")).map_err(|e| format!("cannot make the server's log: {e}"))?;
        let child = Command::new(binary)
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(UNTHROTTLED)
            .args(flags)
            // Warnings only: the bench measures the server, not its
            // per-request log lines (the in-process bench had none either).
            .env("RUST_LOG", "warn")
            // Imports need the operator's token (a baseline built before
            // imports did ignores it).
            .env("LUDO_OPERATOR_TOKEN", OPERATOR_TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut server = Server { child, base: format!("http://127.0.0.1:{port}"), dir };
        server.wait_ready().await?;
        Ok(server)
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let http = reqwest::Client::new();
        let url = format!("{}/readyz", self.base);
        let deadline = Instant::now() + READY_LIMIT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("the server exited ({status}) before it was ready: {}", self.log_tail()));
            }
            if http.get(&url).send().await.is_ok_and(|answer| answer.status().is_success()) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("the server was not ready within {READY_LIMIT:?}: {}", self.log_tail()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The end of the server's log, for error messages.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        let start = text.len().saturating_sub(2000);
        text.get(start..).unwrap_or(&text).trim().to_string()
    }

    /// CPU time the server process has used so far (user + system).
    ///
    /// # Errors
    /// When `/proc/<pid>/stat` cannot be read (the process is gone).
    pub fn cpu(&self) -> Result<Duration, String> {
        let stat = ProcStat::of(self.child.id()).ok_or("cannot read the server's /proc stat")?;
        Ok(ticks(stat.utime + stat.stime))
    }
}

/// CPU time used so far by some servers together, and by the whole machine.
#[derive(Clone, Copy)]
pub struct Cpu {
    pub servers: Duration,
    pub machine: Duration,
}

impl Cpu {
    /// Now, for `servers`.
    ///
    /// # Errors
    /// When a server's or the machine's `/proc` figures cannot be read.
    pub fn of(servers: &[&Server]) -> Result<Cpu, String> {
        Ok(Cpu { servers: servers.iter().map(|s| s.cpu()).sum::<Result<Duration, String>>()?, machine: machine_busy()? })
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: Cpu) -> Cpu {
        Cpu { servers: self.servers.saturating_sub(earlier.servers), machine: self.machine.saturating_sub(earlier.machine) }
    }
}

/// What the bench reads of a process's `/proc/<pid>/stat`.
pub struct ProcStat {
    /// Its parent's pid.
    pub ppid: u32,
    /// Clock ticks in user and system mode.
    pub utime: u64,
    pub stime: u64,
    /// The same for its children it has waited for (reaped).
    pub cutime: u64,
    pub cstime: u64,
}

impl ProcStat {
    /// Process `pid`'s, or `None` when it is gone (or unreadable).
    pub fn of(pid: u32) -> Option<ProcStat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command name (which may hold spaces and parentheses):
        // the state, the ppid, and utime to cstime as the 12th to 15th.
        let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
        let number = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
        Some(ProcStat {
            ppid: u32::try_from(number(1)?).ok()?,
            utime: number(11)?,
            stime: number(12)?,
            cutime: number(13)?,
            cstime: number(14)?,
        })
    }
}

/// CPU time the whole machine has spent working so far, every core and
/// every process (the bench's own clients included): user, nice, system,
/// irq and softirq of `/proc/stat`, not idle, I/O wait or time stolen by the
/// hypervisor.
///
/// # Errors
/// When `/proc/stat` cannot be read or parsed.
pub fn machine_busy() -> Result<Duration, String> {
    let text = std::fs::read_to_string("/proc/stat").map_err(|e| format!("cannot read /proc/stat: {e}"))?;
    let line = text.lines().next().filter(|line| line.starts_with("cpu ")).ok_or("/proc/stat has no `cpu` line")?;
    let fields: Vec<u64> =
        line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().map_err(|e| format!("/proc/stat: {e}"))?;
    let [user, nice, system, _idle, _iowait, irq, softirq, ..] = fields[..] else {
        return Err("/proc/stat's `cpu` line is too short".into());
    };
    Ok(ticks(user + nice + system + irq + softirq))
}

/// `count` clock ticks of `/proc` as a duration.
pub fn ticks(count: u64) -> Duration {
    Duration::from_secs_f64(count as f64 / TICKS_PER_SECOND)
}

impl Drop for Server {
    fn drop(&mut self) {
        // Killed outright: its data directory is thrown away with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free now (the kernel picks it; it is released for the
/// server to bind a moment later).
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("cannot find a free port: {e}"))
}

/// The `ludo` binary beside this one (both come out of the same
/// `cargo build --release`).
pub fn default_binary() -> PathBuf {
    std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("ludo"))).unwrap_or_else(|| PathBuf::from("ludo"))
}

/// The answer if it is a success, else an error with its status and body.
///
/// # Errors
/// When the answer's status is not a success.
pub async fn checked(answer: reqwest::Response, what: &str) -> Result<reqwest::Response, String> {
    if answer.status().is_success() {
        Ok(answer)
    } else {
        let status = answer.status();
        Err(format!("{what}: {status} {}", answer.text().await.unwrap_or_default()))
    }
}
