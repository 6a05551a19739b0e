//! The named groups the scanner offers (IANA "TLS Supported Groups" registry): elliptic curves
//! (RFC 8422 §5.1.1, RFC 7027 brainpool, RFC 8734 brainpool for TLS 1.3, RFC 7748 X25519/X448),
//! finite-field groups (RFC 7919), ML-KEM and its hybrids (draft-ietf-tls-mlkem,
//! draft-ietf-tls-ecdhe-mlkem), and the finite-field prime shapes a TLS 1.2 server may send
//! without naming them.
use serde::Serialize;

/// Whether the scan offers registry group `code` at TLS 1.2 (and below) and at TLS 1.3. The
/// names and code points are the one registry table, [`crate::named_group::NAMED_GROUPS`]; this
/// is only which of them belong to which version: the RFC 8422 curves (all of them up to TLS
/// 1.2, the three NIST prime curves and X25519/X448 also in TLS 1.3, RFC 8446 §4.2.7), RFC 7027
/// brainpool for TLS 1.2 and RFC 8734 brainpool for TLS 1.3, SM2 (RFC 8998, TLS 1.3), the RFC
/// 7919 FFDHE groups in both, ML-KEM and its hybrids only in TLS 1.3. The GOST groups (RFC 9189,
/// only with GOST suites), the pre-standard Kyber drafts and the explicit-curve markers are not
/// offered.
pub(super) fn usable(code: u16) -> (bool, bool) {
    match code {
        0x0001..=0x0016 | 0x001A..=0x001C => (true, false),
        0x0017..=0x0019 | 0x001D | 0x001E | 0x0100..=0x0104 => (true, true),
        0x001F..=0x0021 | 0x0029 | 0x0200..=0x0202 | 0x11EB..=0x11ED => (false, true),
        _ => (false, false),
    }
}

/// The registry name of a group code, else `0xXXXX`.
pub fn group_name(code: u16) -> String {
    crate::named_group::name(code)
        .map(str::to_string)
        .unwrap_or_else(|| format!("0x{code:04X}"))
}

/// The groups offered at TLS 1.2 (`tls13 == false`) or 1.3, in code order.
pub fn offered(tls13: bool) -> Vec<u16> {
    crate::named_group::NAMED_GROUPS
        .iter()
        .map(|g| g.0)
        .filter(|c| {
            let (t12, t13) = usable(*c);
            if tls13 {
                t13
            } else {
                t12
            }
        })
        .collect()
}

/// The elliptic-curve groups of TLS 1.2 (RFC 8422), without the finite-field ones.
pub fn ec_tls12() -> Vec<u16> {
    offered(false).into_iter().filter(|c| *c < 0x0100).collect()
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

    /// The offered lists are what the scan offered when it kept its own table (45 entries:
    /// 35 at TLS 1.2, 20 at TLS 1.3), now drawn from the one registry table.
    #[test]
    fn offered_lists_per_version() {
        let t12 = offered(false);
        let t13 = offered(true);
        assert_eq!((t12.len(), t13.len()), (35, 20));
        assert_eq!(ec_tls12().len(), 30);
        for c in [0x0017, 0x001D, 0x0100] {
            assert!(t12.contains(&c) && t13.contains(&c), "{c:#06x}");
        }
        for c in [0x001F, 0x0029, 0x0201, 0x11EC] {
            assert!(!t12.contains(&c) && t13.contains(&c), "{c:#06x}");
        }
        for c in [0x0022, 0x6399, 0xFF01] {
            assert!(!t12.contains(&c) && !t13.contains(&c), "{c:#06x}");
        }
        // Every offered group has a registry name.
        assert!(t12
            .iter()
            .chain(&t13)
            .all(|c| crate::named_group::name(*c).is_some()));
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
