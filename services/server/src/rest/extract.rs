//! Request extractors that refuse bad input with a problem naming the field.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{StatusCode, header, request::Parts};
use ludo_game::api::Answer;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::problem::Problem;
use crate::limits::{MAX_EXPORT_BYTES, MAX_REQUEST_BYTES};

/// The caller's seat token, if any (`Authorization: Bearer <token>`).
#[derive(Debug, Clone)]
pub struct Caller(pub Option<String>);

impl Caller {
    /// The token as a string slice.
    pub fn token(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
            return Ok(Caller(None));
        };
        let unauthorized = |detail: &str| Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", detail);
        let text = value.to_str().map_err(|_| unauthorized("the Authorization header is not text"))?;
        let (scheme, token) = text.split_once(' ').ok_or_else(|| unauthorized("expected `Authorization: Bearer <token>`"))?;
        if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
            return Err(unauthorized("expected `Authorization: Bearer <token>`"));
        }
        Ok(Caller(Some(token.trim().to_string())))
    }
}

/// A JSON body parsed strictly: wrong content type, bad JSON or a wrong
/// field each get a problem naming what is wrong.
#[derive(Debug, Clone)]
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + Serialize, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
            })
            .unwrap_or(false);
        if !is_json {
            return Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as `Content-Type: application/json`",
            ));
        }
        if let Some(refused) = declared_excess(&request, MAX_REQUEST_BYTES) {
            return Err(refused);
        }
        let RawBody(bytes) = RawBody::from_request(request, state).await?;
        let bytes = whole_numbers(&bytes).map_or(bytes, Bytes::from);
        // A well-formed body is parsed once, plainly. Only a refused one is
        // parsed again, tracking the path to what was wrong, for the
        // problem to name the field: tracking every key made parsing a
        // move's body take about twice as long, for nothing when all is well.
        match serde_json::from_slice::<T>(&bytes) {
            Ok(value) => match array_for_object(&bytes, &value) {
                None => Ok(Body(value)),
                Some(field) => Err(Problem::invalid(field, "invalid JSON body: an array where an object is expected")),
            },
            Err(plain) => Err(refusal::<T>(&bytes, plain)),
        }
    }
}

/// The body with every number written with a zero fraction or an exponent
/// (`2.0`, `2e3`) written as the integer it is, if it has one; `None` when
/// nothing changes. JSON Schema (and so the OpenAPI document) counts `2.0`
/// as the integer 2, as JavaScript and Python clients may write it; serde
/// would refuse it for a `u8`. Only a body with a digit before a `.`, `e`
/// or `E` is read twice, so the common body costs one scan.
fn whole_numbers(bytes: &[u8]) -> Option<Vec<u8>> {
    fn rewrite(value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::Number(number) if number.is_f64() => {
                let float = number.as_f64().unwrap_or(f64::NAN);
                // Within ±2^63 (and below 2^64), so the casts are exact.
                let whole = if float.fract() != 0.0 || !float.is_finite() {
                    None
                } else if (0.0..18_446_744_073_709_551_616.0).contains(&float) {
                    Some(serde_json::Number::from(float as u64))
                } else if (-9_223_372_036_854_775_808.0..0.0).contains(&float) {
                    Some(serde_json::Number::from(float as i64))
                } else {
                    None
                };
                whole.map(|whole| *number = whole).is_some()
            }
            // Every item is rewritten: no short cut at the first change.
            serde_json::Value::Array(items) => items.iter_mut().map(rewrite).filter(|&changed| changed).count() > 0,
            serde_json::Value::Object(map) => map.values_mut().map(rewrite).filter(|&changed| changed).count() > 0,
            _ => false,
        }
    }
    let may_hold = bytes.windows(2).any(|pair| pair[0].is_ascii_digit() && matches!(pair[1], b'.' | b'e' | b'E'));
    if !may_hold {
        return None;
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if !rewrite(&mut value) {
        return None;
    }
    serde_json::to_vec(&value).ok()
}

/// Where a body that parsed as `value` gave an array for an object (see
/// [`ludo_record::shape`]): its field, or `body` for the whole. Only a body
/// with an array in it is read again.
fn array_for_object<T: Serialize>(bytes: &[u8], value: &T) -> Option<String> {
    if !bytes.contains(&b'[') {
        return None;
    }
    let input: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    ludo_record::shape::array_for_object(&input, value).map(|path| if path.is_empty() { "body".to_string() } else { path })
}

/// The problem for a JSON body that `serde_json` refused with `plain`.
fn refusal<T: DeserializeOwned>(bytes: &[u8], plain: serde_json::Error) -> Problem {
    let mut json = serde_json::Deserializer::from_slice(bytes);
    if let Err(err) = serde_path_to_error::deserialize::<_, T>(&mut json) {
        let path = err.path().to_string();
        let inner = err.into_inner();
        // A syntax error is the body's fault, wherever the parser stopped;
        // a well-formed value of the wrong shape names its field.
        let field = match inner.classify() {
            serde_json::error::Category::Data if path != "." => path,
            _ => "body".to_string(),
        };
        return Problem::invalid(field, format!("invalid JSON body: {inner}"));
    }
    // The value parsed: what follows it is wrong. (Both parses read the
    // same bytes the same way, so `plain` says the same, were it reached.)
    let err = json.end().err().unwrap_or(plain);
    Problem::invalid("body", format!("invalid JSON body: {err}"))
}

/// The refusal of a body whose declared length is over `limit`: given at
/// once, rather than after waiting for bytes that would be refused anyway.
fn declared_excess(request: &Request, limit: usize) -> Option<Problem> {
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())?;
    (declared > limit as u64).then(|| {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("a body of {declared} bytes is over this route's limit of {limit} bytes"),
        )
    })
}

/// A body taken as it is (an export), refused as a problem when it is over
/// the route's limit or cannot be read.
#[derive(Debug, Clone)]
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(refused) = declared_excess(&request, MAX_EXPORT_BYTES) {
            return Err(refused);
        }
        Bytes::from_request(request, state).await.map(RawBody).map_err(|rejection| {
            let status = rejection.status();
            let code = if status == StatusCode::PAYLOAD_TOO_LARGE { "payload_too_large" } else { "invalid_input" };
            let problem = Problem::new(status, code, rejection.body_text());
            if code == "invalid_input" { Problem { field: Some("body".into()), ..problem } } else { problem }
        })
    }
}

/// The game id of a `/v1/games/{id}/…` path, parsed once here: refused as
/// a problem when the path segment is not text, and as `not_found` when it
/// is not a game id (no game has it).
#[derive(Debug, Clone, Copy)]
pub struct GamePath(pub ludo_game::GameId);

impl<S: Send + Sync> FromRequestParts<S> for GamePath {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(GamePath(id.parse()?)),
            Err(rejection) => Err(Problem::invalid("id", rejection.body_text())),
        }
    }
}

/// A game id and a seat number from the path (`/v1/games/{id}/seats/{seat}/…`).
pub struct SeatPath(pub ludo_game::GameId, pub ludo_engine::Seat);

impl<S: Send + Sync> FromRequestParts<S> for SeatPath {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<(String, String)>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path((id, seat))) => {
                let seat = seat.parse::<u8>().map_err(|_| Problem::invalid("seat", format!("`{seat}` is not a seat number (0 to 255)")))?;
                Ok(SeatPath(id.parse()?, ludo_engine::Seat(seat)))
            }
            Err(rejection) => Err(Problem::invalid("id", rejection.body_text())),
        }
    }
}

/// Query parameters parsed strictly, refusing with the offending parameter.
#[derive(Debug, Clone)]
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Params(value)),
            Err(rejection) => {
                // axum reports `Failed to deserialize query string: <path>: <reason>`.
                let text = rejection.body_text();
                let rest = text.strip_prefix("Failed to deserialize query string: ").unwrap_or(&text);
                let field = match rest.split_once(": ") {
                    Some((path, _)) if !path.is_empty() && !path.contains(' ') => path.to_string(),
                    _ => "query".to_string(),
                };
                Err(Problem::invalid(field, text))
            }
        }
    }
}

/// What the client prefers the answer to carry (RFC 7240 `Prefer`):
/// `return=minimal` asks for an answer without the game's view,
/// `return=representation` (or nothing) for the whole answer. Preferences
/// the server does not know, and a header it cannot read, are ignored, as
/// the RFC asks; of several `return` preferences the first counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefer(pub Answer);

/// The response header saying a `Prefer` was honoured.
pub const PREFERENCE_APPLIED: header::HeaderName = header::HeaderName::from_static("preference-applied");

impl Prefer {
    /// The answer preferred by `headers`' `Prefer` fields.
    fn of(headers: &header::HeaderMap) -> Answer {
        let preferences =
            headers.get_all("prefer").iter().filter_map(|value| value.to_str().ok()).flat_map(|value| split_unquoted(value, ','));
        for preference in preferences {
            // `token [= word] *(; parameter)`: the parameters are not used.
            let head = split_unquoted(preference, ';').next().unwrap_or_default();
            let (name, value) = head.split_once('=').unwrap_or((head, ""));
            if !name.trim().eq_ignore_ascii_case("return") {
                continue;
            }
            let value = value.trim();
            let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            return if value.eq_ignore_ascii_case("minimal") { Answer::Minimal } else { Answer::Full };
        }
        Answer::Full
    }

    /// The `Preference-Applied` header for an answer made this way, if any
    /// preference was honoured.
    #[must_use]
    pub fn applied(self) -> Option<[(header::HeaderName, &'static str); 1]> {
        (self.0 == Answer::Minimal).then_some([(PREFERENCE_APPLIED, "return=minimal")])
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Prefer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Prefer(Prefer::of(&parts.headers)))
    }
}

/// `text` split at each `separator` outside a quoted string (RFC 9110's
/// `"…"`, where `\` escapes the next character).
fn split_unquoted(text: &str, separator: char) -> impl Iterator<Item = &str> {
    let (mut quoted, mut escaped, mut start) = (false, false, 0);
    let mut cuts = text.char_indices().filter_map(move |(at, c)| {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => return Some(at),
            _ => {}
        }
        None
    });
    std::iter::from_fn(move || {
        if start > text.len() {
            return None;
        }
        let end = cuts.next().unwrap_or(text.len());
        let part = &text[start..end];
        start = end + 1;
        Some(part)
    })
    .map(str::trim)
    .filter(|part| !part.is_empty())
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue};

    use super::*;

    fn prefer(values: &[&str]) -> Answer {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("prefer", HeaderValue::from_str(value).unwrap());
        }
        Prefer::of(&headers)
    }

    #[test]
    fn return_minimal_asks_for_the_answer_without_the_view() {
        for minimal in [
            "return=minimal",
            "RETURN = Minimal",
            "return=\"minimal\"",
            "respond-async, return=minimal",
            "wait=10, return=minimal; foo=\"a, b; c\"",
            "handling=lenient,return=minimal",
        ] {
            assert_eq!(prefer(&[minimal]), Answer::Minimal, "{minimal}");
        }
        // Over several header fields, as over one.
        assert_eq!(prefer(&["respond-async", "return=minimal"]), Answer::Minimal);
    }

    #[test]
    fn anything_else_gets_the_whole_answer() {
        for full in [
            "",
            "return=representation",
            "return",
            "return=",
            "return=minimalist",
            "respond-async",
            "x-return=minimal",
            // A comma inside a quoted parameter does not start a preference.
            "foo=\"x, return=minimal\"",
            ",,,",
            "\"",
        ] {
            assert_eq!(prefer(&[full]), Answer::Full, "{full:?}");
        }
        assert_eq!(prefer(&[]), Answer::Full);
        // The first `return` counts.
        assert_eq!(prefer(&["return=representation, return=minimal"]), Answer::Full);
        assert_eq!(prefer(&["return=minimal", "return=representation"]), Answer::Minimal);
    }

    #[test]
    fn a_header_that_is_not_text_is_ignored() {
        let mut headers = HeaderMap::new();
        headers.append("prefer", HeaderValue::from_bytes(b"return=minimal\xff").unwrap());
        assert_eq!(Prefer::of(&headers), Answer::Full);
    }

    /// What a body is refused with, parsed as a `Probe`.
    fn refused(body: &str) -> (String, String) {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Probe {
            inner: Inner,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            count: u32,
        }
        let plain = serde_json::from_slice::<Probe>(body.as_bytes()).expect_err("the body is refused");
        let problem = refusal::<Probe>(body.as_bytes(), plain);
        assert_eq!(problem.code, "invalid_input");
        (problem.field.unwrap_or_default(), problem.detail)
    }

    #[test]
    fn a_refused_body_names_what_is_wrong() {
        // A value of the wrong shape: its path.
        let (field, detail) = refused(r#"{"inner": {"count": "three"}}"#);
        assert_eq!(field, "inner.count");
        assert!(detail.starts_with("invalid JSON body: invalid type: string"), "{detail}");
        // Unknown and missing fields: the object they are in.
        assert_eq!(refused(r#"{"inner": {"count": 3}, "extra": 1}"#).0, "extra");
        assert_eq!(refused(r#"{"inner": {}}"#).0, "inner");
        // Bad JSON, and anything after a good value: the body.
        let (field, detail) = refused(r#"{"inner": {"count": 3}"#);
        assert_eq!(field, "body");
        assert!(detail.contains("EOF while parsing"), "{detail}");
        let (field, detail) = refused(r#"{"inner": {"count": 3}} {}"#);
        assert_eq!(field, "body");
        assert!(detail.contains("trailing characters"), "{detail}");
    }

    #[test]
    fn a_body_that_gives_an_array_for_an_object_is_refused_at_it() {
        use ludo_game::api::{CreateGame, JoinGame, SubmitMove};
        let array_for = |body: &str| -> Option<String> {
            let value: CreateGame = serde_json::from_str(body).expect("serde_json alone reads it");
            array_for_object(body.as_bytes(), &value)
        };
        // serde reads each of these as the object it is not.
        assert_eq!(array_for(r#"["cardinal", ["Ann", "Bob"], {"first_seat": 0}]"#), Some("body".into()));
        // A player and a bot read only their own shapes: refused by their own parse.
        assert!(serde_json::from_str::<CreateGame>(r#"{"kind": "cardinal", "players": ["Ann", ["Robot"]]}"#).is_err());
        assert!(serde_json::from_str::<CreateGame>(r#"{"kind": "cardinal", "players": [{"name": "Robot", "bot": ["strong"]}]}"#).is_err());
        // Real arrays, and a bracket in a string, pass.
        assert_eq!(array_for(r#"{"kind": "cardinal", "players": ["Ann [1]", null, {"name": "Robot", "bot": {"level": "strong"}}]}"#), None);
        let body = r#"[{"type": "keep_cardinal"}, 3]"#;
        let value: SubmitMove = serde_json::from_str(body).expect("serde_json alone reads it");
        assert_eq!(array_for_object(body.as_bytes(), &value).as_deref(), Some("body"));
        let body = r#"["Ann", null, 1]"#;
        let value: JoinGame = serde_json::from_str(body).expect("serde_json alone reads it");
        assert_eq!(array_for_object(body.as_bytes(), &value).as_deref(), Some("body"));
        let body = r#"{"name": "Ann", "seat": 1}"#;
        let value: JoinGame = serde_json::from_str(body).expect("serde_json alone reads it");
        assert_eq!(array_for_object(body.as_bytes(), &value), None);
    }

    #[test]
    fn a_number_with_a_zero_fraction_is_the_integer_it_writes() {
        let rewritten = |body: &str| whole_numbers(body.as_bytes()).map(|bytes| String::from_utf8(bytes).unwrap());
        assert_eq!(
            rewritten(r#"{"seat": 2.0, "bot": {"think_ms": 1e3}, "at": [-4.0, 0.5]}"#).as_deref(),
            Some(r#"{"seat":2,"bot":{"think_ms":1000},"at":[-4,0.5]}"#)
        );
        // Nothing to rewrite: a real fraction, integers, digits in strings, a number past 2^64.
        for body in [r#"{"x": 0.5}"#, r#"{"x": 2}"#, r#"{"name": "R2.D2 e3"}"#, r#"{"x": 1e20}"#, "not JSON 1.0"] {
            assert_eq!(rewritten(body), None, "{body}");
        }
        let request: ludo_game::api::JoinGame =
            serde_json::from_slice(&whole_numbers(br#"{"name": "Ann", "seat": 1.0}"#).unwrap()).unwrap();
        assert_eq!(request.seat, Some(ludo_engine::Seat(1)));
    }

    #[test]
    fn quoted_separators_do_not_split() {
        let parts: Vec<&str> = split_unquoted(r#"a="1,2", b="x\"," , c"#, ',').collect();
        assert_eq!(parts, [r#"a="1,2""#, r#"b="x\",""#, "c"]);
    }
}
