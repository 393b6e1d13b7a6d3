//! Cross-origin requests (CORS): which web pages on other origins may call
//! the API from a browser.
//!
//! Seat tokens are bearer headers, never cookies, so a browser holds no
//! ambient credential a hostile page could ride on: by default any origin
//! may call every endpoint (REST and gRPC-Web), sending `Authorization` and
//! reading the headers clients need (`Location`, `Retry-After`, gRPC's
//! status trailers in headers). `--cors-origins` narrows that to a list, or
//! turns cross-origin access off.

use std::str::FromStr;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, header};
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
/// resume point of a stream, the answer preferred (`Prefer`), and what
/// gRPC-Web clients send.
const ALLOWED_HEADERS: [&str; 8] =
    ["authorization", "content-type", "last-event-id", "prefer", "x-grpc-web", "x-user-agent", "grpc-timeout", "connect-protocol-version"];

/// Response headers a page may read beyond the always-safe ones.
const EXPOSED_HEADERS: [&str; 8] = [
    "location",
    "retry-after",
    "content-disposition",
    "etag",
    "preference-applied",
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
];

/// The CORS layer for `origins`, or `None` when cross-origin access is off
/// (a preflight then gets `405`, and browsers refuse the call).
#[must_use]
pub fn layer(origins: &CorsOrigins) -> Option<CorsLayer> {
    let allow = match origins {
        CorsOrigins::Any => AllowOrigin::any(),
        CorsOrigins::Only(list) => AllowOrigin::list(list.iter().cloned()),
        CorsOrigins::Off => return None,
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::HEAD, Method::POST])
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

    #[test]
    fn what_is_not_an_origin_is_refused_with_a_reason() {
        for bad in ["", "a.example", "ftp://a.example", "https://a.example/path", "https://", "https://a b"] {
            let err = bad.parse::<CorsOrigins>().unwrap_err();
            assert!(!err.is_empty(), "{bad:?}");
        }
    }
}
