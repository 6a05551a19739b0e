//! The fixed 28-octet ISAKMP header (RFC 2408 section 3.1).
//!
//! ```text
//!  0  Initiator Cookie (8)
//!  8  Responder Cookie (8)
//! 16  Next Payload (1)
//! 17  MjVer (4 bits) | MnVer (4 bits)
//! 18  Exchange Type (1)
//! 19  Flags (1)          E 0x01, C 0x02, A 0x04
//! 20  Message ID (4)
//! 24  Length (4)         of the whole message, header included
//! ```

use super::error::{IsakmpError, Result};
use super::reader::{Reader, Writer};
use crate::Codec;

/// Octets of the header.
pub const HEADER_LEN: usize = 28;

/// Named offsets of the header fields.
pub mod field {
    use core::ops::Range;
    /// Initiator cookie.
    pub const INITIATOR_COOKIE: Range<usize> = 0..8;
    /// Responder cookie.
    pub const RESPONDER_COOKIE: Range<usize> = 8..16;
    /// Next Payload.
    pub const NEXT_PAYLOAD: usize = 16;
    /// Version octet.
    pub const VERSION: usize = 17;
    /// Exchange type.
    pub const EXCHANGE: usize = 18;
    /// Flags.
    pub const FLAGS: usize = 19;
    /// Message ID.
    pub const MESSAGE_ID: Range<usize> = 20..24;
    /// Length.
    pub const LENGTH: Range<usize> = 24..28;
}

/// Exchange types: RFC 2408 3.1 and 2409 (IKEv1), RFC 6407 section 3 and 4 (GDOI).
pub mod exchange {
    /// Identity Protection, IKEv1 main mode (RFC 2409 5).
    pub const MAIN_MODE: u8 = 2;
    /// Aggressive mode (RFC 2409 5); gander refuses it (it exposes the identities).
    pub const AGGRESSIVE: u8 = 4;
    /// Informational (RFC 2408 4.8): notifications and deletes under the phase-1 SA.
    pub const INFORMATIONAL: u8 = 5;
    /// GROUPKEY-PULL, registration (RFC 6407 3); the value IKEv1 uses for Quick Mode.
    pub const GROUPKEY_PULL: u8 = 32;
    /// GROUPKEY-PUSH, rekey (RFC 6407 4); the value IKEv1 uses for New Group Mode.
    pub const GROUPKEY_PUSH: u8 = 33;
}

/// Flag bits (RFC 2408 3.1).
pub mod flags {
    /// Encryption: the payloads after the header are encrypted under the phase-1 SA.
    pub const ENCRYPTION: u8 = 0x01;
    /// Commit (RFC 2408 3.1); GDOI does not use it.
    pub const COMMIT: u8 = 0x02;
    /// Authentication only (RFC 2408 3.1); GDOI does not use it.
    pub const AUTH_ONLY: u8 = 0x04;
    /// Every bit RFC 2408 defines.
    pub const DEFINED: u8 = ENCRYPTION | COMMIT | AUTH_ONLY;
}

/// ISAKMP major version 1 (RFC 2408 3.1); IKEv2 (major 2) is a different protocol.
pub const MAJOR_VERSION: u8 = 1;

/// The ISAKMP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Chosen by the initiator (RFC 2408 2.5.3: a hash of addresses, a secret and a time).
    pub initiator_cookie: [u8; 8],
    /// Chosen by the responder; zero in the first message.
    pub responder_cookie: [u8; 8],
    /// Type of the first payload.
    pub next_payload: u8,
    /// Major version; 1.
    pub major_version: u8,
    /// Minor version; 0.
    pub minor_version: u8,
    /// Exchange type ([`exchange`]).
    pub exchange: u8,
    /// Flags ([`flags`]).
    pub flags: u8,
    /// Zero in phase 1; the exchange's random identifier afterwards.
    pub message_id: u32,
    /// Total length of the message, header included.
    pub length: u32,
}

impl Header {
    /// Parses the header at the start of `buf` and checks what every message must satisfy:
    /// version 1.0 (RFC 2408 5.2 with 3.1: a larger minor version is refused, and the header is
    /// outside every phase-2 HASH, so an accepted 1.1 would pass unauthenticated), only defined flags, and a Length that covers at least
    /// the header and no more than the bytes present.
    pub fn parse(buf: &[u8]) -> Result<Header> {
        let mut r = Reader::new(buf, "ISAKMP header");
        let mut initiator_cookie = [0u8; 8];
        initiator_cookie.copy_from_slice(r.take(8)?);
        let mut responder_cookie = [0u8; 8];
        responder_cookie.copy_from_slice(r.take(8)?);
        let next_payload = r.u8()?;
        let version = r.u8()?;
        let exchange = r.u8()?;
        let flag_bits = r.u8()?;
        let message_id = r.u32()?;
        let length = r.u32()?;
        let h = Header {
            initiator_cookie,
            responder_cookie,
            next_payload,
            major_version: version >> 4,
            minor_version: version & 0x0f,
            exchange,
            flags: flag_bits,
            message_id,
            length,
        };
        if h.major_version != MAJOR_VERSION || h.minor_version != 0 {
            return Err(IsakmpError::UnsupportedVersion {
                major: h.major_version,
                minor: h.minor_version,
            });
        }
        if flag_bits & !flags::DEFINED != 0 {
            return Err(IsakmpError::BadValue {
                what: "ISAKMP flags",
                detail: "undefined flag bit set",
            });
        }
        let len = length as usize;
        if len < HEADER_LEN || len > buf.len() {
            return Err(IsakmpError::BadLength {
                what: "ISAKMP message",
                value: len,
            });
        }
        Ok(h)
    }

    /// True if the E flag says the payloads are encrypted.
    pub fn encrypted(&self) -> bool {
        self.flags & flags::ENCRYPTION != 0
    }
}

impl Codec for Header {
    fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(&mut buf[..HEADER_LEN]);
        w.bytes(&self.initiator_cookie);
        w.bytes(&self.responder_cookie);
        w.u8(self.next_payload);
        w.u8((self.major_version << 4) | (self.minor_version & 0x0f));
        w.u8(self.exchange);
        w.u8(self.flags);
        w.u32(self.message_id);
        w.u32(self.length);
        HEADER_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_ikev2_and_short_length() {
        let mut h = Header {
            initiator_cookie: [1; 8],
            responder_cookie: [0; 8],
            next_payload: 1,
            major_version: 1,
            minor_version: 0,
            exchange: exchange::MAIN_MODE,
            flags: 0,
            message_id: 0,
            length: 28,
        };
        assert_eq!(Header::parse(&h.to_vec()), Ok(h));
        h.major_version = 2;
        assert!(matches!(
            Header::parse(&h.to_vec()),
            Err(IsakmpError::UnsupportedVersion { major: 2, .. })
        ));
        h.major_version = 1;
        h.minor_version = 1;
        let e = Header::parse(&h.to_vec()).unwrap_err();
        assert_eq!(e, IsakmpError::UnsupportedVersion { major: 1, minor: 1 });
        assert_eq!(
            e.notify(),
            crate::isakmp::error::notify_type::INVALID_MINOR_VERSION
        );
        h.minor_version = 0;
        h.length = 27;
        assert!(matches!(
            Header::parse(&h.to_vec()),
            Err(IsakmpError::BadLength { .. })
        ));
        h.length = 29;
        assert!(
            Header::parse(&h.to_vec()).is_err(),
            "length past the bytes present"
        );
        h.length = 28;
        h.flags = 0x08;
        assert!(Header::parse(&h.to_vec()).is_err(), "undefined flag");
    }

    proptest! {
        #[test]
        fn round_trip(ic: [u8; 8], rc: [u8; 8], np: u8, ex: u8,
                      fl in 0u8..8, mid: u32) {
            let h = Header { initiator_cookie: ic, responder_cookie: rc, next_payload: np,
                major_version: 1, minor_version: 0, exchange: ex, flags: fl,
                message_id: mid, length: 28 };
            prop_assert_eq!(Header::parse(&h.to_vec()), Ok(h));
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Header::parse(&data);
        }
    }
}
