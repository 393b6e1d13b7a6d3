//! One connection, served with hyper (HTTP/1.1 or HTTP/2, told apart by the
//! client's first bytes) and watched so that nobody holds it for free:
//!
//! - a connection with no request in flight is closed gracefully after the
//!   header timeout until its first request, and after the idle timeout
//!   since its last one; an HTTP/1.1 connection must also send each next
//!   request's head within the header timeout of the previous answer
//!   (hyper's timer), so it idles at most that long;
//! - a connection with requests in flight that moves no byte either way for
//!   the idle timeout (a client that stopped reading or writing) is dropped,
//!   unless every answer in flight is waiting on the server for something
//!   to send (a live stream between records): that is nobody's stall. Live
//!   streams are seldom silent anyway: SSE sends a comment every 15 s,
//!   HTTP/2 pings every 20 s; a gRPC-Web stream over HTTP/1.1 has no such
//!   heartbeat, which is why the wait on the server is told apart;
//! - at shutdown it is asked to finish (HTTP/2 GOAWAY, HTTP/1.1 close after
//!   the answer in flight), then dropped after the grace period.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use bytes::Bytes;
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tower::ServiceExt;

use super::access::{Access, Entry, X_REQUEST_ID};
use super::socket::Metered;
use super::streams::StreamExecutor;
use crate::config::ConnectionLimits;

/// How often HTTP/2 pings an open connection (so live streams are never silent).
const H2_PING_INTERVAL: Duration = Duration::from_secs(20);
/// How long an HTTP/2 ping may go unanswered before the connection is dropped.
const H2_PING_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head (HTTP/1.1 read buffer, HTTP/2 header list).
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Most header fields in an HTTP/1.1 request.
pub(crate) const MAX_HEADERS: usize = 100;

/// Why a connection was closed by the server rather than by its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closed {
    /// By its client, or after answering (HTTP/1.1 `Connection: close`).
    Normally,
    /// No request in flight for the idle (or header) timeout.
    Idle,
    /// Requests in flight, but no byte moved for the idle timeout.
    Stalled,
    /// Still open when the shutdown's grace period ended.
    Aborted,
}

/// A hyper connection builder with the server's limits, running HTTP/2
/// streams with `streams` (see [`super::streams`]).
pub(crate) fn builder(limits: &ConnectionLimits, streams: StreamExecutor) -> auto::Builder<StreamExecutor> {
    let mut builder = auto::Builder::new(streams);
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_HEADER_BYTES)
        .max_headers(MAX_HEADERS);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.h2_max_concurrent_streams)
        .max_header_list_size(MAX_HEADER_BYTES as u32)
        .keep_alive_interval(Some(H2_PING_INTERVAL))
        .keep_alive_timeout(H2_PING_TIMEOUT);
    builder
}

/// Serves `tcp` until its client or the server ends it, and says how it ended.
pub(crate) async fn serve(
    tcp: TcpStream,
    peer: SocketAddr,
    (app, access): (Router, Access),
    limits: Arc<ConnectionLimits>,
    mut closing: watch::Receiver<bool>,
    mut abort: watch::Receiver<bool>,
) -> Closed {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Metered::new(tcp, Arc::clone(&activity)));
    let service = ConnService { app, peer, activity: Arc::clone(&activity), access };
    let executor = StreamExecutor::default();
    let mut streams = executor.streams();
    let builder = builder(&limits, executor);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let mut draining = false;
    let mut closed = Closed::Normally;
    let mut drain_deadline = Instant::now();
    let closed = loop {
        tokio::select! {
            result = conn.as_mut() => {
                break match result {
                    // hyper's own header timeout: an HTTP/1.1 connection that
                    // sent no (whole) request head in time, idle or slow.
                    Err(err) if err.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_timeout) => Closed::Idle,
                    Err(err) => {
                        tracing::debug!(%peer, %err, "connection ended with an error");
                        closed
                    }
                    Ok(()) => closed,
                };
            }
            never = std::future::poll_fn(|cx| streams.poll_run(cx)) => match never {},
            verdict = activity.watch(&limits), if !draining => match verdict {
                Closed::Idle => {
                    conn.as_mut().graceful_shutdown();
                    (draining, closed, drain_deadline) = (true, Closed::Idle, Instant::now() + limits.idle_timeout);
                }
                verdict => break verdict,
            },
            // Draining for as long again: the client does not let go.
            () = tokio::time::sleep_until(drain_deadline), if draining => break Closed::Stalled,
            _ = closing.wait_for(|closing| *closing), if !draining => {
                conn.as_mut().graceful_shutdown();
                (draining, drain_deadline) = (true, Instant::now() + limits.shutdown_grace);
            }
            _ = abort.wait_for(|abort| *abort) => break Closed::Aborted,
        }
    };
    streams.finish();
    closed
}

/// What a connection is doing, for its watchdog.
///
/// The watchdog is woken by its timer only, never by a request starting or
/// ending: every change of state moves the deadline later, never earlier
/// (see [`Activity::watch`]), so the timer set before the change still
/// fires in time, and the watchdog then sets it again from the new state.
/// A wake-up on each change cost every request two self-wakes of the
/// connection's task, each of which tokio answers by waking another worker
/// to share the work: most of a keep-alive request's CPU (a `/healthz`
/// loop's profile).
#[derive(Debug)]
pub(super) struct Activity {
    opened: Instant,
    /// Requests whose answer is not fully sent.
    in_flight: AtomicUsize,
    /// Answers in flight whose body waits on the server for its next frame.
    waiting: AtomicUsize,
    /// Whether a request ever came.
    served: AtomicBool,
    /// When the last request in flight finished (or the connection opened).
    idle_since: Mutex<Instant>,
    /// Milliseconds after `opened` at which a byte last moved.
    progress_ms: AtomicU64,
}

impl Activity {
    pub(super) fn new() -> Self {
        let now = Instant::now();
        Activity {
            opened: now,
            in_flight: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            idle_since: Mutex::new(now),
            progress_ms: AtomicU64::new(0),
        }
    }

    /// Notes that a byte moved, now.
    pub(super) fn progressed(&self) {
        self.progress_ms.store(self.opened.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// When a byte last moved.
    fn last_progress(&self) -> Instant {
        self.opened + Duration::from_millis(self.progress_ms.load(Ordering::Relaxed))
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.served.store(true, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(self))
    }

    /// Resolves when the connection has been idle or stalled too long.
    async fn watch(&self, limits: &ConnectionLimits) -> Closed {
        loop {
            let in_flight = self.in_flight.load(Ordering::Acquire);
            let (verdict, deadline) = if in_flight == 0 {
                let limit = if self.served.load(Ordering::Relaxed) { limits.idle_timeout } else { limits.header_timeout };
                (Closed::Idle, *self.idle_since.lock().unwrap_or_else(PoisonError::into_inner) + limit)
            } else if self.waiting.load(Ordering::Acquire) >= in_flight {
                // Only the server has something to do: look again later.
                self.progressed();
                (Closed::Stalled, Instant::now() + limits.idle_timeout)
            } else {
                (Closed::Stalled, self.last_progress() + limits.idle_timeout)
            };
            if Instant::now() >= deadline {
                return verdict;
            }
            // Whatever happens before it, no state's deadline can fall
            // before the last byte's time plus the idle timeout: a stall is
            // counted from a byte that moves later, the wait of an answer on
            // the server from later still, and an idle spell from the end of
            // a request, which moved bytes. Waking then at the latest is
            // always in time.
            tokio::time::sleep_until(deadline.min(self.last_progress() + limits.idle_timeout)).await;
        }
    }
}

/// A request in flight: counted until its answer is sent or dropped.
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The application, as one connection's hyper service: each request carries
/// its client's address, counts as in flight until its answer is sent, and
/// gets its request id and access line ([`super::access`]).
#[derive(Clone)]
struct ConnService {
    app: Router,
    peer: SocketAddr,
    activity: Arc<Activity>,
    access: Access,
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let in_flight = self.activity.begin();
        let (id, mut entry) = self.access.begin(&request, self.peer.ip());
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let app = self.app.clone();
        Box::pin(async move {
            // Dropped before the answer (the client went away), the entry
            // still writes its line.
            let Ok(mut response) = app.oneshot(request.map(Body::new)).await;
            response.headers_mut().insert(X_REQUEST_ID.clone(), id.header());
            if let Some(entry) = &mut entry {
                entry.answered(&mut response);
            }
            Ok(response.map(|body| Body::new(Tracked { body, in_flight, waiting: false, entry })))
        })
    }
}

/// An answer's body that keeps its request counted in flight until dropped,
/// says while it waits on the server for its next frame, and counts what it
/// sends for the access line, written when it is dropped.
struct Tracked {
    body: Body,
    in_flight: InFlight,
    waiting: bool,
    entry: Option<Entry>,
}

impl Tracked {
    fn set_waiting(&mut self, waiting: bool) {
        if waiting == self.waiting {
            return;
        }
        self.waiting = waiting;
        let activity = &self.in_flight.0;
        if waiting {
            activity.waiting.fetch_add(1, Ordering::AcqRel);
        } else {
            activity.waiting.fetch_sub(1, Ordering::AcqRel);
            // The stall clock starts again from the frame the server made.
            activity.progressed();
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.set_waiting(false);
    }
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        // Pending here is the server's wait (hyper polls only when it can
        // write): a client that stops reading stops these polls instead.
        self.set_waiting(polled.is_pending());
        if let (Poll::Ready(Some(Ok(frame))), Some(entry)) = (&polled, &mut self.entry) {
            entry.sent(frame);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
