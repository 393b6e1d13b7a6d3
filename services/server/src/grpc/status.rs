//! Service errors as gRPC statuses, with the REST problem's machine code in
//! a `google.rpc.ErrorInfo` detail.

use std::collections::HashMap;

use ludo_game::ServiceError;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The `ErrorInfo.domain` of every ludotheque error.
pub use ludo_proto::codec::ERROR_DOMAIN as DOMAIN;

/// A status carrying `reason` (the stable code) and `metadata` in an ErrorInfo.
pub fn status(code: Code, reason: &str, message: String, metadata: HashMap<String, String>) -> Status {
    let details = ErrorDetails::with_error_info(reason, DOMAIN, metadata);
    Status::with_error_details(code, message, details)
}

/// An `invalid_input` status naming `field` (ErrorInfo + BadRequest).
pub fn invalid(field: &str, reason: &str) -> Status {
    ludo_proto::codec::invalid_input(field, reason)
}

/// An `unauthorized` status.
pub fn unauthorized(reason: &str) -> Status {
    status(Code::Unauthenticated, "unauthorized", reason.to_string(), HashMap::new())
}

/// A `rate_limited` status: `RESOURCE_EXHAUSTED` with an ErrorInfo and a RetryInfo.
pub fn rate_limited(message: String, retry_after: std::time::Duration) -> Status {
    let ms = ludo_game::quota::retry_after_ms(retry_after);
    let mut details = ErrorDetails::with_error_info("rate_limited", DOMAIN, [("retry_after_ms".to_string(), ms.to_string())]);
    details.set_retry_info(Some(std::time::Duration::from_millis(ms)));
    Status::with_error_details(Code::ResourceExhausted, message, details)
}

/// A `storage_unavailable` status: `UNAVAILABLE` with an ErrorInfo and a
/// RetryInfo of the store's recovery interval (as REST's `Retry-After`).
pub fn storage_unavailable(message: String) -> Status {
    let retry_after = ludo_storage::RECOVERY_INTERVAL;
    let ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX);
    let mut details = ErrorDetails::with_error_info("storage_unavailable", DOMAIN, [("retry_after_ms".to_string(), ms.to_string())]);
    details.set_retry_info(Some(retry_after));
    Status::with_error_details(Code::Unavailable, message, details)
}

/// The one place service errors become gRPC statuses.
pub fn from_service(err: ServiceError) -> Status {
    let message = err.to_string();
    let reason = err.code();
    let meta = |pairs: &[(&str, String)]| pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<HashMap<_, _>>();
    match err {
        ServiceError::NotFound { .. } => status(Code::NotFound, reason, message, HashMap::new()),
        ServiceError::InvalidInput { field, reason: why } => invalid(&field, &why),
        ServiceError::Unauthorized { .. } => status(Code::Unauthenticated, reason, message, HashMap::new()),
        ServiceError::Forbidden { .. } => status(Code::PermissionDenied, reason, message, HashMap::new()),
        ServiceError::SeatRevoked { seat } => status(Code::Unauthenticated, reason, message, meta(&[("seat", seat.0.to_string())])),
        ServiceError::RuleViolation { rule, .. } => status(Code::FailedPrecondition, reason, message, meta(&[("rule", rule)])),
        ServiceError::NotYourTurn { to_move, .. } => {
            let seats: Vec<String> = to_move.iter().map(|s| s.0.to_string()).collect();
            status(Code::FailedPrecondition, reason, message, meta(&[("to_move", seats.join(","))]))
        }
        ServiceError::GameFinished | ServiceError::GameStarted | ServiceError::GameCancelled | ServiceError::GameNotOver => {
            status(Code::FailedPrecondition, reason, message, HashMap::new())
        }
        ServiceError::GameWaiting { open_seats } => {
            let seats: Vec<String> = open_seats.iter().map(|s| s.0.to_string()).collect();
            status(Code::FailedPrecondition, reason, message, meta(&[("open_seats", seats.join(","))]))
        }
        ServiceError::SeatTaken { seat }
        | ServiceError::SeatOpen { seat }
        | ServiceError::SeatResigned { seat }
        | ServiceError::TimeUp { seat } => status(Code::FailedPrecondition, reason, message, meta(&[("seat", seat.0.to_string())])),
        ServiceError::VersionConflict { expected, current } => status(
            Code::Aborted,
            reason,
            message,
            meta(&[("current_version", current.to_string()), ("expected_version", expected.to_string())]),
        ),
        ServiceError::RequestIdReused { .. } => status(Code::AlreadyExists, reason, message, HashMap::new()),
        ServiceError::InvalidExport { line, seq, .. } => {
            let mut pairs = vec![("line", line.to_string())];
            pairs.extend(seq.map(|seq| ("seq", seq.to_string())));
            status(Code::InvalidArgument, reason, message, meta(&pairs))
        }
        ServiceError::GameExists { .. } => status(Code::AlreadyExists, reason, message, HashMap::new()),
        ServiceError::RateLimited { retry_after, .. } => rate_limited(message, retry_after),
        ServiceError::Storage(_) => storage_unavailable(message),
        ServiceError::CorruptLog { seq, .. } => {
            tracing::error!(%message, reason, "a stored log fails verification");
            status(Code::DataLoss, reason, message, meta(&[("seq", seq.to_string())]))
        }
        ServiceError::Internal(_) => {
            tracing::error!(%message, reason, "server-side failure");
            status(Code::Internal, reason, message, HashMap::new())
        }
    }
}
