//! Floor operations timed with *ring*, the crypto provider of gander's rustls backend.

use super::{FloorLib, Group, OpInput, OpKind, PrepError, Rep};

/// *ring*.
pub struct Ring;

impl FloorLib for Ring {
    fn id(&self) -> &'static str {
        "ring"
    }
    fn name(&self) -> String {
        "*ring*".into()
    }
    fn ecdh_group(&self) -> Group {
        Group::X25519
    }
    fn dh_name(&self) -> String {
        "DH-2048/256".into()
    }
    fn prepare<'a>(&'a self, op: OpKind, _input: &OpInput<'a>) -> Result<Rep<'a>, PrepError> {
        Err(PrepError::Unsupported(format!("{op:?}")))
    }
}
