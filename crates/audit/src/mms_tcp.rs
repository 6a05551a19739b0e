//! MMS associations seen on TCP: who talks to which server on port 102 (ISO transport over
//! TCP, RFC 1006: TPKT and COTP, IEC 61850-8-1 plain MMS) or 3782 (IEC 62351-4/-3: MMS over
//! TLS), and, for TLS, what the handshake shows in clear (see [`crate::tls_wire`]).
//!
//! Each direction of a connection is followed in sequence order from its first segment; a
//! segment ahead of what was seen (a loss in the capture) stops the reading of that direction,
//! and only the first [`MAX_BUFFER`] octets are kept, so a connection costs at most that much
//! however long it runs. Connections beyond [`MAX_FLOWS`] are counted, not followed.

use crate::tls_wire::{self, ClientHello, ServerHello};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// The ISO-on-TCP port (RFC 1006), IEC 61850-8-1 MMS.
pub const PORT_MMS: u16 = 102;
/// MMS over TLS (IEC 62351-4, IANA "iso-tsap over TLS").
pub const PORT_MMS_TLS: u16 = 3782;
/// Octets buffered per direction until the handshake is read.
pub const MAX_BUFFER: usize = 64 * 1024;
/// Connections followed at once.
pub const MAX_FLOWS: usize = 65_536;

/// What carries the association.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Nothing readable yet.
    Unknown,
    /// TPKT/COTP in clear.
    Plain,
    /// TLS records.
    Tls,
}

impl Transport {
    /// Word in reports.
    pub fn word(self) -> &'static str {
        match self {
            Transport::Unknown => "unknown",
            Transport::Plain => "plain",
            Transport::Tls => "tls",
        }
    }
}

/// One direction of a connection.
#[derive(Debug, Default)]
struct Half {
    next_seq: Option<u32>,
    buf: Vec<u8>,
    /// Stopped reading: a gap, an encrypted phase, or the buffer is full.
    stopped: bool,
    octets: u64,
    /// Handshake bytes across records.
    hs: Vec<u8>,
    encrypted: bool,
}

/// A connection to an MMS server and what it showed.
#[derive(Debug)]
pub struct Association {
    /// Client address.
    pub client: SocketAddr,
    /// Server address.
    pub server: SocketAddr,
    /// First and last frame numbers and capture times.
    pub first: (u64, u64),
    /// See `first`.
    pub last: (u64, u64),
    /// Frames.
    pub frames: u64,
    /// Payload octets client to server, server to client.
    pub octets: (u64, u64),
    /// The SYN was seen (the capture shows the start).
    pub syn: bool,
    /// FIN or RST seen.
    pub closed: bool,
    /// What carries it.
    pub transport: Transport,
    /// The frame that showed the transport.
    pub transport_frame: u64,
    /// TLS: the client's hello.
    pub client_hello: Option<ClientHello>,
    /// TLS: the server's hello, and its frame.
    pub server_hello: Option<(ServerHello, u64)>,
    /// TLS 1.2: the server's certificates (DER), leaf first.
    pub server_chain: Vec<Vec<u8>>,
    /// TLS 1.2: the ECDHE group of ServerKeyExchange.
    pub ske_group: Option<u16>,
    /// The server asked for a client certificate (TLS 1.2 CertificateRequest).
    pub cert_requested: bool,
    /// The client sent a non-empty Certificate (TLS 1.2).
    pub client_cert_sent: Option<bool>,
    /// Application data flowed after the handshake (the association was accepted).
    pub application_data: bool,
    /// Handshake records after the first handshake completed (TLS 1.2 renegotiation, or
    /// TLS 1.3 post-handshake messages), and the first frame that showed one.
    pub later_handshakes: (u64, u64),
    /// A TLS record or message that did not parse, and where.
    pub tls_error: Option<(tls_wire::TlsWireError, u64)>,
    client_half: Half,
    server_half: Half,
}

impl Association {
    /// Whether the TLS handshake resumed a session (id echoed, or a PSK accepted).
    pub fn resumed(&self) -> Option<bool> {
        let (sh, _) = self.server_hello.as_ref()?;
        let ch = self.client_hello.as_ref()?;
        Some(sh.psk || (!ch.session_id.is_empty() && ch.session_id == sh.session_id))
    }
}

/// A TCP segment of an Ethernet frame.
struct Segment<'a> {
    src: SocketAddr,
    dst: SocketAddr,
    seq: u32,
    syn: bool,
    fin_rst: bool,
    payload: &'a [u8],
}

/// The TCP segment of an untagged or tagged Ethernet/IPv4 or IPv6 (no extension headers)
/// frame, `None` for anything else.
fn segment(frame: &[u8]) -> Option<Segment<'_>> {
    use gander_wire::ethernet::{Frame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
    let eth = Frame::new_checked(frame).ok()?;
    let off = eth.payload_offset();
    let ip = frame.get(off..)?;
    let (src, dst, tcp) = match eth.ethertype() {
        ETHERTYPE_IPV4 => {
            let ihl = usize::from(*ip.first()? & 0x0f) * 4;
            if ip.first()? >> 4 != 4 || ihl < 20 || *ip.get(9)? != 6 {
                return None;
            }
            // Fragments of TCP are not followed.
            let frag = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]);
            if frag & 0x3fff != 0 {
                return None;
            }
            let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
            let s: [u8; 4] = ip.get(12..16)?.try_into().ok()?;
            let d: [u8; 4] = ip.get(16..20)?.try_into().ok()?;
            (
                IpAddr::from(s),
                IpAddr::from(d),
                ip.get(ihl..total.min(ip.len()))?,
            )
        }
        ETHERTYPE_IPV6 => {
            if ip.first()? >> 4 != 6 || *ip.get(6)? != 6 {
                return None;
            }
            let plen = usize::from(u16::from_be_bytes([*ip.get(4)?, *ip.get(5)?]));
            let s: [u8; 16] = ip.get(8..24)?.try_into().ok()?;
            let d: [u8; 16] = ip.get(24..40)?.try_into().ok()?;
            (
                IpAddr::from(s),
                IpAddr::from(d),
                ip.get(40..(40 + plen).min(ip.len()))?,
            )
        }
        _ => return None,
    };
    let doff = usize::from(tcp.get(12)? >> 4) * 4;
    if doff < 20 {
        return None;
    }
    let flags = *tcp.get(13)?;
    Some(Segment {
        src: SocketAddr::new(src, u16::from_be_bytes([tcp[0], tcp[1]])),
        dst: SocketAddr::new(dst, u16::from_be_bytes([tcp[2], tcp[3]])),
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        syn: flags & 0x02 != 0,
        fin_rst: flags & 0x05 != 0,
        payload: tcp.get(doff..)?,
    })
}

/// Every MMS association of a capture.
#[derive(Debug, Default)]
pub struct MmsTracker {
    index: HashMap<(SocketAddr, SocketAddr), usize>,
    /// Associations in order of first frame.
    pub associations: Vec<Association>,
    /// Connections not followed (beyond [`MAX_FLOWS`]).
    pub dropped: u64,
}

impl MmsTracker {
    /// Reads a frame that is not IEC 61850 multicast traffic; returns whether it was MMS.
    pub fn feed(&mut self, no: u64, ts: u64, frame: &[u8]) -> bool {
        let Some(seg) = segment(frame) else {
            return false;
        };
        let is_server = |a: &SocketAddr| a.port() == PORT_MMS || a.port() == PORT_MMS_TLS;
        let (client, server, from_client) = if is_server(&seg.dst) {
            (seg.src, seg.dst, true)
        } else if is_server(&seg.src) {
            (seg.dst, seg.src, false)
        } else {
            return false;
        };
        let i = match self.index.get(&(client, server)) {
            Some(&i) => i,
            None => {
                if self.associations.len() >= MAX_FLOWS {
                    self.dropped += 1;
                    return true;
                }
                self.index.insert((client, server), self.associations.len());
                self.associations.push(Association {
                    client,
                    server,
                    first: (no, ts),
                    last: (no, ts),
                    frames: 0,
                    octets: (0, 0),
                    syn: false,
                    closed: false,
                    transport: Transport::Unknown,
                    transport_frame: 0,
                    client_hello: None,
                    server_hello: None,
                    server_chain: Vec::new(),
                    ske_group: None,
                    cert_requested: false,
                    client_cert_sent: None,
                    application_data: false,
                    later_handshakes: (0, 0),
                    tls_error: None,
                    client_half: Half::default(),
                    server_half: Half::default(),
                });
                self.associations.len() - 1
            }
        };
        let a = &mut self.associations[i];
        a.frames += 1;
        a.last = (no, ts);
        a.syn |= seg.syn;
        a.closed |= seg.fin_rst;
        let half = if from_client {
            a.octets.0 += seg.payload.len() as u64;
            &mut a.client_half
        } else {
            a.octets.1 += seg.payload.len() as u64;
            &mut a.server_half
        };
        half.octets += seg.payload.len() as u64;
        if !in_order(half, &seg) {
            return true;
        }
        read(a, from_client, no);
        true
    }
}

/// Appends the new octets of `seg` to the direction's buffer; false when nothing new is to
/// be read.
fn in_order(h: &mut Half, seg: &Segment<'_>) -> bool {
    let start = seg.seq.wrapping_add(u32::from(seg.syn));
    let next = *h.next_seq.get_or_insert(start);
    if h.stopped || seg.payload.is_empty() {
        if seg.syn {
            h.next_seq = Some(start);
        }
        return false;
    }
    let ahead = start.wrapping_sub(next);
    let skip = if ahead == 0 {
        0
    } else if ahead >= 1 << 31 {
        // A retransmission overlapping what was read: take the rest.
        let behind = next.wrapping_sub(start) as usize;
        if behind >= seg.payload.len() {
            return false;
        }
        behind
    } else {
        // A gap: this direction is not read further.
        h.stopped = true;
        return false;
    };
    let new = &seg.payload[skip..];
    h.next_seq = Some(next.wrapping_add(new.len() as u32));
    let room = MAX_BUFFER.saturating_sub(h.buf.len());
    h.buf.extend_from_slice(&new[..new.len().min(room)]);
    if room < new.len() {
        h.stopped = true;
    }
    true
}

/// Reads what the buffer of one direction now holds.
fn read(a: &mut Association, from_client: bool, no: u64) {
    if a.transport == Transport::Unknown {
        let b = if from_client {
            &a.client_half.buf
        } else {
            &a.server_half.buf
        };
        if b.len() >= 2 {
            a.transport = match (b[0], b[1]) {
                // TPKT version 3, reserved 0 (RFC 1006 §6).
                (3, 0) => Transport::Plain,
                (22, 3) => Transport::Tls,
                _ => Transport::Unknown,
            };
            a.transport_frame = no;
        }
    }
    if a.transport != Transport::Tls || a.tls_error.is_some() {
        // Plain MMS: the transport is all the audit reads; free the buffers.
        if a.transport == Transport::Plain {
            a.client_half = Half {
                stopped: true,
                ..Half::default()
            };
            a.server_half = Half {
                stopped: true,
                ..Half::default()
            };
        }
        return;
    }
    if let Err(e) = read_tls(a, from_client, no) {
        a.tls_error = Some((e, no));
    }
}

fn read_tls(a: &mut Association, from_client: bool, no: u64) -> Result<(), tls_wire::TlsWireError> {
    loop {
        let is13 = tls13(a);
        let half = if from_client {
            &mut a.client_half
        } else {
            &mut a.server_half
        };
        let Some((rec, used)) = tls_wire::record(&half.buf)? else {
            return Ok(());
        };
        let (ct, frag) = (rec.content_type, rec.fragment.to_vec());
        half.buf.drain(..used);
        match ct {
            tls_wire::CHANGE_CIPHER_SPEC => half.encrypted = true,
            // Records keep being read (and dropped) after the handshake, so a renegotiation
            // is seen; the buffer never holds more than one record's worth.
            tls_wire::APPLICATION_DATA => a.application_data = true,
            tls_wire::HANDSHAKE if half.encrypted || is13 => {
                if a.application_data && a.later_handshakes.0 == 0 {
                    a.later_handshakes.1 = no;
                }
                if a.application_data {
                    a.later_handshakes.0 += 1;
                }
            }
            tls_wire::HANDSHAKE => {
                half.hs.extend_from_slice(&frag);
                let mut msgs = Vec::new();
                while let Some((ty, body, n)) = tls_wire::handshake(&half.hs)? {
                    msgs.push((ty, body.to_vec()));
                    half.hs.drain(..n);
                }
                if half.hs.len() > MAX_BUFFER {
                    return Err(tls_wire::TlsWireError::Bad("handshake message over 64 KiB"));
                }
                for (ty, body) in msgs {
                    message(a, from_client, ty, &body, no)?;
                }
            }
            _ => {}
        }
    }
}

/// Whether the server chose TLS 1.3 (everything after ServerHello is encrypted).
fn tls13(a: &Association) -> bool {
    matches!(&a.server_hello, Some((h, _)) if h.version == 0x0304 && !h.retry)
}

fn message(
    a: &mut Association,
    from_client: bool,
    ty: u8,
    body: &[u8],
    no: u64,
) -> Result<(), tls_wire::TlsWireError> {
    match (from_client, ty) {
        (true, tls_wire::CLIENT_HELLO) if a.client_hello.is_none() => {
            a.client_hello = Some(ClientHello::parse(body)?);
        }
        (false, tls_wire::SERVER_HELLO) => {
            let h = ServerHello::parse(body)?;
            if a.server_hello.as_ref().is_none_or(|(old, _)| old.retry) {
                a.server_hello = Some((h, no));
            }
        }
        (false, tls_wire::CERTIFICATE) if a.server_chain.is_empty() => {
            a.server_chain = tls_wire::certificates(body)?
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect();
        }
        (false, tls_wire::SERVER_KEY_EXCHANGE) => a.ske_group = tls_wire::ecdhe_group(body),
        (false, tls_wire::CERTIFICATE_REQUEST) => a.cert_requested = true,
        (true, tls_wire::CERTIFICATE) => {
            a.client_cert_sent = Some(!tls_wire::certificates(body)?.is_empty());
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_testkit::tcp_tls::{certificate, client_hello, server_hello, tcp_frame, tls_record};

    #[test]
    fn a_client_certificate_after_the_hellos_is_seen_across_segments() {
        let (c, s) = (([10, 0, 0, 2], 40000u16), ([10, 0, 0, 1], 3782u16));
        let ch = tls_record(22, &client_hello(&[0xc02f]));
        let mut flight = tls_record(22, &certificate(&[&[0x30, 0x00]]));
        flight.extend(tls_record(20, &[1]));
        let mut t = MmsTracker::default();
        assert!(t.feed(1, 0, &tcp_frame(c, s, 1, 0x18, &ch)));
        assert!(t.feed(
            2,
            0,
            &tcp_frame(s, c, 1, 0x18, &tls_record(22, &server_hello(0xc02f, true)))
        ));
        // The flight in two segments, the second retransmitted with overlap.
        let (a, b) = flight.split_at(4);
        let n = 1 + ch.len() as u32;
        assert!(t.feed(3, 0, &tcp_frame(c, s, n, 0x18, a)));
        assert!(t.feed(4, 0, &tcp_frame(c, s, n + 2, 0x18, &flight[2..])));
        let _ = b;
        let x = &t.associations[0];
        assert_eq!(x.transport, Transport::Tls);
        assert!(x.tls_error.is_none(), "{:?}", x.tls_error);
        assert_eq!(x.client_cert_sent, Some(true));
        assert!(x.client_half.encrypted);
        // A segment ahead of what was seen stops that direction.
        assert!(t.feed(5, 0, &tcp_frame(c, s, n + 5000, 0x18, &[23, 3, 3, 0, 1, 0])));
        assert!(t.associations[0].client_half.stopped);
        // Not MMS.
        assert!(!t.feed(6, 0, &tcp_frame(c, ([10, 0, 0, 1], 80), 1, 0x18, b"GET")));
    }
}
