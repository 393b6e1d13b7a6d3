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
pub(crate) struct Metrics {
    /// The store whose counters are read at each scrape.
    store: Arc<dyn EventStore>,
    pub games_created: Family<KindLabel, Counter>,
    pub records: Family<RecordLabel, Counter>,
    pub moves: Family<OutcomeLabel, Counter>,
    pub move_seconds: Histogram,
    pub live_games: Gauge,
    pub evictions: Counter,
    pub watchers: Gauge,
    pub watch_wakeups: Counter,
    pub bot_moves: Family<BotLabel, Counter>,
    pub bot_think_seconds: Histogram,
    pub bots_thinking: Gauge,
    pub timeouts: Family<OutcomeLabel, Counter>,
    pub logged_games: Counter,
}

impl Metrics {
    pub(crate) fn new(store: Arc<dyn EventStore>) -> Self {
        Metrics {
            store,
            games_created: Family::default(),
            records: Family::default(),
            moves: Family::default(),
            // 100 µs to ~6.5 s: a durable move takes one shared flush.
            move_seconds: Histogram::new(exponential_buckets(0.0001, 2.0, 17)),
            live_games: Gauge::default(),
            evictions: Counter::default(),
            watchers: Gauge::default(),
            watch_wakeups: Counter::default(),
            bot_moves: Family::default(),
            // 1 ms to ~16 s: what a bot thinks, within its budget.
            bot_think_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
            bots_thinking: Gauge::default(),
            timeouts: Family::default(),
            logged_games: Counter::default(),
        }
    }

    /// Registers each of the service's metrics, and the store's counters,
    /// in `registry` (the server's, which encodes them at `/metrics`).
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register("games_created", "Games created, by kind", self.games_created.clone());
        registry.register(
            "records_committed",
            "Records this server committed to games' logs, by type (record 0 included)",
            self.records.clone(),
        );
        registry.register("moves", "Move submissions, by outcome (accepted, or the refusal's code)", self.moves.clone());
        registry.register("move_seconds", "Time from receiving a move to answering it once durable", self.move_seconds.clone());
        registry.register("live_games", "Games held in memory", self.live_games.clone());
        registry.register(
            "evictions",
            "Idle games forgotten to keep memory bounded (reloaded from their log when needed)",
            self.evictions.clone(),
        );
        registry.register("watchers", "Live streams open", self.watchers.clone());
        registry.register(
            "watch_wakeups",
            "Times a live stream was woken to re-read its game's log (an append to that game, or lost notices)",
            self.watch_wakeups.clone(),
        );
        registry.register("bot_moves", "Moves the server's bots made, by game kind and level", self.bot_moves.clone());
        registry.register(
            "bot_think_seconds",
            "Time a server bot spent choosing a move (its think delay not included)",
            self.bot_think_seconds.clone(),
        );
        registry.register("bots_thinking", "Server bots choosing a move now (at most --bot-workers)", self.bots_thinking.clone());
        registry.register("timeouts", "Clock deadlines this server fired, by outcome: written (its timeout record), lost_race (another server wrote first), moved_on (the game had moved on), failed", self.timeouts.clone());
        registry.register("logged_games", "Games this server added to the transparency log (their leaves)", self.logged_games.clone());
        registry.register_collector(Box::new(StoreStats(Arc::clone(&self.store))));
    }

    /// Counts one move submission and, when accepted, its latency.
    pub(crate) fn observe_move(&self, outcome: &str, elapsed: Duration) {
        self.moves.get_or_create(&OutcomeLabel { outcome: outcome.to_string() }).inc();
        if outcome == "accepted" {
            self.move_seconds.observe(elapsed.as_secs_f64());
        }
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
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
