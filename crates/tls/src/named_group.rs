//! The IANA "TLS Supported Groups" registry (RFC 8446 §4.2.7, RFC 8422 §5.1.1, RFC 7919 §2,
//! RFC 7027 and RFC 8734 for brainpool, RFC 9189 for GOST, RFC 8998 for SM2,
//! draft-ietf-tls-mlkem and draft-ietf-tls-ecdhe-mlkem for ML-KEM) by code point, so that a
//! survey can name any group a server negotiates, not only the four gander measures
//! ([`crate::KxGroup`]).
//!
//! The names are the registry's. OpenSSL reports a negotiated group as a NID when it has one;
//! [`by_openssl_nid`] maps those NIDs (`obj_mac.h`) to the registry's code point.

/// `(IANA code point, registry name)`, in code order.
pub const NAMED_GROUPS: &[(u16, &str)] = &[
    (1, "sect163k1"),
    (2, "sect163r1"),
    (3, "sect163r2"),
    (4, "sect193r1"),
    (5, "sect193r2"),
    (6, "sect233k1"),
    (7, "sect233r1"),
    (8, "sect239k1"),
    (9, "sect283k1"),
    (10, "sect283r1"),
    (11, "sect409k1"),
    (12, "sect409r1"),
    (13, "sect571k1"),
    (14, "sect571r1"),
    (15, "secp160k1"),
    (16, "secp160r1"),
    (17, "secp160r2"),
    (18, "secp192k1"),
    (19, "secp192r1"),
    (20, "secp224k1"),
    (21, "secp224r1"),
    (22, "secp256k1"),
    (23, "secp256r1"),
    (24, "secp384r1"),
    (25, "secp521r1"),
    (26, "brainpoolP256r1"),
    (27, "brainpoolP384r1"),
    (28, "brainpoolP512r1"),
    (29, "x25519"),
    (30, "x448"),
    (31, "brainpoolP256r1tls13"),
    (32, "brainpoolP384r1tls13"),
    (33, "brainpoolP512r1tls13"),
    (34, "GC256A"),
    (35, "GC256B"),
    (36, "GC256C"),
    (37, "GC256D"),
    (38, "GC512A"),
    (39, "GC512B"),
    (40, "GC512C"),
    (41, "curveSM2"),
    (256, "ffdhe2048"),
    (257, "ffdhe3072"),
    (258, "ffdhe4096"),
    (259, "ffdhe6144"),
    (260, "ffdhe8192"),
    (0x0200, "MLKEM512"),
    (0x0201, "MLKEM768"),
    (0x0202, "MLKEM1024"),
    (0x11EB, "SecP256r1MLKEM768"),
    (0x11EC, "X25519MLKEM768"),
    (0x11ED, "SecP384r1MLKEM1024"),
    (0x6399, "X25519Kyber768Draft00"),
    (0x639A, "SecP256r1Kyber768Draft00"),
    (0xFF01, "arbitrary_explicit_prime_curves"),
    (0xFF02, "arbitrary_explicit_char2_curves"),
];

/// The registry name of code point `code`.
pub fn name(code: u16) -> Option<&'static str> {
    NAMED_GROUPS
        .binary_search_by_key(&code, |(c, _)| *c)
        .ok()
        .map(|i| NAMED_GROUPS[i].1)
}

/// OpenSSL NID (`obj_mac.h`) -> IANA code point, for the groups OpenSSL has NIDs for.
const OPENSSL_NIDS: &[(i32, u16)] = &[
    (721, 1),   // sect163k1
    (722, 2),   // sect163r1
    (723, 3),   // sect163r2
    (724, 4),   // sect193r1
    (725, 5),   // sect193r2
    (726, 6),   // sect233k1
    (727, 7),   // sect233r1
    (728, 8),   // sect239k1
    (729, 9),   // sect283k1
    (730, 10),  // sect283r1
    (731, 11),  // sect409k1
    (732, 12),  // sect409r1
    (733, 13),  // sect571k1
    (734, 14),  // sect571r1
    (708, 15),  // secp160k1
    (709, 16),  // secp160r1
    (710, 17),  // secp160r2
    (711, 18),  // secp192k1
    (409, 19),  // prime192v1 = secp192r1
    (712, 20),  // secp224k1
    (713, 21),  // secp224r1
    (714, 22),  // secp256k1
    (415, 23),  // prime256v1 = secp256r1
    (715, 24),  // secp384r1
    (716, 25),  // secp521r1
    (927, 26),  // brainpoolP256r1
    (931, 27),  // brainpoolP384r1
    (933, 28),  // brainpoolP512r1
    (1034, 29), // X25519
    (1035, 30), // X448
    (1126, 256),
    (1127, 257),
    (1128, 258),
    (1129, 259),
    (1130, 260), // ffdhe2048..ffdhe8192
];

/// The IANA code point of an OpenSSL group NID.
pub fn code_of_openssl_nid(nid: i32) -> Option<u16> {
    OPENSSL_NIDS
        .iter()
        .find(|(n, _)| *n == nid)
        .map(|(_, c)| *c)
}

/// The registry name of an OpenSSL group NID.
pub fn by_openssl_nid(nid: i32) -> Option<&'static str> {
    code_of_openssl_nid(nid).and_then(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_unique_and_agrees_with_kx_group() {
        assert!(NAMED_GROUPS.windows(2).all(|w| w[0].0 < w[1].0));
        for g in crate::KxGroup::ALL {
            assert_eq!(name(g.code()), Some(g.name()), "{g}");
        }
        assert_eq!(name(24), Some("secp384r1"));
        assert_eq!(name(256), Some("ffdhe2048"));
        assert_eq!(name(0x0018 + 0x100), None);
        assert_eq!(by_openssl_nid(715), Some("secp384r1"));
        assert_eq!(by_openssl_nid(1035), Some("x448"));
        assert_eq!(by_openssl_nid(1130), Some("ffdhe8192"));
        assert_eq!(by_openssl_nid(927), Some("brainpoolP256r1"));
        assert_eq!(by_openssl_nid(0), None);
        // Every NID maps to a named code point.
        assert!(OPENSSL_NIDS.iter().all(|(_, c)| name(*c).is_some()));
    }

    proptest::proptest! {
        /// Any code point: a name is found exactly when the table lists the code.
        #[test]
        fn lookup_matches_the_table(code in proptest::prelude::any::<u16>()) {
            let listed = NAMED_GROUPS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n);
            proptest::prop_assert_eq!(name(code), listed);
        }
    }
}
