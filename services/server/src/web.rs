//! The built-in web app: `index.html` for each page of the app, and its
//! scripts, styles and images under `/assets/`.
//!
//! The files live in `services/server/web/` (its README describes the app).
//! Release builds embed them in the binary; debug builds read them from that
//! folder at run time, so a reload shows an edit without a rebuild. Every
//! answer carries a strict Content-Security-Policy (scripts and styles from
//! this origin only, no inline code, requests to this origin only) and an
//! ETag, so a browser revalidates instead of downloading again.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::rest::problem::Problem;

#[derive(rust_embed::Embed)]
#[folder = "web/"]
#[exclude = "*.md"]
struct Files;

/// The pages of a game; each is the app's `index.html`, whose router picks
/// the page from the path.
const GAME_PAGES: [&str; 5] = ["play", "watch", "replay", "audit", "join"];

/// The app's pages are the same document: the one policy covers them all.
/// `connect-src 'self'`: the app talks to this server only.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The routes of the web app: `/`, `/games/{id}/{page}` and `/assets/{*path}`.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|headers: HeaderMap| async move { file("index.html", &headers) }))
        .route(
            "/games/{id}/{page}",
            get(|Path((_, page)): Path<(String, String)>, headers: HeaderMap| async move {
                if GAME_PAGES.contains(&page.as_str()) { file("index.html", &headers) } else { not_found() }
            }),
        )
        .route(
            "/assets/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move { file(&format!("assets/{path}"), &headers) }),
        )
}

/// The file at `path` under `web/`, or a 304 when the browser's copy is current.
fn file(path: &str, request: &HeaderMap) -> Response {
    let Some(found) = Files::get(path) else {
        return not_found();
    };
    let etag = format!("\"{}\"", hex::encode(&found.metadata.sha256_hash()[..16]));
    let mut headers = HeaderMap::new();
    headers.insert(header::ETAG, HeaderValue::from_str(&etag).expect("hex is a valid header"));
    // Revalidate on every load: the files change with the binary, and the
    // ETag makes a revalidation one small 304.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(path)));
    (headers, found.data.into_owned()).into_response()
}

/// The media type of a file of the app, from its extension.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("webmanifest") => "application/manifest+json",
        _ => "application/octet-stream",
    }
}

fn not_found() -> Response {
    Problem::new(StatusCode::NOT_FOUND, "not_found", "no such page").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_is_embedded_with_its_shell_and_without_its_readme() {
        assert!(Files::get("index.html").is_some(), "web/index.html is the app's shell");
        assert!(Files::get("README.md").is_none(), "docs are not served");
    }

    #[test]
    fn the_app_stays_small_and_fetches_nothing_from_elsewhere() {
        let mut code_bytes = 0;
        for path in Files::iter() {
            let file = Files::get(&path).expect("listed files exist");
            if path.ends_with(".js") || path.ends_with(".css") {
                code_bytes += file.data.len();
            }
            let text = String::from_utf8_lossy(&file.data);
            // The one absolute URL allowed is SVG's namespace name, which is
            // never fetched.
            let outside = text.replace("http://www.w3.org/2000/svg", "").replace("http://www.w3.org/1999/xlink", "");
            for scheme in ["http://", "https://", "//cdn", "@import"] {
                assert!(!outside.contains(scheme), "{path} refers to {scheme}…: the app works offline");
            }
        }
        assert!(code_bytes > 0, "the app has scripts");
        // The budget grew from 200 to 256 KiB with the audit page's own
        // checks of the transparency log (signatures and Merkle proofs in
        // the browser, `proofs.js`): ~28 KiB that no library could replace
        // without fetching it from elsewhere.
        assert!(code_bytes < 256 * 1024, "JavaScript and CSS take {code_bytes} bytes; the budget is 256 KiB");
    }

    #[test]
    fn every_game_page_is_one_the_apps_router_shows() {
        let main = Files::get("assets/js/main.js").expect("the router");
        let main = String::from_utf8_lossy(&main.data);
        for page in GAME_PAGES {
            assert!(main.contains(&format!("  {page}: () => import(")), "main.js has no module for /games/{{id}}/{page}");
            assert!(
                main.contains(&format!("|{page}")) || main.contains(&format!("({page}|")),
                "main.js does not route /games/{{id}}/{page}"
            );
        }
        let page = Files::get("assets/js/join.js").expect("the join page's module");
        assert!(String::from_utf8_lossy(&page.data).contains("history.replaceState"), "the join page clears its code from the address bar");
    }

    #[test]
    fn scripts_and_styles_get_types_browsers_execute() {
        assert_eq!(content_type("assets/js/main.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("assets/app.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("assets/unknown.bin"), "application/octet-stream");
    }
}
