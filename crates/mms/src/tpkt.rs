//! RFC 1006 TPKT: the four-octet header that delimits ISO transport TPDUs on a TCP stream.
//!
//! RFC 1006 section 6: `vrsn (3) | reserved (0) | packet length (16 bits, header included)`.
//! The length field bounds a packet at 65535 octets; the [`Reassembler`] additionally caps it
//! at a configured maximum so that a peer cannot make us buffer more than the negotiated
//! TPDU size allows. libiec61850 (`cotp.c`) rejects version ≠ 3 and lengths ≤ 4; so do we.

use crate::error::{Error, Layer, Result};

/// Size of the TPKT header (RFC 1006 section 6).
pub const HEADER_LEN: usize = 4;
/// The only defined TPKT version (RFC 1006 section 6).
pub const VERSION: u8 = 3;
/// The largest packet the 16-bit length field can describe.
pub const MAX_PACKET_LEN: usize = 0xffff;
/// The largest payload that fits one packet.
pub const MAX_PAYLOAD_LEN: usize = MAX_PACKET_LEN - HEADER_LEN;

/// Append one TPKT packet carrying `payload` to `out`.
///
/// Fails with [`Error::TooLarge`] if the payload does not fit the 16-bit length field.
pub fn encode(payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if payload.len() > MAX_PAYLOAD_LEN {
        return Err(Error::TooLarge {
            layer: Layer::Tpkt,
            what: "payload",
            size: payload.len(),
            max: MAX_PAYLOAD_LEN,
        });
    }
    let len = (payload.len() + HEADER_LEN) as u16;
    out.extend_from_slice(&[VERSION, 0]);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    Ok(())
}

/// One TPKT packet carrying `payload`, as a new vector.
pub fn frame(payload: &[u8]) -> Result<Vec<u8>> {
    let mut v = Vec::with_capacity(payload.len() + HEADER_LEN);
    encode(payload, &mut v)?;
    Ok(v)
}

/// Check a header and return the total packet length it announces (header included).
pub fn parse_header(header: &[u8; HEADER_LEN], max_packet_len: usize) -> Result<usize> {
    if header[0] != VERSION {
        return Err(Error::TpktVersion(header[0]));
    }
    // The reserved octet is not checked: RFC 1006 says it is 0, but libiec61850 ignores it
    // and so does every stack we interoperate with.
    let len = u16::from_be_bytes([header[2], header[3]]) as usize;
    if len <= HEADER_LEN {
        return Err(Error::TpktTooShort(len));
    }
    if len > max_packet_len {
        return Err(Error::TooLarge {
            layer: Layer::Tpkt,
            what: "packet",
            size: len,
            max: max_packet_len,
        });
    }
    Ok(len)
}

/// Parse exactly one packet; returns its payload.
pub fn parse(packet: &[u8]) -> Result<&[u8]> {
    let header: &[u8; HEADER_LEN] = packet
        .get(..HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or(Error::Truncated {
            layer: Layer::Tpkt,
            what: "header",
        })?;
    let len = parse_header(header, MAX_PACKET_LEN)?;
    match packet.len().cmp(&len) {
        core::cmp::Ordering::Less => Err(Error::Truncated {
            layer: Layer::Tpkt,
            what: "packet",
        }),
        core::cmp::Ordering::Greater => Err(Error::malformed(
            Layer::Tpkt,
            "packet",
            "bytes after the announced length",
        )),
        core::cmp::Ordering::Equal => Ok(&packet[HEADER_LEN..]),
    }
}

/// Cuts a TCP byte stream into TPKT payloads.
///
/// Feed received bytes with [`push`](Reassembler::push) and take complete payloads with
/// [`next_packet`](Reassembler::next_packet). After an error the stream has lost its framing
/// (RFC 1006 has no resynchronisation), so the error is returned once and then `None`
/// forever; the owner must close the connection.
#[derive(Debug, Clone)]
pub struct Reassembler {
    buf: Vec<u8>,
    start: usize,
    max_packet_len: usize,
    failed: bool,
}

impl Reassembler {
    /// A reassembler that rejects packets longer than `max_packet_len` (header included;
    /// values above 65535 have no effect).
    pub fn new(max_packet_len: usize) -> Self {
        Reassembler {
            buf: Vec::new(),
            start: 0,
            max_packet_len: max_packet_len.min(MAX_PACKET_LEN),
            failed: false,
        }
    }

    /// Change the cap, e.g. once the COTP TPDU size is negotiated.
    pub fn set_max_packet_len(&mut self, max: usize) {
        self.max_packet_len = max.min(MAX_PACKET_LEN);
    }

    /// Append received bytes. Ignored after a framing error.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 4096 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as a packet.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Whether a framing error was reported.
    pub fn is_failed(&self) -> bool {
        self.failed
    }

    /// The next complete payload (without the header), an error, or `None` if more bytes
    /// are needed. Memory use is bounded by the cap plus one `push`.
    pub fn next_packet(&mut self) -> Option<Result<Vec<u8>>> {
        if self.failed {
            return None;
        }
        let avail = &self.buf[self.start..];
        let header: &[u8; HEADER_LEN] = avail.get(..HEADER_LEN)?.try_into().ok()?;
        let len = match parse_header(header, self.max_packet_len) {
            Ok(len) => len,
            Err(e) => {
                self.failed = true;
                self.buf = Vec::new();
                self.start = 0;
                return Some(Err(e));
            }
        };
        if avail.len() < len {
            return None;
        }
        let payload = avail[HEADER_LEN..len].to_vec();
        self.start += len;
        Some(Ok(payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_cr_header() {
        // The libiec61850 CR (`docs/mms-bytes.md` §1, [V]) is a 22-byte TPKT.
        let cr = hex::decode("0300001611e00000000100c0010dc2020001c1020001").unwrap();
        assert_eq!(parse(&cr).unwrap().len(), 18);
        assert_eq!(frame(&cr[4..]).unwrap(), cr);
    }

    #[test]
    fn header_errors() {
        assert_eq!(parse(&[2, 0, 0, 5, 0]), Err(Error::TpktVersion(2)));
        assert_eq!(parse(&[3, 0, 0, 4]), Err(Error::TpktTooShort(4)));
        assert_eq!(parse(&[3, 0, 0, 0]), Err(Error::TpktTooShort(0)));
        assert!(matches!(
            parse(&[3, 0, 0, 6, 1]),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(parse(&[3, 0]), Err(Error::Truncated { .. })));
        assert!(matches!(
            parse(&[3, 0, 0, 5, 1, 2]),
            Err(Error::Malformed { .. })
        ));
        let mut r = Reassembler::new(100);
        r.push(&[3, 0, 0, 101]);
        assert!(matches!(
            r.next_packet(),
            Some(Err(Error::TooLarge { size: 101, .. }))
        ));
        assert!(r.next_packet().is_none());
        r.push(&[3, 0, 0, 5, 1]);
        assert!(r.next_packet().is_none());
        assert!(encode(&vec![0; MAX_PAYLOAD_LEN + 1], &mut Vec::new()).is_err());
    }

    #[test]
    fn streaming_byte_by_byte() {
        let mut stream = Vec::new();
        encode(b"abc", &mut stream).unwrap();
        encode(b"defgh", &mut stream).unwrap();
        let mut r = Reassembler::new(MAX_PACKET_LEN);
        let mut out = Vec::new();
        for b in &stream {
            r.push(&[*b]);
            while let Some(p) = r.next_packet() {
                out.push(p.unwrap());
            }
        }
        assert_eq!(out, vec![b"abc".to_vec(), b"defgh".to_vec()]);
        assert_eq!(r.buffered(), 0);
    }

    proptest! {
        #[test]
        fn round_trip_any_split(payloads in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 1..300), 1..6), split in 1usize..50) {
            let mut stream = Vec::new();
            for p in &payloads { encode(p, &mut stream).unwrap(); }
            let mut r = Reassembler::new(1000);
            let mut out = Vec::new();
            for chunk in stream.chunks(split) {
                r.push(chunk);
                while let Some(p) = r.next_packet() { out.push(p.unwrap()); }
            }
            prop_assert_eq!(out, payloads);
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut r = Reassembler::new(64);
            r.push(&data);
            while let Some(Ok(_)) = r.next_packet() {}
            let _ = parse(&data);
        }
    }
}
