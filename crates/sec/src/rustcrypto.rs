//! TODO (being written)
use crate::provider::*;
use crate::algorithm::*;
/// RustCrypto provider.
pub struct RustCryptoProvider;
impl CryptoProvider for RustCryptoProvider {
    fn name(&self) -> &'static str { "rustcrypto" }
    fn mac_key(&self, _alg: MacAlgorithm, _key: &[u8]) -> Result<Box<dyn MacKey>, CryptoError> { Err(CryptoError::Unsupported("x")) }
    fn aead_key(&self, _alg: EncAlgorithm, _key: &[u8]) -> Result<Box<dyn AeadKey>, CryptoError> { Err(CryptoError::Unsupported("x")) }
}
