//! The access log and request ids.
//!
//! Every request gets one line, at `info` under the target
//! [`TARGET`] (`ludo::access`), written when its answer has been sent (a
//! live stream's when it ends), with: the method, the route (the template
//! that matched, such as `/v1/games/{id}/moves`, never the raw path, which
//! may carry what a client should not have put there; a gRPC call's full
//! method name), the HTTP status and, for gRPC, the `grpc-status`, the
//! duration, the body bytes sent, the client's address and the request id.
//! No query string and no header is logged: tokens travel in headers,
//! stream tickets in the query string, invitations in bodies.
//!
//! The request id is the client's `x-request-id` when it is sane (1 to 128
//! printable ASCII characters, no space), else one made here; every answer
//! carries it back in `x-request-id`, REST and gRPC alike.
//!
//! The cost per request is a lookup of the client's header, a header on
//! the answer, the route's name carried back in the answer's extensions, a
//! counter per body frame, and formatting the line.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::http::uri::PathAndQuery;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Response};
use tower::{Layer, Service};

use crate::config::{AccessLog, TrustedProxies};

/// The `tracing` target of access lines: `RUST_LOG=warn,ludo::access=info`
/// keeps them while quieting the rest.
pub(crate) const TARGET: &str = "ludo::access";

/// The request id's header, on requests and answers.
pub(crate) static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest request id taken from a client.
const MAX_REQUEST_ID: usize = 128;

/// What every connection needs to log its requests.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    on: bool,
    trusted: Arc<TrustedProxies>,
}

impl Access {
    pub(crate) fn new(log: AccessLog, trusted: TrustedProxies) -> Self {
        Access { on: log == AccessLog::On, trusted: Arc::new(trusted) }
    }

    /// The id `request` goes by, and its access line if the log is on (the
    /// line is written when the [`Entry`] is dropped).
    pub(crate) fn begin<B>(&self, request: &axum::http::Request<B>, peer: IpAddr) -> (RequestId, Option<Entry>) {
        let id = RequestId::of(request.headers());
        // Off, or filtered out (`RUST_LOG=warn`): nothing is gathered.
        let on = self.on && tracing::enabled!(target: TARGET, tracing::Level::INFO);
        let entry = on.then(|| {
            let forwarded = request.headers().get_all("x-forwarded-for").iter().map(HeaderValue::as_bytes);
            Entry {
                started: Instant::now(),
                method: request.method().clone(),
                client: self.trusted.client(peer, forwarded),
                id: id.clone(),
                grpc: super::is_grpc(request),
                status: None,
                grpc_status: None,
                route: None,
                bytes: 0,
            }
        });
        (id, entry)
    }
}

/// A request's id: the client's own, or a number of this process.
#[derive(Clone, Debug)]
pub(crate) enum RequestId {
    /// The client's `x-request-id` (checked sane).
    Client(HeaderValue),
    /// Made here: this process's prefix and a count.
    Made(u64),
}

/// A random prefix for the ids this process makes, so that replicas' ids
/// differ (std's `RandomState` draws its keys from the OS).
static PREFIX: LazyLock<u32> = LazyLock::new(|| {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish() as u32
});

/// Ids made so far.
static MADE: AtomicU64 = AtomicU64::new(0);

impl RequestId {
    /// The client's id in `headers` if it is sane, else a new one.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        match headers.get(&X_REQUEST_ID) {
            Some(value) if is_sane(value.as_bytes()) => RequestId::Client(value.clone()),
            _ => RequestId::Made(MADE.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The id as a header value.
    pub(crate) fn header(self) -> HeaderValue {
        match self {
            RequestId::Client(value) => value,
            RequestId::Made(count) => {
                let text = made(*PREFIX, count);
                HeaderValue::from_bytes(&text).expect("hex digits make a header value")
            }
        }
    }
}

/// A made id: 8 hex digits of prefix, 12 of count (20 in all).
fn made(prefix: u32, count: u64) -> [u8; 20] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 20];
    let digits = (u128::from(prefix) << 48) | u128::from(count & 0xffff_ffff_ffff);
    for (i, byte) in text.iter_mut().enumerate() {
        *byte = HEX[((digits >> (4 * (19 - i))) & 0xf) as usize];
    }
    text
}

/// 1 to [`MAX_REQUEST_ID`] printable ASCII characters without spaces: safe
/// to write into a log line as it is.
fn is_sane(id: &[u8]) -> bool {
    (1..=MAX_REQUEST_ID).contains(&id.len()) && id.iter().all(u8::is_ascii_graphic)
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Sane ids are ASCII.
            RequestId::Client(value) => f.write_str(value.to_str().unwrap_or("-")),
            RequestId::Made(count) => f.write_str(std::str::from_utf8(&made(*PREFIX, *count)).expect("hex digits")),
        }
    }
}

/// One request's access line, written when dropped: after its answer's
/// last byte, or as `499` when the request ends before its answer starts
/// (the client went away, or the server stopped).
#[derive(Debug)]
pub(crate) struct Entry {
    started: Instant,
    method: Method,
    client: IpAddr,
    id: RequestId,
    grpc: bool,
    status: Option<u16>,
    grpc_status: Option<u16>,
    route: Option<Route>,
    bytes: u64,
}

/// Status logged for a request that got no answer (nginx's "client closed
/// request").
const NO_ANSWER: u16 = 499;

impl Entry {
    /// Notes the answer's head: its status, its route (taken out of its
    /// extensions), and its `grpc-status` if it is there already.
    pub(crate) fn answered(&mut self, answer: &mut Response<Body>) {
        self.status = Some(answer.status().as_u16());
        self.route = answer.extensions_mut().remove::<Route>();
        if self.grpc {
            self.grpc_status = grpc_status(answer.headers());
        }
    }

    /// Notes a frame of the answer's body as it goes out.
    pub(crate) fn sent(&mut self, frame: &http_body::Frame<bytes::Bytes>) {
        if let Some(data) = frame.data_ref() {
            self.bytes += data.len() as u64;
        } else if let Some(trailers) = frame.trailers_ref()
            && self.grpc
        {
            self.grpc_status = grpc_status(trailers).or(self.grpc_status);
        }
    }

    /// Notes the size of an answer sent whole, without [`Entry::sent`].
    pub(crate) fn sent_whole(&mut self, bytes: u64) {
        self.bytes = bytes;
    }
}

fn grpc_status(headers: &HeaderMap) -> Option<u16> {
    headers.get("grpc-status").and_then(|value| value.to_str().ok()).and_then(|text| text.parse().ok())
}

impl Drop for Entry {
    fn drop(&mut self) {
        let micros = self.started.elapsed().as_micros() as u64;
        tracing::info!(
            target: TARGET,
            method = %self.method,
            route = self.route.as_ref().map(tracing::field::display),
            status = self.status.unwrap_or(NO_ANSWER),
            grpc_status = self.grpc_status,
            duration_ms = micros as f64 / 1000.0,
            bytes = self.bytes,
            client = %self.client,
            request_id = %self.id,
        );
    }
}

/// The route an answer was for: what [`RouteLayer`] carries from routing
/// back to the connection, in the answer's extensions.
#[derive(Clone, Debug)]
pub(crate) enum Route {
    /// A route's template, such as `/v1/games/{id}/moves`.
    Template(MatchedPath),
    /// A gRPC call's full method name (`/ludo.v1.Ludo/SubmitMove`): the
    /// path of a request to a gRPC service's route, checked to be a method
    /// name (only the path is written, never a query).
    Grpc(PathAndQuery),
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Template(matched) => f.write_str(matched.as_str()),
            Route::Grpc(path) => f.write_str(path.path()),
        }
    }
}

impl Route {
    fn of(request: &Request) -> Option<Route> {
        let matched = request.extensions().get::<MatchedPath>()?;
        // tonic mounts each service at `/{package.Service}/{*rest}`.
        let is_grpc_service =
            matched.as_str().strip_suffix("/{*rest}").is_some_and(|service| service.len() > 1 && service[1..].contains('.'));
        let path = request.uri().path();
        if is_grpc_service && is_grpc_method(path) {
            request.uri().path_and_query().cloned().map(Route::Grpc)
        } else {
            Some(Route::Template(matched.clone()))
        }
    }
}

/// `/package.Service/Method`, in the characters protobuf names use, and short.
fn is_grpc_method(path: &str) -> bool {
    let name =
        |part: &str, dots: bool| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || (dots && b == b'.'));
    path.len() <= 200
        && path
            .strip_prefix('/')
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(service, method)| name(service, true) && name(method, false))
}

/// Puts the matched route into each answer's extensions, for the access
/// line. Applied with `Router::layer`, which wraps each route (and the
/// fallback) after routing, so the route's template is known.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RouteLayer;

impl<S> Layer<S> for RouteLayer {
    type Service = RouteService<S>;

    fn layer(&self, inner: S) -> RouteService<S> {
        RouteService(inner)
    }
}

/// See [`RouteLayer`].
#[derive(Clone, Debug)]
pub(crate) struct RouteService<S>(S);

impl<S> Service<Request> for RouteService<S>
where
    S: Service<Request, Response = Response<Body>, Error = Infallible>,
    S::Future: Unpin,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = RouteFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let route = Route::of(&request);
        RouteFuture { inner: self.0.call(request), route }
    }
}

/// See [`RouteLayer`].
pub(crate) struct RouteFuture<F> {
    inner: F,
    route: Option<Route>,
}

impl<F> Future for RouteFuture<F>
where
    F: Future<Output = Result<Response<Body>, Infallible>> + Unpin,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match Pin::new(&mut self.inner).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(mut answer)) => {
                if let Some(route) = self.route.take() {
                    answer.extensions_mut().insert(route);
                }
                Poll::Ready(Ok(answer))
            }
            Poll::Ready(Err(never)) => match never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_s_sane_id_is_kept_and_any_other_replaced() {
        let mut headers = HeaderMap::new();
        headers.insert(&X_REQUEST_ID, HeaderValue::from_static("abc-123_XYZ.1:2"));
        assert_eq!(RequestId::of(&headers).to_string(), "abc-123_XYZ.1:2");
        for bad in [" ", "two words", "", &"x".repeat(129)] {
            headers.insert(&X_REQUEST_ID, HeaderValue::from_str(bad).unwrap());
            let id = RequestId::of(&headers);
            assert!(matches!(id, RequestId::Made(_)), "{bad:?} is replaced");
        }
        headers.insert(&X_REQUEST_ID, HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert!(matches!(RequestId::of(&headers), RequestId::Made(_)), "not ASCII");
        assert!(is_sane("x".repeat(128).as_bytes()));
    }

    #[test]
    fn made_ids_are_20_hex_digits_and_differ() {
        let (a, b) = (RequestId::of(&HeaderMap::new()), RequestId::of(&HeaderMap::new()));
        let (a, b) = (a.to_string(), b.to_string());
        assert_ne!(a, b);
        assert!(a.len() == 20 && a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_eq!(a[..8], b[..8], "one prefix per process");
        assert_eq!(&made(0xdead_beef, 0x1234)[..], b"deadbeef000000001234");
        assert_eq!(RequestId::Made(7).header().to_str().unwrap(), RequestId::Made(7).to_string());
    }

    #[test]
    fn grpc_method_names_are_told_from_other_paths() {
        assert!(is_grpc_method("/ludo.v1.Ludo/SubmitMove"));
        assert!(is_grpc_method("/grpc.health.v1.Health/Check"));
        assert!(!is_grpc_method("/ludo.v1.Ludo/"));
        assert!(!is_grpc_method("/ludo.v1.Ludo/Submit/Move"));
        assert!(!is_grpc_method("/ludo.v1.Ludo/ludo_inv_x%20y"));
        assert!(!is_grpc_method(&format!("/ludo.v1.Ludo/{}", "A".repeat(200))));
    }
}
