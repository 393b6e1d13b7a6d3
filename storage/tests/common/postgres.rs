//! A throwaway PostgreSQL cluster for tests: `initdb` in a temp dir, the
//! server on a free loopback port, stopped and deleted when dropped.
//!
//! It needs the server's binaries (Debian's `postgresql` package puts them
//! in `/usr/lib/postgresql/<version>/bin`). PostgreSQL refuses to run as
//! root, so as root the cluster runs as the `postgres` user the package
//! creates. Without the binaries, `Cluster::start` prints why and answers
//! `None` (the test skips), unless `LUDO_REQUIRE_POSTGRES=1`, which turns
//! that into a failure (CI sets it: a skipped test proves nothing).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The certificates of a cluster started by [`Cluster::start_tls`].
pub struct TlsFiles {
    /// The CA that issued the server's certificate (PEM).
    pub ca: PathBuf,
    /// Another CA, which did not.
    pub other_ca: PathBuf,
}

/// A running cluster; its superuser is `ludo`, trusted on loopback.
pub struct Cluster {
    child: Child,
    port: u16,
    bin: PathBuf,
    _dir: tempfile::TempDir,
}

fn required() -> bool {
    std::env::var("LUDO_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

/// Skips (or, when required, fails) with `why`.
fn unavailable<T>(why: &str) -> Option<T> {
    assert!(!required(), "LUDO_REQUIRE_POSTGRES=1 but no PostgreSQL cluster can be started: {why}");
    eprintln!("skipped: no PostgreSQL to test against ({why}); install Debian's `postgresql` package to run this test");
    None
}

/// The directory of `initdb` and `postgres`: the newest under
/// `/usr/lib/postgresql`, or `pg_config --bindir`.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort_by_key(|bin| bin.parent().and_then(Path::file_name).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok()));
    versions.pop().or_else(|| {
        let out = Command::new("pg_config").arg("--bindir").output().ok()?;
        let bin = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        bin.join("initdb").exists().then_some(bin)
    })
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// `program` with `args`, as the `postgres` user when this process is root
/// (`setpriv` executes the program itself, so killing the child kills it).
fn command(program: &Path, args: &[&str]) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]).arg(program).args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

/// The server settings that make a cluster in `dir` speak TLS (its files
/// made by [`Cluster::start_tls`]).
fn tls_settings(dir: &Path) -> Vec<String> {
    let tls = dir.join("tls");
    vec![
        "-c".into(),
        "ssl=on".into(),
        "-c".into(),
        format!("ssl_cert_file={}", tls.join("server.pem").display()),
        "-c".into(),
        format!("ssl_key_file={}", tls.join("server.key").display()),
    ]
}

/// The server of the cluster in `dir` (its data in `dir/data`), on `port`.
fn postgres(bin: &Path, dir: &Path, port: u16) -> std::io::Result<Child> {
    let data = dir.join("data");
    let tls = if dir.join("tls").join("server.pem").exists() { tls_settings(dir) } else { Vec::new() };
    let tls: Vec<&str> = tls.iter().map(String::as_str).collect();
    let (data_arg, socket_dir, port_arg) =
        (data.to_str().expect("a UTF-8 temp path"), dir.to_str().expect("a UTF-8 temp path"), port.to_string());
    command(
        &bin.join("postgres"),
        &[
            "-D",
            data_arg,
            "-p",
            &port_arg,
            "-k",
            socket_dir,
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "shared_buffers=16MB",
            "-c",
            "max_connections=100",
        ]
        .into_iter()
        .chain(tls)
        .collect::<Vec<_>>(),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
}

/// An immediate shutdown (SIGQUIT): the postmaster stops its backends and
/// reaps them, so none is left behind; SIGKILL only if it hangs.
fn quit(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let quit = Command::new("kill").args(["-s", "QUIT", &child.id().to_string()]).status();
    if quit.is_ok_and(|s| s.success()) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether the postgres `child` on `port` accepts connections within
/// `within` (false at once if it exited).
fn ready(child: &mut Child, bin: &Path, port: u16, within: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        let ok = Command::new(bin.join("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "ludo", "-d", "postgres"])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free loopback port")
}

impl Cluster {
    /// A new cluster, ready for connections; `None` when this machine has
    /// no PostgreSQL (see the module docs).
    pub fn start() -> Option<Cluster> {
        let (bin, dir) = Cluster::init()?;
        Cluster::run(bin, dir)
    }

    /// A new cluster that accepts only TLS connections (`hostnossl`
    /// rejected), its certificate issued by a test CA for the name
    /// `localhost` only; `None` when this machine has no PostgreSQL or no
    /// `openssl` (see the module docs).
    pub fn start_tls() -> Option<(Cluster, TlsFiles)> {
        let (bin, dir) = Cluster::init()?;
        let tls = dir.path().join("tls");
        let run = |args: &[&str]| -> Result<(), String> {
            let out = command(Path::new("openssl"), args).stdout(Stdio::null()).output().map_err(|e| format!("cannot run openssl: {e}"))?;
            if out.status.success() { Ok(()) } else { Err(format!("openssl {}: {}", args[0], String::from_utf8_lossy(&out.stderr))) }
        };
        let path = |name: &str| tls.join(name).to_str().expect("a UTF-8 temp path").to_string();
        std::fs::create_dir(&tls).expect("the TLS directory");
        // The server's certificate's extensions, for `openssl x509 -extfile`.
        std::fs::write(
            tls.join("server.ext"),
            "subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("the extensions file");
        if is_root() {
            let owned = Command::new("chown").args(["-R", "postgres:", &path("")]).status();
            if !owned.is_ok_and(|s| s.success()) {
                return unavailable("running as root, and the TLS directory cannot be given to the `postgres` user");
            }
        }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];
        let made = (|| {
            for (name, subject) in [("ca", "/CN=ludo test CA"), ("other-ca", "/CN=someone else's CA")] {
                let (key, pem) = (path(&format!("{name}.key")), path(&format!("{name}.pem")));
                let mut args = vec!["req", "-x509", "-days", "2", "-subj", subject, "-keyout", &key, "-out", &pem];
                args.extend(ec);
                args.extend(ca_ext);
                run(&args)?;
            }
            let (key, csr) = (path("server.key"), path("server.csr"));
            let mut args = vec!["req", "-new", "-subj", "/CN=localhost", "-keyout", &key, "-out", &csr];
            args.extend(ec);
            run(&args)?;
            let (ca, ca_key, pem, ext) = (path("ca.pem"), path("ca.key"), path("server.pem"), path("server.ext"));
            run(&[
                "x509",
                "-req",
                "-days",
                "2",
                "-in",
                &csr,
                "-CA",
                &ca,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-out",
                &pem,
                "-extfile",
                &ext,
            ])
        })();
        if let Err(why) = made {
            return unavailable(&format!("cannot make test certificates: {why}"));
        }
        // Only TLS over TCP; the socket (unused by the tests) stays open.
        let hba = "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n";
        std::fs::write(dir.path().join("data").join("pg_hba.conf"), hba).expect("pg_hba.conf");
        let files = TlsFiles { ca: tls.join("ca.pem"), other_ca: tls.join("other-ca.pem") };
        Cluster::run(bin, dir).map(|cluster| (cluster, files))
    }

    /// A new cluster's files: `initdb` in a temp dir of its own.
    fn init() -> Option<(PathBuf, tempfile::TempDir)> {
        let Some(bin) = bin_dir() else { return unavailable("no initdb under /usr/lib/postgresql or from pg_config") };
        let dir = tempfile::Builder::new().prefix("ludo-pg-").tempdir().expect("a temp dir");
        let data = dir.path().join("data");
        if is_root() {
            let owned = Command::new("chown").args(["postgres:", dir.path().to_str().expect("a UTF-8 temp path")]).status();
            if !owned.is_ok_and(|s| s.success()) {
                return unavailable("running as root, and the temp dir cannot be given to the `postgres` user");
            }
        }
        let data_arg = data.to_str().expect("a UTF-8 temp path");
        let init = command(&bin.join("initdb"), &["--no-sync", "--auth=trust", "--username=ludo", "--encoding=UTF8", "-D", data_arg])
            .stdout(Stdio::null())
            .output();
        match init {
            Ok(out) if out.status.success() => Some((bin, dir)),
            Ok(out) => unavailable(&format!("initdb failed: {}", String::from_utf8_lossy(&out.stderr))),
            Err(err) => unavailable(&format!("cannot run initdb: {err}")),
        }
    }

    /// Starts the server of an initialised cluster on a free port.
    ///
    /// A port found free can be taken before postgres binds it (another
    /// test's cluster starting at the same moment): postgres then exits at
    /// once, and is started again on another port.
    fn run(bin: PathBuf, dir: tempfile::TempDir) -> Option<Cluster> {
        for _ in 0..5 {
            let port = free_port();
            let mut child = match postgres(&bin, dir.path(), port) {
                Ok(child) => child,
                Err(err) => return unavailable(&format!("cannot start postgres: {err}")),
            };
            if ready(&mut child, &bin, port, Duration::from_secs(30)) {
                return Some(Cluster { child, port, bin, _dir: dir });
            }
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            quit(&mut child);
            if !exited {
                break; // running but never ready: another port will not help
            }
        }
        unavailable("postgres did not become ready on a free loopback port")
    }

    /// One cluster for the whole test process, started on first use, for
    /// suites whose every test wants a database of its own (see
    /// [`Cluster::new_database`]) but not a cluster of its own.
    ///
    /// A static is never dropped, so a watchdog (a shell that outlives this
    /// process by design) waits for the process to exit however it exits,
    /// then stops the cluster and deletes its directory.
    pub fn shared() -> Option<&'static Cluster> {
        static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let cluster = Cluster::start()?;
                let script = "while kill -0 \"$1\" 2>/dev/null; do sleep 0.2; done; \
                              kill -s QUIT \"$2\" 2>/dev/null; \
                              while kill -0 \"$2\" 2>/dev/null; do sleep 0.1; done; rm -rf \"$3\"";
                let watchdog = Command::new("sh")
                    .args(["-c", script, "ludo-pg-watchdog", &std::process::id().to_string(), &cluster.child.id().to_string()])
                    .arg(cluster._dir.path())
                    // Not holding the test's output open: a reader of it
                    // would otherwise wait for the watchdog too.
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                assert!(watchdog.is_ok(), "the shared cluster's watchdog cannot start: {watchdog:?}");
                Some(cluster)
            })
            .as_ref()
    }

    /// Stops the server at once (an immediate shutdown: what a crash or a
    /// lost database looks like to its clients).
    pub fn stop(&mut self) {
        quit(&mut self.child);
    }

    /// Starts the server again on the same data and port, and waits until
    /// it accepts connections.
    pub fn start_again(&mut self) {
        self.child = postgres(&self.bin, self._dir.path(), self.port).expect("postgres starts again");
        assert!(self.ready(Duration::from_secs(30)), "postgres did not come back");
    }

    fn ready(&mut self, within: Duration) -> bool {
        ready(&mut self.child, &self.bin, self.port, within)
    }

    /// The postmaster's process id (every backend is its child).
    pub fn postmaster_pid(&self) -> u32 {
        self.child.id()
    }

    /// The URL of a new, empty database in this cluster.
    pub fn new_database(&self, name: &str) -> String {
        let status = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "ludo", name])
            .status()
            .expect("createdb runs");
        assert!(status.success(), "createdb {name} failed");
        self.url(name)
    }

    /// Runs `sql` in database `name` with `psql`, and answers its output.
    pub fn psql(&self, name: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "ludo", "-d", name, "-At", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "psql: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://ludo@127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        quit(&mut self.child);
    }
}
