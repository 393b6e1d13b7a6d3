//! Browser tests: a real headless Chromium, driven through WebDriver
//! (chromedriver, the `fantoccini` client), against the real `ludo` binary
//! and its built-in web app (`services/server/web/`, whose README is the
//! contract these tests rely on: its DOM hooks and the `data-pick` rule).
//!
//! Without Chromium or chromedriver (Debian: `chromium`, `chromium-driver`)
//! each test prints why and passes; with `LUDO_REQUIRE_BROWSER=1` (CI) it
//! fails instead. Screenshots go to `target/browser-screenshots/`.
//! `LUDO_BROWSER_JOBS` (default 2) bounds the tests running at once,
//! `LUDO_BROWSER_TIMEOUT_SECS` (default 30) each wait, and
//! `LUDO_BROWSER_SEED` replaces the seeds of the random picks.

mod common;

mod browser {
    pub mod harness;
    pub mod play;

    mod audit;
    mod cross_origin;
    mod games;
    mod lobby;
    mod replay;
    mod transparency;
}
