//! Key files (TOML, the format of `docs/keys.md`) shared by the gateway tests and benchmarks.
//! Test keys only: every secret here is public.

/// The gateway tests' keys: 1 is the live key (inbound verify), 2 the IED's outbound key (the
/// gateway protects with it, so a frame under it coming back inbound is a reflection), 5 has
/// expired.
pub const GW_KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
mac = "hmac-sha256-128"
key_ascii = "ied-outbound-key"
[[key]]
id = 5
mac = "hmac-sha256-128"
key_ascii = "expired-expired!"
not_before = 0
not_after = 1
"#;

/// What an attacker holds: key 1 with the wrong secret, key 9 (unknown to the gateway), and
/// the expired key 5.
pub const ATTACKER_KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "not-the-real-key"
[[key]]
id = 9
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 5
mac = "hmac-sha256-128"
key_ascii = "expired-expired!"
"#;

/// One key per algorithm of the gateway bench: 1 HMAC-SHA256-128, 2 HMAC-SHA256-80,
/// 3 AES-GMAC-128 (AES-256 key), 4 AES-256-GCM, 5 HMAC-BLAKE2b-80, 6 AES-128-GCM.
pub const ALGORITHMS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
mac = "hmac-sha256-80"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 3
mac = "aes-gmac-128"
key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
[[key]]
id = 4
enc = "aes-256-gcm"
key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
[[key]]
id = 5
mac = "hmac-blake2b-80"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 6
enc = "aes-128-gcm"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 7
mac = "ascon-aead128-mac"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 8
enc = "ascon-aead128"
key_ascii = "0123456789ABCDEF"
"#;
