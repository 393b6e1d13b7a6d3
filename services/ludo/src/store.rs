//! Which event store a command uses: `--store sled:PATH` (the default, at
//! `--data-dir`) or `--store postgres://…` (shared by any number of
//! servers).

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use ludo_storage::{Durability, EventStore, PgOptions, PgStore, SledOptions, SledStore};

/// Where the log lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreSpec {
    /// An embedded sled database in this directory.
    Sled(PathBuf),
    /// A PostgreSQL database (the URL as given).
    Postgres(String),
}

impl FromStr for StoreSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(path) = text.strip_prefix("sled:") {
            if path.is_empty() {
                return Err("`sled:` needs a directory, as in `sled:./data`".into());
            }
            return Ok(StoreSpec::Sled(PathBuf::from(path)));
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres(text.to_string()));
        }
        Err(format!("`{}` is not a store: use `sled:DIR` or `postgres://user@host:port/database`", redacted(text)))
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSpec::Sled(path) => write!(f, "sled:{}", path.display()),
            StoreSpec::Postgres(url) => f.write_str(&redacted(url)),
        }
    }
}

/// A URL with its password, if any, replaced by `***`: what logs and
/// errors may show.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (authority, path) = rest.split_once('/').map_or((rest, None), |(a, p)| (a, Some(p)));
    let Some((userinfo, host)) = authority.rsplit_once('@') else { return url.to_string() };
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    let shown = if userinfo.contains(':') { format!("{user}:***") } else { user.to_string() };
    match path {
        Some(path) => format!("{scheme}://{shown}@{host}/{}", path.split_once('?').map_or(path, |(p, _)| p)),
        None => format!("{scheme}://{shown}@{host}"),
    }
}

/// The store options every command that opens the log shares.
#[derive(clap::Args, Clone, Debug)]
pub struct StoreArgs {
    /// Where every game's log lives: `sled:DIR` (embedded, one server) or
    /// `postgres://user:password@host:port/database` (shared by any number
    /// of servers; TLS as `?sslmode=…&sslrootcert=FILE` say, as for libpq).
    /// Without it, sled in `--data-dir`.
    #[arg(long, env = "LUDO_STORE")]
    pub store: Option<StoreSpec>,
    /// Directory of the embedded sled database, when `--store` is not given.
    #[arg(long, env = "LUDO_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Connections to PostgreSQL kept open at most (`--store postgres://…`).
    #[arg(long, env = "LUDO_STORE_POOL_SIZE", default_value_t = PgOptions::default().pool_size)]
    pub store_pool_size: usize,
    /// How replicas sharing a PostgreSQL store hear each other's moves:
    /// `listen` (LISTEN/NOTIFY, at once) or `poll` (for a database without
    /// notifications, such as CockroachDB; streams re-read every
    /// `--store-poll-ms`). All replicas of one database should say the same.
    #[arg(long, env = "LUDO_STORE_NOTIFY", value_enum, default_value_t = Notify::Listen)]
    pub store_notify: Notify,
    /// How often streams look for other replicas' moves while they are not
    /// heard (`--store-notify poll`, or the listening connection down), in
    /// milliseconds.
    #[arg(long, env = "LUDO_STORE_POLL_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub store_poll_ms: u64,
}

/// How replicas on one PostgreSQL database hear each other.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notify {
    /// `LISTEN`/`NOTIFY`.
    Listen,
    /// Polling only.
    Poll,
}

impl StoreArgs {
    /// The store these options name.
    pub fn spec(&self) -> StoreSpec {
        self.store.clone().unwrap_or_else(|| StoreSpec::Sled(self.data_dir.clone()))
    }

    /// Opens the store (a PostgreSQL database gets its schema migrated).
    ///
    /// # Errors
    /// Why it cannot be opened, naming it (never with its password).
    pub fn open(&self, durability: Durability) -> Result<Arc<dyn EventStore>, String> {
        match self.spec() {
            StoreSpec::Sled(path) => {
                let store = SledStore::open(&path, SledOptions { durability })
                    .map_err(|e| format!("cannot open the data directory {}: {e}", path.display()))?;
                Ok(Arc::new(store))
            }
            StoreSpec::Postgres(url) => {
                if self.store_pool_size == 0 {
                    return Err("--store-pool-size must be at least 1".into());
                }
                let options = PgOptions {
                    pool_size: self.store_pool_size,
                    listen: self.store_notify == Notify::Listen,
                    poll: std::time::Duration::from_millis(self.store_poll_ms),
                };
                let store = PgStore::connect(&url, &options).map_err(|e| format!("cannot open the store {}: {e}", redacted(&url)))?;
                Ok(Arc::new(store))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_are_named_by_scheme() {
        assert_eq!("sled:./data".parse(), Ok(StoreSpec::Sled("./data".into())));
        assert_eq!("postgres://ludo@db:5432/ludo".parse(), Ok(StoreSpec::Postgres("postgres://ludo@db:5432/ludo".into())));
        assert!("postgresql://db/ludo".parse::<StoreSpec>().is_ok());
        assert!("sled:".parse::<StoreSpec>().is_err());
        let err = "mysql://root:hunter2@db/x".parse::<StoreSpec>().unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn passwords_never_show() {
        let spec: StoreSpec = "postgres://ludo:s3cret@db.internal:5432/games?sslmode=disable&password=x".parse().unwrap();
        let shown = spec.to_string();
        assert_eq!(shown, "postgres://ludo:***@db.internal:5432/games");
        assert_eq!(redacted("postgres://db:5432/games"), "postgres://db:5432/games");
        assert_eq!(redacted("postgres://ludo@db"), "postgres://ludo@db");
    }
}
