//! What a web page needs from the server, over real sockets: the built-in
//! app's files, CORS for pages on other origins, and stream tickets that
//! let a browser follow a game live as its seat without a token in a URL.
//! (Most pages are driven in a real Chromium by
//! `services/ludo/tests/browser.rs`.)
//!
//! The pages of seats (open seats and their join links, "Open games",
//! waiting, leaving, cancelling, resigning) are driven here in a real
//! headless Chromium, through chromedriver's WebDriver HTTP API (see
//! `chromium` below). Without Chromium or chromedriver those tests print why
//! and pass, unless `LUDO_REQUIRE_BROWSER=1`; `LUDO_BROWSER_TIMEOUT_SECS`
//! (default 30) bounds each wait; screenshots of failures go to
//! `target/tmp/browser-screenshots/`.

use ludo_blackbox::{Contract, Rest, TestServer, kardinal_leaks};
use ludo_proto::ludo::v1 as pb;
use ludo_server::{ConnectionLimits, CorsOrigins, RateLimits, ServerConfig};
use prost::Message;
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn preflight(base: &str, path: &str, origin: &str) -> reqwest::Response {
    client()
        .request(reqwest::Method::OPTIONS, format!("{base}{path}"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type")
        .send()
        .await
        .unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_any_origin_may_create_play_and_read_with_a_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig { rates: RateLimits::unlimited(), ..Default::default() };
    let server = TestServer::start_with(dir.path(), config).await;
    let origin = "https://front.example";

    for path in ["/v1/games", "/v1/games/0190b5a4-0000-7000-8000-000000000000/moves", "/v1/verify", "/ludo.v1.Ludo/GetGame"] {
        let answer = preflight(&server.base, path, origin).await;
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
        assert_eq!(header(&answer, "access-control-allow-origin").as_deref(), Some("*"), "{path}");
        let allowed = header(&answer, "access-control-allow-headers").unwrap();
        for name in ["authorization", "content-type", "prefer", "x-request-id"] {
            assert!(allowed.contains(name), "{path}: a page may send {name}: {allowed}");
        }
        assert!(header(&answer, "access-control-allow-methods").unwrap().contains("POST"));
        assert_eq!(header(&answer, "access-control-allow-credentials"), None, "no cookies, no credentials mode");
    }

    // A created game: the page can read its Location.
    let created = client()
        .post(format!("{}/v1/games", server.base))
        .header("origin", origin)
        .json(&json!({"kind": "cardinal", "players": ["Ann", "Bob"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(header(&created, "access-control-allow-origin").as_deref(), Some("*"));
    let exposed = header(&created, "access-control-expose-headers").unwrap();
    for name in ["location", "retry-after", "preference-applied", "grpc-status", "x-request-id"] {
        assert!(exposed.contains(name), "{name} is readable by the page: {exposed}");
    }
    assert!(header(&created, "x-request-id").is_some_and(|id| !id.is_empty()), "every answer carries its request id");
    // Refusals are readable too (a page shows their `detail`).
    let missing = client()
        .get(format!("{}/v1/games/0190b5a4-0000-7000-8000-000000000000", server.base))
        .header("origin", origin)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(header(&missing, "access-control-allow-origin").as_deref(), Some("*"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_can_be_narrowed_to_a_list_or_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let only: CorsOrigins = "https://front.example".parse().unwrap();
    let server = TestServer::start_with(dir.path(), ServerConfig { cors: only, ..Default::default() }).await;
    let allowed = preflight(&server.base, "/v1/games", "https://front.example").await;
    assert_eq!(header(&allowed, "access-control-allow-origin").as_deref(), Some("https://front.example"));
    let refused = preflight(&server.base, "/v1/games", "https://other.example").await;
    assert_eq!(header(&refused, "access-control-allow-origin"), None, "another origin gets no grant");
    server.stop().await;

    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_with(dir.path(), ServerConfig { cors: CorsOrigins::Off, ..Default::default() }).await;
    let refused = preflight(&server.base, "/v1/games", "https://front.example").await;
    assert_eq!(refused.status(), 405, "no CORS: a preflight is a method this path does not take");
    assert_eq!(header(&refused, "access-control-allow-origin"), None);
    server.stop().await;
}

/// Reads the stream at `url` until `records` records have arrived.
async fn stream_records(url: &str, records: usize) -> Vec<Value> {
    let mut response = client().get(url).send().await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    let (mut buffer, mut out) = (String::new(), Vec::new());
    while out.len() < records {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(20), response.chunk()).await.unwrap().unwrap().unwrap();
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                out.push(serde_json::from_str(data).unwrap());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ticket_follows_a_game_as_its_seat_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let contract = Contract::new(ludo_server::openapi());
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let id = game["id"].as_str().unwrap();
    let token = |seat: usize| game["seats"][seat]["token"].as_str().unwrap().to_string();
    let path = format!("/v1/games/{id}/stream-tickets");

    let ticket = rest.post(&path, Some(&token(1)), &json!({})).await;
    assert_eq!(ticket.status, 201, "{:?}", ticket.body);
    contract.check("post", &path, ticket.status, &ticket.content_type, &ticket.body);
    assert_eq!(ticket.body["seat"], 1);
    assert_eq!(ticket.body["expires_in_ms"], 60_000);
    let secret = ticket.body["ticket"].as_str().unwrap();
    assert!(!secret.contains(&token(1)[5..]), "the ticket does not carry the token");

    // The ticket opens the stream as seat 1: its own hand, nobody else's.
    let records = stream_records(&format!("{}/v1/games/{id}/stream?ticket={secret}", server.base), 1).await;
    let view = &records[0]["view"];
    assert!(view["seats"][1]["hand"].is_array(), "the seat sees its own hand: {view}");
    assert_eq!(kardinal_leaks(&records[0], Some(1)), Vec::<String>::new());

    // Refusals, each with a code and a reason.
    let refusals = [
        (format!("/v1/games/{id}/stream?ticket=0.1.00"), 401, "unauthorized"),
        (format!("/v1/games/{id}/stream?ticket={}", secret.replacen("1.", "0.", 1)), 401, "unauthorized"),
    ];
    for (path, status, code) in refusals {
        let answer = rest.get(&path, None).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (status, Some(code)), "{path}: {:?}", answer.body);
        contract.check("get", &path, answer.status, &answer.content_type, &answer.body);
    }
    let other = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let elsewhere = rest.get(&format!("/v1/games/{}/stream?ticket={secret}", other["id"].as_str().unwrap()), None).await;
    assert_eq!(elsewhere.status, 401, "a ticket opens its own game only");
    let both = rest.get(&format!("/v1/games/{id}/stream?ticket={secret}"), Some(&token(1))).await;
    assert_eq!((both.status, both.body["field"].as_str()), (400, Some("ticket")));
    for token in [None, Some("ludo_not_a_token")] {
        let answer = rest.post(&path, token, &json!({})).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (401, Some("unauthorized")), "a ticket needs a seat's token");
        contract.check("post", &path, answer.status, &answer.content_type, &answer.body);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_is_served_with_a_strict_policy_and_revalidated_by_etag() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let get = |path: &'static str| client().get(format!("{}{path}", server.base)).send();
    for path in
        ["/", "/games/0190b5a4-0000-7000-8000-000000000000/play", "/games/x/replay", "/games/x/watch", "/games/x/audit", "/games/x/join"]
    {
        let page = get(path).await.unwrap();
        assert_eq!(page.status(), 200, "{path}");
        assert_eq!(header(&page, "content-type").as_deref(), Some("text/html; charset=utf-8"));
        let policy = header(&page, "content-security-policy").unwrap();
        assert!(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "{policy}");
        let html = page.text().await.unwrap();
        assert!(html.contains("/assets/js/main.js"), "the shell loads the app");
        for attribute in ["src=\"http", "href=\"http", "src='http", "href='http", "url(http"] {
            assert!(!html.contains(attribute), "nothing is fetched from elsewhere ({attribute})");
        }
    }
    let script = get("/assets/js/main.js").await.unwrap();
    assert_eq!(header(&script, "content-type").as_deref(), Some("text/javascript; charset=utf-8"));
    let etag = header(&script, "etag").unwrap();
    let again = client().get(format!("{}/assets/js/main.js", server.base)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304, "a current copy is not sent again");

    // Unknown pages and files, and escapes from the app's folder, are 404 problems.
    let rest: Rest = server.rest();
    for path in ["/games/x/nope", "/assets/nope.js", "/assets/../Cargo.toml", "/assets/%2e%2e/%2e%2e/Cargo.toml", "/README.md"] {
        let answer = rest.get(path, None).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (404, Some("not_found")), "{path}");
    }
    let (status, _) =
        ludo_blackbox::raw_exchange(server.addr, b"GET /assets/../../Cargo.toml HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", 0).await;
    assert_eq!(status, 404, "a raw ../ path");
    server.stop().await;
}

/// Reads gRPC-Web frames from `response` until a data frame (a message) is
/// whole, within 10 s.
async fn next_message(response: &mut reqwest::Response, buffer: &mut Vec<u8>) -> pb::GameUpdate {
    loop {
        if buffer.len() >= 5 {
            let len = u32::from_be_bytes(buffer[1..5].try_into().unwrap()) as usize;
            if buffer.len() >= 5 + len {
                let frame: Vec<u8> = buffer.drain(..5 + len).collect();
                assert_eq!(frame[0], 0, "a data frame, not the trailers: {:?}", String::from_utf8_lossy(&frame[5..]));
                return pb::GameUpdate::decode(&frame[5..]).unwrap();
            }
        }
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), response.chunk()).await.expect("a frame in time");
        buffer.extend_from_slice(&chunk.unwrap().expect("the stream is still open"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_web_stream_over_http1_outlives_the_idle_timeout_between_records() {
    // gRPC-Web over HTTP/1.1 has no heartbeat: between records nothing
    // moves, and that is the server's wait, not a client's stall.
    let dir = tempfile::tempdir().unwrap();
    let idle = std::time::Duration::from_secs(1);
    let connections = ConnectionLimits { idle_timeout: idle, ..Default::default() };
    let server =
        TestServer::start_with(dir.path(), ServerConfig { connections, rates: RateLimits::unlimited(), ..Default::default() }).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let ann = game["seats"][0]["token"].as_str().unwrap().to_string();

    let message = pb::WatchGameRequest { id: id.clone(), from: 0 }.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(&message);
    let http = reqwest::Client::builder().http1_only().build().unwrap();
    let mut response = http
        .post(format!("{}/ludo.v1.Ludo/WatchGame", server.base))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .header("authorization", format!("Bearer {ann}"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "content-type").as_deref(), Some("application/grpc-web+proto"));
    let mut buffer = Vec::new();
    assert_eq!(next_message(&mut response, &mut buffer).await.event.unwrap().seq, 0);

    // Three idle timeouts without a record, then a move: it still arrives.
    tokio::time::sleep(3 * idle).await;
    let moves = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body["moves"].clone();
    let played = rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": moves[0]})).await;
    assert_eq!(played.status, 200, "{:?}", played.body);
    assert_eq!(next_message(&mut response, &mut buffer).await.event.unwrap().seq, 1);
    server.stop().await;
}

/// A real headless Chromium, driven through chromedriver's WebDriver HTTP
/// API: a few JSON requests are all these tests need. One chromedriver per
/// test, one browser session (its own profile, so its own sessionStorage)
/// per person; one browser test at a time, since each runs Chromiums.
mod chromium {
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};
    use tokio::sync::Mutex;

    /// Installed before any script of every document: records uncaught
    /// errors, unhandled rejections, resources that failed to load and CSP
    /// violations, which fail the test.
    const RECORDER: &str = r#"(() => {
      const errors = [];
      Object.defineProperty(window, '__ludoErrors', { value: errors });
      window.addEventListener('error', (e) => errors.push(e.target && e.target !== window && (e.target.src || e.target.href)
        ? 'resource failed to load: ' + (e.target.src || e.target.href)
        : 'uncaught: ' + ((e.error && e.error.stack) || e.message)), true);
      window.addEventListener('unhandledrejection', (e) => errors.push('unhandled rejection: ' + ((e.reason && e.reason.stack) || e.reason)));
      document.addEventListener('securitypolicyviolation', (e) => errors.push('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI));
    })();"#;

    const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

    static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

    fn patience() -> Duration {
        Duration::from_secs(std::env::var("LUDO_BROWSER_TIMEOUT_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(30))
    }

    fn executable(path: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }

    fn find(env: &str, names: &[&str], fixed: &[&str]) -> Option<PathBuf> {
        if let Some(path) = std::env::var_os(env) {
            return Some(PathBuf::from(path)).filter(|p| executable(p));
        }
        let on_path = std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).flat_map(|dir| names.iter().map(move |n| dir.join(n))).find(|p| executable(p)));
        on_path.or_else(|| fixed.iter().map(PathBuf::from).find(|p| executable(p)))
    }

    /// This test's chromedriver; stopped (the process this test started) when dropped.
    pub struct Driver {
        test: &'static str,
        child: Child,
        url: String,
        chromium: PathBuf,
        http: reqwest::Client,
        _turn: tokio::sync::MutexGuard<'static, ()>,
        /// The driver's and its browsers' `TMPDIR`, removed after the driver
        /// has stopped (fields drop after `Drop::drop`): Chromium leaves
        /// directories behind in its temporary directory.
        _tmp: tempfile::TempDir,
    }

    impl Driver {
        /// Starts chromedriver, or `None` (the test skips) without a browser.
        pub async fn start(test: &'static str) -> Option<Driver> {
            let chromium = find("LUDO_CHROMIUM", &["chromium", "chromium-browser", "google-chrome"], &["/usr/bin/chromium"]);
            let driver = find("LUDO_CHROMEDRIVER", &["chromedriver"], &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]);
            let (Some(chromium), Some(driver)) = (chromium, driver) else {
                let why = "no Chromium or no chromedriver (Debian: chromium, chromium-driver; or LUDO_CHROMIUM, LUDO_CHROMEDRIVER)";
                assert!(
                    !std::env::var("LUDO_REQUIRE_BROWSER").is_ok_and(|v| v == "1" || v == "true"),
                    "{test}: the browser is required (LUDO_REQUIRE_BROWSER=1): {why}"
                );
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why} (set LUDO_REQUIRE_BROWSER=1 to make this a failure)");
                return None;
            };
            let turn = ONE_AT_A_TIME.lock().await;
            let http = reqwest::Client::new();
            let tmp = tempfile::Builder::new().prefix("chromium-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            for _ in 0..3 {
                let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
                let mut child = Command::new(&driver)
                    .arg(format!("--port={port}"))
                    .env("TMPDIR", tmp.path())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("{test}: cannot start {}: {e}", driver.display()));
                let url = format!("http://127.0.0.1:{port}");
                let deadline = Instant::now() + Duration::from_secs(20);
                while Instant::now() < deadline {
                    if let Ok(answer) = http.get(format!("{url}/status")).send().await
                        && let Ok(status) = answer.json::<Value>().await
                        && status["value"]["ready"] == true
                    {
                        return Some(Driver { test, child, url, chromium, http, _turn: turn, _tmp: tmp });
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                // Not ready on this port: stop it and try another.
                let _ = child.kill();
                let _ = child.wait();
            }
            panic!("{test}: chromedriver never became ready");
        }

        /// A new browser session at `base` (the server), named `role` in failures.
        pub async fn open(&self, role: &str, base: &str) -> Page {
            let args = [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1280,1000",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
            ];
            let capabilities = json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": self.chromium, "args": args},
            }}});
            let answer = self.http.post(format!("{}/session", self.url)).json(&capabilities).send().await.unwrap();
            let body: Value = answer.json().await.unwrap();
            let session = body["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("{}/{role}: no session: {body}", self.test));
            let page = Page {
                test: self.test,
                role: role.to_string(),
                base: base.to_string(),
                url: format!("{}/session/{session}", self.url),
                http: self.http.clone(),
                closed: false,
            };
            page.command(
                "POST",
                "/goog/cdp/execute",
                json!({"cmd": "Page.addScriptToEvaluateOnNewDocument", "params": {"source": RECORDER}}),
            )
            .await
            .unwrap();
            page
        }
    }

    impl Drop for Driver {
        fn drop(&mut self) {
            // A TERM lets chromedriver end the browsers it started.
            let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// One browser session.
    pub struct Page {
        test: &'static str,
        pub role: String,
        base: String,
        url: String,
        http: reqwest::Client,
        closed: bool,
    }

    impl Drop for Page {
        fn drop(&mut self) {
            if self.closed {
                return;
            }
            // A failing test ends its session too (and so its Chromium), blocking: no runtime is needed.
            use std::io::{Read, Write};
            let Some((host, path)) = self.url.strip_prefix("http://").and_then(|rest| rest.split_once('/')) else { return };
            if let Ok(mut stream) = std::net::TcpStream::connect(host) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                let _ = write!(stream, "DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = stream.read(&mut [0u8; 512]);
            }
        }
    }

    impl Page {
        /// One WebDriver command; its `value`, or the driver's error message.
        async fn command(&self, method: &str, path: &str, body: Value) -> Result<Value, String> {
            let url = format!("{}{path}", self.url);
            let request = match method {
                "GET" => self.http.get(url),
                "DELETE" => self.http.delete(url),
                _ => self.http.post(url).json(&body),
            };
            let answer = request.send().await.map_err(|e| e.to_string())?;
            let body: Value = answer.json().await.map_err(|e| e.to_string())?;
            match body["value"].get("error") {
                Some(error) => Err(format!("{error}: {}", body["value"]["message"])),
                None => Ok(body["value"].clone()),
            }
        }

        /// Opens `path` on the server, or an absolute URL.
        pub async fn goto(&self, path: &str) {
            self.check_errors().await;
            let url = if path.starts_with("http") { path.to_string() } else { format!("{}{path}", self.base) };
            if let Err(e) = self.command("POST", "/url", json!({ "url": url })).await {
                match self.fail(&format!("cannot open {url}: {e}")).await {}
            }
        }

        /// Runs `script` (a function body; `arguments` are `args`) in the page.
        pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
            match self.command("POST", "/execute/sync", json!({"script": script, "args": args})).await {
                Ok(value) => value,
                Err(e) => match self.fail(&format!("script failed: {e}\n{script}")).await {},
            }
        }

        /// Polls `script` until it returns other than null, false or "".
        pub async fn wait(&self, what: &str, script: &str, args: Vec<Value>) -> Value {
            let deadline = Instant::now() + patience();
            let mut last = None;
            loop {
                match self.command("POST", "/execute/sync", json!({"script": script, "args": args})).await {
                    Ok(Value::Null | Value::Bool(false)) => {}
                    Ok(Value::String(s)) if s.is_empty() => {}
                    Ok(value) => return value,
                    Err(e) => last = Some(e),
                }
                if Instant::now() > deadline {
                    match self.fail(&format!("waited {:?} for {what} (last script error: {last:?})", patience())).await {}
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }

        /// Waits for a visible element matching `css`; its WebDriver id.
        async fn element(&self, css: &str) -> String {
            let found = self
                .wait(
                    &format!("a visible `{css}`"),
                    "const e = document.querySelector(arguments[0]); return e && e.getClientRects().length > 0 && !e.closest('[hidden]') ? e : null;",
                    vec![json!(css)],
                )
                .await;
            found[ELEMENT].as_str().unwrap().to_string()
        }

        /// Clicks a visible element (the browser's own click).
        pub async fn click(&self, css: &str) {
            let id = self.element(css).await;
            if let Err(e) = self.command("POST", &format!("/element/{id}/click"), json!({})).await {
                match self.fail(&format!("cannot click `{css}`: {e}")).await {}
            }
        }

        /// Types `text` into a visible field, replacing what it held.
        pub async fn type_into(&self, css: &str, text: &str) {
            let id = self.element(css).await;
            let cleared = self.command("POST", &format!("/element/{id}/clear"), json!({})).await;
            if let Err(e) = cleared.and(self.command("POST", &format!("/element/{id}/value"), json!({ "text": text })).await) {
                match self.fail(&format!("cannot type into `{css}`: {e}")).await {}
            }
        }

        /// Picks the option `value` of a visible `<select>`.
        pub async fn select(&self, css: &str, value: &str) {
            self.element(css).await;
            // An option of a closed list is not visible, yet WebDriver clicks it.
            let option = self
                .wait("the option", "return document.querySelector(arguments[0]);", vec![json!(format!("{css} option[value=\"{value}\"]"))])
                .await;
            let id = option[ELEMENT].as_str().unwrap();
            if let Err(e) = self.command("POST", &format!("/element/{id}/click"), json!({})).await {
                match self.fail(&format!("cannot pick {value:?} in `{css}`: {e}")).await {}
            }
            let now = self.js("return document.querySelector(arguments[0]).value", vec![json!(css)]).await;
            assert_eq!(now, json!(value), "{}/{}: {css}", self.test, self.role);
        }

        /// The text of the first element matching `css` ("" without one).
        pub async fn text(&self, css: &str) -> String {
            let value = self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : '';", vec![json!(css)]).await;
            value.as_str().unwrap_or_default().to_string()
        }

        /// Waits until an element matching `css` shows `words`; its text.
        pub async fn wait_text(&self, css: &str, words: &str) -> String {
            let value = self
                .wait(
                    &format!("`{css}` to say {words:?}"),
                    "const e = document.querySelector(arguments[0]); return e && !e.closest('[hidden]') && e.textContent.includes(arguments[1]) ? e.textContent : null;",
                    vec![json!(css), json!(words)],
                )
                .await;
            value.as_str().unwrap().to_string()
        }

        /// Whether an element matching `css` is shown.
        pub async fn shown(&self, css: &str) -> bool {
            let script =
                "const e = document.querySelector(arguments[0]); return !!e && e.getClientRects().length > 0 && !e.closest('[hidden]');";
            self.js(script, vec![json!(css)]).await == json!(true)
        }

        /// Fails the test if the page raised an error or violated its policy.
        pub async fn check_errors(&self) {
            let errors = self
                .command(
                    "POST",
                    "/execute/sync",
                    json!({"script": "return window.__ludoErrors ? [...window.__ludoErrors] : []", "args": []}),
                )
                .await;
            if let Ok(errors) = errors
                && errors.as_array().is_some_and(|e| !e.is_empty())
            {
                match self.fail(&format!("the page raised errors: {errors}")).await {}
            }
        }

        /// Saves a screenshot of the page as `{test}-{role}-{what}.png`; its path.
        pub async fn shot(&self, what: &str) -> String {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
            if let Ok(Value::String(png)) = self.command("GET", "/screenshot", Value::Null).await
                && std::fs::create_dir_all(&dir).is_ok()
            {
                let path = dir.join(format!("{}-{}-{what}.png", self.test, self.role));
                if std::fs::write(&path, base64(&png)).is_ok() {
                    return path.display().to_string();
                }
            }
            String::from("none")
        }

        /// Fails the test: a screenshot, the page and its text, then panic.
        pub async fn fail(&self, what: &str) -> std::convert::Infallible {
            let shot = self.shot("failure").await;
            let url = self.command("GET", "/url", Value::Null).await.unwrap_or_default();
            let errors = self.command("POST", "/execute/sync", json!({"script": "return window.__ludoErrors || []", "args": []})).await;
            let text = self.command("POST", "/execute/sync", json!({"script": "return document.body.innerText", "args": []})).await;
            panic!(
                "{}/{}: {what}\n  page: {url}\n  screenshot: {shot}\n  page errors: {errors:?}\n  page text: {}",
                self.test,
                self.role,
                text.unwrap_or_default().as_str().unwrap_or_default()
            );
        }

        /// Ends the session, after checking the page raised no error.
        pub async fn close(mut self) {
            self.check_errors().await;
            let _ = self.command("DELETE", "", Value::Null).await;
            self.closed = true;
        }
    }

    /// Decodes standard base64 (a screenshot).
    fn base64(text: &str) -> Vec<u8> {
        let value = |c: u8| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        };
        let (mut out, mut bits, mut held) = (Vec::new(), 0u32, 0u32);
        for sextet in text.bytes().filter_map(value) {
            bits = (bits << 6) | u32::from(sextet);
            held += 6;
            if held >= 8 {
                held -= 8;
                out.push((bits >> held) as u8);
            }
        }
        out
    }
}

/// The game id in a page's path (`/games/{id}/…`).
fn id_in(url: &str) -> String {
    url.split("/games/").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_made_with_open_seats_in_the_lobby_is_joined_by_its_links_and_starts_on_the_play_page() {
    let Some(driver) = chromium::Driver::start("open_seats").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();

    // The creator leaves both seats of a Cardinal game open.
    let creator = driver.open("creator", &server.base).await;
    creator.goto("/").await;
    creator.select("#new-kind", "cardinal").await;
    while creator.js("return document.querySelectorAll('form#create-game .seat-name').length", vec![]).await != json!(2) {
        creator.click("#remove-seat").await;
    }
    let disabled = "return document.querySelector('#opt-public').disabled";
    assert_eq!(creator.js(disabled, vec![]).await, json!(true), "public needs an open seat");
    creator.select("#seat-bot-0", "open").await;
    creator.select("#seat-bot-1", "open").await;
    assert_eq!(creator.js(disabled, vec![]).await, json!(false), "with an open seat, the game may be public");
    creator.click("#create-submit").await;
    let links = creator
        .wait(
            "#created with a join link per open seat",
            "const links = [...document.querySelectorAll('#created a.join-link[data-seat]')];
             return links.length === 2 ? links.map((a) => [a.dataset.seat, a.href]) : null;",
            vec![],
        )
        .await;
    let links: Vec<String> = links.as_array().unwrap().iter().map(|l| l[1].as_str().unwrap().to_string()).collect();
    let id = id_in(&links[0]);
    for (seat, link) in links.iter().enumerate() {
        assert!(link.starts_with(&format!("{}/games/{id}/join#ludo_inv_", server.base)), "seat {seat}'s join link: {link}");
    }
    assert!(!creator.shown("#created a.seat-link").await, "no seat was taken at creation");
    let admin = creator.js("return sessionStorage.getItem('ludo.admin.' + arguments[0])", vec![json!(id)]).await;
    assert!(admin.as_str().is_some_and(|t| t.starts_with("ludo_admin_")), "the creator's tab keeps the admin token: {admin}");
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["status"], json!({"state": "waiting", "open_seats": [0, 1]}));
    assert_eq!(state.get("public"), None, "not public unless asked");
    creator.wait_text(&format!("#lobby-list tr[data-game-id=\"{id}\"]"), "Waiting for 2 players").await;
    creator.shot("created").await;
    creator.goto(&format!("/games/{id}/watch")).await;
    creator.wait_text("#table-text", "Waiting for 2 players").await;
    assert!(creator.shown("#cancel-game").await, "the creator's tab may cancel the waiting game");

    // A guest opens seat 0's link in another browser and joins.
    let guest = driver.open("guest", &server.base).await;
    guest.goto(&links[0]).await;
    guest.wait_text("#join-missing", "Waiting for 2 players").await;
    let address = guest.js("return location.href", vec![]).await;
    assert_eq!(address, json!(format!("{}/games/{id}/join", server.base)), "the code left the address bar");
    guest.shot("join").await;
    guest.type_into("#join-name", "Zoe").await;
    guest.click("#join-submit").await;
    guest
        .wait(
            "the play page, waiting",
            "const s = document.querySelector('#status'); return location.pathname.endsWith('/play') && s && s.dataset.state === 'waiting';",
            vec![],
        )
        .await;
    let waiting = guest.wait_text("#table-text", "Waiting for 1 player").await;
    assert!(waiting.contains("seat 2") && waiting.contains("Zoe"), "who is missing: {waiting}");
    assert!(guest.shown("#leave-game").await && !guest.shown("#cancel-game").await, "a seat may leave; only the creator cancels");
    guest.shot("waiting").await;
    let kept = guest
        .js(
            "return [sessionStorage.getItem('ludo.token.' + arguments[0]), sessionStorage.getItem('ludo.invite.' + arguments[0])]",
            vec![json!(id)],
        )
        .await;
    let token = kept[0].as_str().expect("the seat's token is kept").to_string();
    assert_eq!(kept[1], json!(null), "the invitation is forgotten once used");
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&token)).await.body["viewer_seat"], 0);
    creator.wait_text("#table-text", "Waiting for 1 player").await;

    // The same link again, elsewhere: its seat is taken, and the page says so.
    let late = driver.open("late", &server.base).await;
    late.goto(&links[0]).await;
    late.type_into("#join-name", "Max").await;
    late.click("#join-submit").await;
    late.wait("#join-problem[data-code=seat_taken]", "return document.querySelector('#join-problem[data-code=seat_taken]')", vec![]).await;
    assert!(late.text("#join-problem").await.contains("already taken"), "the refusal in words");
    late.shot("seat-taken").await;
    late.close().await;

    // The other seat is joined over the API: both pages see the game start.
    let code = links[1].split_once('#').unwrap().1;
    let joined = rest.post(&format!("/v1/games/{id}/join"), None, &json!({"name": "Yan", "invitation": code})).await;
    assert_eq!(joined.status, 200, "{:?}", joined.body);
    assert_eq!(joined.body["status"]["state"], "in_progress");
    for page in [&guest, &creator] {
        page.wait("#status[data-state=in_progress]", "return document.querySelector('#status[data-state=in_progress]')", vec![]).await;
        assert!(!page.shown("#leave-game").await && !page.shown("#cancel-game").await, "{}: no leaving once started", page.role);
    }
    assert!(guest.shown("#resign").await, "a seat may resign once the game runs");
    guest.shot("started").await;
    assert!(guest.text("h1").await.contains("Zoe and Yan"), "the title names both players: {}", guest.text("h1").await);
    guest.close().await;
    creator.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resigning_from_the_play_page_ends_a_two_player_game_and_hands_a_bigger_ones_seat_to_a_bot() {
    let Some(driver) = chromium::Driver::start("resign").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 1})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();

    let page = driver.open("ann", &server.base).await;
    page.goto(&format!("/games/{id}/play#token={ann}")).await;
    page.wait("#status[data-state=in_progress]", "return document.querySelector('#status[data-state=in_progress]')", vec![]).await;
    page.click("#resign").await;
    page.wait_text("#confirm", "Resign?").await;
    page.shot("confirm").await;
    page.click("#confirm-no").await;
    assert!(!page.shown("#confirm").await, "going back asks nothing more");
    assert_eq!(rest.get(&format!("/v1/games/{id}"), None).await.body["status"]["state"], "in_progress", "nothing was sent");
    page.click("#resign").await;
    page.click("#confirm-yes").await;
    let status = page.wait_text("#status[data-state=finished]", "Ann resigned").await;
    assert!(status.contains("Bob won"), "the result names the winner: {status}");
    page.wait_text("#table-text", "You resigned").await;
    assert!(page.text("#moves-hint").await.contains("Ann resigned"), "the result: {}", page.text("#moves-hint").await);
    assert!(!page.shown("#resign").await, "no resigning twice");
    page.shot("resigned").await;
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["status"]["forfeits"], json!([{"seat": 0, "reason": "resigned"}]));

    // In a game of three, a bot takes the seat and the game goes on.
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({"first_seat": 1})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    page.goto(&format!("/games/{id}/play#token={ann}")).await;
    page.click("#resign").await;
    page.wait_text("#confirm", "A bot plays your seat").await;
    page.click("#confirm-yes").await;
    page.wait_text("#table-text", "bot plays your seat now").await;
    let state = page.js("return document.querySelector('#status').dataset.state", vec![]).await;
    assert_eq!(state, json!("in_progress"), "the game goes on: {}", page.text("#status").await);
    assert!(page.text("h1").await.contains("Ann (resigned"), "the title: {}", page.text("h1").await);
    assert!(!page.shown("#resign").await && !page.shown("#autopilot").await, "a resigned seat is the bot's");
    page.shot("resigned-bot").await;
    let seat = &rest.get(&format!("/v1/games/{id}"), None).await.body["seats"][0];
    assert_eq!((seat["resigned"].clone(), seat["bot"].is_object()), (json!(true), true), "{seat}");
    page.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_game_is_joined_from_open_games_and_a_waiting_one_is_cancelled_by_its_creator() {
    let Some(driver) = chromium::Driver::start("open_games").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let public = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", null], "public": true})).await;
    assert_eq!(public.status, 201, "{:?}", public.body);
    let id = public.body["id"].as_str().unwrap();
    let private = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", null]})).await.body;

    let page = driver.open("guest", &server.base).await;
    page.goto("/").await;
    let row = format!("#open-list li[data-game-id=\"{id}\"]");
    page.wait_text(&row, "waiting for 1 player").await;
    assert!(
        !page.shown(&format!("#open-list li[data-game-id=\"{}\"]", private["id"].as_str().unwrap())).await,
        "only public games are open to anyone"
    );
    let join = format!("{row} button.join-open");
    page.click(&join).await;
    page.wait_text("#open-problem[data-code=invalid_input]", "Type your name").await;
    page.type_into("#join-name", "Ann").await;
    page.click(&join).await;
    page.wait_text("#open-problem", "already called Ann").await;
    page.shot("open-games").await;
    page.type_into("#join-name", "Zoe").await;
    page.click(&join).await;
    page.wait(
        "the play page of the game joined, started",
        "const s = document.querySelector('#status'); return location.pathname === arguments[0] && s && s.dataset.state === 'in_progress';",
        vec![json!(format!("/games/{id}/play"))],
    )
    .await;
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["seats"][1]["name"], "Zoe");
    assert_eq!(state["status"]["state"], "in_progress");

    // A public game made in the lobby shows under "Open games"; its creator cancels it.
    page.goto("/").await;
    page.select("#new-kind", "cardinal").await;
    page.select("#seat-bot-1", "open").await;
    page.click("#opt-public").await;
    page.click("#create-submit").await;
    let watch = page.wait("#created", "const a = document.querySelector('#created a#watch-link'); return a && a.href;", vec![]).await;
    let made = id_in(watch.as_str().unwrap());
    page.wait_text(&format!("#open-list li[data-game-id=\"{made}\"]"), "waiting for 1 player").await;
    assert_eq!(rest.get(&format!("/v1/games/{made}"), None).await.body["public"], true);
    page.goto(&format!("/games/{made}/watch")).await;
    page.click("#cancel-game").await;
    page.click("#confirm-yes").await;
    page.wait_text("#status[data-state=cancelled]", "Cancelled").await;
    page.shot("cancelled").await;
    assert_eq!(rest.get(&format!("/v1/games/{made}"), None).await.body["status"], json!({"state": "cancelled"}));
    assert!(!page.shown("#cancel-game").await, "cancelled once");
    page.goto("/").await;
    page.wait_text(&format!("#lobby-list tr[data-game-id=\"{made}\"]"), "Cancelled").await;
    assert!(!page.shown(&format!("#open-list li[data-game-id=\"{made}\"]")).await, "a cancelled game is open no more");
    page.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_play_page_counts_a_seats_clock_down_and_shows_the_bot_move_its_timeout_makes() {
    let Some(driver) = chromium::Driver::start("clock").await else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let body = json!({
        "kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0},
        "clock": {"move_ms": 3000, "on_timeout": "bot"},
    });
    let created = rest.post("/v1/games", None, &body).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let id = created.body["id"].as_str().unwrap();
    let ann = created.body["seats"][0]["token"].as_str().unwrap();
    let start = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(start["clock"], json!({"move_ms": 3000, "bank_ms": null, "increment_ms": 0, "on_timeout": "bot"}));

    let page = driver.open("ann", &server.base).await;
    page.goto(&format!("/games/{id}/play#token={ann}")).await;
    page.wait_text("#clocks", "3 s per move, a bot moves on timeout").await;
    // The running clock: its seat, the version it belongs to, the seconds it shows, and whether it is highlighted.
    let read = "const c = document.querySelector('#clocks .clock-run'); const t = c && c.lastChild.textContent;
                return t && /^\\d+:\\d\\d$/.test(t) ? [Number(c.dataset.seat), document.querySelector('#status').dataset.version,
                  Number(t.split(':')[0]) * 60 + Number(t.split(':')[1]), c.classList.contains('clock-low')] : null;";
    let mut counted = false;
    // Each turn lasts 3 s: a turn that ends between the two readings is skipped, for at most a few turns.
    for _ in 0..4 {
        let first = page.wait("the running clock", read, vec![]).await;
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        let second = page.wait("the running clock", read, vec![]).await;
        assert_eq!(first[3], json!(true), "under 10 s, the clock is highlighted: {first}");
        if (&first[0], &first[1]) == (&second[0], &second[1]) {
            assert!(second[2].as_u64() < first[2].as_u64(), "the clock counts down: {first} then {second}");
            counted = true;
            break;
        }
    }
    assert!(counted, "the clock never ran through two readings");
    page.shot("clock").await;

    // Seat 0's time runs out: the server's greedy bot moves for it, and the page shows the step.
    let step = page.wait_text("#recent", "Ann's time ran out").await;
    assert!(step.contains("bot makes the move"), "the step says a bot moved: {step}");
    page.wait(
        "a later version than the start's",
        "return Number(document.querySelector('#status').dataset.version) > arguments[0];",
        vec![start["version"].clone()],
    )
    .await;
    page.shot("timed-out").await;
    page.close().await;
    server.stop().await;
}
