//! Reads of a long game: its events and steps in small pages against one
//! page, the game rebuilt at past versions, and the server's replay rate
//! when it verifies the game's export.
//!
//! The long game is a Battle 13 match played to completion through the API
//! with random legal moves (`GET …/legal-moves` with the seat's token).

use std::time::{Duration, Instant};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::server::{Server, checked};

/// Records the long game should reach.
pub const TARGET_RECORDS: u64 = 500;

/// Crowns to win each match tried, in order, until one reaches
/// `TARGET_RECORDS`: a match's length varies with the deals (to 100 crowns,
/// from about 340 to 520 records were seen), so several are tried.
const CROWN_TARGETS: [u32; 8] = [100; 8];

/// Small and large pages (the server's largest page is 1000).
const SMALL_PAGE: u64 = 10;
const ONE_PAGE: u64 = 1000;

/// Versions `replay?at=` is asked at: 0, every 25th, and the last.
const REPLAY_STEP: u64 = 25;

/// Times each read is repeated; the median is kept.
const REPEATS: usize = 5;

/// Each `replay?at=N` is asked this many times and the fastest kept, so a
/// figure is the server's cost rather than a scheduler's hiccup on a shared
/// machine.
const REPLAY_TRIES: usize = 3;

/// Matches tried for a running game at least half as long as the long one.
const RUNNING_TRIES: u64 = 10;

/// A log read in small pages against one page.
#[derive(Clone, Serialize)]
pub struct PagedRead {
    pub records: usize,
    pub pages: usize,
    pub paged_ms: f64,
    pub one_page_ms: f64,
    /// `paged_ms / one_page_ms` (target: at most 2).
    pub ratio: f64,
    /// The same client's round trip for the server's cheapest answer
    /// (`GET /healthz`, median): what any request costs before the server
    /// reads anything.
    pub floor_ms: f64,
    /// The ratio net of that floor: `(paged - pages × floor) / (one page -
    /// floor)`, the server's work for the pages against its work for one;
    /// none when the floor measured as long as the reads themselves (the
    /// machine changed pace between them), so that there is nothing left
    /// to compare.
    pub net_ratio: Option<f64>,
}

/// Every read figure.
#[derive(Clone, Serialize)]
pub struct Reads {
    pub kind: String,
    pub options: Value,
    /// Records of the finished game (version + 1).
    pub records: u64,
    /// The finished game's events, as a spectator.
    pub events: PagedRead,
    /// The finished game's steps, as a spectator.
    pub steps: PagedRead,
    /// A running game's events as seat 0 (its hidden cards included).
    pub running_events: PagedRead,
    /// Versions `replay?at=` was asked at.
    pub replay_points: usize,
    pub replay_max_ms: f64,
    /// The version whose replay was slowest.
    pub replay_max_at: u64,
    pub replay_median_ms: f64,
    pub verify_ms: f64,
    /// Records replayed per second by `POST /v1/verify`.
    pub verify_records_per_s: f64,
}

/// The finished game the reads are timed on.
struct Finished {
    id: String,
    version: u64,
}

/// A game played through the API.
struct Played {
    id: String,
    tokens: Vec<String>,
    version: u64,
}

/// Figures of every read.
///
/// # Errors
/// When a request fails or is refused.
pub async fn measure(server: &Server, long_game: Option<&bytes::Bytes>) -> Result<(Reads, bytes::Bytes), String> {
    let http = reqwest::Client::new();
    let base = &server.base;
    let imported = match long_game {
        Some(export) => match import(&http, base, export).await {
            Ok(imported) => Some(imported),
            // A build older than the first one's record format cannot take
            // its match: it plays one of its own (the figures then read
            // different matches of about the same length).
            Err(why) if why.contains("unknown record format") => {
                eprintln!("note: {why}; this server plays a match of its own");
                None
            }
            Err(why) => return Err(why),
        },
        None => None,
    };
    let (id, version, options) = match imported {
        Some(imported) => imported,
        None => {
            let (options, game) = long_match(&http, base).await?;
            (game.id, game.version, options)
        }
    };
    let game = Finished { id, version };
    let events_url = format!("{base}/v1/games/{}/events", game.id);
    let events = paged_read(&http, &events_url, None).await?;
    let steps = paged_read(&http, &format!("{base}/v1/games/{}/steps", game.id), None).await?;

    let mut at: Vec<u64> = (0..=game.version).step_by(REPLAY_STEP as usize).collect();
    if at.last() != Some(&game.version) {
        at.push(game.version);
    }
    let mut replay_ms = Vec::with_capacity(at.len());
    let mut slowest = (0.0, 0);
    for n in &at {
        let url = format!("{base}/v1/games/{}/replay?at={n}", game.id);
        let mut best = Duration::MAX;
        for _ in 0..REPLAY_TRIES {
            let started = Instant::now();
            get(&http, &url, None).await?;
            best = best.min(started.elapsed());
        }
        if ms(best) > slowest.0 {
            slowest = (ms(best), *n);
        }
        replay_ms.push(ms(best));
    }
    replay_ms.sort_by(f64::total_cmp);

    let export = get(&http, &format!("{base}/v1/games/{}/export", game.id), None).await?;
    let mut verify_times = Vec::with_capacity(REPEATS);
    let mut verified_records = 0;
    for _ in 0..REPEATS {
        let started = Instant::now();
        let answer = http
            .post(format!("{base}/v1/verify"))
            .header("content-type", "application/x-ndjson")
            .body(export.clone())
            .send()
            .await
            .map_err(|e| format!("verify: {e}"))?;
        let body = checked(answer, "verify").await?.bytes().await.map_err(|e| format!("verify: {e}"))?;
        let report: VerifyHead = serde_json::from_slice(&body).map_err(|e| format!("verify: {e}"))?;
        verify_times.push(started.elapsed());
        if !report.valid {
            return Err(format!("the long game's export does not verify: {}", String::from_utf8_lossy(&body)));
        }
        verified_records = report.records;
    }
    let verify = median(verify_times);

    // A running game of the same kind, half as long, read as seat 0. A match
    // may end sooner than that: then it is not a running game, and another
    // is played.
    let half = game.version / 2;
    let mut running = play(&http, base, &options, Some(half), 0).await?;
    for salt in 1..RUNNING_TRIES {
        if running.version >= half {
            break;
        }
        running = play(&http, base, &options, Some(half), salt).await?;
    }
    if running.version < half {
        return Err(format!("{RUNNING_TRIES} Battle 13 matches all ended before version {half}"));
    }
    let running_url = format!("{base}/v1/games/{}/events", running.id);
    let running_events = paged_read(&http, &running_url, Some(&running.tokens[0])).await?;

    let reads = Reads {
        kind: "battle13".into(),
        options,
        records: game.version + 1,
        events,
        steps,
        running_events,
        replay_points: at.len(),
        replay_max_ms: *replay_ms.last().unwrap_or(&f64::NAN),
        replay_max_at: slowest.1,
        replay_median_ms: replay_ms[replay_ms.len() / 2],
        verify_ms: ms(verify),
        verify_records_per_s: verified_records as f64 / verify.as_secs_f64(),
    };
    Ok((reads, export))
}

/// A finished Battle 13 match of at least `TARGET_RECORDS` records, or the
/// longest of those played: (its options, the match).
async fn long_match(http: &reqwest::Client, base: &str) -> Result<(Value, Played), String> {
    let mut longest: Option<(Value, Played)> = None;
    for (salt, crowns) in CROWN_TARGETS.into_iter().enumerate() {
        let options = json!({ "first_seat": 0, "target_crowns": crowns });
        let played = play(http, base, &options, None, salt as u64).await?;
        if longest.as_ref().is_none_or(|(_, best)| played.version > best.version) {
            longest = Some((options, played));
        }
        if longest.as_ref().is_some_and(|(_, best)| best.version + 1 >= TARGET_RECORDS) {
            break;
        }
    }
    let longest = longest.expect("at least one match is played");
    if longest.1.version + 1 < TARGET_RECORDS {
        eprintln!("note: the longest Battle 13 match played has {} records, short of {TARGET_RECORDS}", longest.1.version + 1);
    }
    Ok(longest)
}

/// Imports a finished game's export: (its id, its last version, its options).
async fn import(http: &reqwest::Client, base: &str, export: &bytes::Bytes) -> Result<(String, u64, Value), String> {
    let answer = http
        .post(format!("{base}/v1/games/import"))
        .bearer_auth(crate::server::OPERATOR_TOKEN)
        .header("content-type", "application/x-ndjson")
        .body(export.clone())
        .send()
        .await
        .map_err(|e| format!("import: {e}"))?;
    let imported: Value = checked(answer, "the long game's export was not imported").await?.json().await.map_err(|e| e.to_string())?;
    let id = imported["id"].as_str().ok_or("no id in the import's answer")?.to_string();
    let game: Value = serde_json::from_slice(&get(http, &format!("{base}/v1/games/{id}"), None).await?).map_err(|e| e.to_string())?;
    let version = game["version"].as_u64().ok_or("no version in the imported game")?;
    let options = game.get("options").cloned().unwrap_or_else(|| json!({ "first_seat": 0, "target_crowns": 100 }));
    Ok((id, version, options))
}

/// Plays a Battle 13 match of 4 seats with random legal moves until it is
/// over, or until version `stop_at`. `salt` varies the choices.
async fn play(http: &reqwest::Client, base: &str, options: &Value, stop_at: Option<u64>, salt: u64) -> Result<Played, String> {
    let body = json!({ "kind": "battle13", "players": ["A", "B", "C", "D"], "options": options });
    let answer = http.post(format!("{base}/v1/games")).json(&body).send().await.map_err(|e| format!("create: {e}"))?;
    let created: Value = checked(answer, "a Battle 13 match was not created").await?.json().await.map_err(|e| e.to_string())?;
    let id = created["id"].as_str().ok_or("no game id")?.to_string();
    let tokens: Vec<String> = (0..4).map(|s| created["seats"][s]["token"].as_str().unwrap_or_default().to_string()).collect();
    let mut status = created["status"].clone();
    let mut version = 0;
    let mut state = (salt + 7).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    loop {
        if status["state"] == "finished" {
            return Ok(Played { id, tokens, version });
        }
        if stop_at.is_some_and(|stop| version >= stop) {
            return Ok(Played { id, tokens, version });
        }
        let seat = status["to_move"][0].as_u64().ok_or_else(|| format!("no seat to move in {status}"))? as usize;
        let token = &tokens[seat];
        let legal = get(http, &format!("{base}/v1/games/{id}/legal-moves"), Some(token)).await?;
        let legal: Value = serde_json::from_slice(&legal).map_err(|e| format!("legal moves: {e}"))?;
        let moves = legal["moves"].as_array().filter(|m| !m.is_empty()).ok_or_else(|| format!("no legal move for seat {seat}"))?;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = &moves[(state % moves.len() as u64) as usize];
        let answer = http
            .post(format!("{base}/v1/games/{id}/moves"))
            .bearer_auth(token)
            .json(&json!({ "move": mv }))
            .send()
            .await
            .map_err(|e| format!("move: {e}"))?;
        let accepted: Value = checked(answer, "a listed legal move was refused").await?.json().await.map_err(|e| e.to_string())?;
        version = accepted["version"].as_u64().ok_or("no version in a move's answer")?;
        status = accepted["status"].clone();
    }
}

/// The fields of a verification's report the driver checks; the rest (the
/// replayed game's whole view above all: 40 KB for a long Battle 13 match)
/// is skipped, as a page read skips what it does not count, so that the
/// replay rate is the server's rather than the driver's building a JSON tree.
#[derive(Deserialize)]
struct VerifyHead {
    valid: bool,
    records: u64,
}

/// The fields a page read needs; the rest of the body is skipped.
#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    events: Vec<IgnoredAny>,
    #[serde(default)]
    steps: Vec<IgnoredAny>,
    next_from: Option<u64>,
}

/// Reads the whole log at `url` in pages of `SMALL_PAGE` and in one page,
/// `REPEATS` times each; medians. The request floor is measured between
/// the repeats, so that it meets the machine in the states the reads met.
async fn paged_read(http: &reqwest::Client, url: &str, token: Option<&str>) -> Result<PagedRead, String> {
    let mut paged = Vec::with_capacity(REPEATS);
    let mut whole = Vec::with_capacity(REPEATS);
    let mut floor = Vec::with_capacity(REPEATS * FLOOR_REQUESTS);
    let (mut records, mut pages) = (0, 0);
    for _ in 0..REPEATS {
        let started = Instant::now();
        (records, pages) = read_all(http, url, token, SMALL_PAGE).await?;
        paged.push(started.elapsed());
        let started = Instant::now();
        let (all, _) = read_all(http, url, token, ONE_PAGE).await?;
        whole.push(started.elapsed());
        if all != records {
            return Err(format!("{url}: {records} records in pages but {all} in one page"));
        }
        request_floor(http, url, &mut floor).await?;
    }
    let (paged, whole, floor) = (ms(median(paged)), ms(median(whole)), ms(median(floor)));
    let net_ratio = net_ratio(paged, whole, pages, floor);
    Ok(PagedRead { records, pages, paged_ms: paged, one_page_ms: whole, ratio: paged / whole, floor_ms: floor, net_ratio })
}

/// `pages` read in `paged` ms against one page in `whole` ms, each less a
/// request `floor`: none when a floor took as long as what it is taken from.
fn net_ratio(paged: f64, whole: f64, pages: usize, floor: f64) -> Option<f64> {
    let (paged, whole) = (paged - pages as f64 * floor, whole - floor);
    (paged > 0.0 && whole > 0.0).then(|| paged / whole)
}

/// Requests timed for the floor after each repeat.
const FLOOR_REQUESTS: usize = 50;

/// Round trips of `GET /healthz` on the server of `url`, added to `times`.
async fn request_floor(http: &reqwest::Client, url: &str, times: &mut Vec<Duration>) -> Result<(), String> {
    let base = url.split("/v1/").next().unwrap_or(url);
    let health = format!("{base}/healthz");
    for _ in 0..FLOOR_REQUESTS {
        let started = Instant::now();
        get(http, &health, None).await?;
        times.push(started.elapsed());
    }
    Ok(())
}

/// Follows `next_from` from 0 to the end: (records, pages).
async fn read_all(http: &reqwest::Client, url: &str, token: Option<&str>, limit: u64) -> Result<(usize, usize), String> {
    let (mut from, mut records, mut pages) = (Some(0), 0, 0);
    while let Some(at) = from {
        let body = get(http, &format!("{url}?from={at}&limit={limit}"), token).await?;
        let page: Page = serde_json::from_slice(&body).map_err(|e| format!("{url}: {e}"))?;
        records += page.events.len() + page.steps.len();
        pages += 1;
        from = page.next_from;
    }
    Ok((records, pages))
}

async fn get(http: &reqwest::Client, url: &str, token: Option<&str>) -> Result<bytes::Bytes, String> {
    let mut request = http.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.map_err(|e| format!("GET {url}: {e}"))?;
    checked(answer, &format!("GET {url}")).await?.bytes().await.map_err(|e| format!("GET {url}: {e}"))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::net_ratio;

    #[test]
    fn the_net_ratio_takes_a_floor_off_every_request() {
        // 51 pages in 7.67 ms and one in 2.01 ms, 0.093 ms a request.
        let net = net_ratio(7.67, 2.01, 51, 0.093).expect("something is left");
        assert!((net - (7.67 - 51.0 * 0.093) / (2.01 - 0.093)).abs() < 1e-12);
        assert!(net < 7.67 / 2.01);
        // A floor as long as the pages' own time leaves nothing to compare.
        assert_eq!(net_ratio(7.71, 1.96, 51, 0.153), None);
        assert_eq!(net_ratio(1.0, 0.1, 5, 0.1), None);
    }
}
