//! tshark as an independent dissector of the ISAKMP codecs: messages gander emits are written
//! to a capture (UDP port 848) and `tshark -V` must read every RFC 2408 field back as gander
//! wrote it. tshark knows the GDOI payload types by name (RFC 6407) but not RFC 8052's
//! IEC 61850 SA TEK, so those are checked only as far as the generic payload header.
//!
//! Needs tshark on PATH; `GANDER_SKIP_TSHARK=1` skips (saying so) where it is not installed.

use gander_wire::isakmp::gdoi::{kd_attr, kd_type};
use gander_wire::isakmp::header::exchange;
use gander_wire::isakmp::iec61850::{encode_oid, oid, tek_attr};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::{doi, ike_attr, KEY_IKE, PROTO_ISAKMP};
use gander_wire::isakmp::*;
use std::process::Command;

fn header(ex: u8, mid: u32) -> Header {
    Header {
        initiator_cookie: [0x11; 8],
        responder_cookie: [0x22; 8],
        next_payload: 0,
        major_version: 1,
        minor_version: 0,
        exchange: ex,
        flags: 0,
        message_id: mid,
        length: 0,
    }
}

/// Ethernet/IPv4/UDP 848 -> 848 around `payload` (checksums left zero: tshark does not check).
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    let total = 20 + 8 + payload.len();
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[127, 0, 0, 1, 127, 0, 0, 2]);
    let ul = 8 + payload.len();
    f.extend_from_slice(&[0x03, 0x50, 0x03, 0x50, (ul >> 8) as u8, ul as u8, 0, 0]);
    f.extend_from_slice(payload);
    f
}

fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&4u16.to_le_bytes());
    p.extend_from_slice(&[0; 8]);
    p.extend_from_slice(&65535u32.to_le_bytes());
    p.extend_from_slice(&1u32.to_le_bytes());
    for (i, f) in frames.iter().enumerate() {
        p.extend_from_slice(&(i as u32).to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&(f.len() as u32).to_le_bytes());
        p.extend_from_slice(&(f.len() as u32).to_le_bytes());
        p.extend_from_slice(f);
    }
    p
}

fn messages() -> Vec<Message> {
    let sa = Payload::Sa(SaPayload {
        doi: doi::IPSEC,
        situation: 1,
        body: SaBody::Proposals(vec![Proposal {
            number: 1,
            protocol: PROTO_ISAKMP,
            spi: vec![],
            transforms: vec![Transform {
                number: 1,
                id: KEY_IKE,
                attributes: vec![
                    Attribute::basic(ike_attr::ENCRYPTION, ike_attr::ENC_AES_CBC),
                    Attribute::basic(ike_attr::KEY_LENGTH, 256),
                    Attribute::basic(ike_attr::HASH, ike_attr::HASH_SHA256),
                    Attribute::basic(ike_attr::AUTH_METHOD, ike_attr::AUTH_PSK),
                    Attribute::basic(ike_attr::GROUP, ike_attr::GROUP_ECP256),
                    Attribute::basic(ike_attr::LIFE_TYPE, ike_attr::LIFE_SECONDS),
                    Attribute::unsigned(ike_attr::LIFE_DURATION, 86_400),
                ],
            }],
        }]),
    });
    let m1 = Message {
        header: header(exchange::MAIN_MODE, 0),
        payloads: vec![sa],
    };
    let m3 = Message {
        header: header(exchange::MAIN_MODE, 0),
        payloads: vec![Payload::Ke(vec![0x04; 64]), Payload::Nonce(vec![0x5a; 32])],
    };
    let tek = Iec61850Tek {
        oid: encode_oid(oid::R_GOOSE).unwrap(),
        traffic: Some(Traffic::Ipv4 {
            addr: [239, 0, 0, 1],
            port: 102,
        }),
        spi: 0x0102_0304,
        auth_alg: gander_wire::isakmp::iec61850_alg::auth::HMAC_SHA256_128,
        conf_alg: gander_wire::isakmp::iec61850_alg::conf::NONE,
        lifetime_secs: 3600,
        attributes: vec![Attribute::basic(tek_attr::SA_ATD, 5)],
    };
    let pull = Message {
        header: header(exchange::GROUPKEY_PULL, 0x0a0b_0c0d),
        payloads: vec![
            Payload::Hash(vec![0x33; 32]),
            Payload::Id(IdPayload {
                id_type: id_type::KEY_ID,
                protocol: 0,
                port: 0,
                data: b"group-1".to_vec(),
            }),
            Payload::Sa(SaPayload {
                doi: doi::GDOI,
                situation: 0,
                body: SaBody::Gdoi(vec![SaAttrPayload::Tek(SaTek::Iec61850(tek))]),
            }),
            Payload::Seq(7),
            Payload::Kd(KeyDownload {
                packets: vec![KeyPacket {
                    kd_type: kd_type::TEK,
                    spi: 0x0102_0304u32.to_be_bytes().to_vec(),
                    attributes: vec![Attribute::variable(
                        kd_attr::TEK_INTEGRITY_KEY,
                        vec![0x77; 32],
                    )],
                }],
            }),
        ],
    };
    vec![m1, m3, pull]
}

#[test]
fn tshark_reads_gander_isakmp() {
    if std::env::var_os("GANDER_SKIP_TSHARK").is_some_and(|v| v == "1") {
        eprintln!("skipped: GANDER_SKIP_TSHARK=1");
        return;
    }
    let frames: Vec<Vec<u8>> = messages()
        .iter()
        .map(|m| frame(&m.to_bytes().unwrap()))
        .collect();
    let path = std::env::temp_dir().join(format!("gander-isakmp-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap(&frames)).unwrap();
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&path)
        .args(["-V", "-d", "udp.port==848,isakmp"])
        .output()
        .expect("tshark on PATH (or GANDER_SKIP_TSHARK=1)");
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "Exchange type: Identity Protection (Main Mode) (2)",
        "Domain of interpretation: IPSEC (1)",
        "Transform ID: KEY_IKE (1)",
        "Encryption Algorithm: AES-CBC (7)",
        "Key Length: 256",
        "HASH Algorithm: SHA2-256 (4)",
        "Authentication Method: Pre-shared key (1)",
        "Group Description: 256-bit random ECP group (19)",
        "Life Duration: 86400",
        "Key Exchange Data: 0404",
        "Nonce DATA: 5a5a",
        "ID_KEY_ID: 67726f75702d31",
        "Domain of interpretation: GDOI (2)",
        // The two-octet SA Attribute Next Payload naming the SA TEK, then the TEK itself.
        "SA Attribute Next Payload: 0010",
        "Payload: SA TEK Payload (16)",
        "Sequence Number: 7",
        "Number of Key Packets: 1",
        // KD Length counts the whole key packet, its 4-octet header included (RFC 6407 5.6).
        "Length: 45",
        "Key download Tek Attribute (t=2,l=32): TEK_INTEGRITY_KEY",
        "Message ID: 0x0a0b0c0d",
    ] {
        assert!(text.contains(want), "tshark output lacks {want:?}:\n{text}");
    }
    assert!(
        !text.contains("Malformed"),
        "tshark calls a message malformed:\n{text}"
    );
}
