//! TLS to PostgreSQL, against a real cluster that accepts TLS connections
//! only, with a certificate from a test CA for the name `localhost`: each
//! `sslmode` checks what libpq's does, and a refusal says why.
//!
//! Needs PostgreSQL and `openssl` (a dependency of Debian's `postgresql`):
//! skips without them unless `LUDO_REQUIRE_POSTGRES=1`.

mod common;

use common::postgres::{Cluster, TlsFiles};
use common::{records, stream};
use ludo_storage::{AppendRequest, EventStore, PgOptions, PgStore, StoreError};

struct Setup {
    cluster: Cluster,
    files: TlsFiles,
    port: u16,
}

fn setup() -> Option<Setup> {
    let (cluster, files) = Cluster::start_tls()?;
    cluster.new_database("tls");
    let port = cluster.url("tls").rsplit_once(':').and_then(|(_, rest)| rest.split('/').next()?.parse().ok()).expect("a port");
    Some(Setup { cluster, files, port })
}

impl Setup {
    /// The database's URL naming the server `host`, reaching it at
    /// 127.0.0.1 either way, with `params`.
    fn url(&self, host: &str, params: &str) -> String {
        format!("postgres://ludo@{host}:{}/tls?hostaddr=127.0.0.1&application_name=ludo-tls-test&{params}", self.port)
    }

    fn connect(&self, host: &str, params: &str) -> Result<PgStore, StoreError> {
        PgStore::connect(&self.url(host, params), &PgOptions { pool_size: 2, ..PgOptions::default() })
    }

    /// Connects, appends and reads back: the store works over the connection.
    fn works(&self, host: &str, params: &str) {
        let store = self.connect(host, params).unwrap_or_else(|e| panic!("{params}: {e}"));
        let id = stream(params.len() as u32 + u32::from(host.len() as u8) * 1000);
        store.append(AppendRequest::create(id, records(id, 0, 3), None)).wait().expect("append");
        assert_eq!(store.read_blocking(id, 0, None).expect("read").len(), 3);
        let count = |ssl: bool| {
            let sql = format!(
                "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE application_name = 'ludo-tls-test' AND ssl = {ssl}"
            );
            self.cluster.psql("tls", &sql).trim().parse::<u32>().expect("a count")
        };
        assert!(count(true) >= 1, "{params}: the store's connections are encrypted");
        assert_eq!(count(false), 0, "{params}: all of them");
    }

    fn refused(&self, host: &str, params: &str) -> String {
        match self.connect(host, params) {
            Ok(_) => panic!("{host} {params}: connected, but should have been refused"),
            Err(err) => err.to_string(),
        }
    }
}

#[test]
fn verify_full_checks_the_issuer_and_the_name() {
    let Some(s) = setup() else { return };
    let ca = s.files.ca.display().to_string();
    s.works("localhost", &format!("sslmode=verify-full&sslrootcert={ca}"));
    let other = s.files.other_ca.display().to_string();
    let err = s.refused("localhost", &format!("sslmode=verify-full&sslrootcert={other}"));
    assert!(err.contains("UnknownIssuer") || err.contains("unknown issuer"), "{err}");
    // The certificate is for `localhost`, not for 127.0.0.1.
    let err = s.refused("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}"));
    assert!(err.to_lowercase().contains("not valid for name"), "{err}");
}

#[test]
fn verify_ca_checks_the_issuer_only() {
    let Some(s) = setup() else { return };
    let ca = s.files.ca.display().to_string();
    s.works("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}"));
    let other = s.files.other_ca.display().to_string();
    let err = s.refused("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={other}"));
    assert!(err.contains("UnknownIssuer") || err.contains("unknown issuer"), "{err}");
    // `require` with a root certificate is `verify-ca`, as in libpq.
    let err = s.refused("127.0.0.1", &format!("sslmode=require&sslrootcert={other}"));
    assert!(err.contains("UnknownIssuer") || err.contains("unknown issuer"), "{err}");
}

#[test]
fn require_and_prefer_encrypt_without_checking_and_disable_is_refused_here() {
    let Some(s) = setup() else { return };
    s.works("127.0.0.1", "sslmode=require");
    s.works("127.0.0.1", "sslmode=prefer");
    // No sslmode: prefer, so TLS when the server offers it.
    s.works("127.0.0.1", "connect_timeout=10");
    // This server takes no connection without TLS, and says so.
    let err = s.refused("127.0.0.1", "sslmode=disable");
    assert!(err.contains("pg_hba.conf") && err.contains("no encryption"), "{err}");
}
