//! The codec of every generated service and client: prost's, except that a
//! message that does not decode is the caller's fault, so it is refused
//! with `INVALID_ARGUMENT` and the same error details as any bad input
//! (`google.rpc.ErrorInfo` reason `invalid_input`, and a
//! `google.rpc.BadRequest` naming the request), instead of prost's
//! `INTERNAL`.

use std::marker::PhantomData;

use prost::Message;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::ProstEncoder;
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

/// prost's codec with strict decode errors (see the module docs).
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
    type Encoder = ProstEncoder<T>;
    type Decoder = StrictDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        StrictDecoder { _message: PhantomData }
    }
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
    fn a_malformed_message_is_invalid_input_with_details() {
        // Field 1 (a string) with a length running past the end.
        let status = invalid_input(REQUEST_FIELD, &crate::v1::GetGameRequest::decode(&[0x0a, 0x05, b'a'][..]).unwrap_err().to_string());
        assert_eq!(status.code(), Code::InvalidArgument);
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!((info.reason.as_str(), info.domain.as_str()), ("invalid_input", ERROR_DOMAIN));
        assert_eq!(status.get_details_bad_request().expect("a BadRequest").field_violations[0].field, REQUEST_FIELD);
    }
}
