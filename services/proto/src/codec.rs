//! The codec of every generated service and client: prost's, except that a
//! message that does not decode is the caller's fault, so it is refused
//! with `INVALID_ARGUMENT` and the same error details as any bad input
//! (`google.rpc.ErrorInfo` reason `invalid_input`, and a
//! `google.rpc.BadRequest` naming the request), instead of prost's
//! `INTERNAL`; and a message is encoded into a `Vec` and handed to tonic
//! in one piece (see [`VecEncoder`]).

use std::marker::PhantomData;

use bytes::BufMut;
use prost::Message;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The `ErrorInfo.domain` of every ludotheque error.
pub const ERROR_DOMAIN: &str = "ludotheque";

/// The field a BadRequest names when the request message itself is malformed.
pub const REQUEST_FIELD: &str = "request";

/// An `invalid_input` status: `INVALID_ARGUMENT` with an ErrorInfo naming
/// `field` and a BadRequest violation for it.
#[must_use]
pub fn invalid_input(field: &str, reason: &str) -> Status {
    let mut details = ErrorDetails::with_error_info("invalid_input", ERROR_DOMAIN, [("field".to_string(), field.to_string())]);
    details.add_bad_request_violation(field, reason);
    Status::with_error_details(Code::InvalidArgument, format!("invalid `{field}`: {reason}"), details)
}

/// prost's codec with strict decode errors and a faster encoder (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct StrictCodec<T, U> {
    _types: PhantomData<(T, U)>,
}

impl<T, U> Default for StrictCodec<T, U> {
    fn default() -> Self {
        StrictCodec { _types: PhantomData }
    }
}

impl<T, U> Codec for StrictCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = VecEncoder<T>;
    type Decoder = StrictDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        VecEncoder { _message: PhantomData }
    }

    fn decoder(&mut self) -> Self::Decoder {
        StrictDecoder { _message: PhantomData }
    }
}

/// Encodes `T` into a `Vec` of its exact length, then copies that into
/// tonic's buffer with one write: the same bytes as prost's own encoder.
///
/// prost writes a message a byte or a few at a time (each tag, each varint).
/// Into tonic's `EncodeBuf`, a `BytesMut`, each of those writes is a call out
/// of line with its own capacity check; a `Vec`'s are inlined. Under gRPC
/// load (64 games), encoding a move's answer with its view went that way
/// byte by byte and was 7% of the server's CPU.
#[derive(Debug, Clone)]
pub struct VecEncoder<T> {
    _message: PhantomData<T>,
}

impl<T: Message> Encoder for VecEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        encode_whole(&item, dst);
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// `message` encoded into a `Vec`, then written to `dst` at once.
fn encode_whole(message: &impl Message, dst: &mut impl BufMut) {
    dst.put_slice(&message.encode_to_vec());
}

/// Decodes `U`, refusing malformed bytes with `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct StrictDecoder<U> {
    _message: PhantomData<U>,
}

impl<U: Message + Default> Decoder for StrictDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf).map(Some).map_err(|err| invalid_input(REQUEST_FIELD, &err.to_string()))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_encoded_as_prost_encodes_them() {
        use crate::v1;
        let request = v1::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ada".into(), "Brendan".into(), "Çelik".into()],
            options: Some(v1::Options {
                game: Some(v1::options::Game::Cardinal(crate::ludo::cardinal::v1::Options { first_seat: Some(2) })),
            }),
            ..Default::default()
        };
        let mut prost = bytes::BytesMut::new();
        request.encode(&mut prost).expect("a BytesMut grows");
        // Written after something already in the buffer, as tonic does
        // (its frame header goes first).
        let mut ours = bytes::BytesMut::from(&b"head"[..]);
        encode_whole(&request, &mut ours);
        assert_eq!(&ours[..4], b"head");
        assert_eq!(&ours[4..], &prost[..]);
        assert_eq!(v1::CreateGameRequest::decode(&ours[4..]).expect("decodes"), request);
    }

    #[test]
    fn a_malformed_message_is_invalid_input_with_details() {
        // Field 1 (a string) with a length running past the end.
        let status = invalid_input(REQUEST_FIELD, &crate::v1::GetGameRequest::decode(&[0x0a, 0x05, b'a'][..]).unwrap_err().to_string());
        assert_eq!(status.code(), Code::InvalidArgument);
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!((info.reason.as_str(), info.domain.as_str()), ("invalid_input", ERROR_DOMAIN));
        assert_eq!(status.get_details_bad_request().expect("a BadRequest").field_violations[0].field, REQUEST_FIELD);
    }
}
