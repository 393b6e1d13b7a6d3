//! The committed `openapi/openapi.json` is exactly what the server serves,
//! it is OpenAPI 3.1, every reference resolves, and the docs page works
//! offline.
//!
//! After changing the REST API, regenerate it with
//! `cargo run -p ludo -- openapi > openapi/openapi.json`.

use std::path::PathBuf;

use ludo_blackbox::TestServer;
use serde_json::Value;

fn committed() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi/openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the committed document is JSON")
}

fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                out.push(target);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn the_committed_document_matches_the_code() {
    let generated = serde_json::to_value(ludo_server::openapi()).unwrap();
    assert!(
        generated == committed(),
        "openapi/openapi.json drifted from the code: run `cargo run -p ludo -- openapi > openapi/openapi.json`"
    );
}

#[test]
fn the_document_is_openapi_3_1_and_self_contained() {
    let doc = committed();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    let mut targets = Vec::new();
    refs(&doc, &mut targets);
    assert!(targets.len() > 20, "the schemas are referenced, not inlined away");
    for target in targets {
        let name = target.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("external reference {target}"));
        assert!(doc["components"]["schemas"].get(name).is_some(), "dangling reference {target}");
    }
    for path in [
        "/v1/kinds",
        "/v1/games",
        "/v1/games/{id}",
        "/v1/games/{id}/legal-moves",
        "/v1/games/{id}/moves",
        "/v1/games/{id}/events",
        "/v1/games/{id}/replay",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not documented");
    }
    assert_eq!(doc["components"]["securitySchemes"]["seat_token"]["scheme"], "bearer");
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let described = response["description"].as_str().is_some_and(|d| !d.is_empty());
                assert!(described, "{method} {path} {status}: a response needs a description");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_the_document_and_an_offline_docs_page() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let served = rest.get("/openapi.json", None).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.body, committed());
    let http = reqwest::Client::new();
    let page = http.get(format!("{}/docs/", server.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "not the docs page: {html}");
    assert!(!html.contains("https://"), "the docs page must not load anything from the internet");
    let script = http.get(format!("{}/docs/swagger-ui-bundle.js", server.base)).send().await.unwrap();
    assert_eq!(script.status(), 200, "the docs page's script is served locally");
    assert!(script.text().await.unwrap().len() > 100_000);
    server.stop().await;
}
