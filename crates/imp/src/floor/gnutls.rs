//! Floor operations timed with GnuTLS (placeholder until its own timings land).

use super::{FloorLib, Group, OpInput, OpKind, PrepError, Rep};

/// GnuTLS.
pub struct Gnutls;

impl FloorLib for Gnutls {
    fn id(&self) -> &'static str {
        "gnutls"
    }
    fn name(&self) -> String {
        "GnuTLS".into()
    }
    fn ecdh_group(&self) -> Group {
        Group::P256
    }
    fn dh_name(&self) -> String {
        "DH-2048/256".into()
    }
    fn prepare<'a>(&'a self, op: OpKind, _input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        Err(PrepError::Unsupported(format!("{op:?}")))
    }
}
