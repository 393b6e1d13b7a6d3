//! `ludo grpc`: a small gRPC client for this API, so the gRPC examples run
//! with what the project ships (grpcurl works too: the server serves
//! reflection, but not every system packages grpcurl).
//!
//! It knows the API from the descriptor set compiled into the proto crate
//! (`ludo.v1.Ludo`, every game's messages) and the standard health
//! service's: a request is read in the proto3 JSON mapping into a
//! [`DynamicMessage`] of the method's input type, sent over a tonic
//! [`Channel`] with [`DynamicCodec`], and each answer printed in the same
//! mapping, with the proto's own (snake_case) field names and every field
//! (unless `--skip-defaults`), as REST has them.
//!
//! Exit status: 0 for an answer (or a stream the server ended), 1 when the
//! call failed (a refusal, printed with its code and details, or no
//! answer in time), 2 for a request that is not one (an unknown method,
//! JSON that is not the method's input), 130 for a stream left with Ctrl-C.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, MethodDescriptor, SerializeOptions};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// Arguments of `ludo grpc`.
#[derive(Args, Debug)]
pub struct GrpcArgs {
    /// `list` (the services and their methods), or the method to call:
    /// `CreateGame`, or in full `ludo.v1.Ludo/CreateGame`.
    method: String,
    /// The request in proto3 JSON (e.g. `{"id": "…"}`); `-` or absent:
    /// read it from standard input (absent, from a terminal: `{}`).
    json: Option<String>,
    /// The server's base URL, plain HTTP only (reach a server elsewhere
    /// through a local tunnel, such as `ssh -L` or stunnel in client mode).
    #[arg(long, env = "LUDO_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// A token (a seat's, a game's admin token, the operator's), sent as
    /// the metadata `authorization: Bearer …`; better from the environment
    /// than on a command line other users of the machine can read.
    #[arg(long, env = "LUDO_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The longest wait for connecting and for a unary call's answer (or a
    /// stream's start: a stream then runs until the server ends it).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "30s")]
    timeout: Duration,
    /// Leave out the fields at their default values (0, "", false, empty
    /// lists), as the proto3 JSON mapping may; by default every field is
    /// printed, as REST's answers have them.
    #[arg(long)]
    skip_defaults: bool,
}

/// Exit status of a request that is not one.
const USAGE: u8 = 2;
/// Exit status of a stream left with Ctrl-C (128 + SIGINT).
const INTERRUPTED: u8 = 130;

/// The answers' largest message: an export of a long game is large.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// `ludo grpc …`: runs the call and answers the exit status.
pub async fn run(args: GrpcArgs) -> ExitCode {
    let pool = match pool() {
        Ok(pool) => pool,
        Err(err) => return fail(USAGE, &err),
    };
    if args.method == "list" {
        if args.json.is_some() {
            return fail(USAGE, "`list` takes no request");
        }
        say(&list(&pool));
        return ExitCode::SUCCESS;
    }
    let method = match find_method(&pool, &args.method) {
        Ok(method) => method,
        Err(err) => return fail(USAGE, &err),
    };
    if method.is_client_streaming() {
        return fail(USAGE, &format!("{} streams requests: `ludo grpc` sends one request only", method.full_name()));
    }
    let text = match request_text(args.json.as_deref()) {
        Ok(text) => text,
        Err(err) => return fail(USAGE, &err),
    };
    let request = match parse_request(&method.input(), &text) {
        Ok(request) => request,
        Err(err) => return fail(USAGE, &err),
    };
    let options = SerializeOptions::new().use_proto_field_name(true).skip_default_fields(args.skip_defaults);
    match call(&args, &method, request, &options).await {
        Ok(code) => code,
        Err(Failure::Status(status)) => {
            eprint!("{}", describe_status(&status));
            ExitCode::FAILURE
        }
        Err(Failure::Other(err)) => fail(1, &err),
    }
}

/// Why a call did not answer.
enum Failure {
    /// The server's (or the transport's) status.
    Status(Status),
    /// Anything else, in words.
    Other(String),
}

impl From<Status> for Failure {
    fn from(status: Status) -> Failure {
        Failure::Status(status)
    }
}

/// Connects, sends the request and prints the answer (or each streamed one).
async fn call(
    args: &GrpcArgs,
    method: &MethodDescriptor,
    request: DynamicMessage,
    options: &SerializeOptions,
) -> Result<ExitCode, Failure> {
    let endpoint = endpoint(&args.server).map_err(Failure::Other)?.connect_timeout(args.timeout);
    let channel = endpoint.connect().await.map_err(|e| Failure::Other(format!("cannot connect to {}: {}", args.server, sources(&e))))?;
    let mut grpc =
        tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_MESSAGE_BYTES).max_encoding_message_size(MAX_MESSAGE_BYTES);
    let mut request = tonic::Request::new(request);
    if let Some(token) = args.token.as_deref().filter(|t| !t.is_empty()) {
        let value = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| Failure::Other("the token is not printable ASCII (it is not shown here)".to_string()))?;
        request.metadata_mut().insert("authorization", value);
    }
    let path: tonic::codegen::http::uri::PathAndQuery = format!("/{}/{}", method.parent_service().full_name(), method.name())
        .parse()
        .map_err(|e| Failure::Other(format!("method path: {e}")))?;
    let codec = DynamicCodec { output: method.output() };
    let deadline = args.timeout;
    grpc.ready().await.map_err(|e| Failure::Other(format!("{} is not ready: {}", args.server, sources(&e))))?;
    if !method.is_server_streaming() {
        // The server learns the deadline too (`grpc-timeout`).
        request.set_timeout(deadline);
        let answer = tokio::time::timeout(deadline, grpc.unary(request, path, codec))
            .await
            .map_err(|_| Failure::Other(format!("no answer within {}", humantime::format_duration(deadline))))??;
        say(&format!("{}\n", to_json(answer.get_ref(), options, true)));
        return Ok(ExitCode::SUCCESS);
    }
    let opened = tokio::time::timeout(deadline, grpc.server_streaming(request, path, codec))
        .await
        .map_err(|_| Failure::Other(format!("the stream did not open within {}", humantime::format_duration(deadline))))??;
    let mut stream = opened.into_inner();
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(ExitCode::from(INTERRUPTED)),
            next = stream.message() => match next? {
                Some(message) => {
                    if !say(&format!("{}\n", to_json(&message, options, false))) {
                        // The reader went away (`| head`): nothing more to do.
                        return Ok(ExitCode::SUCCESS);
                    }
                }
                None => return Ok(ExitCode::SUCCESS),
            },
        }
    }
}

/// The API's descriptors: the proto crate's set, and the health service's.
fn pool() -> Result<DescriptorPool, String> {
    let mut pool = DescriptorPool::decode(ludo_proto::FILE_DESCRIPTOR_SET).map_err(|e| format!("the API's descriptors: {e}"))?;
    pool.decode_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET).map_err(|e| format!("the health service's descriptors: {e}"))?;
    Ok(pool)
}

/// `list`: each service, then each of its methods with their messages.
fn list(pool: &DescriptorPool) -> String {
    let mut out = String::new();
    for service in pool.services() {
        out += &format!("{}\n", service.full_name());
        for method in service.methods() {
            let stream = if method.is_server_streaming() { "stream " } else { "" };
            out += &format!("  {}({}) returns ({stream}{})\n", method.name(), method.input().full_name(), method.output().full_name());
        }
    }
    out
}

/// The method `name` names: `Method`, `package.Service/Method`,
/// `/package.Service/Method` or `package.Service.Method`.
fn find_method(pool: &DescriptorPool, name: &str) -> Result<MethodDescriptor, String> {
    let name = name.trim_start_matches('/');
    let (service, method) = match name.rsplit_once('/').or_else(|| name.rsplit_once('.')) {
        Some((service, method)) => (Some(service), method),
        None => (None, name),
    };
    let found: Vec<MethodDescriptor> = pool
        .services()
        .filter(|s| service.is_none_or(|wanted| s.full_name() == wanted))
        .flat_map(|s| s.methods().filter(|m| m.name() == method).collect::<Vec<_>>())
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no method `{name}` (`ludo grpc list` lists them)")),
        more => {
            let names: Vec<String> = more.iter().map(|m| format!("{}/{}", m.parent_service().full_name(), m.name())).collect();
            Err(format!("`{name}` is {}: name its service", names.join(" or ")))
        }
    }
}

/// The request's text: the argument, or standard input.
fn request_text(json: Option<&str>) -> Result<String, String> {
    match json {
        Some(text) if text != "-" => Ok(text.to_string()),
        None if std::io::stdin().is_terminal() => Ok("{}".to_string()),
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| format!("cannot read the request from standard input: {e}"))?;
            Ok(text)
        }
    }
}

/// `text`, a message of type `input` in proto3 JSON; a refusal names the
/// field that does not fit.
fn parse_request(input: &MessageDescriptor, text: &str) -> Result<DynamicMessage, String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let parsed = DynamicMessage::deserialize_with_options(
        input.clone(),
        serde_path_to_error::Deserializer::new(&mut json, &mut track),
        &DeserializeOptions::new(),
    )
    .and_then(|message| json.end().map(|()| message));
    parsed.map_err(|err| {
        let path = track.path().to_string();
        let at = if path.is_empty() || path == "." { String::new() } else { format!(" at `{path}`") };
        format!("the request is not a {} in proto3 JSON{at}: {err}", input.full_name())
    })
}

/// `message` in proto3 JSON, pretty or on one line.
fn to_json(message: &DynamicMessage, options: &SerializeOptions, pretty: bool) -> String {
    let mut out = Vec::new();
    let written = if pretty {
        message.serialize_with_options(&mut serde_json::Serializer::pretty(&mut out), options)
    } else {
        message.serialize_with_options(&mut serde_json::Serializer::new(&mut out), options)
    };
    match written {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        // Only a value JSON cannot hold (a NaN float) fails.
        Err(err) => format!("{{\"error\": {}}}", serde_json::Value::String(format!("not printable as JSON: {err}"))),
    }
}

/// The endpoint of `server`: an `http://` URL (or a bare `host:port`).
fn endpoint(server: &str) -> Result<Endpoint, String> {
    let url = if server.contains("://") { server.to_string() } else { format!("http://{server}") };
    if !url.starts_with("http://") {
        return Err(format!("`{server}`: plain http:// only (reach a TLS server through a local tunnel)"));
    }
    Channel::from_shared(url).map_err(|e| format!("`{server}` is not a URL: {e}"))
}

/// A refusal in words: the code, the message and the error details.
fn describe_status(status: &Status) -> String {
    let mut out = format!("{} ({}): {}\n", code_name(status.code()), status.code() as i32, status.message());
    let details = status.get_error_details();
    if let Some(info) = details.error_info() {
        out += &format!("  reason: {} (domain {})\n", info.reason, info.domain);
        let mut metadata: Vec<_> = info.metadata.iter().collect();
        metadata.sort();
        for (key, value) in metadata {
            out += &format!("  {key}: {value}\n");
        }
    }
    if let Some(bad) = details.bad_request() {
        for violation in &bad.field_violations {
            out += &format!("  bad field `{}`: {}\n", violation.field, violation.description);
        }
    }
    if let Some(delay) = details.retry_info().and_then(|retry| retry.retry_delay) {
        out += &format!("  retry after: {}\n", humantime::format_duration(delay));
    }
    out
}

/// A code's canonical name (`FAILED_PRECONDITION`), from its Rust name.
fn code_name(code: Code) -> String {
    let mut name = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// An error and its sources, on one line (a transport error says little alone).
fn sources(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause = cause.to_string();
        if !text.ends_with(&cause) {
            text += &format!(": {cause}");
        }
        source = source.and_then(std::error::Error::source);
    }
    text
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("ludo grpc: {message}");
    ExitCode::from(code)
}

/// Writes to standard output and flushes; false once the reader went away.
fn say(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_ok()
}

/// The codec of [`DynamicMessage`]s: encodes any, decodes the method's
/// output type.
struct DynamicCodec {
    output: MessageDescriptor,
}

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> DynamicEncoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> DynamicDecoder {
        DynamicDecoder { output: self.output.clone() }
    }
}

/// Encodes a request.
struct DynamicEncoder;

impl Encoder for DynamicEncoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn encode(&mut self, item: DynamicMessage, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(buf).map_err(|e| Status::internal(format!("cannot encode the request: {e}")))
    }
}

/// Decodes an answer of the method's output type.
struct DynamicDecoder {
    output: MessageDescriptor,
}

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        DynamicMessage::decode(self.output.clone(), buf)
            .map(Some)
            .map_err(|e| Status::internal(format!("the answer is not a {}: {e}", self.output.full_name())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_found_by_short_or_full_name() {
        let pool = pool().unwrap();
        for name in ["CreateGame", "ludo.v1.Ludo/CreateGame", "/ludo.v1.Ludo/CreateGame", "ludo.v1.Ludo.CreateGame"] {
            assert_eq!(find_method(&pool, name).unwrap().full_name(), "ludo.v1.Ludo.CreateGame", "{name}");
        }
        assert_eq!(find_method(&pool, "Check").unwrap().full_name(), "grpc.health.v1.Health.Check");
        assert!(find_method(&pool, "Nothing").unwrap_err().contains("ludo grpc list"));
        assert!(list(&pool).contains("  WatchGame(ludo.v1.WatchGameRequest) returns (stream ludo.v1.GameUpdate)\n"));
    }

    #[test]
    fn a_bad_request_names_its_field() {
        let pool = pool().unwrap();
        let input = find_method(&pool, "CreateGame").unwrap().input();
        let err =
            parse_request(&input, r#"{"kind": "cardinal", "seats": [{"name": "Ann"}, {"bot": {"name": "B", "bot": {"level": "NOPE"}}}]}"#)
                .unwrap_err();
        assert!(err.contains("at `seats[1].bot.bot.level`"), "{err}");
        let err = parse_request(&input, r#"{"kind": "cardinal", "sets": []}"#).unwrap_err();
        assert!(err.contains("sets"), "{err}");
        let err = parse_request(&input, r#"{"kind": 3}"#).unwrap_err();
        assert!(err.contains("at `kind`"), "{err}");
        assert!(parse_request(&input, r#"{"kind": "cardinal"} {}"#).is_err(), "trailing text");
        let ok = parse_request(&input, r#"{"kind": "cardinal", "seats": [{"name": "Ann"}, {"open": {}}], "open_seats": []}"#).unwrap();
        let json = to_json(&ok, &SerializeOptions::new().use_proto_field_name(true), false);
        assert_eq!(json, r#"{"kind":"cardinal","seats":[{"name":"Ann"},{"open":{}}]}"#);
    }

    #[test]
    fn codes_have_their_canonical_names() {
        assert_eq!(code_name(Code::FailedPrecondition), "FAILED_PRECONDITION");
        assert_eq!(code_name(Code::Ok), "OK");
        assert_eq!(code_name(Code::Unauthenticated), "UNAUTHENTICATED");
    }
}
