//! TLS to PostgreSQL, with `sslmode` and `sslrootcert` meaning in a store URL
//! what they mean to libpq (and so in the URLs hosting providers hand out):
//!
//! | `sslmode` | TLS | the server's certificate |
//! | --- | --- | --- |
//! | `disable` | never | – |
//! | `prefer` (the default) | when the server offers it | not checked |
//! | `require` | always | not checked; checked as by `verify-ca` when `sslrootcert` is given |
//! | `verify-ca` | always | signed by a trusted root |
//! | `verify-full` | always | signed by a trusted root, and for the host connected to |
//!
//! The trusted roots are the PEM file `sslrootcert` names, or the system's
//! when it says `system` or is absent. Client certificates (`sslcert`,
//! `sslkey`) are refused with a clear error rather than silently ignored.
//! tokio-postgres knows only `disable`, `prefer` and `require`, so the two
//! parameters are taken out of the URL here and the check is rustls'.

use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::contract::StoreError;

/// What to connect to and how.
pub(crate) struct Target {
    /// The URL's settings, without the TLS ones tokio-postgres does not know.
    pub config: tokio_postgres::Config,
    /// The TLS connector the `sslmode` asks for.
    pub tls: MakeRustlsConnect,
}

/// libpq's `sslmode` values that this store supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Result<Mode, StoreError> {
        Ok(match value {
            "disable" => Mode::Disable,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            "allow" => return Err(invalid("sslmode=allow (plain first, TLS as a fallback) is not supported: use prefer or require")),
            other => {
                return Err(invalid(&format!("sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full")));
            }
        })
    }
}

fn invalid(why: &str) -> StoreError {
    StoreError::Invalid(format!("not a usable PostgreSQL URL: {why}"))
}

/// Reads a store URL: its settings for tokio-postgres, and the TLS
/// connector its `sslmode` and `sslrootcert` ask for.
pub(crate) fn target(url: &str) -> Result<Target, StoreError> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (mut mode, mut root) = (Mode::Prefer, None::<String>);
    // The other parameters pass through exactly as written.
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value).decode_utf8().map_err(|_| invalid(&format!("{key}: not UTF-8")))?;
        match key {
            "sslmode" => mode = Mode::parse(&value)?,
            "sslrootcert" => root = Some(value.into_owned()),
            "sslcert" | "sslkey" | "sslpassword" | "sslcrl" | "sslcrldir" => {
                return Err(invalid(&format!("{key}: client certificates and revocation lists are not supported")));
            }
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    let mut config = tokio_postgres::Config::from_str(&url).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|cause| format!(": {cause}")).unwrap_or_default();
        invalid(&format!("{e}{cause}"))
    })?;
    config.ssl_mode(match mode {
        Mode::Disable => tokio_postgres::config::SslMode::Disable,
        Mode::Prefer => tokio_postgres::config::SslMode::Prefer,
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => tokio_postgres::config::SslMode::Require,
    });
    // libpq: `require` with a root certificate verifies as `verify-ca`.
    let mode = if mode == Mode::Require && root.is_some() { Mode::VerifyCa } else { mode };
    Ok(Target { config, tls: MakeRustlsConnect::new(client_config(mode, root.as_deref())?) })
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(mode: Mode, root: Option<&str>) -> Result<ClientConfig, StoreError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Backend(format!("TLS set-up: {e}")))?;
    let config = match mode {
        Mode::Disable | Mode::Prefer | Mode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked { algorithms: provider.signature_verification_algorithms }))
            .with_no_client_auth(),
        Mode::VerifyFull => builder.with_root_certificates(roots(root)?).with_no_client_auth(),
        Mode::VerifyCa => {
            let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(roots(root)?), provider)
                .build()
                .map_err(|e| invalid(&format!("sslrootcert: {e}")))?;
            builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyName { chain })).with_no_client_auth()
        }
    };
    Ok(config)
}

/// The trusted roots: `sslrootcert`'s PEM file, or the system's.
fn roots(root: Option<&str>) -> Result<RootCertStore, StoreError> {
    let mut store = RootCertStore::empty();
    match root {
        Some(path) if path != "system" => {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .and_then(Iterator::collect)
                .map_err(|e| invalid(&format!("sslrootcert={path}: cannot read PEM certificates: {e}")))?;
            if certs.is_empty() {
                return Err(invalid(&format!("sslrootcert={path} holds no certificate")));
            }
            for cert in certs {
                store.add(cert).map_err(|e| invalid(&format!("sslrootcert={path}: {e}")))?;
            }
        }
        _ => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
                return Err(invalid(&format!(
                    "no system root certificates to verify the server with ({}); give sslrootcert=FILE",
                    if errors.is_empty() { "none found".to_string() } else { errors.join("; ") }
                )));
            }
        }
    }
    Ok(store)
}

/// `prefer` and `require`: encrypted, but whoever answers is believed (as
/// libpq does): protection from eavesdroppers, not from impostors. The
/// handshake's signatures are still checked, with the certificate's key.
#[derive(Debug)]
struct Unchecked {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name on the
/// certificate may be any.
#[derive(Debug)]
struct AnyName {
    chain: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_of(url: &str) -> tokio_postgres::config::SslMode {
        target(url).map(|t| t.config.get_ssl_mode()).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    #[test]
    fn sslmode_reaches_tokio_postgres_as_it_understands_it() {
        use tokio_postgres::config::SslMode;
        assert_eq!(mode_of("postgres://u@db/x"), SslMode::Prefer);
        assert_eq!(mode_of("postgres://u@db/x?sslmode=disable"), SslMode::Disable);
        assert_eq!(mode_of("postgres://u@db/x?sslmode=require"), SslMode::Require);
        assert_eq!(mode_of("postgres://u@db/x?sslmode=verify-ca&sslrootcert=system"), SslMode::Require);
        assert_eq!(mode_of("postgres://u@db/x?connect_timeout=3&sslmode=verify-full&application_name=a%20b"), SslMode::Require);
        let config = target("postgres://u@db/x?connect_timeout=3&sslmode=verify-full&application_name=a%20b").unwrap().config;
        assert_eq!(config.get_application_name(), Some("a b"), "other parameters pass through");
    }

    #[test]
    fn what_is_not_supported_is_said() {
        for (url, says) in [
            ("postgres://u@db/x?sslmode=allow", "sslmode=allow"),
            ("postgres://u@db/x?sslmode=verify", "sslmode=verify is not one of"),
            ("postgres://u@db/x?sslcert=/c.pem", "client certificates"),
            ("postgres://u@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem", "sslrootcert=/nonexistent/ca.pem"),
            ("postgres://u@db/x?frobnicate=1", "frobnicate"),
        ] {
            let err = target(url).err().unwrap_or_else(|| panic!("{url} was taken")).to_string();
            assert!(err.contains(says), "{url}: {err}");
        }
    }
}
