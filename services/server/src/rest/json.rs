//! The JSON answer of every REST handler: `axum::Json`'s contract, written
//! straight into a `Vec` sized for a typical answer.
//!
//! Why not `axum::Json`: it serializes into a 128-byte `BytesMut` through
//! `bytes`' `io::Write` adapter, so each of the many small writes serde_json
//! makes (a key, a colon, a number) goes through `put_slice`, and the buffer
//! is reallocated and copied five times before it holds a 4 KiB answer to a
//! move. The load driver's profile of REST moves put that at a tenth of the
//! server's CPU. A `Vec` with room for a typical answer takes each write as
//! an inlined copy and is handed to hyper without another copy.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::problem::Problem;

/// Room reserved up front: a move's answer (the mover's whole view) is 2 to
/// 8 KiB; larger answers (pages of events) grow from there.
const INITIAL_CAPACITY: usize = 4096;

/// A JSON answer (`Content-Type: application/json`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(INITIAL_CAPACITY);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response(),
            Err(error) => {
                // Only a type whose `Serialize` can fail (a map with non-string
                // keys) gets here: a bug of the server, said as one.
                tracing::error!(%error, "an answer could not be written as JSON");
                Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("the answer could not be written as JSON: {error}"))
                    .into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;
    use std::collections::BTreeMap;

    #[tokio::test]
    async fn writes_the_same_bytes_and_header_as_axum_json() {
        let value = serde_json::json!({"b": [1, 2, {"c": "é\"\n"}], "a": null, "long": "x".repeat(10_000)});
        let ours = Json(&value).into_response();
        let axums = axum::Json(&value).into_response();
        assert_eq!(ours.status(), StatusCode::OK);
        assert_eq!(ours.headers().get(header::CONTENT_TYPE), axums.headers().get(header::CONTENT_TYPE));
        let ours = to_bytes(ours.into_body(), usize::MAX).await.expect("body");
        let axums = to_bytes(axums.into_body(), usize::MAX).await.expect("body");
        assert_eq!(ours, axums);
    }

    #[tokio::test]
    async fn a_value_that_cannot_be_json_is_a_500_not_a_panic() {
        // JSON object keys must be strings: serde_json refuses a map keyed by pairs.
        let value: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let response = Json(value).into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = to_bytes(response.into_body(), usize::MAX).await.expect("body");
        let problem: serde_json::Value = serde_json::from_slice(&body).expect("a problem document");
        assert_eq!(problem["code"], "internal");
        assert!(problem["detail"].as_str().is_some_and(|d| d.contains("key must be a string")), "{problem}");
    }
}
