//! Sending games' webhook calls: a bounded queue, a few calls at once, and
//! retries with backoff, so a slow or failing receiver never holds up a
//! move (the service hands each call over and goes on; see
//! `ludo_game::webhook`).
//!
//! The calls reach only the addresses the webhook policy allows: a name is
//! resolved here, each time, and the connection is made to an address the
//! policy allows (an address in a URL is checked the same way), so a name
//! that resolves to an internal address (at creation or later: DNS
//! rebinding) is refused, and what was checked is what is called.
//! Redirects are not followed, and no proxy from the environment is used.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ludo_game::GameService;
use ludo_game::webhook::{Delivery, WebhookPolicy, WebhookSink};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::{Semaphore, mpsc};

/// Calls waiting to be sent, at most; beyond it new ones are dropped (and counted).
const QUEUE: usize = 10_000;
/// Calls in flight at once.
const IN_FLIGHT: usize = 64;
/// The waits between tries of one call (so 6 tries in about a minute).
const BACKOFF: [Duration; 5] =
    [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(4), Duration::from_secs(8), Duration::from_secs(16)];
/// Longest a receiver may take to answer one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How a call ended, as a metric label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// The server's webhook sink.
pub struct WebhookSender {
    queue: mpsc::Sender<Delivery>,
    calls: Family<OutcomeLabel, Counter>,
}

impl std::fmt::Debug for WebhookSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSender").finish_non_exhaustive()
    }
}

impl WebhookSender {
    /// Starts sending `service`'s webhook calls under its policy (call
    /// inside a runtime); the calls' outcomes are counted in its metrics.
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn start(service: &GameService, registry: &crate::Metrics) -> Result<Arc<WebhookSender>, String> {
        let policy = service.webhook_policy().clone();
        let calls = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "webhook_calls",
            "Webhook calls, by outcome: delivered, retried (a try failed), failed (every try did), dropped (the queue was full)",
            calls.clone(),
        );
        let client = Client::new()?;
        let (queue, receive) = mpsc::channel(QUEUE);
        tokio::spawn(run(receive, client, policy, calls.clone()));
        Ok(Arc::new(WebhookSender { queue, calls }))
    }
}

impl WebhookSink for WebhookSender {
    fn deliver(&self, delivery: Delivery) {
        if let Err(mpsc::error::TrySendError::Full(dropped) | mpsc::error::TrySendError::Closed(dropped)) = self.queue.try_send(delivery) {
            tracing::warn!(delivery = %dropped.id, "a webhook call was dropped: too many are waiting");
            self.calls.get_or_create(&OutcomeLabel { outcome: "dropped" }).inc();
        }
    }
}

/// How calls connect: TLS with the system's roots (rustls, ring).
#[derive(Clone)]
struct Client {
    tls: tokio_rustls::TlsConnector,
}

impl Client {
    fn new() -> Result<Client, String> {
        let mut roots = rustls::RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        let (added, _) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            tracing::warn!("no system root certificates: webhook calls over https will fail");
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Client { tls: tokio_rustls::TlsConnector::from(Arc::new(config)) })
    }
}

/// Takes calls off the queue and sends each, at most [`IN_FLIGHT`] at once.
async fn run(mut receive: mpsc::Receiver<Delivery>, client: Client, policy: WebhookPolicy, calls: Family<OutcomeLabel, Counter>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(delivery) = receive.recv().await {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else { return };
        let (client, policy, calls) = (client.clone(), policy.clone(), calls.clone());
        tokio::spawn(async move {
            let _slot = slot;
            send(&client, &policy, &delivery, &calls).await;
        });
    }
}

/// Sends one call, trying again after each failure with growing waits.
async fn send(client: &Client, policy: &WebhookPolicy, delivery: &Delivery, calls: &Family<OutcomeLabel, Counter>) {
    let mut waits = BACKOFF.iter();
    loop {
        match call(client, policy, delivery).await {
            Ok(()) => {
                calls.get_or_create(&OutcomeLabel { outcome: "delivered" }).inc();
                return;
            }
            Err(err) => match waits.next() {
                Some(&wait) => {
                    tracing::info!(delivery = %delivery.id, %err, retry_in = ?wait, "a webhook call failed");
                    calls.get_or_create(&OutcomeLabel { outcome: "retried" }).inc();
                    tokio::time::sleep(wait).await;
                }
                None => {
                    tracing::warn!(delivery = %delivery.id, %err, "a webhook call failed for good");
                    calls.get_or_create(&OutcomeLabel { outcome: "failed" }).inc();
                    return;
                }
            },
        }
    }
}

/// One try: a 2xx answer delivers. The host is resolved here and the
/// connection made to an address the policy allows (an address in the URL
/// is checked the same way), so what was checked is what is called.
async fn call(client: &Client, policy: &WebhookPolicy, delivery: &Delivery) -> Result<(), String> {
    let url = policy.check_url(&delivery.url)?;
    let host = url.host_str().ok_or("no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
    let port = url.port_or_known_default().ok_or("no port")?;
    let addr = vetted(policy, &host, port).await?;
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let request = request(&url, delivery)?;
        if url.scheme() == "https" {
            let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| format!("{host}: {e}"))?;
            let tls = client.tls.connect(name, tcp).await.map_err(|e| format!("TLS with {host}: {e}"))?;
            exchange(tls, request).await
        } else {
            exchange(tcp, request).await
        }
    };
    let status = tokio::time::timeout(CALL_TIMEOUT, exchange).await.map_err(|_| format!("no answer within {CALL_TIMEOUT:?}"))??;
    if status.is_success() { Ok(()) } else { Err(format!("the receiver answered {status}")) }
}

/// An address of `host` the policy allows, resolved now.
async fn vetted(policy: &WebhookPolicy, host: &str, port: u16) -> Result<SocketAddr, String> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await.map_err(|e| format!("cannot resolve {host}: {e}"))?.collect();
    match found.iter().find(|addr| policy.allows(addr.ip())) {
        Some(&addr) => Ok(addr),
        None => {
            let found: Vec<String> = found.iter().map(|addr| addr.ip().to_string()).collect();
            Err(format!("{host} resolves to no address webhooks may call ({})", found.join(", ")))
        }
    }
}

/// The `POST` of `delivery` to `url`.
fn request(url: &url::Url, delivery: &Delivery) -> Result<hyper::Request<http_body_util::Full<bytes::Bytes>>, String> {
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    hyper::Request::post(target)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::USER_AGENT, concat!("ludotheque-webhooks/", env!("CARGO_PKG_VERSION")))
        .header("x-ludo-event", delivery.event)
        .header("x-ludo-delivery", &delivery.id)
        .header("x-ludo-signature", &delivery.signature)
        .body(http_body_util::Full::new(bytes::Bytes::from(delivery.body.clone())))
        .map_err(|e| format!("the request: {e}"))
}

/// Sends `request` over `io` (HTTP/1.1) and answers the status; redirects
/// are answers like any other (not followed).
async fn exchange<IO>(io: IO, request: hyper::Request<http_body_util::Full<bytes::Bytes>>) -> Result<hyper::StatusCode, String>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await.map_err(|e| format!("HTTP: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let answer = sender.send_request(request).await.map_err(|e| format!("HTTP: {e}"))?;
    Ok(answer.status())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a name resolves to is checked when it is called: a name of an
    /// internal address (here `localhost`, which every resolver answers
    /// with loopback) is not connected to unless its range is allowed.
    #[tokio::test]
    async fn a_name_is_called_only_through_an_address_the_policy_allows() {
        let refused = vetted(&WebhookPolicy::default(), "localhost", 9).await.unwrap_err();
        assert!(refused.contains("resolves to no address webhooks may call"), "{refused}");
        let loopback = WebhookPolicy::allowing(vec!["127.0.0.0/8".parse().unwrap()]);
        let addr = vetted(&loopback, "localhost", 9).await.unwrap();
        assert!(addr.ip().is_loopback() && addr.ip().is_ipv4(), "{addr}");
        assert_eq!(addr.port(), 9);
    }
}
