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
use std::io;
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
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tower::ServiceExt;

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
    app: Router,
    limits: Arc<ConnectionLimits>,
    mut closing: watch::Receiver<bool>,
    mut abort: watch::Receiver<bool>,
) -> Closed {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Metered { inner: tcp, activity: Arc::clone(&activity), protocol: Protocol::Sniffing(0) });
    let service = ConnService { app, peer, activity: Arc::clone(&activity) };
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
struct Activity {
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
    fn new() -> Self {
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

    fn progressed(&self) {
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
/// its client's address and counts as in flight until its answer is sent.
#[derive(Clone)]
struct ConnService {
    app: Router,
    peer: SocketAddr,
    activity: Arc<Activity>,
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let in_flight = self.activity.begin();
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let app = self.app.clone();
        Box::pin(async move {
            let Ok(response) = app.oneshot(request.map(Body::new)).await;
            Ok(response.map(|body| Body::new(Tracked { body, in_flight, waiting: false })))
        })
    }
}

/// An answer's body that keeps its request counted in flight until dropped,
/// and says while it waits on the server for its next frame.
struct Tracked {
    body: Body,
    in_flight: InFlight,
    waiting: bool,
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
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A socket that notes when bytes move, and which protocol its client
/// speaks (see [`Metered::is_write_vectored`]).
struct Metered {
    inner: TcpStream,
    activity: Arc<Activity>,
    protocol: Protocol,
}

/// What a connection's first bytes said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// This many bytes have matched HTTP/2's connection preface so far.
    Sniffing(usize),
    /// The whole preface came: HTTP/2; `wrote` once anything was written.
    Http2 { wrote: bool },
    /// Anything else (HTTP/1.1).
    Other,
}

/// What an HTTP/2 client sends first (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

impl Protocol {
    /// Where the sniffing stands once `read` has followed what was read before.
    fn after(self, read: &[u8]) -> Protocol {
        let Protocol::Sniffing(matched) = self else { return self };
        let take = read.len().min(H2_PREFACE.len() - matched);
        if read[..take] != H2_PREFACE[matched..matched + take] {
            Protocol::Other
        } else if matched + take == H2_PREFACE.len() {
            Protocol::Http2 { wrote: false }
        } else {
            Protocol::Sniffing(matched + take)
        }
    }
}

impl AsyncRead for Metered {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.progressed();
            if matches!(self.protocol, Protocol::Sniffing(_)) {
                self.protocol = self.protocol.after(&buf.filled()[before..]);
            }
        }
        polled
    }
}

impl Metered {
    /// Notes a write (see [`Metered::is_write_vectored`]).
    fn writing(&mut self) {
        if let Protocol::Http2 { wrote } = &mut self.protocol {
            *wrote = true;
        }
    }
}

impl AsyncWrite for Metered {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.writing();
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progressed();
        }
        polled
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.writing();
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.progressed();
        }
        polled
    }

    /// Vectored, as the socket is, except to HTTP/2 (h2) before its first
    /// write. h2 asks once, when it sets up the connection (after hyper read
    /// the preface, before anything is written), to choose which DATA frames
    /// it sends as buffers of their own rather than copying them into its
    /// write buffer: from 256 bytes with vectored writes, from 1 KiB
    /// without. A frame sent as its own buffer is written before h2 takes
    /// another frame, so every gRPC answer of 256 bytes or more (nearly all
    /// whole answers) cost a `writev` of its own. Told "not vectored" then,
    /// h2 copies answers under 1 KiB, and the answers of calls that finished
    /// together leave in one write; told "vectored" on every write after,
    /// it still sends a larger frame with its head in one `writev`.
    fn is_write_vectored(&self) -> bool {
        self.protocol != Protocol::Http2 { wrote: false } && self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http2_preface_is_told_apart_however_it_is_read() {
        let whole = Protocol::Sniffing(0).after(H2_PREFACE);
        assert_eq!(whole, Protocol::Http2 { wrote: false });
        // In pieces, and with the client's first frames in the same read.
        let mut pieces = Protocol::Sniffing(0);
        for piece in [&H2_PREFACE[..1], &H2_PREFACE[1..10], &H2_PREFACE[10..]] {
            pieces = pieces.after(piece);
        }
        assert_eq!(pieces, Protocol::Http2 { wrote: false });
        let mut more = H2_PREFACE.to_vec();
        more.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(Protocol::Sniffing(0).after(&more), Protocol::Http2 { wrote: false });
        // Part of it so far.
        assert_eq!(Protocol::Sniffing(0).after(b"PRI * "), Protocol::Sniffing(6));
        // HTTP/1.1, even when it starts as the preface does.
        assert_eq!(Protocol::Sniffing(0).after(b"POST /v1/games HTTP/1.1\r\n"), Protocol::Other);
        assert_eq!(Protocol::Sniffing(0).after(b"PRI * HTTP/1.1\r\n"), Protocol::Other);
        assert_eq!(Protocol::Sniffing(6).after(b"HTTP/2.1"), Protocol::Other);
        // Settled once told apart.
        assert_eq!(Protocol::Other.after(H2_PREFACE), Protocol::Other);
    }

    #[tokio::test]
    async fn writes_are_not_vectored_to_http2_until_its_first_write() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        async fn pair() -> (Metered, TcpStream) {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let client = TcpStream::connect(listener.local_addr().expect("address")).await.expect("connect");
            let (server, _) = listener.accept().await.expect("accept");
            (Metered { inner: server, activity: Arc::new(Activity::new()), protocol: Protocol::Sniffing(0) }, client)
        }
        let mut buf = [0_u8; 64];

        let (mut h2, mut client) = pair().await;
        assert!(h2.is_write_vectored(), "a socket writes vectored");
        client.write_all(H2_PREFACE).await.expect("preface");
        let mut read = 0;
        while read < H2_PREFACE.len() {
            read += h2.read(&mut buf[read..]).await.expect("read");
        }
        assert!(!h2.is_write_vectored(), "h2 sets up its connection as for a socket without vectored writes");
        h2.write_all(b"settings").await.expect("write");
        assert!(h2.is_write_vectored(), "and writes vectored after");

        let (mut h1, mut client) = pair().await;
        client.write_all(b"GET /healthz HTTP/1.1\r\n\r\n").await.expect("request");
        let read = h1.read(&mut buf).await.expect("read");
        assert!(read > 0);
        assert_eq!(h1.protocol, Protocol::Other);
        assert!(h1.is_write_vectored(), "HTTP/1.1 writes vectored from the start");
    }
}
