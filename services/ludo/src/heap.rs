//! The allocator: jemalloc, which gives freed memory back to the system
//! (its background thread purges pages a second after they are freed), where
//! the system allocator keeps what a burst of connections or streams once
//! took. Its figures are metrics.
//!
//! Configured at build time (`.cargo/config.toml`: background purging, a
//! 1 s decay, freed pages returned at once, small thread caches). Kept for speed too: against the system allocator
//! (`--features system-allocator`, built only to compare) the load driver
//! measured the figures in docs/decisions/0009-jemalloc.md.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use tikv_jemalloc_ctl::{epoch, stats};

#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The allocator's figures, read at each scrape.
#[derive(Debug)]
pub struct HeapStats;

impl Collector for HeapStats {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        // Built with the system allocator (for comparison), there are no
        // jemalloc figures to report.
        if cfg!(feature = "system-allocator") {
            return Ok(());
        }
        // The figures are cached by jemalloc until its epoch advances.
        if epoch::advance().is_err() {
            return Ok(());
        }
        for (name, help, read) in [
            ("heap_allocated_bytes", "Bytes the server has allocated and not freed", stats::allocated::read as fn() -> _),
            (
                "heap_resident_bytes",
                "Bytes of the allocator's pages resident in memory (allocated, free but kept, metadata)",
                stats::resident::read,
            ),
            ("heap_retained_bytes", "Bytes of address space the allocator keeps for later (not resident)", stats::retained::read),
        ] {
            if let Ok(value) = read() {
                let gauge = ConstGauge::new(value as i64);
                gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
            }
        }
        Ok(())
    }
}
