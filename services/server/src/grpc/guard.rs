//! Checks a gRPC request's framing and size as its bytes arrive, before
//! tonic buffers and decodes it.
//!
//! Only `VerifyGame` and
//! `ImportGame` carry a whole export, so only they may send up to
//! [`MAX_EXPORT_BYTES`]; every other call (health and reflection included)
//! keeps the REST body limit, [`MAX_REQUEST_BYTES`]. A message over its
//! call's limit is refused as soon as its length prefix is read
//! (`RESOURCE_EXHAUSTED`, reason `payload_too_large`), a compressed or
//! truncated message is refused as invalid input, and so is a call of
//! `ludo.v1.Ludo` that ends without any message (each of its calls sends
//! exactly one; tonic would answer `INTERNAL`). Each refusal carries the
//! same error details as every other one. tonic turns the body error (a
//! [`Status`]) into the call's answer. (A message that does not decode is
//! refused the same way by the generated code's codec,
//! `ludo_proto::codec::StrictCodec`.)

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::Request;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use ludo_proto::v1::ludo_server::LudoServer;
use tonic::server::NamedService;
use tonic::{Code, Status};

use super::Api;
use super::status::status;
use crate::limits::{MAX_EXPORT_BYTES, MAX_REQUEST_BYTES};

/// The calls that carry a whole export.
const EXPORT_CALLS: [&str; 2] = ["/ludo.v1.Ludo/VerifyGame", "/ludo.v1.Ludo/ImportGame"];

/// The service whose every call sends exactly one request message: none
/// of its methods streams from the client (the black-box tests check).
const ONE_MESSAGE_SERVICE: &str = <LudoServer<Api> as NamedService>::NAME;

/// The gRPC message prefix: a compression flag and a big-endian length.
const PREFIX: usize = 5;

/// Refuses an `ImportGame` call without the operator's token before its
/// message is kept (tonic would buffer and decode a whole message first).
pub async fn operator_only(
    axum::extract::State(service): axum::extract::State<std::sync::Arc<ludo_game::GameService>>,
    request: Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if request.uri().path() == "/ludo.v1.Ludo/ImportGame" {
        let token = request.headers().get("authorization").and_then(|value| value.to_str().ok()).and_then(|text| {
            text.split_once(' ').filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")).map(|(_, token)| token.trim())
        });
        if let Err(err) = service.check_operator(token) {
            // Read and dropped, never held (see `limits::discard`).
            crate::limits::discard(request.into_body(), MAX_EXPORT_BYTES).await;
            return super::status::from_service(err).into_http();
        }
    }
    next.run(request).await
}

/// Wraps the request body in a [`Guarded`] body with the call's limit.
pub async fn guard(request: Request) -> Request {
    let path = request.uri().path();
    let limit = if EXPORT_CALLS.contains(&path) { MAX_EXPORT_BYTES } else { MAX_REQUEST_BYTES };
    let needs_message =
        path.strip_prefix('/').and_then(|method| method.strip_prefix(ONE_MESSAGE_SERVICE)).is_some_and(|rest| rest.starts_with('/'));
    request.map(|body| Body::new(Guarded::new(body, limit, needs_message)))
}

/// A request body whose gRPC framing is checked as it streams.
struct Guarded {
    inner: Body,
    /// Largest message accepted.
    limit: usize,
    /// The length prefix being read, `have` bytes of it so far.
    prefix: [u8; PREFIX],
    have: usize,
    /// Bytes of the current message still to come.
    remaining: usize,
    /// Whether the call must send a message, and whether one has begun.
    needs_message: bool,
    began: bool,
}

impl Guarded {
    fn new(inner: Body, limit: usize, needs_message: bool) -> Guarded {
        Guarded { inner, limit, prefix: [0; PREFIX], have: 0, remaining: 0, needs_message, began: false }
    }

    /// Follows the framing through `data`.
    fn check(&mut self, mut data: &[u8]) -> Result<(), Status> {
        while !data.is_empty() {
            if self.remaining > 0 {
                let step = self.remaining.min(data.len());
                self.remaining -= step;
                data = &data[step..];
                continue;
            }
            let step = (PREFIX - self.have).min(data.len());
            self.prefix[self.have..self.have + step].copy_from_slice(&data[..step]);
            self.have += step;
            data = &data[step..];
            if self.have < PREFIX {
                break;
            }
            self.have = 0;
            self.began = true;
            if self.prefix[0] != 0 {
                return Err(ludo_proto::codec::invalid_input(
                    ludo_proto::codec::REQUEST_FIELD,
                    "compressed messages are not accepted (send them uncompressed)",
                ));
            }
            let len = u32::from_be_bytes([self.prefix[1], self.prefix[2], self.prefix[3], self.prefix[4]]) as usize;
            if len > self.limit {
                let limit = self.limit.to_string();
                return Err(status(
                    Code::ResourceExhausted,
                    "payload_too_large",
                    format!("a message of {len} bytes is over this call's limit of {limit} bytes"),
                    HashMap::from([("limit".to_string(), limit)]),
                ));
            }
            self.remaining = len;
        }
        Ok(())
    }

    /// At the end of the body: no message may be cut short, and a call
    /// that sends one must have sent it.
    fn finish(&self) -> Result<(), Status> {
        if self.remaining > 0 || self.have > 0 {
            return Err(ludo_proto::codec::invalid_input(ludo_proto::codec::REQUEST_FIELD, "the message ends before its length says"));
        }
        if self.needs_message && !self.began {
            return Err(ludo_proto::codec::invalid_input(
                ludo_proto::codec::REQUEST_FIELD,
                "the call carries no request message (every call of this service sends exactly one)",
            ));
        }
        Ok(())
    }
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            None => return Poll::Ready(this.finish().err().map(Err)),
            Some(Err(err)) => return Poll::Ready(Some(Err(Status::from_error(err.into())))),
            Some(Ok(frame)) => frame,
        };
        if let Some(data) = frame.data_ref()
            && let Err(refused) = this.check(data)
        {
            return Poll::Ready(Some(Err(refused)));
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        // Not before `finish` has looked at what was left.
        false
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded(limit: usize) -> Guarded {
        Guarded::new(Body::empty(), limit, false)
    }

    fn framed(len: u32) -> Vec<u8> {
        let mut bytes = vec![0];
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend(std::iter::repeat_n(7, len as usize));
        bytes
    }

    #[test]
    fn a_message_within_its_limit_passes_in_any_split() {
        let bytes = framed(10);
        for cut in 0..bytes.len() {
            let mut body = guarded(10);
            body.check(&bytes[..cut]).unwrap();
            body.check(&bytes[cut..]).unwrap();
            body.finish().unwrap();
        }
    }

    #[test]
    fn an_oversized_message_is_refused_at_its_prefix() {
        let refused = guarded(10).check(&framed(11)[..PREFIX]).unwrap_err();
        assert_eq!(refused.code(), Code::ResourceExhausted);
    }

    #[test]
    fn compressed_and_truncated_messages_are_invalid_input() {
        let mut compressed = framed(3);
        compressed[0] = 1;
        assert_eq!(guarded(10).check(&compressed).unwrap_err().code(), Code::InvalidArgument);
        let mut truncated = guarded(10);
        truncated.check(&framed(4)[..7]).unwrap();
        assert_eq!(truncated.finish().unwrap_err().code(), Code::InvalidArgument);
        // A stream of messages (reflection takes one) is checked message by message.
        let mut two = framed(10);
        two.extend(framed(11));
        assert_eq!(guarded(10).check(&two).unwrap_err().code(), Code::ResourceExhausted);
    }

    #[test]
    fn a_call_of_the_ludo_service_without_a_message_is_invalid_input() {
        let refused = Guarded::new(Body::empty(), 10, true).finish().unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument);
        // An empty message (all fields default) is a message.
        let mut empty = Guarded::new(Body::empty(), 10, true);
        empty.check(&framed(0)).unwrap();
        empty.finish().unwrap();
        // Health and reflection may end a stream without one.
        guarded(10).finish().unwrap();
    }
}
