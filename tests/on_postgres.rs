//! The black-box suites again, on PostgreSQL: each suite's servers run on
//! a `PgStore` over a database of their own in one throwaway cluster for
//! this test process, instead of on sled (see `Backend` in
//! `support/lib.rs`, which knows this binary by its name). Restarts reopen
//! the same database; the tampering tests tamper with its rows.
//!
//! Needs PostgreSQL (Debian's `postgresql` package); without it the suites
//! print why and run on sled, unless `LUDO_REQUIRE_POSTGRES=1` (CI).

#[path = "battle13.rs"]
mod battle13;
#[path = "bots.rs"]
mod bots;
#[path = "browsers.rs"]
mod browsers;
#[path = "cardinal_grpc.rs"]
mod cardinal_grpc;
#[path = "cardinal_rest.rs"]
mod cardinal_rest;
#[path = "clients.rs"]
mod clients;
#[path = "clocks.rs"]
mod clocks;
#[path = "errors.rs"]
mod errors;
#[path = "hidden.rs"]
mod hidden;
#[path = "imports.rs"]
mod imports;
#[path = "kardinal.rs"]
mod kardinal;
#[path = "listing.rs"]
mod listing;
#[path = "openapi.rs"]
mod openapi;
#[path = "records.rs"]
mod records;
#[path = "restart.rs"]
mod restart;
#[path = "revocation.rs"]
mod revocation;
#[path = "seats.rs"]
mod seats;
#[path = "transparency.rs"]
mod transparency;
#[path = "webhooks.rs"]
mod webhooks;

/// This binary is the one that runs on PostgreSQL, or says loudly why not.
#[test]
fn these_suites_run_on_postgres() {
    let backend = ludo_blackbox::Backend::current();
    if backend != ludo_blackbox::Backend::Postgres {
        eprintln!("skipped: no PostgreSQL on this machine, so the suites above ran on sled");
    }
    if std::env::var("LUDO_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") {
        assert_eq!(backend, ludo_blackbox::Backend::Postgres);
    }
}
