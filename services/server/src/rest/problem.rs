//! RFC 9457 problem details: every REST error, with a stable `code`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ludo_engine::Seat;
use ludo_game::ServiceError;
use serde::Serialize;
use utoipa::ToSchema;

/// An error answer (`application/problem+json`, RFC 9457).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Problem {
    /// URI naming the problem type (`urn:ludotheque:problem:<code>`).
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Short summary of the problem type.
    pub title: String,
    /// HTTP status code.
    pub status: u16,
    /// What went wrong, for a human.
    pub detail: String,
    /// Stable machine code: `not_found`, `invalid_input`, `unauthorized`,
    /// `rule_violation`, `not_your_turn`, `game_finished`, `game_waiting`,
    /// `game_started`, `game_cancelled`, `seat_taken`, `seat_open`,
    /// `seat_resigned`, `time_up`, `version_conflict`,
    /// `request_id_reused`, `invalid_export`, `game_exists`,
    /// `method_not_allowed`, `unsupported_media_type`, `payload_too_large`,
    /// `request_timeout`, `rate_limited`, `too_many_connections`,
    /// `storage_unavailable`, `corrupt_log`, `internal`.
    pub code: String,
    /// The rule refusing the move (`rule_violation`), e.g. `CA-13`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The offending input field (`invalid_input`), e.g. `move.shape`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The game's current version (`version_conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// The version the client expected (`version_conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<u64>,
    /// Seats that may act now (`not_your_turn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_move: Option<Vec<Seat>>,
    /// Seats still open (`game_waiting`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_seats: Option<Vec<Seat>>,
    /// The seat at issue (`seat_taken`, `seat_open`, `seat_resigned`, `time_up`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// The first bad line of an export (`invalid_export`), 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The record at fault (`invalid_export`, `corrupt_log`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Milliseconds until a retry may succeed (`rate_limited`, `storage_unavailable`; also in `Retry-After`, rounded up to seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Problem {
    /// A problem with no extra members.
    pub fn new(status: StatusCode, code: &str, detail: impl Into<String>) -> Self {
        Problem {
            type_uri: format!("urn:ludotheque:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            code: code.to_string(),
            rule: None,
            field: None,
            current_version: None,
            expected_version: None,
            to_move: None,
            open_seats: None,
            seat: None,
            line: None,
            seq: None,
            retry_after_ms: None,
        }
    }

    /// An `invalid_input` problem naming `field`.
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem { field: Some(field.into()), ..Problem::new(StatusCode::BAD_REQUEST, "invalid_input", detail) }
    }

    /// A `rate_limited` problem (429; `Retry-After` is added with the answer).
    pub fn rate_limited(detail: impl Into<String>, retry_after: std::time::Duration) -> Self {
        let ms = ludo_game::quota::retry_after_ms(retry_after);
        Problem { retry_after_ms: Some(ms), ..Problem::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", detail) }
    }

    /// A `storage_unavailable` problem (503): the disk is full, or the store
    /// failed and is recovering. It says to retry after the store's recovery
    /// interval: a failed sled store tries to recover once per interval, so
    /// no write succeeds sooner, and it is a fair pause for a disk being
    /// cleared or a PostgreSQL that cannot be reached.
    pub fn storage_unavailable(detail: impl Into<String>) -> Self {
        let ms = u64::try_from(ludo_storage::RECOVERY_INTERVAL.as_millis()).unwrap_or(u64::MAX);
        Problem { retry_after_ms: Some(ms), ..Problem::new(StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable", detail) }
    }

    /// A `not_found` problem.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, "not_found", detail)
    }
}

impl From<ServiceError> for Problem {
    /// The one place service errors become HTTP statuses.
    fn from(err: ServiceError) -> Self {
        let detail = err.to_string();
        let code = err.code();
        match err {
            ServiceError::NotFound { .. } => Problem::new(StatusCode::NOT_FOUND, code, detail),
            ServiceError::InvalidInput { field, .. } => {
                Problem { field: Some(field), ..Problem::new(StatusCode::BAD_REQUEST, code, detail) }
            }
            ServiceError::Unauthorized { .. } => Problem::new(StatusCode::UNAUTHORIZED, code, detail),
            ServiceError::Forbidden { .. } => Problem::new(StatusCode::FORBIDDEN, code, detail),
            ServiceError::SeatRevoked { seat } => Problem { seat: Some(seat), ..Problem::new(StatusCode::UNAUTHORIZED, code, detail) },
            ServiceError::RuleViolation { rule, .. } => {
                Problem { rule: Some(rule), ..Problem::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail) }
            }
            ServiceError::NotYourTurn { to_move, .. } => {
                Problem { to_move: Some(to_move), ..Problem::new(StatusCode::CONFLICT, code, detail) }
            }
            ServiceError::GameFinished | ServiceError::GameStarted | ServiceError::GameCancelled | ServiceError::GameNotOver => {
                Problem::new(StatusCode::CONFLICT, code, detail)
            }
            ServiceError::GameWaiting { open_seats } => {
                Problem { open_seats: Some(open_seats), ..Problem::new(StatusCode::CONFLICT, code, detail) }
            }
            ServiceError::SeatTaken { seat }
            | ServiceError::SeatOpen { seat }
            | ServiceError::SeatResigned { seat }
            | ServiceError::TimeUp { seat } => Problem { seat: Some(seat), ..Problem::new(StatusCode::CONFLICT, code, detail) },
            ServiceError::VersionConflict { expected, current } => Problem {
                current_version: Some(current),
                expected_version: Some(expected),
                ..Problem::new(StatusCode::CONFLICT, code, detail)
            },
            ServiceError::RequestIdReused { .. } => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail),
            ServiceError::InvalidExport { line, seq, .. } => {
                Problem { line: Some(line), seq, ..Problem::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail) }
            }
            ServiceError::GameExists { .. } => Problem::new(StatusCode::CONFLICT, code, detail),
            ServiceError::RateLimited { retry_after, .. } => Problem::rate_limited(detail, retry_after),
            ServiceError::Storage(_) => Problem::storage_unavailable(detail),
            ServiceError::CorruptLog { seq, .. } => {
                tracing::error!(%detail, code, "a stored log fails verification");
                Problem { seq: Some(seq), ..Problem::new(StatusCode::INTERNAL_SERVER_ERROR, code, detail) }
            }
            ServiceError::Internal(_) => {
                tracing::error!(%detail, code, "server-side failure");
                Problem::new(StatusCode::INTERNAL_SERVER_ERROR, code, detail)
            }
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let unauthorized = status == StatusCode::UNAUTHORIZED;
        let retry_after_ms = self.retry_after_ms;
        let mut response = (status, super::json::Json(self)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if unauthorized {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"ludotheque\""));
        }
        if let Some(ms) = retry_after_ms {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(ms.div_ceil(1000)));
        }
        response
    }
}

/// Answer for any path no route serves: a real 404.
pub async fn no_route(uri: axum::http::Uri) -> Problem {
    Problem::not_found(format!("no such resource: {}", uri.path()))
}

/// Answer for a known path with a method it does not serve.
pub async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> Problem {
    Problem::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", format!("{method} is not served on {}", uri.path()))
}
