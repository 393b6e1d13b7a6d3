//! The limits the server enforces on what a client sends.

/// Largest export accepted by verify and import (REST body, read as it
/// streams in and refused once past it; gRPC message): the game service's
/// bound on what an import may make it store.
pub const MAX_EXPORT_BYTES: usize = ludo_game::MAX_IMPORT_BYTES;

/// Largest body (REST) or message (gRPC) of every other request: axum's
/// default, far above any legal request (the largest, a Kardinal & König
/// game created with its own board, is bounded well below it).
pub const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;

/// Reads and drops what is left of a body the server refuses (an import
/// without the operator's token), keeping none of it, up to `limit` bytes.
/// Answering before a client has sent its body makes the server close the
/// connection under it, and many clients (Node's HTTP client among them)
/// then report a broken pipe instead of the answer; a body longer than
/// `limit` is left unread, as a body over its route's limit is.
pub async fn discard(body: axum::body::Body, limit: usize) {
    use http_body_util::BodyExt;
    let mut body = http_body_util::Limited::new(body, limit);
    while let Some(Ok(_)) = body.frame().await {}
}
