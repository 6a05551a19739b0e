//! `gander frame show|verify` on captures the issue #21 defects came from, rebuilt here as
//! small fixtures: Linux cooked (SLL) with fragments, a capture cut short, frame numbers as
//! tshark counts them.

use std::process::Command;

fn gander() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gander"))
}

fn csum(data: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in data.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// IPv4 header (checksum filled) + data.
fn ipv4(id: u16, more: bool, offset: usize, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0x45, 0];
    h.extend(((20 + data.len()) as u16).to_be_bytes());
    h.extend(id.to_be_bytes());
    h.extend((((offset / 8) as u16) | if more { 0x2000 } else { 0 }).to_be_bytes());
    h.extend([64, 17, 0, 0, 192, 168, 10, 66, 224, 0, 1, 4]);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend(data);
    h
}

/// A Linux cooked (SLL) IPv4 packet.
fn sll_ipv4(ip: &[u8]) -> Vec<u8> {
    let mut p = vec![0, 4, 0, 1, 0, 6, 0, 0x30, 0xa7, 1, 2, 3, 0, 0, 0x08, 0x00];
    p.extend(ip);
    p
}

fn pcap(link: u32, packets: &[Vec<u8>]) -> Vec<u8> {
    let mut f = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    f.extend(2u16.to_le_bytes());
    f.extend(4u16.to_le_bytes());
    f.extend([0; 8]);
    f.extend(262144u32.to_le_bytes());
    f.extend(link.to_le_bytes());
    for (i, d) in packets.iter().enumerate() {
        f.extend((1_700_000_000u32 + i as u32).to_le_bytes());
        f.extend(0u32.to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend(d);
    }
    f
}

/// A UDP datagram to port 102 whose payload is not a valid SPDU: enough to see where the
/// reassembled datagram is classified.
fn udp_102(len: usize) -> Vec<u8> {
    let mut u = 49152u16.to_be_bytes().to_vec();
    u.extend(102u16.to_be_bytes());
    u.extend(((8 + len) as u16).to_be_bytes());
    u.extend([0, 0]);
    u.extend((0..len).map(|i| i as u8));
    u
}

/// A key file with key 1, HMAC-SHA256-128 (`enc` defaults to none), in `dir`.
fn hmac_keys(dir: &std::path::Path) -> std::path::PathBuf {
    let keys = dir.join("keys.toml");
    std::fs::write(
        &keys,
        "[[key]]\nid = 1\nmac = \"hmac-sha256-128\"\nenc = \"none\"\nkey_ascii = \"0123456789ABCDEF\"\n",
    )
    .unwrap();
    keys
}

fn show_json(file: &std::path::Path) -> (Vec<serde_json::Value>, String) {
    let out = gander()
        .args(["frame", "show", "--json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, String::from_utf8(out.stderr).unwrap())
}

/// robidev/iec61850-dissector test/capture.pcapng (Linux cooked) was refused; test/
/// iec90-5-samples.pcap's fragments were `malformed`. Here both at once: an SLL capture with a
/// 90-5-sized datagram in two fragments, shown once at the last fragment's frame number.
#[test]
fn sll_fragments_are_reassembled_at_the_last_fragment() {
    let d = tempfile::tempdir().unwrap();
    let dgram = udp_102(1562);
    let frames = vec![
        sll_ipv4(&ipv4(1, true, 0, &dgram[..1480])),
        sll_ipv4(&ipv4(1, false, 1480, &dgram[1480..])),
    ];
    let f = d.path().join("sll.pcap");
    std::fs::write(&f, pcap(113, &frames)).unwrap();
    let (lines, _) = show_json(&f);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["frame"], 1);
    assert_eq!(lines[0]["kind"], "ip-fragment");
    assert_eq!(lines[1]["frame"], 2);
    assert_eq!(lines[1]["reassembled"]["first_frame"], 1);
    assert_eq!(lines[1]["reassembled"]["fragments"], 2);
    // The reassembled datagram reached the session classification (port 102).
    assert_ne!(lines[1]["kind"], "ip-fragment");
    assert_ne!(lines[1]["kind"], "other");
}

/// issue #21: a capture cut short mid-packet was refused whole (tshark showed its 383 complete
/// frames). Every complete frame is shown, a warning says the capture was cut short, and a
/// datagram whose last fragment is missing is a finding.
#[test]
fn a_capture_cut_short_is_read_to_its_last_whole_frame() {
    let d = tempfile::tempdir().unwrap();
    let dgram = udp_102(2000);
    let frames = vec![
        sll_ipv4(&ipv4(2, true, 0, &dgram[..1480])),
        sll_ipv4(&ipv4(2, false, 1480, &dgram[1480..])),
    ];
    let whole = pcap(113, &frames);
    let f = d.path().join("cut.pcap");
    std::fs::write(&f, &whole[..whole.len() - 100]).unwrap();
    let (lines, err) = show_json(&f);
    assert!(err.contains("cut short"), "{err}");
    assert_eq!(lines[0]["kind"], "ip-fragment");
    assert_eq!(lines[1]["finding"], "fragments-incomplete", "{lines:?}");
    assert_eq!(lines.len(), 2);
    let keys = hmac_keys(d.path());
    let out = gander()
        .args(["frame", "verify", "--keys"])
        .arg(&keys)
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 frames"));
}

/// `inner` (an Ethernet frame) inside GRE with protocol `proto` (and, for ERSPAN type II, the
/// sequence number and the 8-octet header), behind IPv4 and Ethernet.
fn gre(proto: u16, inner: &[u8]) -> Vec<u8> {
    let mut g = if proto == 0x88be {
        let mut g = vec![0x10, 0x00, 0x88, 0xbe, 0, 0, 0, 7];
        g.extend([0x10, 0x05, 0x00, 0x64, 0, 0, 0, 0]);
        g
    } else {
        let mut g = vec![0, 0];
        g.extend(proto.to_be_bytes());
        g
    };
    g.extend(inner);
    let mut ip = ipv4(1, false, 0, &g);
    ip[9] = 47;
    ip[10..12].copy_from_slice(&[0, 0]);
    let c = csum(&ip[..20]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![0, 0, 0x5e, 0, 1, 1, 0, 0, 0, 0, 0, 0xfe, 0x08, 0x00];
    f.extend(ip);
    f
}

/// The field test's D_erspan.pcap (ITI Sample_File_MMS_and_GOOSE mirrored inside ERSPAN type
/// II): 34 GOOSE frames were `other` and `audit` said 0 streams, 0 findings, exit 0. The frame
/// inside ERSPAN is read (`tunnel` names it); GRE that is not opened (here IPv4 in GRE,
/// protocol 0x0800) is a `tunnel-unread` finding, so such a capture never audits clean; and
/// `protect` refuses to leave a GOOSE frame inside a tunnel unprotected.
#[test]
fn goose_inside_erspan_is_read_and_unread_gre_is_a_finding() {
    let d = tempfile::tempdir().unwrap();
    let goose = gander_testkit::frames::goose_frame(
        [0, 0x30, 0xa7, 1, 2, 3],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x3001,
        5,
        2,
    );
    let path = d.path().join("erspan.pcap");
    std::fs::write(&path, pcap(1, &[gre(0x88be, &goose)])).unwrap();
    let (lines, _) = show_json(&path);
    assert_eq!(lines[0]["tunnel"], "erspan-ii", "{}", lines[0]);
    assert_eq!(lines[0]["kind"], "goose", "{}", lines[0]);
    assert_eq!(lines[0]["goose"]["stNum"], 5, "{}", lines[0]);

    let path = d.path().join("gre-ip.pcap");
    let inner_ip = ipv4(2, false, 0, &udp_102(8));
    let mut teb = vec![0u8; 12];
    teb.extend([0x08, 0x00]);
    teb.extend(&inner_ip);
    std::fs::write(&path, pcap(1, &[gre(0x0800, &teb[14..])])).unwrap();
    let out = gander()
        .args(["audit", "--out"])
        .arg(d.path().join("audit"))
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("tunnel-unread"), "{stdout}");
    assert_eq!(out.status.code(), Some(3), "{stdout}");

    let keys = hmac_keys(d.path());
    let out = gander()
        .args(["frame", "protect", "--key-id", "1", "--keys"])
        .arg(&keys)
        .arg(d.path().join("erspan.pcap"))
        .arg(d.path().join("out.pcap"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("frame #1") && err.contains("inside erspan-ii"),
        "{err}"
    );
}

/// protect writes every frame as Ethernet; a Linux cooked record's original length counts its
/// 16-octet header, so copying it kept a length two octets longer than the frame written
/// (tshark then shows every such frame as cut by the capture). The length written is the
/// frame's own.
#[test]
fn protect_writes_each_frame_with_its_own_length() {
    let d = tempfile::tempdir().unwrap();
    // Other traffic (UDP to port 5000): copied unchanged.
    let mut udp = udp_102(40);
    udp[2..4].copy_from_slice(&5000u16.to_be_bytes());
    let frames = vec![sll_ipv4(&ipv4(3, false, 0, &udp))];
    let f = d.path().join("sll.pcap");
    std::fs::write(&f, pcap(113, &frames)).unwrap();
    let keys = hmac_keys(d.path());
    let o = d.path().join("out.pcap");
    let out = gander()
        .args(["frame", "protect", "--keys"])
        .arg(&keys)
        .args(["--key-id", "1"])
        .arg(&f)
        .arg(&o)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = std::fs::read(&o).unwrap();
    // Either byte order (the magic says which).
    let le = b[..4] == [0xd4, 0xc3, 0xb2, 0xa1] || b[..4] == [0x4d, 0x3c, 0xb2, 0xa1];
    let u32_at = |at: usize| {
        let w: [u8; 4] = b[at..at + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    assert_eq!(u32_at(20), 1, "Ethernet");
    let rec = &b[24..];
    let (incl, orig) = (u32_at(24 + 8), u32_at(24 + 12));
    assert_eq!(incl as usize, rec.len() - 16, "one record");
    assert_eq!(incl as usize, 14 + 20 + 8 + 40);
    assert_eq!(orig, incl, "the frame written is whole");
}

/// A capture whose structure breaks after whole packets (here a record claiming 100 MB after
/// two GOOSE frames, as a writer that crashed mid-record can leave it): the audit used to print
/// only the error and write nothing, losing the frames before it. Now they are judged and a
/// `capture-corrupt` finding (medium, exit 4) says where reading stopped. A file that is no
/// capture at all stays an error (exit 2), said once and without "frame 0".
#[test]
fn a_capture_corrupt_after_whole_frames_is_audited_up_to_the_break() {
    let d = tempfile::tempdir().unwrap();
    let goose = |sq| {
        gander_testkit::frames::goose_frame(
            [0, 0x30, 0xa7, 1, 2, 3],
            [1, 0x0c, 0xcd, 1, 0, 1],
            None,
            0x3001,
            5,
            sq,
        )
    };
    let mut file = pcap(1, &[goose(1), goose(2)]);
    let offset = file.len();
    file.extend(1_700_000_009u32.to_le_bytes());
    file.extend(0u32.to_le_bytes());
    file.extend(100_000_000u32.to_le_bytes());
    file.extend(100_000_000u32.to_le_bytes());
    file.extend([0u8; 64]);
    let path = d.path().join("broken.pcap");
    std::fs::write(&path, file).unwrap();
    let out_dir = d.path().join("audit");
    let audit = |path: &std::path::Path| {
        gander()
            .args(["audit", "--out"])
            .arg(&out_dir)
            .arg(path)
            .output()
            .unwrap()
    };
    let out = audit(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stdout.contains("capture-corrupt"), "{stdout}");
    assert!(
        stderr.contains(&format!("after frame 2 (offset {offset})")),
        "{stderr}"
    );
    // The two frames before the break were judged: an unsecured GOOSE stream.
    assert!(stdout.contains("unsecured"), "{stdout}");
    assert!(out_dir.join("report.html").is_file());

    let path = d.path().join("text.pcap");
    std::fs::write(&path, "hello, not a capture\n").unwrap();
    let out = audit(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a pcap or pcapng file"), "{stderr}");
    assert!(!stderr.contains("frame 0"), "{stderr}");
    assert_eq!(stderr.matches("not a pcap").count(), 1, "{stderr}");
}

/// A Linux cooked (SLL) record of Ethernet `frame`, with Linux packet type `pkttype`.
fn sll_of(frame: &[u8], pkttype: u16) -> Vec<u8> {
    let mut p = pkttype.to_be_bytes().to_vec();
    p.extend([0, 1, 0, 6]);
    p.extend(&frame[6..12]);
    p.extend([0, 0]);
    p.extend(&frame[12..]);
    p
}

/// A pcap (link type 113, SLL) of `(microseconds, record)`.
fn sll_pcap_at(packets: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut f = pcap(113, &[]);
    for (us, d) in packets {
        f.extend(1_700_000_000u32.to_le_bytes());
        f.extend(us.to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend(d);
    }
    f
}

/// A Linux "any" capture records one secured GOOSE frame once per interface it crosses, with
/// another packet type (pg-ot/virtual-substation-beta's goose.pcapng: packet types 2, 4, 4, 2,
/// the third copy 72 µs after the first). `frame verify` called those copies replays (exit 1)
/// where `audit` calls them capture copies; now both tell them alike. The same frame again with
/// the same packet type 2 ms later is still a replay.
#[test]
fn verify_tells_a_capture_copy_from_a_replay() {
    use gander_sec::{default_provider, KeyStore, Profile};
    let d = tempfile::tempdir().unwrap();
    let keys = hmac_keys(d.path());
    let store = KeyStore::load(&keys, default_provider()).unwrap();
    let plain = gander_testkit::frames::goose_frame(
        [0, 0x30, 0xa7, 1, 2, 3],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x3001,
        1,
        0,
    );
    let secured = gander_sec::frame::protect_frame(
        Profile::Standard,
        store.get(1).unwrap(),
        &plain,
        &mut gander_sec::spdu::RandomIv,
        1_700_000_000,
    )
    .unwrap()
    .unwrap();
    let verify = |records: &[(u32, Vec<u8>)]| {
        let f = d.path().join("any.pcap");
        std::fs::write(&f, sll_pcap_at(records)).unwrap();
        let out = gander()
            .args(["frame", "verify", "--at", "capture", "--keys"])
            .arg(&keys)
            .arg(&f)
            .output()
            .unwrap();
        let words: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string())
            .collect();
        (
            out.status.code(),
            words,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let copies = [
        (10, sll_of(&secured, 2)),
        (19, sll_of(&secured, 4)),
        (82, sll_of(&secured, 4)),
    ];
    let (code, words, err) = verify(&copies);
    assert_eq!(words, ["verified", "capture-copy", "capture-copy"], "{err}");
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("2 copies the capture made"), "{err}");
    let mut replayed = copies.to_vec();
    replayed.push((2_100, sll_of(&secured, 2)));
    let (code, words, err) = verify(&replayed);
    assert_eq!(words[3], "replay", "{err}");
    assert_eq!(code, Some(1), "{err}");
}

/// An Ethernet/IPv4/UDP frame of the lab's IED carrying an unsecured R-GOOSE SPDU whose GOOSE
/// APDU has `entries` values (500: about 2,200 octets, two fragments at 1,500).
fn big_rgoose(spdu_number: u32, entries: usize) -> Vec<u8> {
    use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload};
    let apdu = gander_testkit::frames::goose_apdu(1, spdu_number, entries);
    let el = [PayloadElement {
        payload_type: 0x81,
        simulation: 0,
        appid: 0x3001,
        apdu: &apdu,
    }];
    let repr = gander_sec::spdu_emit::PlainSpduRepr::new(
        gander_sec::Profile::Standard,
        SpduId::Goose,
        spdu_number,
        SpduPayload::Elements(&el),
    )
    .unwrap();
    let mut spdu = vec![0; repr.buffer_len()];
    repr.emit(&mut spdu).unwrap();
    gander_testkit::frames::udp_frame(&gander_testkit::frames::UdpAddrs::IED_TO_SUB, &spdu)
}

/// robidev/iec61850-dissector's iec90-5-samples.pcap sends R-SV datagrams of 2,258 octets in
/// two IPv4 fragments. `frame protect` stopped at the first fragment ("IP fragment of a UDP
/// datagram"), though its help said fragments were copied, and stopped on fragmented traffic of
/// any kind. Now a fragmented R-GOOSE datagram is reassembled, protected and written again in
/// fragments no longer than the publisher's (it verifies, reassembled, as every whole frame
/// does); fragments of other traffic are copied; a fragment of a datagram never reassembled
/// (its first fragment lost) is left out and named, exit 1.
#[test]
fn protect_reassembles_fragmented_rgoose_and_sends_it_in_fragments() {
    use gander_wire::ip_fragment::fragment;
    let d = tempfile::tempdir().unwrap();
    let keys = hmac_keys(d.path());
    let rg = big_rgoose(1, 500);
    assert!(rg.len() > 1514 + 300, "{}", rg.len());
    let rg_parts = fragment(&rg, 1500, 0).unwrap();
    assert_eq!(rg_parts.len(), 2);
    let mut other = udp_102(2000);
    other[2..4].copy_from_slice(&5000u16.to_be_bytes());
    let mut other_frame = rg[..14].to_vec();
    other_frame.extend(ipv4(9, false, 0, &other));
    let other_parts = fragment(&other_frame, 1500, 0).unwrap();
    let mut lost = big_rgoose(2, 500);
    lost[14 + 4..14 + 6].copy_from_slice(&[0x77, 0x77]);
    lost[14 + 10..14 + 12].fill(0);
    let c = gander_wire::ip::checksum(&lost[14..34]);
    lost[14 + 10..14 + 12].copy_from_slice(&c.to_be_bytes());
    let lost_parts = fragment(&lost, 1500, 0).unwrap();
    let goose = gander_testkit::frames::goose_frame(
        [0, 0x30, 0xa7, 1, 2, 3],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x3002,
        1,
        0,
    );
    let frames = vec![
        rg_parts[0].clone(),
        other_parts[0].clone(),
        goose,
        other_parts[1].clone(),
        lost_parts[1].clone(),
        rg_parts[1].clone(),
    ];
    let f = d.path().join("frag.pcap");
    std::fs::write(&f, pcap(1, &frames)).unwrap();
    let o = d.path().join("out.pcap");
    let out = gander()
        .args(["frame", "protect", "--keys"])
        .arg(&keys)
        .args(["--key-id", "1"])
        .arg(&f)
        .arg(&o)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("1 fragments left out (#5)"), "{err}");
    assert!(
        err.contains("2 secured") && err.contains("2 copied"),
        "{err}"
    );
    // Written: the GOOSE frame, the two fragments of other traffic as they were, and the
    // protected R-GOOSE datagram in fragments of at most 1,500 octets at the last one's place.
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&o).unwrap()).unwrap();
    let mut written = Vec::new();
    while let Some(p) = reader.next_packet() {
        written.push(p.unwrap().data.into_owned());
    }
    assert_eq!(written.len(), 3 + 2, "{err}");
    assert_eq!(written[0], other_parts[0]);
    assert_eq!(written[2], other_parts[1]);
    assert!(written[3..].iter().all(|w| w.len() - 14 <= 1500));
    let v = gander()
        .args(["frame", "verify", "--keys"])
        .arg(&keys)
        .arg(&o)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&v.stdout);
    assert_eq!(v.status.code(), Some(0), "{lines}");
    let verified: Vec<_> = lines.lines().filter(|l| l.contains(" verified ")).collect();
    assert_eq!(verified.len(), 2, "{lines}");
    assert!(verified.iter().any(|l| l.contains("r-goose")), "{lines}");
}

/// kelecho/IEC-61850-Studio's fixtures/pcap/goose.pcap: a "secured" GOOSE frame whose 32
/// octets after the APDU are announced in Reserved2 (Reserved1 0). IEC 62351-6 puts the
/// extension's length in Reserved1, so the frame is malformed; tshark still decodes its APDU,
/// and `frame show` showed only the error. It now shows the APDU (and how many octets follow).
#[test]
fn show_decodes_the_whole_apdu_of_a_malformed_goose_frame() {
    let d = tempfile::tempdir().unwrap();
    let mut g = gander_testkit::frames::goose_frame(
        [0, 0x30, 0xa7, 1, 2, 3],
        [1, 0x0c, 0xcd, 1, 0, 1],
        None,
        0x0001,
        3,
        0,
    );
    let len = u16::from_be_bytes([g[16], g[17]]) + 32;
    g[16..18].copy_from_slice(&len.to_be_bytes());
    g[20..22].copy_from_slice(&[0x00, 0x20]);
    g.extend([0xab; 32]);
    let f = d.path().join("kel.pcap");
    std::fs::write(&f, pcap(1, &[g])).unwrap();
    let (lines, err) = show_json(&f);
    let o = &lines[0];
    assert_eq!(o["kind"], "malformed", "{err} {o}");
    assert!(o["error"].as_str().unwrap().contains("Reserved1"), "{o}");
    assert_eq!(o["goose"]["stNum"], 3, "{o}");
    assert_eq!(o["goose"]["gocbRef"], "GANDERIED/LLN0$GO$gcb01", "{o}");
    assert_eq!(o["after_apdu"], 32, "{o}");
}

/// Options that only a live audit reads are refused with a capture file (they were ignored),
/// and a `--duration` the clock cannot hold is refused rather than a panic.
#[test]
fn live_only_options_are_refused_with_files_and_durations_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("empty.pcap");
    std::fs::write(&path, pcap(1, &[])).unwrap();
    for extra in [
        &["--duration", "3"][..],
        &["--metrics", "127.0.0.1:9"],
        &["--ring-mib", "1"],
    ] {
        let out = gander()
            .args(["audit", "--out"])
            .arg(d.path().join("a"))
            .arg(&path)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("to a live audit only"), "{stderr}");
    }
    for huge in ["1e19", "1e20"] {
        let out = gander()
            .args(["audit", "--interface", "lo", "--duration", huge, "--out"])
            .arg(d.path().join("b"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{huge}: {stderr}");
        assert!(stderr.contains("at most"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
