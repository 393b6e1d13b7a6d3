//! Imports cannot swell the server: 25 attempted 10 MB imports against the
//! real binary, sent every way a client can (length told, chunked, a body
//! that fits the limit but is no export), leave its resident memory within
//! 10% of where it was, and store nothing. (Before imports were bounded,
//! 25 imports of 10 MB took the server from 48 to 806 MB, and kept it
//! there.)

mod common;

use std::time::{Duration, Instant};

use common::{OPERATOR_TOKEN, start_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server's resident memory (kB), from `/proc`.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("a VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends `head` and then `body` in chunks of 1 MiB until the server stops
/// reading; the answer's status.
async fn exchange(addr: std::net::SocketAddr, head: String, body: &[u8], chunked: bool) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for piece in body.chunks(1 << 20) {
        let sent = if chunked {
            let mut framed = format!("{:x}\r\n", piece.len()).into_bytes();
            framed.extend_from_slice(piece);
            framed.extend_from_slice(b"\r\n");
            stream.write_all(&framed).await
        } else {
            stream.write_all(piece).await
        };
        if sent.is_err() {
            break; // the server answered and closed: it read no more
        }
    }
    if chunked {
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempted_imports_of_10_mb_leave_the_server_s_memory_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--rate-records", "off"]);
    let pid = server.child.id();
    let auth = format!("Authorization: Bearer {OPERATOR_TOKEN}\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n");
    let ten_mb = vec![b'x'; 10 << 20];
    // Under the 4 MiB limit, but no export: a header, then one huge line.
    let header = br#"{"format":"ludotheque-export/1","game_id":"01a2200d-0000-7000-8000-000000000000","kind":"kardinal","ruleset":"kardinal/1","records":2,"finished":true,"exported_at":"2026-11-27T00:00:00.000Z"}"#;
    let mut fits = header.to_vec();
    fits.push(b'\n');
    fits.extend(std::iter::repeat_n(b'y', (4 << 20) - fits.len() - 64));
    fits.push(b'\n');
    let attempt = |n: usize| {
        let (body, chunked) = match n % 3 {
            0 => (&ten_mb[..], true),
            1 => (&ten_mb[..], false),
            _ => (&fits[..], false),
        };
        let head = if chunked {
            format!("POST /v1/games/import HTTP/1.1\r\nHost: x\r\n{auth}Transfer-Encoding: chunked\r\n\r\n")
        } else {
            format!("POST /v1/games/import HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: {}\r\n\r\n", body.len())
        };
        exchange(server.addr, head, body, chunked)
    };
    // One round first, so the baseline holds whatever the first import path
    // allocates once (thread pools, buffers).
    for n in 0..3 {
        let status = attempt(n).await;
        assert!(matches!(status, 413 | 422), "attempt {n}: {status}");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rss_kb(pid);
    for n in 0..25 {
        let status = attempt(n).await;
        let wanted = if n % 3 == 2 { 422 } else { 413 };
        assert_eq!(status, wanted, "attempt {n}");
    }
    // Freed memory goes back to the system within moments (jemalloc's
    // background thread): look again for a while before judging.
    let deadline = Instant::now() + Duration::from_secs(20);
    let after = loop {
        let now = rss_kb(pid);
        if now * 10 <= before * 11 || Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    eprintln!("resident memory: {before} kB before, {after} kB after 25 attempted imports of 10 MB");
    assert!(after * 10 <= before * 11, "resident memory grew from {before} kB to {after} kB");
    let listed: serde_json::Value = reqwest::get(format!("{}/v1/games?limit=1000", server.base)).await.unwrap().json().await.unwrap();
    assert_eq!(listed["games"], serde_json::json!([]), "nothing was stored");
    server.terminate();
}
