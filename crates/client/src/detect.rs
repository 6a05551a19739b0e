//! Telling TLS from plain ISO transport on a port, for the error a user can act on ("the server
//! speaks TLS, give --tls"): the first octets of a TLS record against a TPKT header, a minimal
//! TLS ClientHello, and the COTP connection request an MMS client sends first (ISO 8073 13.3 in
//! a TPKT, RFC 1006 6), built by `gander_mms::cotp` so there is one CR in the workspace. The
//! TLS survey uses the same CR for its one application round ([`MmsRound`]).
use gander_mms::cotp::{ConnectParams, Tpdu};
use gander_mms::Codec;
use gander_tls::survey::AppRound;

/// First octets of a TLS record (RFC 8446 5.1: content type 20..=23, legacy version 3.x): what
/// a TLS server answers (an alert) to a COTP CR, which starts with TPKT version 3.
pub fn looks_like_tls(b: &[u8]) -> bool {
    b.len() >= 2 && (0x14..=0x17).contains(&b[0]) && b[1] == 0x03
}

/// The COTP CR of libiec61850's client (class 0, TPDU size 8192, TSAPs 0x0001) in its TPKT.
pub fn cotp_connect_request() -> Vec<u8> {
    let cr = Tpdu::ConnectionRequest(ConnectParams::libiec61850_request()).to_vec();
    // A CR of fixed parameters always fits a TPKT; the empty fallback is never sent.
    gander_mms::tpkt::frame(&cr).unwrap_or_default()
}

/// Whether `b` is a whole TPKT carrying a COTP connection confirm (ISO 8073 13.4).
pub fn is_cotp_confirm(b: &[u8]) -> bool {
    gander_mms::tpkt::parse(b)
        .ok()
        .and_then(|t| Tpdu::parse(t).ok())
        .is_some_and(|t| matches!(t, Tpdu::ConnectionConfirm(_)))
}

/// The round an MMS client makes first, for the TLS survey (`gander_tls::survey`): a COTP CR,
/// answered by a CC from a server that let the connection through.
#[derive(Debug, Clone, Copy, Default)]
pub struct MmsRound;

impl AppRound for MmsRound {
    fn request(&self) -> Vec<u8> {
        cotp_connect_request()
    }
    fn is_confirm(&self, answer: &[u8]) -> bool {
        is_cotp_confirm(answer)
    }
}

/// A TLS 1.2 ClientHello offering common suites of the IEC 62351-3 era (ECDHE-RSA/ECDSA and
/// RSA with AES-GCM and AES-CBC), groups P-256 and X25519, and RSA/ECDSA signatures: enough
/// for any TLS server to answer with a ServerHello or an alert (RFC 5246 7.4.1.2).
pub fn client_hello() -> Vec<u8> {
    let mut body = vec![0x03, 0x03];
    body.extend((0u8..32).map(|i| i.wrapping_mul(37).wrapping_add(11))); // random
    body.push(0); // session id
    let suites: [u16; 6] = [0xc02f, 0xc02b, 0xc030, 0x009c, 0x003c, 0x002f];
    body.extend(((suites.len() * 2) as u16).to_be_bytes());
    suites.iter().for_each(|c| body.extend(c.to_be_bytes()));
    body.extend([1, 0]); // compression: null
    let ext: [u8; 31] = [
        0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x17, 0x00, 0x1d, // supported_groups
        0x00, 0x0b, 0x00, 0x02, 0x01, 0x00, // ec_point_formats
        0x00, 0x0d, 0x00, 0x06, 0x00, 0x04, 0x04, 0x01, 0x04, 0x03, // signature_algorithms
        0xff, 0x01, 0x00, 0x01, 0x00, // renegotiation_info (RFC 5746), empty
    ];
    body.extend((ext.len() as u16).to_be_bytes());
    body.extend(ext);
    let mut hs = vec![0x01, 0];
    hs.extend((body.len() as u16).to_be_bytes());
    hs.extend(body);
    let mut rec = vec![0x16, 0x03, 0x01];
    rec.extend((hs.len() as u16).to_be_bytes());
    rec.extend(hs);
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_records_are_told_from_tpkt() {
        // A TLS alert (21, 3.3), a handshake record, and a TPKT header (version 3).
        assert!(looks_like_tls(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(looks_like_tls(&[0x16, 0x03, 0x01]));
        assert!(!looks_like_tls(&[0x03, 0x00, 0x00, 0x16]));
        assert!(!looks_like_tls(&[0x15]));
    }

    #[test]
    fn client_hello_lengths_add_up() {
        let h = client_hello();
        assert_eq!(&h[..3], &[0x16, 0x03, 0x01]);
        assert_eq!(u16::from_be_bytes([h[3], h[4]]) as usize, h.len() - 5);
        assert_eq!(h[5], 0x01); // ClientHello
        assert_eq!(u16::from_be_bytes([h[7], h[8]]) as usize, h.len() - 9);
        let ext_at = 9 + 2 + 32 + 1 + 2 + 12 + 2;
        assert_eq!(
            u16::from_be_bytes([h[ext_at], h[ext_at + 1]]) as usize,
            h.len() - ext_at - 2
        );
    }

    #[test]
    fn the_cr_is_libiec61850s_and_a_cc_is_recognised() {
        let cr = cotp_connect_request();
        // TPKT v3, its length, a CR (0xE0) of class 0 with TPDU size 8192 and TSAPs 0x0001.
        assert_eq!(&cr[..2], &[3, 0]);
        assert_eq!(usize::from(u16::from_be_bytes([cr[2], cr[3]])), cr.len());
        assert_eq!(cr[5], 0xE0);
        assert!(!is_cotp_confirm(&cr));
        let cc = Tpdu::ConnectionConfirm(ConnectParams {
            dst_ref: 1,
            src_ref: 2,
            ..ConnectParams::libiec61850_request()
        })
        .to_vec();
        let cc = gander_mms::tpkt::frame(&cc).unwrap();
        assert!(is_cotp_confirm(&cc));
        assert!(MmsRound.is_confirm(&cc));
        assert!(!is_cotp_confirm(&[0x15, 3, 3, 0, 2]));
        assert!(!is_cotp_confirm(&[3, 0]));
    }
}
