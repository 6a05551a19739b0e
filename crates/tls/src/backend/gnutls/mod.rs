//! GnuTLS backend (stub while the FFI is written).
use super::{BackendKind, Capabilities, TlsBackend, TlsStream};
use crate::{TlsError, TlsProfile};
use std::net::TcpStream;

pub(crate) fn capabilities() -> Capabilities {
    Capabilities {
        library: "gnutls".into(),
        versions: vec![],
        suites: vec![],
        renegotiation: false,
        key_update: false,
    }
}
pub struct GnutlsBackend;
impl GnutlsBackend {
    pub fn new(_p: &TlsProfile) -> Result<Self, TlsError> {
        Err(TlsError::Unsupported {
            backend: "gnutls",
            what: "anything yet".into(),
        })
    }
}
impl TlsBackend for GnutlsBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Gnutls
    }
    fn profile(&self) -> &TlsProfile {
        unreachable!()
    }
    fn client(&self, _t: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        unreachable!()
    }
    fn server(&self, _t: TcpStream) -> Result<Box<dyn TlsStream>, TlsError> {
        unreachable!()
    }
}
