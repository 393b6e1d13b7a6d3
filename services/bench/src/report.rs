//! The figures of one server (a suite), printed as a table beside the
//! issue's targets, flattened for after/before ratios, and kept for JSON.

use std::fmt::Write;

use serde::Serialize;

use crate::floor::FloorRun;
use crate::moves::MoveRun;
use crate::reads::Reads;

/// Concurrency at which the issue sets the REST and gRPC targets.
const TARGET_CONCURRENCY: usize = 64;

/// One concurrency level: the raw store, the request floor of both
/// transports, and both transports' moves, with whole answers and with
/// minimal ones (no view).
#[derive(Clone, Serialize)]
pub struct LoadRow {
    pub concurrency: usize,
    /// Durable appends per second of the bench's own sled store.
    pub raw_store_appends_per_s: f64,
    /// The whole machine's CPU per raw append.
    pub raw_store_machine_cpu_us_per_append: f64,
    /// `GET /healthz` by the same number of REST clients.
    pub rest_floor: FloorRun,
    /// The health `Check` by the same number of gRPC clients.
    pub grpc_floor: FloorRun,
    pub rest: MoveRun,
    pub grpc: MoveRun,
    /// REST with `Prefer: return=minimal`.
    pub rest_minimal: MoveRun,
    /// gRPC with `omit_view`.
    pub grpc_minimal: MoveRun,
}

impl LoadRow {
    /// The most durable moves/s any server could reach over a transport on
    /// this machine's `cores`, from what was measured: a durable move is at
    /// least one request and one append, so it costs the machine at least
    /// the floor's CPU per request (clients and kernel included) plus the
    /// raw store's per append. It is an upper bound: a real move also
    /// decodes, plays and answers, and its appends share flushes with fewer
    /// others than the raw store's.
    pub fn bound(&self, floor: &FloorRun, cores: f64) -> f64 {
        cores * 1e6 / (self.raw_store_machine_cpu_us_per_append + floor.machine_cpu_us_per_request)
    }
}

/// Cores the bound counts (the machine's, as the kernel schedules them).
pub fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

/// Every figure of one server binary.
#[derive(Clone, Serialize)]
pub struct Suite {
    /// `after` (`--ludo`) or `before` (`--baseline`).
    pub role: String,
    pub binary: String,
    pub load: Vec<LoadRow>,
    pub reads: Reads,
}

/// Whether a larger figure is better (rates) or worse (times).
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// One named figure, for ratios between two suites.
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub better: Better,
}

impl Suite {
    /// Every figure by name.
    pub fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let mut add = |name: String, value: f64, better: Better| out.push(Figure { name, value, better });
        for row in &self.load {
            let n = row.concurrency;
            add(format!("raw store appends/s, N={n}"), row.raw_store_appends_per_s, Better::Higher);
            add(format!("raw store machine CPU µs/append, N={n}"), row.raw_store_machine_cpu_us_per_append, Better::Lower);
            for (transport, floor) in [("REST", &row.rest_floor), ("gRPC", &row.grpc_floor)] {
                add(format!("{transport} request floor requests/s, N={n}"), floor.requests_per_s, Better::Higher);
                add(format!("{transport} request floor server CPU µs/request, N={n}"), floor.server_cpu_us_per_request, Better::Lower);
                add(format!("{transport} request floor machine CPU µs/request, N={n}"), floor.machine_cpu_us_per_request, Better::Lower);
            }
            for (transport, run) in [
                ("REST", &row.rest),
                ("gRPC", &row.grpc),
                ("REST minimal answers", &row.rest_minimal),
                ("gRPC minimal answers", &row.grpc_minimal),
            ] {
                add(format!("{transport} moves/s, N={n}"), run.moves_per_s, Better::Higher);
                add(format!("{transport} x raw store, N={n}"), run.moves_per_s / row.raw_store_appends_per_s, Better::Higher);
                add(format!("{transport} p50 ms, N={n}"), run.p50_ms, Better::Lower);
                add(format!("{transport} p99 ms, N={n}"), run.p99_ms, Better::Lower);
                add(format!("{transport} server CPU µs/move, N={n}"), run.server_cpu_us_per_move, Better::Lower);
            }
        }
        let r = &self.reads;
        for (what, read) in [("events", &r.events), ("steps", &r.steps), ("running game events (seat 0)", &r.running_events)] {
            add(format!("{what}, pages of 10, ms"), read.paged_ms, Better::Lower);
            add(format!("{what}, one page, ms"), read.one_page_ms, Better::Lower);
            add(format!("{what}, paged / one page"), read.ratio, Better::Lower);
            if let Some(net_ratio) = read.net_ratio {
                add(format!("{what}, paged / one page net of the request floor"), net_ratio, Better::Lower);
            }
        }
        add("replay?at max ms".into(), r.replay_max_ms, Better::Lower);
        add("replay?at median ms".into(), r.replay_median_ms, Better::Lower);
        add("server-side replay (verify) records/s".into(), r.verify_records_per_s, Better::Higher);
        out
    }

    /// The suite as a readable table, with the targets beside.
    pub fn table(&self, seconds: f64) -> String {
        let cores = cores();
        let mut out = String::new();
        let _ = writeln!(out, "== {} server: {} ==", self.role, self.binary);
        let _ = writeln!(
            out,
            "durable moves: N concurrent Cardinal games of 4 seats on loopback, {seconds} s per phase; the raw store is sled \
             append+flush in the bench process; server CPU is utime+stime from /proc per accepted move"
        );
        let _ = writeln!(
            out,
            "{:>5} | {:>11} | {:>9} {:>6} {:>7} {:>7} {:>9} | {:>9} {:>6} {:>7} {:>7} {:>9}",
            "N", "raw store/s", "REST/s", "x raw", "p50 ms", "p99 ms", "µs CPU/mv", "gRPC/s", "x raw", "p50 ms", "p99 ms", "µs CPU/mv"
        );
        for row in &self.load {
            let _ = write!(out, "{:>5} | {:>11}", row.concurrency, thousands(row.raw_store_appends_per_s));
            for run in [&row.rest, &row.grpc] {
                let _ = write!(
                    out,
                    " | {:>9} {:>5.2}x {:>7.2} {:>7.2} {:>9.0}",
                    thousands(run.moves_per_s),
                    run.moves_per_s / row.raw_store_appends_per_s,
                    run.p50_ms,
                    run.p99_ms,
                    run.server_cpu_us_per_move
                );
            }
            let _ = writeln!(out);
        }
        if let Some(row) = self.load.iter().find(|row| row.concurrency == TARGET_CONCURRENCY) {
            let _ = writeln!(
                out,
                "targets at N={TARGET_CONCURRENCY}: REST {:.2}x raw store (target: >= 0.5x); REST {:.0} µs server CPU/move \
                 (target: <= 70 µs); gRPC {:.2}x REST (target: >= 1x)",
                row.rest.moves_per_s / row.raw_store_appends_per_s,
                row.rest.server_cpu_us_per_move,
                row.grpc.moves_per_s / row.rest.moves_per_s
            );
            let _ = writeln!(
                out,
                "  beside them: a REST request that does nothing costs the server {:.0} µs; no server could reach more than \
                 {:.2}x raw store over REST on this machine (the bound below)",
                row.rest_floor.server_cpu_us_per_request,
                row.bound(&row.rest_floor, cores) / row.raw_store_appends_per_s
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "minimal answers (no view: REST `Prefer: return=minimal`, gRPC `omit_view`), the same load, against whole answers above"
        );
        let _ = writeln!(
            out,
            "{:>5} | {:>9} {:>7} {:>9} {:>7} {:>8} | {:>9} {:>7} {:>9} {:>7} {:>8}",
            "N", "REST/s", "x whole", "µs CPU/mv", "x whole", "no view", "gRPC/s", "x whole", "µs CPU/mv", "x whole", "no view"
        );
        for row in &self.load {
            let _ = write!(out, "{:>5}", row.concurrency);
            for (minimal, whole) in [(&row.rest_minimal, &row.rest), (&row.grpc_minimal, &row.grpc)] {
                let _ = write!(
                    out,
                    " | {:>9} {:>6.2}x {:>9.0} {:>6.2}x {:>7.0}%",
                    thousands(minimal.moves_per_s),
                    minimal.moves_per_s / whole.moves_per_s,
                    minimal.server_cpu_us_per_move,
                    minimal.server_cpu_us_per_move / whole.server_cpu_us_per_move,
                    100.0 * minimal.answers_without_view as f64 / minimal.moves.max(1) as f64
                );
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "the request floor: the same clients asking what costs the server least (REST `GET /healthz`, gRPC health `Check`; \
             no game, no store), and the moves above against it"
        );
        let _ = writeln!(
            out,
            "{:>5} | {:>9} {:>6} {:>7} {:>9} {:>7} {:>8} | {:>9} {:>6} {:>7} {:>9} {:>7} {:>8}",
            "N",
            "REST/s",
            "x raw",
            "p50 ms",
            "µs CPU/rq",
            "moves÷",
            "µs more",
            "gRPC/s",
            "x raw",
            "p50 ms",
            "µs CPU/rq",
            "moves÷",
            "µs more"
        );
        for row in &self.load {
            let _ = write!(out, "{:>5}", row.concurrency);
            for (floor, moves) in [(&row.rest_floor, &row.rest), (&row.grpc_floor, &row.grpc)] {
                let _ = write!(
                    out,
                    " | {:>9} {:>5.2}x {:>7.2} {:>9.0} {:>6.2}x {:>8.0}",
                    thousands(floor.requests_per_s),
                    floor.requests_per_s / row.raw_store_appends_per_s,
                    floor.p50_ms,
                    floor.server_cpu_us_per_request,
                    moves.moves_per_s / floor.requests_per_s,
                    moves.server_cpu_us_per_move - floor.server_cpu_us_per_request
                );
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "(moves÷: durable moves/s with whole answers over the floor's requests/s; µs more: a move's server CPU beyond the floor's)"
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "the bound: a durable move is at least a request and an append, so it costs the machine ({cores} cores, the clients \
             included) at least the floor's CPU per request plus the raw store's per append; no server could do more moves/s"
        );
        let _ = writeln!(
            out,
            "{:>5} | {:>10} | {:>10} {:>9} {:>6} {:>8} | {:>10} {:>9} {:>6} {:>8}",
            "N", "µs/append", "REST µs/rq", "bound/s", "x raw", "moves÷", "gRPC µs/rq", "bound/s", "x raw", "moves÷"
        );
        for row in &self.load {
            let _ = write!(out, "{:>5} | {:>10.1}", row.concurrency, row.raw_store_machine_cpu_us_per_append);
            for (floor, moves) in [(&row.rest_floor, &row.rest), (&row.grpc_floor, &row.grpc)] {
                let bound = row.bound(floor, cores);
                let _ = write!(
                    out,
                    " | {:>10.1} {:>9} {:>5.2}x {:>7.2}x",
                    floor.machine_cpu_us_per_request,
                    thousands(bound),
                    bound / row.raw_store_appends_per_s,
                    moves.moves_per_s / bound
                );
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "(µs: the whole machine's CPU, from /proc/stat; moves÷: durable moves/s with whole answers over the bound)");
        let r = &self.reads;
        let _ = writeln!(out);
        let _ = writeln!(out, "reads: a finished {} match ({}), {} records, read as a spectator", r.kind, r.options, r.records);
        let _ = writeln!(
            out,
            "{:<44} {:>8} {:>6} {:>12} {:>12} {:>7}  target  {:>9} {:>9}",
            "what", "records", "pages", "pages of 10", "one page", "ratio", "floor", "net ratio"
        );
        for (what, read) in [
            ("events, finished game", &r.events),
            ("steps, finished game", &r.steps),
            ("events as seat 0, running game (half as long)", &r.running_events),
        ] {
            let net_ratio = read.net_ratio.map_or_else(|| "n/a".to_owned(), |net| format!("{net:.2}x"));
            let _ = writeln!(
                out,
                "{what:<44} {:>8} {:>6} {:>9.2} ms {:>9.2} ms {:>6.2}x  <= 2x  {:>6.3} ms {net_ratio:>9}",
                read.records, read.pages, read.paged_ms, read.one_page_ms, read.ratio, read.floor_ms
            );
        }
        if [&r.events, &r.steps, &r.running_events].iter().any(|read| read.net_ratio.is_none()) {
            let _ = writeln!(
                out,
                "(net ratio n/a: the floor's round trips, once per page, took as long as the reads themselves; the machine changed pace)"
            );
        }
        let _ = writeln!(
            out,
            "replay?at=N, N = 0, 25, …, {} ({} versions, fastest of 3 each): max {:.2} ms (N={}), median {:.2} ms  (target: <= 2 ms for any N)",
            r.records - 1,
            r.replay_points,
            r.replay_max_ms,
            r.replay_max_at,
            r.replay_median_ms
        );
        let _ = writeln!(
            out,
            "server-side replay (POST /v1/verify of the export, median of 5): {:.2} ms, {} records/s  (target: >= 300,000 records/s)",
            r.verify_ms,
            thousands(r.verify_records_per_s)
        );
        out
    }
}

/// An after/before comparison, figure by figure.
#[derive(Serialize)]
pub struct Ratio {
    pub name: String,
    pub before: f64,
    pub after: f64,
    /// `after / before`.
    pub ratio: f64,
    pub better: Better,
}

/// Ratios of every figure the two suites share.
pub fn ratios(after: &Suite, before: &Suite) -> Vec<Ratio> {
    let before = before.figures();
    after
        .figures()
        .into_iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.name == a.name)?;
            Some(Ratio { ratio: a.value / b.value, name: a.name, before: b.value, after: a.value, better: a.better })
        })
        .collect()
}

/// The ratios as a table.
pub fn ratio_table(ratios: &[Ratio]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "== after / before (same run) ==");
    let _ = writeln!(out, "{:<48} {:>12} {:>12} {:>8}  better", "figure", "before", "after", "after/before");
    for r in ratios {
        let better = match r.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        };
        let _ = writeln!(out, "{:<48} {:>12} {:>12} {:>11.2}x  {better}", r.name, figure(r.before), figure(r.after), r.ratio);
    }
    out
}

/// A figure with a sensible number of digits.
fn figure(value: f64) -> String {
    if value.abs() >= 1000.0 { thousands(value) } else { format!("{value:.2}") }
}

/// `1234567.8` as `1,234,568`.
fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 { format!("-{out}") } else { out }
}
