//! Cross-origin requests (CORS): which web pages on other origins may call
//! the API from a browser.
//!
//! Seat tokens are bearer headers, never cookies, so a browser holds no
//! ambient credential a hostile page could ride on: by default any origin
//! may call every endpoint (REST and gRPC-Web) with every method the API
//! uses, sending `Authorization` and reading the headers clients need
//! (`Location`, `Retry-After`, gRPC's status trailers in headers).
//! `--cors-origins` narrows that to a list, or turns cross-origin access off.
//!
//! The methods are read from the REST API's OpenAPI document, whose
//! operations come from the same `routes!` declarations as the routes: a
//! route added with a new method is allowed with it, never forgotten.

use std::str::FromStr;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, header};
use serde_json::Value;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Which origins may call the API from a browser.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CorsOrigins {
    /// Any origin (`*`): the default.
    #[default]
    Any,
    /// Only these origins (`scheme://host[:port]`, as browsers send them).
    Only(Vec<HeaderValue>),
    /// No cross-origin access: pages on this server only.
    Off,
}

impl FromStr for CorsOrigins {
    type Err = String;

    /// `*`, `off`, or a comma-separated list of origins such as
    /// `https://play.example.org,http://localhost:5173`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "*" => return Ok(CorsOrigins::Any),
            "off" | "none" => return Ok(CorsOrigins::Off),
            _ => {}
        }
        let mut origins = Vec::new();
        for origin in text.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let (scheme, host) = origin.split_once("://").ok_or_else(|| format!("`{origin}` is not an origin (scheme://host[:port])"))?;
            if !matches!(scheme, "http" | "https") || host.is_empty() || host.contains(['/', '?', '#', ' ']) {
                return Err(format!("`{origin}` is not an origin: expected http(s)://host[:port], without a path"));
            }
            origins.push(HeaderValue::from_str(origin).map_err(|_| format!("`{origin}` is not an origin"))?);
        }
        if origins.is_empty() {
            return Err("expected `*`, `off`, or a comma-separated list of origins".into());
        }
        Ok(CorsOrigins::Only(origins))
    }
}

/// Request headers a page may send: the seat token, JSON bodies, the
/// resume point of a stream, the answer preferred (`Prefer`), its request
/// id, and what gRPC-Web clients send.
const ALLOWED_HEADERS: [&str; 9] = [
    "authorization",
    "content-type",
    "last-event-id",
    "prefer",
    "x-request-id",
    "x-grpc-web",
    "x-user-agent",
    "grpc-timeout",
    "connect-protocol-version",
];

/// Response headers a page may read beyond the always-safe ones.
const EXPOSED_HEADERS: [&str; 9] = [
    "location",
    "x-request-id",
    "retry-after",
    "content-disposition",
    "etag",
    "preference-applied",
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
];

/// The keys of an OpenAPI path item that name operations (HTTP methods).
const OPERATION_KEYS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// The methods a page on another origin may use: every method of an
/// operation in `api` (the REST API's OpenAPI document), `HEAD` beside `GET`
/// (axum answers it on every `GET` route), and `POST` (gRPC-Web, the web
/// app's fetches), in a stable order without repeats.
#[must_use]
pub fn methods(api: &Value) -> Vec<Method> {
    let mut methods = vec![Method::GET, Method::HEAD, Method::POST];
    let paths = api.get("paths").and_then(Value::as_object).into_iter().flat_map(|paths| paths.values());
    for item in paths.filter_map(Value::as_object) {
        for key in OPERATION_KEYS.into_iter().filter(|key| item.contains_key(*key)) {
            let method = Method::from_bytes(key.to_ascii_uppercase().as_bytes()).expect("an operation key is a method");
            if !methods.contains(&method) {
                methods.push(method);
            }
        }
    }
    methods
}

/// The CORS layer for `origins`, allowing `methods` (see [`methods`]), or
/// `None` when cross-origin access is off (a preflight then gets `405`,
/// and browsers refuse the call).
#[must_use]
pub fn layer(origins: &CorsOrigins, methods: Vec<Method>) -> Option<CorsLayer> {
    let allow = match origins {
        CorsOrigins::Any => AllowOrigin::any(),
        CorsOrigins::Only(list) => AllowOrigin::list(list.iter().cloned()),
        CorsOrigins::Off => return None,
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods(methods)
            .allow_headers(ALLOWED_HEADERS.map(HeaderName::from_static))
            .expose_headers(EXPOSED_HEADERS.map(HeaderName::from_static))
            // Browsers cap this (Chromium: 2 hours); ten minutes spares a
            // preflight per call without pinning a policy for long.
            .max_age(Duration::from_secs(600))
            .vary([header::ORIGIN, header::ACCESS_CONTROL_REQUEST_METHOD, header::ACCESS_CONTROL_REQUEST_HEADERS]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_from_the_flag() {
        assert_eq!("*".parse::<CorsOrigins>().unwrap(), CorsOrigins::Any);
        assert_eq!("off".parse::<CorsOrigins>().unwrap(), CorsOrigins::Off);
        let CorsOrigins::Only(list) = "https://a.example, http://localhost:5173".parse::<CorsOrigins>().unwrap() else { panic!("a list") };
        assert_eq!(list, vec![HeaderValue::from_static("https://a.example"), HeaderValue::from_static("http://localhost:5173")]);
    }

    /// Every (method, path) of the REST API's operations.
    fn operations(api: &Value) -> Vec<(Method, String)> {
        let mut out = Vec::new();
        for (path, item) in api["paths"].as_object().expect("paths") {
            for key in OPERATION_KEYS.into_iter().filter(|key| item.get(*key).is_some()) {
                out.push((Method::from_bytes(key.to_ascii_uppercase().as_bytes()).unwrap(), path.clone()));
            }
        }
        out
    }

    /// The methods a preflight from `origin` for `method` on `path` is granted.
    async fn granted(layer: CorsLayer, origin: &str, method: &Method, path: &str) -> Vec<String> {
        use tower::{ServiceBuilder, ServiceExt};
        let app = ServiceBuilder::new().layer(layer).service_fn(|_: axum::http::Request<axum::body::Body>| async {
            Ok::<_, std::convert::Infallible>(axum::http::Response::new(axum::body::Body::empty()))
        });
        let preflight = axum::http::Request::builder()
            .method(Method::OPTIONS)
            .uri(path.replace('{', "x").replace('}', ""))
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, method.as_str())
            .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization,content-type")
            .body(axum::body::Body::empty())
            .unwrap();
        let answer = app.oneshot(preflight).await.unwrap();
        let allowed = answer.headers().get(header::ACCESS_CONTROL_ALLOW_METHODS).and_then(|v| v.to_str().ok()).unwrap_or("");
        allowed.split(',').map(|m| m.trim().to_string()).collect()
    }

    #[tokio::test]
    async fn a_preflight_for_every_operation_of_the_rest_api_is_granted_its_method() {
        let api = crate::openapi();
        let operations = operations(&api);
        // Not vacuous: the API uses more than the methods of simple requests.
        for used in [Method::GET, Method::POST, Method::PUT, Method::DELETE] {
            assert!(operations.iter().any(|(method, _)| *method == used), "the API uses {used}");
        }
        let origin = "https://play.example.org";
        let configured = [CorsOrigins::Any, CorsOrigins::Only(vec![HeaderValue::from_static(origin)])];
        for origins in configured {
            for (method, path) in &operations {
                let layer = layer(&origins, methods(&api)).expect("cross-origin access is on");
                let granted = granted(layer, origin, method, path).await;
                assert!(granted.iter().any(|m| m == method.as_str()), "{origins:?}: {method} {path} is not granted: {granted:?}");
            }
        }
    }

    #[test]
    fn methods_are_those_of_the_document_beside_what_pages_and_grpc_web_need() {
        let api = serde_json::json!({"paths": {
            "/a": {"get": {}, "parameters": [], "summary": "not a method"},
            "/b": {"patch": {}, "delete": {}},
            "/c": {"put": {}, "get": {}},
        }});
        assert_eq!(methods(&api), [Method::GET, Method::HEAD, Method::POST, Method::DELETE, Method::PATCH, Method::PUT]);
        assert_eq!(methods(&serde_json::json!({})), [Method::GET, Method::HEAD, Method::POST], "pages and gRPC-Web without a document");
    }

    #[test]
    fn what_is_not_an_origin_is_refused_with_a_reason() {
        for bad in ["", "a.example", "ftp://a.example", "https://a.example/path", "https://", "https://a b"] {
            let err = bad.parse::<CorsOrigins>().unwrap_err();
            assert!(!err.is_empty(), "{bad:?}");
        }
    }
}
