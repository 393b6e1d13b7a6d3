//! The audit page's transparency log: a finished game's receipt is checked
//! in the browser (Ed25519 signature, leaf, RFC 6962 inclusion, the log's
//! latest checkpoint) and through `/v1/verify`, under this server's key; a
//! running game's page says the receipt comes at the end; the "Verify a
//! file" box shows a file's receipt checks, a tampered receipt, and that a
//! file without one does not prove completeness.

use serde_json::{Value, json};

use super::harness::{Browser, Test};
use crate::common::{play_one, play_out};

/// Waits for `css`'s `data-valid` to leave `pending` (and empty) and
/// requires it to be `want`; answers the element's text.
async fn wait_valid(page: &Browser, css: &str, want: &str, what: &str) -> String {
    let got = page
        .wait_js(
            &format!("{css}[data-valid] known ({what})"),
            "const e = document.querySelector(arguments[0]); const v = e && e.dataset.valid; return v && v !== 'pending' ? [v, e.textContent.trim()] : null;",
            vec![json!(css)],
        )
        .await;
    let (valid, text) = (got[0].as_str().unwrap().to_string(), got[1].as_str().unwrap().to_string());
    if valid != want {
        match page.fail(&format!("{what}: {css}[data-valid={valid}], not {want}: {text:?}")).await {}
    }
    text
}

/// The text of `css` (trimmed), or fails.
async fn text_of(page: &Browser, css: &str) -> String {
    page.element(css).await;
    let text = page.js("return document.querySelector(arguments[0]).textContent;", vec![json!(css)]).await;
    text.as_str().unwrap_or_default().to_string()
}

/// Chooses `path` in `input#verify-file`, then waits for `#verify-result`
/// and `#verify-receipt` to say `result` and `receipt`.
async fn verify_file(page: &Browser, path: &std::path::Path, result: bool, receipt: &str, what: &str) -> String {
    let input = page.element("input#verify-file").await;
    if let Err(error) = input.send_keys(path.to_str().unwrap()).await {
        match page.fail(&format!("cannot choose a file in input#verify-file: {error}")).await {}
    }
    let text = page
        .wait_js(
            &format!("#verify-result[data-valid={result}] and #verify-receipt[data-valid={receipt}] after uploading {what}"),
            "const r = document.querySelector('#verify-result'); const c = document.querySelector('#verify-receipt');
             return r && c && r.dataset.valid === String(arguments[0]) && c.dataset.valid === arguments[1] ? c.textContent.trim() : null;",
            vec![json!(result), json!(receipt)],
        )
        .await;
    text.as_str().unwrap().to_string()
}

/// The export with one line of its receipt's leaf changed (the record count).
fn with_a_forged_leaf(export: &str) -> String {
    let mut lines: Vec<String> = export.lines().map(str::to_string).collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    let leaf = header["receipt"]["leaf"].as_str().expect("a finished game's export carries a receipt").to_string();
    let forged: Vec<String> = leaf
        .lines()
        .map(|l| l.strip_prefix("records ").map_or(l.to_string(), |n| format!("records {}", n.parse::<u64>().unwrap() + 1)))
        .collect();
    header["receipt"]["leaf"] = json!(forged.join("\n") + "\n");
    lines[0] = header.to_string();
    lines.join("\n") + "\n"
}

/// The export with its last record's hash changed: the chain breaks
/// before the receipt is looked at.
fn with_a_broken_chain(export: &str) -> String {
    let mut lines: Vec<String> = export.lines().map(str::to_string).collect();
    let records = serde_json::from_str::<Value>(&lines[0]).unwrap()["records"].as_u64().unwrap() as usize;
    let line = &mut lines[records];
    let at = line.find("\"hash\":\"").expect("a record has a hash") + "\"hash\":\"".len();
    let flipped = if &line[at..=at] == "0" { "1" } else { "0" };
    line.replace_range(at..=at, flipped);
    lines.join("\n") + "\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_page_checks_a_finished_games_receipt_and_says_a_running_one_gets_it_at_the_end() {
    let Some(t) = Test::start("transparency", &[]) else { return };
    // The game audited ends third, so its receipt has an inclusion proof.
    for _ in 0..2 {
        let created = t.create(json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}})).await;
        play_out(&t.http, t.base(), &created).await;
    }
    let finished = t.create(json!({"kind": "cardinal", "players": ["Cid", "Dee"], "options": {"first_seat": 0}})).await;
    play_out(&t.http, t.base(), &finished).await;
    let id = finished["id"].as_str().unwrap();
    // One more ends after it: the log's latest checkpoint then extends the receipt's.
    let later = t.create(json!({"kind": "cardinal", "players": ["Gil", "Hal"], "options": {"first_seat": 0}})).await;
    play_out(&t.http, t.base(), &later).await;
    let running = t.create(json!({"kind": "cardinal", "players": ["Eve", "Fay"], "options": {"first_seat": 0}})).await;
    assert!(play_one(&t.http, t.base(), &running).await);
    let running_id = running["id"].as_str().unwrap();

    let log = t.get("/v1/log", None).await;
    let key_id = log["key_id"].as_str().unwrap();
    let receipt = t.get(&format!("/v1/games/{id}/receipt"), None).await;
    let tree_size: u64 = receipt["checkpoint"].as_str().unwrap().lines().nth(1).unwrap().parse().unwrap();
    assert_eq!(receipt["key"], log["key"], "the receipt is under the server's key");
    assert_eq!(tree_size, receipt["leaf_index"].as_u64().unwrap() + 1, "a receipt's checkpoint is the first tree holding the leaf");
    assert_eq!(log["tree"]["size"], json!(tree_size + 1), "{log}");

    // A finished game: the receipt checks out, under this server's key.
    let page = t.browser("spectator").await;
    page.goto(&format!("/games/{id}/audit")).await;
    let status = wait_valid(&page, "#receipt-status", "true", "a finished game's receipt").await;
    for words in ["this server’s key", "this game’s head", &format!("included in the checkpoint of {tree_size} games")] {
        assert!(status.to_lowercase().contains(&words.to_lowercase()), "#receipt-status says {words:?}: {status:?}");
    }
    assert_eq!(text_of(&page, "#log-key-id").await.trim(), key_id, "#log-key-id is GET /v1/log's key_id");
    assert_eq!(text_of(&page, "#log-tree-size").await.trim(), tree_size.to_string(), "#log-tree-size");
    assert_eq!(text_of(&page, "#receipt-leaf-index").await.trim(), receipt["leaf_index"].to_string());
    assert_eq!(text_of(&page, "#receipt-leaf").await, receipt["leaf"].as_str().unwrap(), "#receipt-leaf shows the leaf as is");
    for (check, words) in [
        ("#receipt-check-key", "checks out in this browser"),
        ("#receipt-check-leaf", "this game’s head"),
        ("#receipt-check-inclusion", "in this browser"),
        ("#receipt-check-log", "extends the receipt’s"),
        ("#receipt-check-server", "the server agrees"),
    ] {
        let text = wait_valid(&page, check, "true", check).await;
        assert!(text.to_lowercase().contains(words), "{check} says {words:?}: {text:?}");
    }
    page.js("document.querySelector('#transparency').scrollIntoView();", vec![]).await;
    page.screenshot("receipt-valid").await;

    // The "Verify a file" box: the export's receipt, a forged one, none.
    let dir = tempfile::tempdir().unwrap();
    let export = t.http.get(format!("{}/v1/games/{id}/export", t.base())).send().await.unwrap().text().await.unwrap();
    let good = dir.path().join("finished.jsonl");
    std::fs::write(&good, &export).unwrap();
    let said = verify_file(&page, &good, true, "true", "a finished game's export").await;
    assert!(said.contains(&format!("Signed by this server’s key {key_id}")), "#verify-receipt: {said:?}");
    let trusted = page.js("return document.querySelector('#verify-receipt').dataset.trusted;", vec![]).await;
    assert_eq!(trusted, json!("true"), "#verify-receipt[data-trusted]");
    page.js("window.scrollTo(0, 0);", vec![]).await;
    page.screenshot("verify-receipt").await;

    let forged = with_a_forged_leaf(&export);
    let report: Value = t.http.post(format!("{}/v1/verify", t.base())).body(forged.clone()).send().await.unwrap().json().await.unwrap();
    assert_eq!((&report["valid"], &report["receipt"]["leaf_matches"]), (&json!(false), &json!(false)), "{report}");
    let bad = dir.path().join("forged.jsonl");
    std::fs::write(&bad, &forged).unwrap();
    let said = verify_file(&page, &bad, false, "false", "an export whose receipt's leaf was forged").await;
    assert!(said.contains("not this game’s head"), "#verify-receipt names the leaf: {said:?}");
    page.screenshot("verify-forged-receipt").await;

    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, with_a_broken_chain(&export)).unwrap();
    let said = verify_file(&page, &broken, false, "unchecked", "an export whose chain is broken").await;
    assert!(said.contains("not checked"), "#verify-receipt: {said:?}");

    let unfinished = t.http.get(format!("{}/v1/games/{running_id}/export", t.base())).send().await.unwrap().text().await.unwrap();
    let partial = dir.path().join("running.jsonl");
    std::fs::write(&partial, &unfinished).unwrap();
    let said = verify_file(&page, &partial, true, "none", "a running game's export").await;
    assert!(said.contains("completeness is not proven"), "#verify-receipt: {said:?}");

    // A running game: its receipt comes at the end.
    let answer = t.http.get(format!("{}/v1/games/{running_id}/receipt", t.base())).send().await.unwrap();
    assert_eq!(answer.status(), 409);
    assert_eq!(answer.json::<Value>().await.unwrap()["code"], "game_not_over");
    page.goto(&format!("/games/{running_id}/audit")).await;
    let status = wait_valid(&page, "#receipt-status", "not_over", "a running game's receipt").await;
    assert!(status.contains("when the game ends"), "#receipt-status: {status:?}");
    assert_eq!(text_of(&page, "#log-key-id").await.trim(), key_id, "#log-key-id of a running game's page");
    page.js("document.querySelector('#transparency').scrollIntoView();", vec![]).await;
    page.screenshot("receipt-not-over").await;
    page.close().await;

    // A browser whose WebCrypto has no Ed25519: the server's check stands in.
    let page = t.browser("no-ed25519").await;
    page.cdp(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": "(() => { const subtle = crypto.subtle; if (!subtle) return; const real = subtle.importKey.bind(subtle);
            subtle.importKey = (format, key, algorithm, ...rest) =>
              (algorithm && (algorithm.name || algorithm) === 'Ed25519') ? Promise.reject(new DOMException('no Ed25519 here', 'NotSupportedError')) : real(format, key, algorithm, ...rest); })();"}),
    )
    .await;
    page.goto(&format!("/games/{id}/audit")).await;
    wait_valid(&page, "#receipt-status", "true", "a receipt without Ed25519 in the browser").await;
    let said = wait_valid(&page, "#receipt-check-key", "true", "the key's check without Ed25519").await;
    assert!(said.contains("/v1/verify") && said.contains(key_id), "#receipt-check-key defers to the server: {said:?}");
    page.js("document.querySelector('#transparency').scrollIntoView();", vec![]).await;
    page.screenshot("receipt-no-ed25519").await;
    page.close().await;
    t.finish();
}
