//! Accepting connections, bounded: at most `max_connections` served at once
//! (and `max_connections_per_ip` per client), each watched for idleness and
//! stalls ([`connection`]); a connection over a cap gets a clear refusal,
//! not a hang; every request has a deadline to start its answer
//! ([`deadline`]). A graceful shutdown stops accepting, ends live streams,
//! lets connections finish for a grace period, then drops the rest. Every
//! request gets a request id and a line in the access log ([`access`]).

mod access;
mod admission;
mod connection;
mod deadline;
mod socket;
mod streams;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use ludo_game::GameService;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

pub(crate) use access::RouteLayer;
use access::{Access, X_REQUEST_ID};
pub(crate) use admission::client_key;
use admission::{Admission, Refusal};
use connection::Closed;
pub(crate) use deadline::{deadline, is_grpc};

use crate::config::{AccessLog, ConnectionLimits, TrustedProxies};
use crate::rest::problem::Problem;

/// Refusals answered at once; past this a connection over a cap is closed
/// without an answer (answering costs a task and a socket for a moment).
const MAX_REFUSALS: usize = 64;
/// How long a refused connection may take to send the request it is refused.
const REFUSAL_TIME: Duration = Duration::from_secs(2);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// What the connection layer counts.
#[derive(Clone, Default)]
struct ConnectionMetrics {
    open: Gauge,
    refused: Family<ReasonLabel, Counter>,
    closed: Family<ReasonLabel, Counter>,
}

impl ConnectionMetrics {
    fn register(registry: &crate::Metrics) -> Self {
        let metrics = ConnectionMetrics::default();
        registry.register("connections", "Connections open", metrics.open.clone());
        registry.register(
            "connections_refused",
            "Connections refused: server_full (max-connections), per_address (max-connections-per-ip)",
            metrics.refused.clone(),
        );
        registry.register(
            "connections_closed",
            "Connections the server closed: idle (no request for the idle or header timeout), stalled (no byte moved with a request in flight), aborted (open at the end of a shutdown)",
            metrics.closed.clone(),
        );
        // Every reason shows from the start, at 0.
        for reason in [Refusal::Full.label(), Refusal::PerAddress.label()] {
            let _ = metrics.refused.get_or_create(&ReasonLabel { reason });
        }
        for reason in ["idle", "stalled", "aborted"] {
            let _ = metrics.closed.get_or_create(&ReasonLabel { reason });
        }
        metrics
    }
}

/// Accepts and serves connections on `listener` until `shutdown`, then shuts
/// down gracefully (see the module docs). Returns once every connection is
/// closed; the caller then closes the store.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    (service, registry): (&GameService, &crate::Metrics),
    limits: ConnectionLimits,
    (trusted, log): (TrustedProxies, AccessLog),
    shutdown: impl Future<Output = ()>,
) {
    let limits = Arc::new(limits);
    let metrics = ConnectionMetrics::register(registry);
    let access = Access::new(log, trusted.clone());
    let admission = Admission::new(limits.max_connections, limits.max_connections_per_ip, trusted);
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    let (closing, _) = watch::channel(false);
    let (abort, _) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors (EMFILE/ENFILE) or a connection
                    // reset before it was accepted: wait a moment rather
                    // than spin on the error.
                    tracing::warn!(%err, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        configure(&tcp);
        match admission.admit(peer.ip()) {
            Ok(admitted) => {
                let (app, access, limits, metrics) = (app.clone(), access.clone(), Arc::clone(&limits), metrics.clone());
                let (closing, abort) = (closing.subscribe(), abort.subscribe());
                metrics.open.inc();
                tokio::spawn(async move {
                    let closed = connection::serve(tcp, peer, (app, access), limits, closing, abort).await;
                    let reason = match closed {
                        Closed::Normally => None,
                        Closed::Idle => Some("idle"),
                        Closed::Stalled => Some("stalled"),
                        Closed::Aborted => Some("aborted"),
                    };
                    if let Some(reason) = reason {
                        metrics.closed.get_or_create(&ReasonLabel { reason }).inc();
                    }
                    metrics.open.dec();
                    drop(admitted);
                });
            }
            Err(refusal) => {
                metrics.refused.get_or_create(&ReasonLabel { reason: refusal.label() }).inc();
                tracing::debug!(%peer, reason = refusal.label(), "connection refused");
                if let Ok(permit) = Arc::clone(&refusals).try_acquire_owned() {
                    let access = access.clone();
                    tokio::spawn(async move {
                        refuse(tcp, peer, refusal, access).await;
                        drop(permit);
                    });
                }
            }
        }
    }
    drop(listener);
    tracing::info!(open = admission.count(), "stopped accepting connections; finishing open ones");
    // Live streams never end on their own while their game runs: end them
    // first, then ask every connection to finish what is in flight.
    service.begin_shutdown();
    closing.send_replace(true);
    if tokio::time::timeout(limits.shutdown_grace, admission.drained()).await.is_err() {
        tracing::warn!(open = admission.count(), grace = ?limits.shutdown_grace, "dropping connections still open after the grace period");
        abort.send_replace(true);
        let _ = tokio::time::timeout(Duration::from_secs(1), admission.drained()).await;
    }
}

/// Socket options of every accepted connection.
fn configure(tcp: &TcpStream) {
    // Without TCP_NODELAY, an HTTP/2 answer written in several small frames
    // waits on the client's delayed ACK (~40 ms per gRPC call).
    if let Err(err) = tcp.set_nodelay(true) {
        tracing::warn!(%err, "cannot set TCP_NODELAY");
    }
}

/// Answers whatever request comes first on a refused connection (within
/// [`REFUSAL_TIME`]) with `503 too_many_connections` (gRPC `UNAVAILABLE`),
/// then closes it. The answer has its request id and access line too.
async fn refuse(tcp: TcpStream, peer: std::net::SocketAddr, refusal: Refusal, access: Access) {
    let answer = hyper::service::service_fn(move |request: Request<Incoming>| {
        let (id, entry) = access.begin(&request, peer.ip());
        let mut answer = refusal_answer(&request, refusal);
        answer.headers_mut().insert(X_REQUEST_ID.clone(), id.header());
        if let Some(mut entry) = entry {
            entry.answered(&mut answer);
            entry.sent_whole(http_body::Body::size_hint(answer.body()).exact().unwrap_or(0));
        }
        async move { Ok::<_, Infallible>(answer) }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).keep_alive(false).header_read_timeout(REFUSAL_TIME);
    builder.http2().timer(TokioTimer::new()).max_concurrent_streams(1);
    let conn = builder.serve_connection(TokioIo::new(tcp), answer);
    let _ = tokio::time::timeout(REFUSAL_TIME, conn).await;
}

fn refusal_answer(request: &Request<Incoming>, refusal: Refusal) -> Response<Body> {
    let detail = match refusal {
        Refusal::Full => "the server serves as many connections as it may; retry in a moment",
        Refusal::PerAddress => "your address has as many connections open as it may; reuse one of them or retry later",
    };
    let mut answer = if is_grpc(request) {
        let status = crate::grpc::status::status(tonic::Code::Unavailable, "too_many_connections", detail.into(), Default::default());
        status.into_http()
    } else {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "too_many_connections", detail).into_response()
    };
    answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    if request.version() <= axum::http::Version::HTTP_11 {
        answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    answer
}
