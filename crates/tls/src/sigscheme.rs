//! TLS 1.3 signature schemes gander lists per backend (RFC 8446 §4.2.3; ML-DSA code points from
//! draft-ietf-tls-mldsa), with the names OpenSSL's `SSL_CTX_set1_sigalgs_list` takes.

/// One signature scheme: IANA name, code point, OpenSSL's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigScheme {
    /// IANA name, e.g. `ecdsa_secp256r1_sha256`.
    pub name: &'static str,
    /// IANA `SignatureScheme` code point.
    pub code: u16,
    /// OpenSSL's sigalg name.
    pub openssl: &'static str,
}

/// The schemes gander asks each backend about, classical first.
pub const SCHEMES: &[SigScheme] = &[
    SigScheme {
        name: "rsa_pkcs1_sha256",
        code: 0x0401,
        openssl: "rsa_pkcs1_sha256",
    },
    SigScheme {
        name: "rsa_pss_rsae_sha256",
        code: 0x0804,
        openssl: "rsa_pss_rsae_sha256",
    },
    SigScheme {
        name: "ecdsa_secp256r1_sha256",
        code: 0x0403,
        openssl: "ecdsa_secp256r1_sha256",
    },
    SigScheme {
        name: "ecdsa_secp384r1_sha384",
        code: 0x0503,
        openssl: "ecdsa_secp384r1_sha384",
    },
    SigScheme {
        name: "ed25519",
        code: 0x0807,
        openssl: "ed25519",
    },
    SigScheme {
        name: "mldsa44",
        code: 0x0904,
        openssl: "mldsa44",
    },
    SigScheme {
        name: "mldsa65",
        code: 0x0905,
        openssl: "mldsa65",
    },
    SigScheme {
        name: "mldsa87",
        code: 0x0906,
        openssl: "mldsa87",
    },
];

/// The scheme of a code point, if listed.
pub fn by_code(code: u16) -> Option<&'static SigScheme> {
    SCHEMES.iter().find(|s| s.code == code)
}
