//! The audit page: a finished game's chain and seed are valid; an uploaded
//! export is verified through `/v1/verify`, and a tampered one is caught at
//! the record that was edited.

use serde_json::{Value, json};

use super::harness::{Browser, Test};
use crate::common::play_out;

/// The record (seq) edited, and so its line in the export (header first).
const TAMPERED_SEQ: usize = 11;

/// Changes one digit of a number inside record `seq`'s line (not in a hash):
/// the record's hash no longer matches, so it is the first bad one.
fn tamper(export: &str, seq: usize) -> String {
    let mut lines: Vec<String> = export.lines().map(str::to_string).collect();
    let line = &mut lines[seq + 1];
    let record: Value = serde_json::from_str(line).unwrap();
    assert_eq!(record["seq"], json!(seq), "line {} is record {seq}: {line}", seq + 2);
    // A `"x":N` or `"y":N` of a move, else the record's `"seat":N`.
    let at = ["\"x\":", "\"y\":", "\"seat\":"]
        .iter()
        .find_map(|key| line.find(key).map(|i| i + key.len()))
        .unwrap_or_else(|| panic!("no number to edit in {line}"));
    let at = at + line[at..].find(|c: char| c.is_ascii_digit()).unwrap();
    let digit = line.as_bytes()[at] - b'0';
    let edited = ((digit + 1) % 10 + b'0') as char;
    line.replace_range(at..at + 1, &edited.to_string());
    lines.join("\n") + "\n"
}

/// An export less its header's `exported_at` (each download has its own).
fn without_export_time(export: &str) -> Vec<Value> {
    let mut lines: Vec<Value> = export.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines[0].as_object_mut().unwrap().remove("exported_at");
    lines
}

/// Uploads `path` in `input#verify-file` and waits for `#verify-result` to
/// say `valid` (after `what`).
async fn upload(page: &Browser, path: &std::path::Path, valid: bool, what: &str) {
    let input = page.element("input#verify-file").await;
    if let Err(error) = input.send_keys(path.to_str().unwrap()).await {
        match page.fail(&format!("cannot choose a file in input#verify-file: {error}")).await {}
    }
    page.wait_js(
        &format!("#verify-result[data-valid={valid}] after uploading {what}"),
        "const r = document.querySelector('#verify-result'); return r && r.dataset.valid === String(arguments[0]);",
        vec![json!(valid)],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_page_checks_a_real_export_and_names_a_tampered_record() {
    let Some(t) = Test::start("audit", &[]) else { return };
    let created = t.create(json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}})).await;
    let id = created["id"].as_str().unwrap();
    play_out(&t.http, t.base(), &created).await;
    let export = t.http.get(format!("{}/v1/games/{id}/export", t.base())).send().await.unwrap().text().await.unwrap();
    assert!(export.lines().count() > TAMPERED_SEQ + 2);

    let page = t.browser("spectator").await;
    page.goto(&format!("/games/{id}/audit")).await;
    for hook in ["#chain-status", "#seed-status"] {
        page.wait_js(
            &format!("{hook}[data-valid=true] for a finished game"),
            "const e = document.querySelector(arguments[0]); return e && e.dataset.valid === 'true';",
            vec![json!(hook)],
        )
        .await;
    }
    page.screenshot("audit-valid").await;

    // The download link gives the export (unless it is a blob the page made).
    let href = page.element("a#download-export").await.prop("href").await.unwrap().unwrap_or_default();
    if !href.starts_with("blob:") {
        let downloaded = t.http.get(&href).send().await.unwrap().text().await.unwrap();
        assert_eq!(
            without_export_time(&downloaded),
            without_export_time(&export),
            "audit: a#download-export ({href}) is the game's export"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("game.jsonl");
    std::fs::write(&good, &export).unwrap();
    upload(&page, &good, true, "the real export").await;
    page.screenshot("verify-valid").await;

    let tampered = tamper(&export, TAMPERED_SEQ);
    // The API locates it where it was edited: the tampering is what we think.
    let report: Value = t.http.post(format!("{}/v1/verify", t.base())).body(tampered.clone()).send().await.unwrap().json().await.unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["fault"]["seq"], json!(TAMPERED_SEQ), "{report}");
    assert_eq!(report["fault"]["line"], json!(TAMPERED_SEQ + 2), "{report}");
    let bad = dir.path().join("tampered.jsonl");
    std::fs::write(&bad, &tampered).unwrap();
    upload(&page, &bad, false, "the tampered export").await;
    let named = page
        .wait_js(
            "#verify-first-bad naming the first bad record",
            "const e = document.querySelector('#verify-first-bad'); return e ? e.textContent.trim() : null;",
            vec![],
        )
        .await;
    let named = named.as_str().unwrap().to_string();
    let numbers: Vec<usize> = named.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect();
    if !numbers.contains(&(TAMPERED_SEQ + 2)) || !numbers.contains(&TAMPERED_SEQ) {
        match page
            .fail(&format!(
                "#verify-first-bad should name line {} (record {TAMPERED_SEQ}), the one edited: it says {named:?}",
                TAMPERED_SEQ + 2
            ))
            .await {}
    }
    page.screenshot("verify-tampered").await;

    // A game with hidden cards: its finished export reveals them, and it
    // checks out on the page too.
    let created = t.create(json!({"kind": "kardinal", "players": ["Ann", "Bob", "Cid"]})).await;
    let id = created["id"].as_str().unwrap();
    play_out(&t.http, t.base(), &created).await;
    page.goto(&format!("/games/{id}/audit")).await;
    for hook in ["#chain-status", "#seed-status"] {
        page.wait_js(
            &format!("{hook}[data-valid=true] for a finished Kardinal & König game"),
            "const e = document.querySelector(arguments[0]); return e && e.dataset.valid === 'true';",
            vec![json!(hook)],
        )
        .await;
    }
    let export = t.http.get(format!("{}/v1/games/{id}/export", t.base())).send().await.unwrap().text().await.unwrap();
    let kardinal = dir.path().join("kardinal.jsonl");
    std::fs::write(&kardinal, &export).unwrap();
    upload(&page, &kardinal, true, "a finished Kardinal & König export").await;
    page.screenshot("audit-kardinal").await;
    page.close().await;
    t.finish();
}
