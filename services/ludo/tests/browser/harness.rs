//! The browser harness: one chromedriver per test binary, one headless
//! Chromium session per seat or spectator, bounded waits that fail with what
//! was awaited and a screenshot, uncaught-error recording, screenshots under
//! `target/browser-screenshots/`.
//!
//! Without Chromium or chromedriver each test prints why and returns, unless
//! `LUDO_REQUIRE_BROWSER=1` (CI), which turns that into a failure.
#![allow(unsafe_code, reason = "the driver is stopped from an atexit handler and killed with its parent (prctl), both through libc")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use fantoccini::elements::{Element, ElementRef};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::common::{self, Server};

/// How long a wait may take before it fails (a loaded 2-core machine runs
/// several browsers at once): `LUDO_BROWSER_TIMEOUT_SECS`, default 30.
pub fn patience() -> Duration {
    let secs = std::env::var("LUDO_BROWSER_TIMEOUT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    Duration::from_secs(secs)
}

/// The interval between two looks at something awaited.
pub const POLL: Duration = Duration::from_millis(40);

// ---------------------------------------------------------------------------
// Finding the browser and its driver, and the one driver of this binary.

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

fn find(env: &str, names: &[&str], fixed: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        let path = PathBuf::from(path);
        return is_executable(&path).then_some(path);
    }
    names.iter().find_map(|name| on_path(name)).or_else(|| fixed.iter().map(PathBuf::from).find(|p| is_executable(p)))
}

/// The chromedriver this test binary started, shared by every session.
pub struct Driver {
    pub port: u16,
    pub pid: u32,
    pub chromium: PathBuf,
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
static DRIVER_PID: AtomicU32 = AtomicU32::new(0);
/// The driver's and its browsers' `TMPDIR`. Chromium leaves directories
/// behind in its temporary directory (about 45, 20 MB, per run of the tests);
/// they go with this one when the driver has stopped.
static DRIVER_TMP: Mutex<Option<tempfile::TempDir>> = Mutex::new(None);

unsafe extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

/// Stops the driver when the test binary exits (libtest returns from main or
/// calls `exit`, both run atexit handlers); a parent-death signal covers an
/// abort.
extern "C" fn stop_driver() {
    end_driver();
    drop(DRIVER_TMP.lock().unwrap_or_else(|e| e.into_inner()).take());
}

/// Ends the driver process, if there is one, and waits (up to 10 s) until it has gone.
fn end_driver() {
    let pid = DRIVER_PID.swap(0, Ordering::SeqCst);
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        // Its parent thread reaps it; then nothing writes in its TMPDIR.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && rustix::process::test_kill_process(pid).is_ok() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start_driver() -> Result<Driver, String> {
    let chromium = find("LUDO_CHROMIUM", &["chromium", "chromium-browser", "google-chrome"], &["/usr/bin/chromium", "/usr/lib/chromium/chromium"])
        .ok_or("no Chromium found (PATH: chromium, chromium-browser, google-chrome; /usr/bin/chromium; or LUDO_CHROMIUM): install the Debian package `chromium`")?;
    let chromedriver = find("LUDO_CHROMEDRIVER", &["chromedriver"], &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"])
        .ok_or("no chromedriver found (PATH, /usr/bin/chromedriver, or LUDO_CHROMEDRIVER): install the Debian package `chromium-driver`")?;
    let scratch = tempfile::Builder::new()
        .prefix("chromium-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .map_err(|e| format!("cannot make a temporary directory for Chromium: {e}"))?;
    let mut last = String::new();
    for _ in 0..3 {
        let port = free_port();
        // The child is spawned by a thread that lives as long as the process,
        // so the parent-death signal fires when the test binary goes, not
        // when the test thread that first needed a driver ends.
        let (send, receive) = std::sync::mpsc::channel();
        let binary = chromedriver.clone();
        let tmpdir = scratch.path().to_path_buf();
        std::thread::spawn(move || {
            use std::os::unix::process::CommandExt;
            let mut command = Command::new(&binary);
            command.arg(format!("--port={port}")).env("TMPDIR", tmpdir).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            // SAFETY: prctl is async-signal-safe.
            unsafe {
                command.pre_exec(|| {
                    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
                    Ok(())
                });
            }
            match command.spawn() {
                Ok(mut child) => {
                    let _ = send.send(Ok(child.id()));
                    let _ = child.wait();
                }
                Err(error) => {
                    let _ = send.send(Err(format!("cannot start {}: {error}", binary.display())));
                }
            }
            // Keep this thread (the driver's parent) alive until the process ends.
            loop {
                std::thread::park();
            }
        });
        let pid = receive.recv().map_err(|e| e.to_string())??;
        DRIVER_PID.store(pid, Ordering::SeqCst);
        // SAFETY: registers a plain function.
        unsafe {
            atexit(stop_driver);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(body) = http_raw(port, "GET", "/status", None)
                && (body.contains("\"ready\":true") || body.contains("\"ready\": true"))
            {
                // Kept until `stop_driver` at exit; if no driver starts, it goes when this returns.
                *DRIVER_TMP.lock().unwrap_or_else(|e| e.into_inner()) = Some(scratch);
                return Ok(Driver { port, pid, chromium });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        last = format!("chromedriver (pid {pid}) did not answer on port {port} within 30 s");
        end_driver();
    }
    Err(last)
}

/// A plain HTTP/1.1 request to the driver, blocking; usable from `Drop`.
fn http_raw(port: u16, method: &str, path: &str, body: Option<&str>) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    // chromedriver may keep the connection open: read the head, then as
    // many bytes as it announces.
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..end]).to_lowercase();
            let length = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok());
            if length.is_some_and(|length| answer.len() >= end + 4 + length) {
                break;
            }
        }
    }
    Some(String::from_utf8_lossy(&answer).into_owned())
}

/// The driver, or why there is none. Without one a test skips (returns
/// `None` after printing why), unless `LUDO_REQUIRE_BROWSER=1`.
pub fn driver(test: &str) -> Option<&'static Driver> {
    match DRIVER.get_or_init(start_driver) {
        Ok(driver) => Some(driver),
        Err(reason) => {
            if std::env::var("LUDO_REQUIRE_BROWSER").is_ok_and(|v| v == "1" || v == "true") {
                panic!("{test}: the browser is required (LUDO_REQUIRE_BROWSER=1) but unavailable: {reason}");
            }
            // Straight to the process's stderr: libtest captures `eprintln!`
            // of passing tests, and a skip must be seen.
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason} (set LUDO_REQUIRE_BROWSER=1 to make this a failure)");
            None
        }
    }
}

// ---------------------------------------------------------------------------
// Bounding how many browser tests run at once (each runs several Chromiums).

static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

fn max_parallel() -> usize {
    std::env::var("LUDO_BROWSER_JOBS").ok().and_then(|s| s.parse().ok()).filter(|n| *n > 0).unwrap_or(2)
}

/// A running browser test's place among the few allowed at once.
pub struct Slot;

impl Slot {
    fn take() -> Slot {
        let (lock, free) = &SLOTS;
        let mut busy = lock.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= max_parallel() {
            busy = free.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (lock, free) = &SLOTS;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        free.notify_one();
    }
}

// ---------------------------------------------------------------------------
// Screenshots.

/// `target/browser-screenshots`: from `CARGO_TARGET_DIR`, else beside the
/// test binary (`target/<profile>/deps/browser-…`).
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.ancestors().nth(3).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(".."))
    });
    let dir = target.join("browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn file_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect()
}

// ---------------------------------------------------------------------------
// One test: its driver slot, its server, its browsers.

/// What a browser test holds: its place, its `ludo`, an HTTP client.
pub struct Test {
    pub name: &'static str,
    pub driver: &'static Driver,
    pub server: Server,
    pub http: reqwest::Client,
    _data: tempfile::TempDir,
    _slot: Slot,
    started: Instant,
}

impl Test {
    /// Starts a test with `ludo serve ARGS…`, or `None` (skip) without a browser.
    pub fn start(name: &'static str, args: &[&str]) -> Option<Test> {
        let driver = driver(name)?;
        let slot = tokio::task::block_in_place(Slot::take);
        // This test's screenshots of an earlier run go.
        let prefix = format!("{}-", file_safe(name));
        for entry in std::fs::read_dir(screenshot_dir()).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let data = tempfile::tempdir().unwrap();
        let server = common::start_with(data.path(), args);
        eprintln!("[{name}] ludo at {}, chromedriver (pid {}) on port {}", server.base, driver.pid, driver.port);
        Some(Test { name, driver, server, http: reqwest::Client::new(), _data: data, _slot: slot, started: Instant::now() })
    }

    pub fn base(&self) -> &str {
        &self.server.base
    }

    /// A new browser session (its own profile, so its own sessionStorage).
    pub async fn browser(&self, role: &str) -> Browser {
        Browser::open(self.driver, self.name, role, &self.server.base).await
    }

    /// `GET path` on the server, as a spectator or with a token; the JSON answer.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Value {
        let mut request = self.http.get(format!("{}{path}", self.server.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let text = answer.text().await.unwrap();
        assert!(status.is_success(), "GET {path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {text}"))
    }

    /// Creates a game over the API.
    pub async fn create(&self, body: Value) -> Value {
        let answer = self.http.post(format!("{}/v1/games", self.server.base)).json(&body).send().await.unwrap();
        let status = answer.status();
        let text = answer.text().await.unwrap();
        assert_eq!(status, 201, "create {body}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Ends the test: the server must stop cleanly.
    pub fn finish(self) {
        eprintln!("[{}] done in {:.1} s", self.name, self.started.elapsed().as_secs_f64());
        self.server.terminate();
    }
}

// ---------------------------------------------------------------------------
// A browser session.

/// Installed before any script of every document: records uncaught errors,
/// unhandled rejections, resources that failed to load and CSP violations
/// (`__ludoErrors`), counts fetches in flight and move submissions
/// (`__ludoFetch`), and counts mutations of the board (`__ludoBoard`).
/// Observation only: the page's own behaviour is unchanged.
const RECORDER: &str = r#"
(() => {
  const errors = [];
  const fetches = { inflight: 0, moves: 0, refused: [] };
  const board = { mutations: 0 };
  Object.defineProperty(window, '__ludoErrors', { value: errors });
  Object.defineProperty(window, '__ludoFetch', { value: fetches });
  Object.defineProperty(window, '__ludoBoard', { value: board });
  const streams = [];
  Object.defineProperty(window, '__ludoStreams', { value: streams });
  window.addEventListener('error', (e) => {
    if (e.target && e.target !== window && (e.target.src || e.target.href)) {
      errors.push('resource failed to load: ' + (e.target.src || e.target.href));
    } else {
      errors.push('uncaught: ' + ((e.error && e.error.stack) || e.message) + ' (' + e.filename + ':' + e.lineno + ')');
    }
  }, true);
  window.addEventListener('unhandledrejection', (e) => {
    const r = e.reason;
    errors.push('unhandled rejection: ' + ((r && (r.stack || r.message)) || String(r)));
  });
  document.addEventListener('securitypolicyviolation', (e) => {
    errors.push('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI + ' (' + e.sourceFile + ':' + e.lineNumber + ')');
  });
  const realFetch = window.fetch;
  window.fetch = function (input, init) {
    const url = String((input && input.url) || input);
    const method = ((init && init.method) || (input && input.method) || 'GET').toUpperCase();
    const isMove = method === 'POST' && /\/moves(\?|$)/.test(url);
    fetches.inflight++;
    if (isMove) fetches.moves++;
    let answer;
    try { answer = realFetch.apply(this, arguments); } catch (e) { fetches.inflight--; throw e; }
    const isState = method === 'GET' && /\/v1\/games\/[^/?]+(\?|$)/.test(url);
    return answer.then((r) => {
      if (isState && r.ok) {
        r.clone().json().then((j) => { for (const s of streams) s.log.push('GET state -> version ' + j.version + '@' + Math.round(performance.now() - s.t0)); }, () => {});
      }
      fetches.inflight--;
      if (isMove && !r.ok) fetches.refused.push(method + ' ' + url + ' -> ' + r.status);
      return r;
    }, (e) => { fetches.inflight--; throw e; });
  };
  const RealEventSource = window.EventSource;
  if (RealEventSource) {
    window.EventSource = function (url, options) {
      const source = new RealEventSource(url, options);
      const seen = { url: String(url).replace(/ticket=[^&]*/, 'ticket=…'), log: [] };
      streams.push(seen);
      const note = (what) => { seen.log.push(what); if (seen.log.length > 60) seen.log.shift(); };
      const t0 = performance.now();
      seen.t0 = t0;
      const at = () => Math.round(performance.now() - t0);
      source.addEventListener('open', () => note('open@' + at()));
      source.addEventListener('error', () => note('error(readyState ' + source.readyState + ')@' + at()));
      source.addEventListener('record', (e) => note('record ' + e.lastEventId + '@' + at()));
      source.addEventListener('end', () => note('end@' + at()));
      const close = source.close.bind(source);
      source.close = () => { note('closed by the page@' + at()); close(); };
      return source;
    };
    window.EventSource.prototype = RealEventSource.prototype;
    Object.assign(window.EventSource, { CONNECTING: 0, OPEN: 1, CLOSED: 2 });
  }
  const watch = () => {
    new MutationObserver((records) => {
      for (const m of records) {
        const t = m.target.nodeType === 1 ? m.target : m.target.parentElement;
        const inBoard = (t && t.closest && t.closest('#board')) ||
          [...m.addedNodes, ...m.removedNodes].some((n) => n.nodeType === 1 && (n.id === 'board' || (n.querySelector && n.querySelector('#board'))));
        if (inBoard) { board.mutations++; return; }
      }
    }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
  };
  if (document.documentElement) watch(); else document.addEventListener('DOMContentLoaded', watch);
})();
"#;

static SHOTS: AtomicU32 = AtomicU32::new(0);

/// One WebDriver session: a headless Chromium with its own profile.
pub struct Browser {
    pub client: Client,
    pub role: String,
    pub test: &'static str,
    pub base: String,
    session: String,
    driver_port: u16,
    closed: bool,
}

impl Browser {
    async fn open(driver: &Driver, test: &'static str, role: &str, base: &str) -> Browser {
        let capabilities = json!({
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": driver.chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,1000", "--no-first-run", "--no-default-browser-check",
                         "--disable-extensions", "--disable-background-networking", "--mute-audio"],
            },
        });
        let capabilities = capabilities.as_object().unwrap().clone();
        let url = format!("http://127.0.0.1:{}", driver.port);
        let mut last = None;
        for _ in 0..3 {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(client) => {
                    let session = client.session_id().await.unwrap().expect("a session id");
                    let browser = Browser {
                        client,
                        role: role.to_string(),
                        test,
                        base: base.to_string(),
                        session,
                        driver_port: driver.port,
                        closed: false,
                    };
                    browser.cdp("Page.addScriptToEvaluateOnNewDocument", json!({"source": RECORDER})).await;
                    return browser;
                }
                Err(error) => last = Some(error),
            }
        }
        panic!("{test}/{role}: no browser session: {last:?}");
    }

    fn label(&self) -> String {
        format!("{}/{}", self.test, self.role)
    }

    /// A Chrome DevTools command through chromedriver.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        let url = format!("http://127.0.0.1:{}/session/{}/goog/cdp/execute", self.driver_port, self.session);
        let answer = reqwest::Client::new().post(url).json(&json!({"cmd": cmd, "params": params})).send().await.unwrap();
        let value: Value = answer.json().await.unwrap();
        assert!(value["value"].get("error").is_none(), "{}: CDP {cmd}: {value}", self.label());
        value["value"].clone()
    }

    /// The browser's console log since the last call (chromedriver's buffer).
    pub async fn console(&self) -> Vec<Value> {
        let url = format!("http://127.0.0.1:{}/session/{}/se/log", self.driver_port, self.session);
        let Ok(answer) = reqwest::Client::new().post(url).json(&json!({"type": "browser"})).send().await else { return Vec::new() };
        let value: Value = answer.json().await.unwrap_or(Value::Null);
        value["value"].as_array().cloned().unwrap_or_default()
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        match self.client.execute(script, args).await {
            Ok(value) => value,
            Err(error) => match self.fail(&format!("script failed: {error}\n{script}")).await {},
        }
    }

    /// Navigates to `path` on the server (or an absolute URL), after checking
    /// the page being left raised no error.
    pub async fn goto(&self, path: &str) {
        self.check_errors().await;
        let url = if path.starts_with("http") { path.to_string() } else { format!("{}{path}", self.base) };
        if let Err(error) = self.client.goto(&url).await {
            match self.fail(&format!("cannot open {url}: {error}")).await {}
        }
    }

    /// Writes a screenshot of the page; returns its path.
    pub async fn screenshot(&self, what: &str) -> PathBuf {
        let n = SHOTS.fetch_add(1, Ordering::SeqCst);
        let path = screenshot_dir().join(format!("{}-{}-{n:03}-{}.png", file_safe(self.test), file_safe(&self.role), file_safe(what)));
        match self.client.screenshot().await {
            Ok(png) => {
                std::fs::write(&path, png).unwrap();
            }
            Err(error) => eprintln!("{}: no screenshot: {error}", self.label()),
        }
        path
    }

    /// Fails the test: a screenshot, the page's errors and console, then panic.
    pub async fn fail(&self, what: &str) -> std::convert::Infallible {
        let shot = self.screenshot("failure").await;
        let errors = self.client.execute("return window.__ludoErrors || []", vec![]).await.unwrap_or(Value::Null);
        let streams = self.client.execute("return window.__ludoStreams || []", vec![]).await.unwrap_or(Value::Null);
        let console = self.console().await;
        let url = self.client.current_url().await.map(|u| u.to_string()).unwrap_or_default();
        panic!(
            "{}: {what}\n  page: {url}\n  screenshot: {}\n  page errors: {errors}\n  event streams: {streams}\n  console: {}",
            self.label(),
            shot.display(),
            serde_json::to_string(&console).unwrap()
        );
    }

    /// Fails the test if the page raised an uncaught error, rejected a
    /// promise unhandled, failed to load a resource or violated its CSP.
    pub async fn check_errors(&self) {
        let errors = self.client.execute("return window.__ludoErrors ? [...window.__ludoErrors] : []", vec![]).await.unwrap_or(json!([]));
        let console = self.console().await;
        let uncaught: Vec<&Value> = console.iter().filter(|entry| entry["source"] == "javascript").collect();
        let errors = errors.as_array().cloned().unwrap_or_default();
        if !errors.is_empty() || !uncaught.is_empty() {
            let shot = self.screenshot("js-error").await;
            panic!(
                "{}: the page raised errors: {}\n  uncaught (console): {}\n  screenshot: {}",
                self.label(),
                serde_json::to_string(&errors).unwrap(),
                serde_json::to_string(&uncaught).unwrap(),
                shot.display()
            );
        }
    }

    /// Polls `script` until it returns something other than `null`, `false`,
    /// `undefined` or `""`; returns that. Fails after `patience()` with `what`.
    pub async fn wait_js(&self, what: &str, script: &str, args: Vec<Value>) -> Value {
        self.wait_js_within(what, script, args, patience()).await
    }

    pub async fn wait_js_within(&self, what: &str, script: &str, args: Vec<Value>, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        let mut last_error = None;
        loop {
            match self.client.execute(script, args.clone()).await {
                Ok(value) if !matches!(&value, Value::Null | Value::Bool(false)) && value != json!("") => return value,
                Ok(_) => {}
                Err(error) => last_error = Some(error.to_string()),
            }
            if Instant::now() > deadline {
                match self.fail(&format!("waited {:.0} s for {what} (last script error: {last_error:?})", within.as_secs_f64())).await {}
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits for an element matching `css`.
    pub async fn element(&self, css: &str) -> Element {
        let deadline = Instant::now() + patience();
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                return element;
            }
            if Instant::now() > deadline {
                match self.fail(&format!("waited for an element `{css}`")).await {}
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// An element returned by a script, as a WebDriver element.
    pub fn element_of(&self, value: &Value) -> Option<Element> {
        let id = value.get("element-6066-11e4-a52e-4f735466cecf")?.as_str()?;
        Some(Element::from_element_id(self.client.clone(), ElementRef::from(id.to_string())))
    }

    /// Waits until `#status[data-version]` is at least `version`; returns it.
    pub async fn wait_version_at_least(&self, version: u64, what: &str) -> u64 {
        let value = self
            .wait_js(
                &format!("#status[data-version] ≥ {version} ({what})"),
                "const s = document.querySelector('#status'); const v = s && Number(s.dataset.version); return (s && s.dataset.version !== undefined && v >= arguments[0]) ? v : null;",
                vec![json!(version)],
            )
            .await;
        value.as_u64().unwrap()
    }

    /// The text of `#problem` and its `data-code`, when a refusal is shown.
    pub async fn problem(&self) -> Option<String> {
        let value = self
            .js(
                "const p = document.querySelector('#problem'); if (!p) return null; const t = p.textContent.trim(); const c = p.dataset.code || ''; return (t || c) ? (c + ': ' + t) : null;",
                vec![],
            )
            .await;
        value.as_str().map(str::to_string)
    }

    /// Presses and releases `key` on whatever has the focus (WebDriver
    /// key actions: the browser's own key events).
    pub async fn press(&self, key: fantoccini::key::Key) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let value: char = key.into();
        let keys = KeyActions::new("keyboard".into()).then(KeyAction::Down { value }).then(KeyAction::Up { value });
        if let Err(error) = self.client.perform_actions(keys).await {
            match self.fail(&format!("cannot press {key:?}: {error}")).await {}
        }
    }

    /// Ends the session, after checking the page raised no error.
    pub async fn close(mut self) {
        self.check_errors().await;
        self.closed = true;
        let client = self.client.clone();
        let _ = client.close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.closed {
            // A failing test must not leave a Chromium behind: end the session
            // with a blocking request (no runtime is needed).
            let _ = http_raw(self.driver_port, "DELETE", &format!("/session/{}", self.session), None);
        }
    }
}

// ---------------------------------------------------------------------------
// Small things.

/// A seeded generator (SplitMix64), so a failing run can be repeated:
/// `LUDO_BROWSER_SEED` overrides each test's seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(test: &str, default: u64) -> Rng {
        let seed = std::env::var("LUDO_BROWSER_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default);
        eprintln!("[{test}] random seed {seed} (LUDO_BROWSER_SEED)");
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
