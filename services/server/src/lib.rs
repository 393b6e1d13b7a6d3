//! The ludotheque server: REST (axum) and gRPC (tonic) adapters over the
//! game service, on one port.
//!
//! [`run`] serves a bound listener until a shutdown signal, then flushes the
//! log; the `ludo` binary only parses flags and calls it, and tests bind
//! port 0 and drive the real thing.

pub mod config;
pub mod cors;
pub mod grpc;
pub mod limits;
mod metrics;
mod openapi;
mod quota;
pub mod rest;
mod serve;
mod web;
pub mod webhooks;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
pub use config::{AccessLog, ConnectionLimits, Rate, RateLimits, ServerConfig, TrustedProxies};
pub use cors::CorsOrigins;
use ludo_game::GameService;
pub use metrics::Metrics;
use tokio::net::TcpListener;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

/// The OpenAPI document of the REST API, as served at `/openapi.json`.
#[must_use]
pub fn openapi() -> serde_json::Value {
    openapi::finish(&OpenApiRouter::<rest::AppState>::with_openapi(openapi::base()).merge(rest::router()).split_for_parts().1)
}

/// The whole application: REST, gRPC (and gRPC-Web), the web app at `/`,
/// `/openapi.json`, `/docs`, and a real 404 for everything else; every
/// request with a deadline to start its answer, and CORS as configured.
pub async fn app(service: Arc<GameService>, config: &ServerConfig) -> Router {
    let metrics = Metrics::new(&service);
    app_with(service, config, &metrics).await
}

/// [`app`], its metrics (and the server's own) in `metrics`.
pub async fn app_with(service: Arc<GameService>, config: &ServerConfig, metrics: &Metrics) -> Router {
    let (rest, api) = OpenApiRouter::with_openapi(openapi::base()).merge(rest::router()).split_for_parts();
    let doc = openapi::finish(&api);
    // Cross-origin pages may use every method of the routes just declared.
    let cors_methods = cors::methods(&doc);
    let kinds = service
        .kinds()
        .into_iter()
        .map(|mut info| {
            let kind = ludo_record::kinds::kind(&info.kind).expect("listed kinds exist");
            // What a creation's options may be: the answers' options, each
            // of which a request may leave out for its default.
            info.options_schema = openapi::resolved_schema(&doc, &(kind.options_schema)());
            if let Some(schema) = info.options_schema.as_object_mut() {
                schema.remove("required");
            }
            info
        })
        .collect();
    let kinds = Arc::new(kinds);
    let gate = quota::Gate::new(&config.rates, config.trusted_proxies.clone(), metrics);
    let state = rest::AppState { service: Arc::clone(&service), kinds: Arc::clone(&kinds), metrics: metrics.clone() };
    let rest = rest.with_state(state).merge(SwaggerUi::new("/docs").external_url_unchecked("/openapi.json", doc));
    // tonic's router answers unknown paths with HTTP 200 + grpc-status 12;
    // our own fallback, set after merging, gives REST clients a real 404.
    let app = rest
        .merge(web::router())
        .merge(grpc::router(service, kinds).await)
        .fallback(rest::problem::no_route)
        .method_not_allowed_fallback(rest::problem::wrong_method)
        .layer(axum::middleware::from_fn_with_state(gate, quota::gate))
        .layer(axum::middleware::from_fn_with_state(config.connections.request_timeout, serve::deadline));
    // Outside every other layer, so refusals (429, 408, 404) reach a page
    // on another origin readable, and a preflight is answered before them.
    let app = match cors::layer(&config.cors, cors_methods) {
        Some(cors) => app.layer(cors),
        None => app,
    };
    // Outermost, so that every answer (refusals and CORS preflights too)
    // carries its route's template to the access line (serve/access.rs).
    app.layer(serve::RouteLayer)
}

/// Serves `service` on `listener` with the default limits until `shutdown`
/// resolves (see [`run_with`]).
///
/// # Errors
/// When the listener fails or the final flush fails.
pub async fn run(
    listener: TcpListener,
    service: Arc<GameService>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_with(listener, service, ServerConfig::default(), shutdown).await
}

/// Serves `service` on `listener` within `config`'s limits until `shutdown`
/// resolves; then stops accepting, ends live streams, lets open connections
/// finish (for `shutdown_grace`), and flushes and closes the log.
///
/// # Errors
/// When the listener fails or the final flush fails.
pub async fn run_with(
    listener: TcpListener,
    service: Arc<GameService>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let metrics = Metrics::new(&service);
    run_measured(listener, service, config, metrics, shutdown).await
}

/// [`run_with`], counting in `metrics` (a registry the caller may have
/// added its own metrics to).
///
/// # Errors
/// As [`run_with`].
pub async fn run_measured(
    listener: TcpListener,
    service: Arc<GameService>,
    config: ServerConfig,
    metrics: Metrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let app = app_with(Arc::clone(&service), &config, &metrics).await;
    // Games' webhooks are called from now on.
    match webhooks::WebhookSender::start(&service, &metrics) {
        Ok(sender) => service.set_webhook_sink(sender),
        Err(err) => tracing::error!(%err, "webhooks will not be called"),
    }
    // Bot seats play and clocks run from now on, those whose turn or
    // deadline came before a restart included.
    service.start_bots();
    // The read models folded from the store's feed are kept up to date.
    service.projections().spawn(service.closing());
    tracing::info!(%addr, "serving REST and gRPC");
    serve::serve(listener, app, (&service, &metrics), config.connections, (config.trusted_proxies, config.access_log), shutdown).await;
    tracing::info!("stopped accepting requests; flushing the log");
    service.shutdown().await.map_err(std::io::Error::other)?;
    tracing::info!("log flushed and closed");
    Ok(())
}
