//! What the service counts, exposed in the Prometheus/OpenMetrics text
//! format at `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use ludo_storage::EventStore;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A game kind, as a label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabel {
    pub kind: String,
}

/// How a move submission ended: `accepted`, or the refusal's machine code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OutcomeLabel {
    pub outcome: String,
}

/// A record's type (`move`, `seat_joined` …), as a label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RecordLabel {
    pub record: String,
}

/// A server bot's move: its game kind and its level.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct BotLabel {
    pub kind: String,
    pub level: String,
}

/// The service's metrics.
#[derive(Debug)]
pub(crate) struct Metrics {
    /// A std mutex: locked only to register or encode.
    registry: std::sync::Mutex<Registry>,
    pub games_created: Family<KindLabel, Counter>,
    pub records: Family<RecordLabel, Counter>,
    pub moves: Family<OutcomeLabel, Counter>,
    pub move_seconds: Histogram,
    pub live_games: Gauge,
    pub evictions: Counter,
    pub watchers: Gauge,
    pub watched_games: Gauge,
    pub watch_wakeups: Counter,
    pub bot_moves: Family<BotLabel, Counter>,
    pub bot_think_seconds: Histogram,
    pub bots_thinking: Gauge,
    pub timeouts: Family<OutcomeLabel, Counter>,
    pub logged_games: Counter,
}

impl Metrics {
    pub(crate) fn new(store: Arc<dyn EventStore>) -> Self {
        let mut registry = Registry::with_prefix("ludo");
        let games_created = Family::<KindLabel, Counter>::default();
        registry.register("games_created", "Games created, by kind", games_created.clone());
        let records = Family::<RecordLabel, Counter>::default();
        registry.register(
            "records_committed",
            "Records this server committed to games' logs, by type (record 0 included)",
            records.clone(),
        );
        let moves = Family::<OutcomeLabel, Counter>::default();
        registry.register("moves", "Move submissions, by outcome (accepted, or the refusal's code)", moves.clone());
        // 100 µs to ~6.5 s: a durable move takes one shared flush.
        let move_seconds = Histogram::new(exponential_buckets(0.0001, 2.0, 17));
        registry.register("move_seconds", "Time from receiving a move to answering it once durable", move_seconds.clone());
        let live_games = Gauge::default();
        registry.register("live_games", "Games held in memory", live_games.clone());
        let evictions = Counter::default();
        registry.register(
            "evictions",
            "Idle games forgotten to keep memory bounded (reloaded from their log when needed)",
            evictions.clone(),
        );
        let watchers = Gauge::default();
        registry.register("watchers", "Live streams open", watchers.clone());
        let watched_games = Gauge::default();
        registry.register("watched_games", "Games with at least one live stream open", watched_games.clone());
        let watch_wakeups = Counter::default();
        registry.register(
            "watch_wakeups",
            "Times a live stream was woken to re-read its game's log (an append to that game, or lost notices)",
            watch_wakeups.clone(),
        );
        let bot_moves = Family::<BotLabel, Counter>::default();
        registry.register("bot_moves", "Moves the server's bots made, by game kind and level", bot_moves.clone());
        // 1 ms to ~16 s: what a bot thinks, within its budget.
        let bot_think_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 15));
        registry.register(
            "bot_think_seconds",
            "Time a server bot spent choosing a move (its think delay not included)",
            bot_think_seconds.clone(),
        );
        let bots_thinking = Gauge::default();
        registry.register("bots_thinking", "Server bots choosing a move now (at most --bot-workers)", bots_thinking.clone());
        let timeouts = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "timeouts",
            "Clock deadlines this server fired, by outcome: written (its timeout record), lost_race (another server wrote first), moved_on (the game had moved on), failed",
            timeouts.clone(),
        );
        let logged_games = Counter::default();
        registry.register("logged_games", "Games this server added to the transparency log (their leaves)", logged_games.clone());
        registry.register_collector(Box::new(StoreStats(store)));
        Metrics {
            registry: std::sync::Mutex::new(registry),
            games_created,
            records,
            moves,
            move_seconds,
            live_games,
            evictions,
            watchers,
            watched_games,
            watch_wakeups,
            bot_moves,
            bot_think_seconds,
            bots_thinking,
            timeouts,
            logged_games,
        }
    }

    /// Counts one move submission and, when accepted, its latency.
    pub(crate) fn observe_move(&self, outcome: &str, elapsed: Duration) {
        self.moves.get_or_create(&OutcomeLabel { outcome: outcome.to_string() }).inc();
        if outcome == "accepted" {
            self.move_seconds.observe(elapsed.as_secs_f64());
        }
    }

    /// Adds a collector read at each scrape (the allocator's figures …).
    pub(crate) fn register_collector(&self, collector: Box<dyn Collector>) {
        self.registry.lock().unwrap_or_else(std::sync::PoisonError::into_inner).register_collector(collector);
    }

    /// Adds a metric kept elsewhere (the server's connections, rate limits …).
    pub(crate) fn register(&self, name: &str, help: &str, metric: impl prometheus_client::registry::Metric) {
        self.registry.lock().unwrap_or_else(std::sync::PoisonError::into_inner).register(name, help, metric);
    }

    /// The metrics in the OpenMetrics text format.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        let registry = self.registry.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("writing to a String cannot fail");
        text
    }
}

/// The event store's own counters, read at each scrape.
struct StoreStats(Arc<dyn EventStore>);

impl std::fmt::Debug for StoreStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreStats")
    }
}

impl Collector for StoreStats {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stats = self.0.stats();
        for (name, help, value) in [
            ("store_appends", "Appends acknowledged by the event store", stats.appends),
            ("store_records", "Records appended", stats.records),
            ("store_flushes", "Flushes to disk (group commit shares one among many appends)", stats.flushes),
            ("store_groups", "Commit groups written", stats.groups),
        ] {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
        }
        Ok(())
    }
}
