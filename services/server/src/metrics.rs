//! The server's metrics registry: the game service's metrics beside the
//! server's own (connections, rate limits, webhook calls) and whatever the
//! binary adds (its allocator's figures), encoded at `/metrics`.

use std::sync::{Arc, Mutex, PoisonError};

use ludo_game::GameService;
use prometheus_client::collector::Collector;
use prometheus_client::registry::{Metric, Registry};

/// A handle on the registry (clones share it). A std mutex: locked only to
/// register or encode.
#[derive(Clone)]
pub struct Metrics(Arc<Mutex<Registry>>);

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    /// A registry (names prefixed `ludo_`) holding `service`'s metrics.
    #[must_use]
    pub fn new(service: &GameService) -> Self {
        let mut registry = Registry::with_prefix("ludo");
        service.register_metrics(&mut registry);
        Metrics(Arc::new(Mutex::new(registry)))
    }

    /// Adds a metric; `name` gets the `ludo_` prefix.
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).register(name, help, metric);
    }

    /// Adds a collector read at each scrape.
    pub fn register_collector(&self, collector: Box<dyn Collector>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).register_collector(collector);
    }

    /// Every metric in the OpenMetrics text format.
    #[must_use]
    pub fn encode(&self) -> String {
        let mut text = String::new();
        let registry = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("writing to a String cannot fail");
        text
    }
}
