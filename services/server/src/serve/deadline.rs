//! Every request has a deadline to start its answer: receiving its body and
//! handling it included. Live streams start their answer at once, so the
//! deadline never cuts them.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::rest::problem::Problem;

/// Whether a request is a gRPC call (`application/grpc`, `application/grpc+proto` …).
pub(crate) fn is_grpc<B>(request: &axum::http::Request<B>) -> bool {
    request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/grpc"))
}

/// Answers `408 request_timeout` (gRPC `DEADLINE_EXCEEDED`) when the answer
/// has not started within `limit`, and closes the connection (its request
/// body may be half read).
pub(crate) async fn deadline(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    let grpc = is_grpc(&request);
    let http1 = request.version() <= axum::http::Version::HTTP_11;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(answer) => answer,
        Err(_) => {
            let detail = format!("the request was not received and answered within {} s", limit.as_secs_f64());
            let mut answer = if grpc {
                crate::grpc::status::status(tonic::Code::DeadlineExceeded, "request_timeout", detail, Default::default()).into_http()
            } else {
                Problem::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", detail).into_response()
            };
            if http1 {
                answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            answer
        }
    }
}
