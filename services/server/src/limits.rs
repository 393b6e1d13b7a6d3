//! The limits the server enforces on what a client sends.

/// Largest export accepted by verify and import (REST body, read as it
/// streams in and refused once past it; gRPC message): the game service's
/// bound on what an import may make it store.
pub const MAX_EXPORT_BYTES: usize = ludo_game::MAX_IMPORT_BYTES;

/// Largest body (REST) or message (gRPC) of every other request: axum's
/// default, far above any legal request (the largest, a Kardinal & König
/// game created with its own board, is bounded well below it).
pub const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;
