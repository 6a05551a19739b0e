//! The OpenSSL client the scan's completed TLS 1.3 handshakes share ([`super::early_data`],
//! [`super::tls13_flight`]): TLS 1.3 only, no verification (the survey judges the chain), the
//! profile's client certificate when one is given ([`super::ScanOptions::client_identity`]: a
//! server that requires one issues no ticket and may refuse the client), the target's server
//! name. Each check adds what it needs to the builder (a session callback, a sigalgs list).
use super::ScanOptions;
use openssl::ssl::{
    Ssl, SslContext, SslContextBuilder, SslFiletype, SslMethod, SslVerifyMode, SslVersion,
};

/// Why the client could not be set up (not the server's doing).
#[derive(Debug, thiserror::Error)]
pub(super) enum ClientSetup {
    /// OpenSSL refused a setting.
    #[error("OpenSSL: {0}")]
    Ssl(#[from] openssl::error::ErrorStack),
    /// The profile's client certificate or key could not be loaded.
    #[error("{what} {path}: {source}")]
    Credential {
        /// Which file.
        what: &'static str,
        /// Its path.
        path: String,
        /// OpenSSL's reason.
        source: openssl::error::ErrorStack,
    },
}

/// A TLS 1.3-only client builder with verification off and the profile's identity loaded.
pub(super) fn builder(opts: &ScanOptions) -> Result<SslContextBuilder, ClientSetup> {
    let mut b = SslContext::builder(SslMethod::tls_client())?;
    b.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_verify(SslVerifyMode::NONE);
    if let Some((cert, key)) = &opts.client_identity {
        b.set_certificate_chain_file(cert)
            .map_err(|source| ClientSetup::Credential {
                what: "client certificate",
                path: cert.display().to_string(),
                source,
            })?;
        b.set_private_key_file(key, SslFiletype::PEM)
            .map_err(|source| ClientSetup::Credential {
                what: "client key",
                path: key.display().to_string(),
                source,
            })?;
    }
    Ok(b)
}

/// A connection object of `ctx` with the target's server name, if it has one.
pub(super) fn ssl(ctx: &SslContext, opts: &ScanOptions) -> Result<Ssl, ClientSetup> {
    let mut ssl = Ssl::new(ctx)?;
    if let Some(n) = &opts.server_name {
        ssl.set_hostname(n)?;
    }
    Ok(ssl)
}
