//! The named groups the scanner offers (IANA "TLS Supported Groups" registry): elliptic curves
//! (RFC 8422 §5.1.1, RFC 7027 brainpool, RFC 8734 brainpool for TLS 1.3, RFC 7748 X25519/X448),
//! finite-field groups (RFC 7919), ML-KEM and its hybrids (draft-ietf-tls-mlkem,
//! draft-ietf-tls-ecdhe-mlkem), and the finite-field prime shapes a TLS 1.2 server may send
//! without naming them.
use serde::Serialize;

/// `(code, name, TLS 1.2 usable, TLS 1.3 usable)`.
pub(super) const GROUPS: &[(u16, &str, bool, bool)] = &[
    (0x0001, "sect163k1", true, false),
    (0x0002, "sect163r1", true, false),
    (0x0003, "sect163r2", true, false),
    (0x0004, "sect193r1", true, false),
    (0x0005, "sect193r2", true, false),
    (0x0006, "sect233k1", true, false),
    (0x0007, "sect233r1", true, false),
    (0x0008, "sect239k1", true, false),
    (0x0009, "sect283k1", true, false),
    (0x000A, "sect283r1", true, false),
    (0x000B, "sect409k1", true, false),
    (0x000C, "sect409r1", true, false),
    (0x000D, "sect571k1", true, false),
    (0x000E, "sect571r1", true, false),
    (0x000F, "secp160k1", true, false),
    (0x0010, "secp160r1", true, false),
    (0x0011, "secp160r2", true, false),
    (0x0012, "secp192k1", true, false),
    (0x0013, "secp192r1", true, false),
    (0x0014, "secp224k1", true, false),
    (0x0015, "secp224r1", true, false),
    (0x0016, "secp256k1", true, false),
    (0x0017, "secp256r1", true, true),
    (0x0018, "secp384r1", true, true),
    (0x0019, "secp521r1", true, true),
    (0x001A, "brainpoolP256r1", true, false),
    (0x001B, "brainpoolP384r1", true, false),
    (0x001C, "brainpoolP512r1", true, false),
    (0x001D, "x25519", true, true),
    (0x001E, "x448", true, true),
    (0x001F, "brainpoolP256r1tls13", false, true),
    (0x0020, "brainpoolP384r1tls13", false, true),
    (0x0021, "brainpoolP512r1tls13", false, true),
    (0x0029, "curveSM2", false, true),
    (0x0100, "ffdhe2048", true, true),
    (0x0101, "ffdhe3072", true, true),
    (0x0102, "ffdhe4096", true, true),
    (0x0103, "ffdhe6144", true, true),
    (0x0104, "ffdhe8192", true, true),
    (0x0200, "MLKEM512", false, true),
    (0x0201, "MLKEM768", false, true),
    (0x0202, "MLKEM1024", false, true),
    (0x11EB, "SecP256r1MLKEM768", false, true),
    (0x11EC, "X25519MLKEM768", false, true),
    (0x11ED, "SecP384r1MLKEM1024", false, true),
];

/// The registry name of a group code, else `0xXXXX`.
pub fn group_name(code: u16) -> String {
    GROUPS
        .iter()
        .find(|g| g.0 == code)
        .map(|g| g.1.to_string())
        .unwrap_or_else(|| format!("0x{code:04X}"))
}

/// The groups offered at TLS 1.2 (`tls13 == false`) or 1.3.
pub fn offered(tls13: bool) -> Vec<u16> {
    GROUPS
        .iter()
        .filter(|g| if tls13 { g.3 } else { g.2 })
        .map(|g| g.0)
        .collect()
}

/// The elliptic-curve groups of TLS 1.2 (RFC 8422), without the finite-field ones.
pub fn ec_tls12() -> Vec<u16> {
    GROUPS
        .iter()
        .filter(|g| g.2 && g.0 < 0x0100)
        .map(|g| g.0)
        .collect()
}

/// A finite-field Diffie-Hellman prime as a TLS 1.2 ServerKeyExchange carries it (RFC 5246
/// §7.4.3 `ServerDHParams.dh_p`), described by size and, where its shape shows it, its family.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FfdhPrime {
    /// Bits of p.
    pub bits: u32,
    /// `ffdhe2048`.. when p has the RFC 7919 Appendix A shape and one of its sizes, `MODP` for
    /// the RFC 2409/3526 (Oakley) family, `None` for a prime of the server's own.
    pub family: Option<String>,
}

/// Describes a prime given big-endian. The RFC 7919 primes are
/// `2^b - 2^(b-64) + {[2^(b-130) e] + X} * 2^64 - 1`: 64 one bits, then the bits of e
/// (`ADF85458A2BB4A9A`...), then 64 one bits at the bottom; the RFC 3526 MODP primes have the
/// same frame around the bits of pi (`C90FDAA22168C234`...). Only the frame and the first
/// 64 bits of the constant are compared, so a prime crafted to look like one would be named
/// as one; for a survey that is what the server claims.
pub fn describe_prime(p: &[u8]) -> FfdhPrime {
    let p = strip_zeros(p);
    let bits = match p.first() {
        Some(b) => (p.len() as u32 - 1) * 8 + (8 - b.leading_zeros()),
        None => 0,
    };
    const E: [u8; 8] = [0xAD, 0xF8, 0x54, 0x58, 0xA2, 0xBB, 0x4A, 0x9A];
    const PI: [u8; 8] = [0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34];
    let framed = p.len() >= 24
        && p[..8].iter().all(|&b| b == 0xFF)
        && p[p.len() - 8..].iter().all(|&b| b == 0xFF);
    let family = if framed && p[8..16] == E {
        Some(match bits {
            2048 | 3072 | 4096 | 6144 | 8192 => format!("ffdhe{bits}"),
            _ => format!("RFC 7919 shape, {bits} bits"),
        })
    } else if framed && p[8..16] == PI {
        Some(format!("MODP {bits}"))
    } else {
        None
    };
    FfdhPrime { bits, family }
}

fn strip_zeros(p: &[u8]) -> &[u8] {
    let n = p.iter().take_while(|&&b| b == 0).count();
    &p[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(group_name(0x11EC), "X25519MLKEM768");
        assert_eq!(group_name(0x0018), "secp384r1");
        assert_eq!(group_name(0x7777), "0x7777");
        assert!(offered(true).contains(&0x0100));
        assert!(!offered(true).contains(&0x0001));
        assert!(!ec_tls12().contains(&0x0100));
    }

    #[test]
    fn prime_shapes() {
        let mut p = vec![0xFF; 256];
        p[8..16].copy_from_slice(&[0xAD, 0xF8, 0x54, 0x58, 0xA2, 0xBB, 0x4A, 0x9A]);
        p[100] = 0x12;
        assert_eq!(describe_prime(&p).family.as_deref(), Some("ffdhe2048"));
        let mut q = p.clone();
        q[8] = 0xC9;
        q[9..16].copy_from_slice(&[0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34]);
        assert_eq!(describe_prime(&q).family.as_deref(), Some("MODP 2048"));
        let mut own = vec![0u8; 129];
        own[1] = 0xC3;
        own[128] = 0x01;
        let d = describe_prime(&own);
        assert_eq!((d.bits, d.family), (1024, None));
    }
}
