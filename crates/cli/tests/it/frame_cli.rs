//! `gander frame` end to end on captures written here: exit codes, verdicts, protect/verify round
//! trips for R-GOOSE and layer-2 GOOSE, and clear errors for bad key files and captures.
//! The libiec61850 payloads are the golden frames of `crates/sec/tests/golden_rgoose.rs`.

use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_IPV4};
use gander_wire::ip::UdpFrameRepr;
use pcap_file::pcap::{PcapPacket, PcapWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIB_PLAIN: &str = "0140a1188012000000c10000000000020000000000000000000000000000ad8100400100a96181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2830101";
const LIB_HMAC128: &str = "0140a1188012000000c10000000000020000000000000000000100000000ad8100400100a96181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcd0e560a8501018601008701008801018901008a0102ab07850204d28301018510f576ff0a6ab4e1c24bc5442cc6e12d9a";
const LIB_L2: &str = "010ccd01000102000000000188b8400100d10022c0356181a4802973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f24676362416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2830101a020a40c800101810100820100840101851030f90ee17f312b2dd902094ef6496319";

const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"

[[key]]
id = 2
enc = "aes-256-gcm"
key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
"#;

fn gander() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gander"))
}

fn udp_frame(payload: &[u8]) -> Vec<u8> {
    UdpFrameRepr {
        eth: EthernetRepr {
            dst: [1, 0x0c, 0xcd, 1, 0, 1],
            src: [2, 0, 0, 0, 0, 1],
            vlan: None,
            ethertype: ETHERTYPE_IPV4,
        },
        src_addr: [192, 0, 2, 1],
        dst_addr: [192, 0, 2, 2],
        src_port: 102,
        dst_port: 102,
        ttl: 64,
        tos: 0,
        identification: 7,
    }
    .to_vec(payload)
    .unwrap()
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        // Timestamps in 2026, inside any validity window used here.
        let ts = Duration::from_secs(1_790_000_000 + i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .unwrap();
    }
}

struct Dir(tempfile::TempDir);
impl Dir {
    fn new() -> Self {
        let d = Dir(tempfile::tempdir().unwrap());
        std::fs::write(d.p("keys.toml"), KEYS).unwrap();
        d
    }
    fn p(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// `gander frame verify --json --profile PROFILE --keys keys.toml PCAP` in `d`.
fn verify_json(d: &Dir, profile: &str, pcap: &str) -> (i32, String, String) {
    run(gander()
        .args(["frame", "verify", "--json", "--profile", profile, "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p(pcap)))
}

fn verdicts(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn verify_libiec61850_frames_and_catch_tampering() {
    let d = Dir::new();
    let good = udp_frame(&hex::decode(LIB_HMAC128).unwrap());
    // A flip inside the GOOSE APDU, with the UDP checksum recomputed (a flip the checksum
    // catches is `bad-checksum`, as in the gateway).
    let mut tampered = hex::decode(LIB_HMAC128).unwrap();
    let n = tampered.len();
    tampered[n - 20] ^= 0x01;
    let bad = udp_frame(&tampered);
    write_pcap(
        &d.p("in.pcap"),
        &[
            udp_frame(&hex::decode(LIB_PLAIN).unwrap()),
            good.clone(),
            bad,
        ],
    );
    let (code, out, err) = verify_json(&d, "libiec61850", "in.pcap");
    assert_eq!(code, 1, "{err}");
    let v = verdicts(&out);
    assert_eq!(v.len(), 3);
    assert_eq!(
        (v[0]["verdict"].as_str(), v[0]["ok"].as_bool()),
        (Some("unsecured"), Some(true))
    );
    assert_eq!(
        (
            v[1]["verdict"].as_str(),
            v[1]["key_id"].as_u64(),
            v[1]["st_num"].as_u64()
        ),
        (Some("verified"), Some(1), Some(1))
    );
    assert_eq!(
        (v[2]["verdict"].as_str(), v[2]["ok"].as_bool()),
        (Some("bad-mac"), Some(false))
    );
    assert!(err.contains("1 failed"), "{err}");

    // The good frame alone passes; the same frame twice is a replay.
    write_pcap(&d.p("one.pcap"), std::slice::from_ref(&good));
    let (code, ..) = run(gander()
        .args(["frame", "verify", "--profile", "libiec61850", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("one.pcap")));
    assert_eq!(code, 0);
    write_pcap(&d.p("two.pcap"), &[good.clone(), good]);
    let (code, out, _) = verify_json(&d, "libiec61850", "two.pcap");
    assert_eq!(code, 1);
    assert_eq!(verdicts(&out)[1]["verdict"], "replay");

    // Replay state is keyed on authenticated fields only: the same frame from another source
    // address or port is still a replay.
    let hmac = hex::decode(LIB_HMAC128).unwrap();
    let (mut r, payload) = UdpFrameRepr::parse(&udp_frame(&hmac)).unwrap();
    let f = r.to_vec(&hmac).unwrap();
    r.src_addr = [192, 0, 2, 99];
    let other_ip = r.to_vec(&hmac).unwrap();
    r.src_addr = [192, 0, 2, 1];
    r.src_port = 40000;
    let other_port = r.to_vec(&hmac).unwrap();
    assert_eq!(payload.len(), hmac.len());
    write_pcap(&d.p("moved.pcap"), &[f.clone(), f, other_ip, other_port]);
    let (code, out, _) = verify_json(&d, "libiec61850", "moved.pcap");
    assert_eq!(code, 1);
    let words: Vec<_> = verdicts(&out)
        .iter()
        .map(|v| v["verdict"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(words, ["verified", "replay", "replay", "replay"]);

    // A capture read under another profile's dialect says which profile reads it.
    let (code, out, _) = verify_json(&d, "standard", "one.pcap");
    assert_eq!(code, 1);
    let err = verdicts(&out)[0]["error"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(err.contains("--profile libiec61850"), "{out}");
}

#[test]
fn protect_then_verify_round_trips_r_goose_and_l2_goose() {
    let d = Dir::new();
    let l2_plain = {
        // The libiec61850 L2 frame without its extension.
        let mut f = hex::decode(LIB_L2).unwrap();
        f.truncate(f.len() - 34);
        let len = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&len.to_be_bytes());
        f[18..22].copy_from_slice(&[0; 4]);
        f
    };
    write_pcap(
        &d.p("plain.pcap"),
        &[udp_frame(&hex::decode(LIB_PLAIN).unwrap()), l2_plain],
    );
    for (profile, key_id) in [("standard", "1"), ("libiec61850", "1")] {
        let (code, _, err) = run(gander()
            .args([
                "frame",
                "protect",
                "--profile",
                profile,
                "--key-id",
                key_id,
                "--keys",
            ])
            .arg(d.p("keys.toml"))
            .arg(d.p("plain.pcap"))
            .arg(d.p("prot.pcap")));
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = run(gander()
            .args(["frame", "verify", "--json", "--profile", profile, "--keys"])
            .arg(d.p("keys.toml"))
            .arg(d.p("prot.pcap")));
        assert_eq!(code, 0, "{profile}: {err}\n{out}");
        let v = verdicts(&out);
        assert_eq!(v[0]["kind"], "r-goose");
        assert_eq!(v[0]["verdict"], "verified");
        assert_eq!(v[1]["kind"], "goose");
        assert_eq!(v[1]["verdict"], "verified");
        // Protecting a protected capture is refused with the frame number.
        let (code, _, err) = run(gander()
            .args([
                "frame",
                "protect",
                "--profile",
                profile,
                "--key-id",
                "1",
                "--keys",
            ])
            .arg(d.p("keys.toml"))
            .arg(d.p("prot.pcap"))
            .arg(d.p("again.pcap")));
        assert_eq!(code, 2);
        assert!(
            err.contains("frame #1") && err.contains("already secured"),
            "{err}"
        );
    }
    // AES-256-GCM on R-GOOSE: the cleartext APDU disappears from the capture.
    let (code, _, err) = run(gander()
        .args(["frame", "protect", "--key-id", "2", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("plain.pcap"))
        .arg(d.p("enc.pcap")));
    // Frame #2 (tshark numbering) is layer-2 GOOSE, which IEC 62351-6 does not encrypt: refused.
    assert_eq!(code, 2);
    assert!(err.contains("frame #2"), "{err}");
}

#[test]
fn bad_inputs_give_clear_errors() {
    let d = Dir::new();
    write_pcap(
        &d.p("in.pcap"),
        &[udp_frame(&hex::decode(LIB_HMAC128).unwrap())],
    );
    std::fs::write(
        d.p("bad.toml"),
        "[[key]]\nid = 1\nmac = \"hmac-md5\"\nkey = \"00\"\n",
    )
    .unwrap();
    let (code, _, err) = run(gander()
        .args(["frame", "verify", "--keys"])
        .arg(d.p("bad.toml"))
        .arg(d.p("in.pcap")));
    assert_eq!(code, 2);
    assert!(err.contains("key 1") && err.contains("hmac-md5"), "{err}");
    std::fs::write(d.p("junk.pcap"), b"this is not a capture").unwrap();
    let (code, _, err) = run(gander()
        .args(["frame", "verify", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("junk.pcap")));
    assert_eq!(code, 2);
    assert!(err.contains("junk.pcap"), "{err}");
    let (code, _, err) = run(gander()
        .args(["frame", "protect", "--key-id", "9", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("in.pcap"))
        .arg(d.p("o.pcap")));
    assert_eq!(code, 2);
    assert!(err.contains("key id 9"), "{err}");
    // Unknown key id in a frame: a verdict, not a crash.
    std::fs::write(
        d.p("other.toml"),
        "[[key]]\nid = 5\nmac = \"hmac-sha256-80\"\nkey = \"00\"\n",
    )
    .unwrap();
    let (code, out, _) = run(gander()
        .args([
            "frame",
            "verify",
            "--json",
            "--profile",
            "libiec61850",
            "--keys",
        ])
        .arg(d.p("other.toml"))
        .arg(d.p("in.pcap")));
    assert_eq!(code, 1);
    assert_eq!(verdicts(&out)[0]["verdict"], "unknown-key");
}

/// libiec61850 1.6.1's SV frame (golden record `lib-sv-9-2-unsecured`).
const LIB_SV: &str = "010ccd0100016ef6635b6b5088ba4000004c000000006042800101a23d303b800a47414e4445524d553031820200008304000000018501008720000003e8000007d000000bb800000fa0000013880000177000001b5800001f40";

fn sv_at(smp: u16) -> Vec<u8> {
    let mut f = hex::decode(LIB_SV).unwrap();
    let at = f.windows(2).position(|w| w == [0x82, 0x02]).unwrap() + 2;
    f[at..at + 2].copy_from_slice(&smp.to_be_bytes());
    f
}

fn write_pcap_at(path: &Path, frames: &[(Duration, Vec<u8>)]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (ts, f) in frames {
        w.write_packet(&PcapPacket::new(*ts, f.len() as u32, f))
            .unwrap();
    }
}

#[test]
fn sv_and_ipv6_protect_show_verify() {
    let d = Dir::new();
    // Five SV frames 1/4800 s apart, then a replay of the first and of a frame from a turn
    // earlier sent ahead of the clock, at the capture's own timestamps.
    let t0 = Duration::from_secs(1_790_000_000);
    let period = Duration::from_nanos(1_000_000_000 / 4800);
    let mut frames: Vec<(Duration, Vec<u8>)> = (0..5u16)
        .map(|i| (t0 + period * i as u32, sv_at(i)))
        .collect();
    // IPv6 R-GOOSE (libiec61850's payload) to ff05::102.
    let eth = EthernetRepr {
        dst: [0x33, 0x33, 0, 0, 1, 2],
        src: [2, 0, 0, 0, 0, 1],
        vlan: None,
        ethertype: 0,
    };
    let mut group = [0u8; 16];
    group[..2].copy_from_slice(&[0xff, 0x05]);
    group[14..].copy_from_slice(&[1, 2]);
    let mut src = [0u8; 16];
    src[0] = 0xfd;
    src[15] = 1;
    let v6 = gander_wire::ipv6::Udp6FrameRepr {
        eth,
        src_addr: src,
        dst_addr: group,
        src_port: 102,
        dst_port: 102,
        traffic_class: 0,
        hop_limit: 64,
    }
    .to_vec(&hex::decode(LIB_PLAIN).unwrap())
    .unwrap();
    frames.push((t0 + period * 5, v6));
    write_pcap_at(&d.p("plain.pcap"), &frames);
    let (code, stdout, _) = run(gander()
        .args(["frame", "show", "--json", "--profile", "libiec61850"])
        .arg(d.p("plain.pcap")));
    assert_eq!(code, 0);
    let shown = verdicts(&stdout);
    assert_eq!(shown[0]["kind"], "sv");
    assert_eq!(shown[0]["sv"]["asdus"][0]["svID"], "GANDERMU01");
    assert_eq!(shown[3]["sv"]["asdus"][0]["smpCnt"], 3);
    assert_eq!(shown[5]["kind"], "session");
    assert_eq!(shown[5]["src"], "[fd00::1]:102");

    let (code, _, stderr) = run(gander()
        .args([
            "frame",
            "protect",
            "--profile",
            "libiec61850",
            "--key-id",
            "1",
            "--keys",
        ])
        .arg(d.p("keys.toml"))
        .arg(d.p("plain.pcap"))
        .arg(d.p("prot.pcap")));
    assert_eq!(code, 0, "{stderr}");
    // The protected frames, plus replays appended at later capture times.
    let mut reader =
        pcap_file::pcap::PcapReader::new(std::fs::File::open(d.p("prot.pcap")).unwrap()).unwrap();
    let mut prot = Vec::new();
    while let Some(p) = reader.next_packet() {
        prot.push(p.unwrap().data.into_owned());
    }
    let mut again: Vec<(Duration, Vec<u8>)> = prot
        .iter()
        .enumerate()
        .map(|(i, f)| (t0 + period * i as u32, f.clone()))
        .collect();
    again.push((t0 + period * 6, prot[0].clone()));
    write_pcap_at(&d.p("replay.pcap"), &again);
    let (code, stdout, _) = verify_json(&d, "libiec61850", "prot.pcap");
    assert_eq!(code, 0, "{stdout}");
    let v = verdicts(&stdout);
    for (i, x) in v.iter().take(5).enumerate() {
        assert_eq!(
            (x["kind"].as_str(), x["verdict"].as_str()),
            (Some("sv"), Some("verified"))
        );
        assert_eq!(x["smp_cnt"], i);
    }
    assert_eq!(v[5]["kind"], "r-goose");
    assert_eq!(v[5]["verdict"], "verified");
    let (code, stdout, _) = verify_json(&d, "libiec61850", "replay.pcap");
    assert_eq!(code, 1);
    assert_eq!(verdicts(&stdout)[6]["verdict"], "replay");
    // --sv-wrap 0 is a usage error.
    let (code, _, stderr) = run(gander()
        .args(["frame", "verify", "--sv-wrap", "0", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("prot.pcap")));
    assert_ne!(code, 0);
    assert!(stderr.contains("--sv-wrap"), "{stderr}");
}

/// The LIB_L2 frame without its security extension.
fn l2_plain() -> Vec<u8> {
    let mut f = hex::decode(LIB_L2).unwrap();
    f.truncate(f.len() - 34);
    let len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&len.to_be_bytes());
    f[18..22].copy_from_slice(&[0; 4]);
    f
}

#[test]
fn protect_refuses_signatures_that_cannot_fit() {
    use gander_sec::signature::{SignatureAlgorithm, SigningKey};
    let d = Dir::new();
    write_pcap(&d.p("plain.pcap"), &[l2_plain()]);
    for (alg, sig_len, limit) in [
        (SignatureAlgorithm::MlDsa44, "2420", "1500"),
        (SignatureAlgorithm::SlhDsaSha2_128s, "7856", "4095"),
    ] {
        let sk = SigningKey::generate(alg, 0).unwrap();
        std::fs::write(d.p("pq.key"), sk.to_pkcs8_pem().unwrap().as_bytes()).unwrap();
        std::fs::write(
            d.p("pq.toml"),
            format!("[[key]]\nid = 9\nsig = \"{alg}\"\nprivate_key_file = \"pq.key\"\n"),
        )
        .unwrap();
        let (code, _, err) = run(gander()
            .args(["frame", "protect", "--key-id", "9", "--keys"])
            .arg(d.p("pq.toml"))
            .arg(d.p("plain.pcap"))
            .arg(d.p("out.pcap")));
        assert_eq!(code, 2, "{alg}: {err}");
        assert!(
            err.contains("key id 9 cannot protect any GOOSE frame")
                && err.contains(sig_len)
                && err.contains(limit)
                && err.contains(alg.name()),
            "{alg}: {err}"
        );
    }
}

#[test]
fn ascon_round_trips_under_the_experimental_profile() {
    let d = Dir::new();
    std::fs::write(
        d.p("ascon.toml"),
        "[[key]]\nid = 5\nenc = \"ascon-aead128\"\nkey = \"000102030405060708090a0b0c0d0e0f\"\n\
         [[key]]\nid = 6\nmac = \"ascon-aead128-mac\"\nkey = \"000102030405060708090a0b0c0d0e0f\"\n",
    )
    .unwrap();
    let apdu_hex = "73696d706c65494f47656e65726963494f";
    write_pcap(
        &d.p("rgoose.pcap"),
        &[udp_frame(&hex::decode(LIB_PLAIN).unwrap())],
    );
    write_pcap(&d.p("l2.pcap"), &[l2_plain()]);
    for (key_id, input) in [("5", "rgoose.pcap"), ("6", "l2.pcap")] {
        // The standard profile refuses the key.
        let (code, _, err) = run(gander()
            .args(["frame", "protect", "--key-id", key_id, "--keys"])
            .arg(d.p("ascon.toml"))
            .arg(d.p(input))
            .arg(d.p("out.pcap")));
        assert_eq!(code, 2);
        assert!(err.contains("experimental"), "{err}");
        let (code, _, err) = run(gander()
            .args([
                "frame",
                "protect",
                "--profile",
                "experimental",
                "--key-id",
                key_id,
                "--keys",
            ])
            .arg(d.p("ascon.toml"))
            .arg(d.p(input))
            .arg(d.p("out.pcap")));
        assert_eq!(code, 0, "{err}");
        if key_id == "5" {
            let bytes = std::fs::read(d.p("out.pcap")).unwrap();
            assert!(!hex::encode(&bytes).contains(apdu_hex), "payload visible");
        }
        let (code, out, err) = run(gander()
            .args([
                "frame",
                "verify",
                "--json",
                "--profile",
                "experimental",
                "--keys",
            ])
            .arg(d.p("ascon.toml"))
            .arg(d.p("out.pcap")));
        assert_eq!(code, 0, "{err}\n{out}");
        assert_eq!(verdicts(&out)[0]["verdict"], "verified");
        let (code, _, _) = run(gander()
            .args([
                "frame",
                "verify",
                "--json",
                "--profile",
                "standard",
                "--keys",
            ])
            .arg(d.p("ascon.toml"))
            .arg(d.p("out.pcap")));
        assert_eq!(code, 1);
    }
}

/// A layer-2 GOOSE frame of the testkit's control block with stNum `st`, sqNum `sq` and `t`
/// seconds (UtcTime, fraction 0).
fn goose_at(st: u32, sq: u32, t: u32) -> Vec<u8> {
    let mut f = gander_testkit::frames::goose_frame(
        [0, 0xa0, 0xf4, 8, 0x2f, 0x77],
        [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
        None,
        1,
        st,
        sq,
    );
    // The testkit's t, replaced in place (same length).
    let old = [0x66, 0, 0, 0, 0, 0, 0, 0x0a];
    let at = f.windows(8).position(|w| w == old).expect("t in the frame");
    f[at..at + 4].copy_from_slice(&t.to_be_bytes());
    f
}

/// A publisher restart as a public capture shows one (ITI/ICS-Security-Tools,
/// pcaps/IEC61850/GOOSE/GOOSE.pcap: a GE F650 sends stNum 1, sqNum 10, 11, 12 with one `t`, then
/// restarts and sends stNum 1, sqNum 1..5 with a `t` 78 s later). Protected and verified, every
/// frame passes: the restart is recognised by its later authenticated `t`. Before, the five
/// frames after the restart were dropped as `replay` (NotNewer). A frame from before the
/// restart, replayed after it, is still a replay.
#[test]
fn a_goose_publisher_restart_verifies_and_the_frames_before_it_do_not_replay() {
    let (before, after) = (946_781_171u32, 946_781_249u32);
    let mut plain: Vec<Vec<u8>> = (10..=12).map(|sq| goose_at(1, sq, before)).collect();
    plain.extend((1..=5).map(|sq| goose_at(1, sq, after)));
    // Replayed: the last frame before the restart (stNum 1, sqNum 12), the last after it.
    every_frame_verifies_and_these_replay(&plain, &[2, 7]);
}

/// Protects `plain` with key 1, checks that every frame verifies, then appends copies of the
/// protected frames at `replays` and checks that each copy is a `replay`.
fn every_frame_verifies_and_these_replay(plain: &[Vec<u8>], replays: &[usize]) {
    let d = Dir::new();
    write_pcap(&d.p("restart.pcap"), plain);
    let (code, _, err) = run(gander()
        .args(["frame", "protect", "--key-id", "1", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("restart.pcap"))
        .arg(d.p("prot.pcap")));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = verify_json(&d, "standard", "prot.pcap");
    assert_eq!(code, 0, "{err}\n{out}");
    let v = verdicts(&out);
    assert_eq!(v.len(), plain.len());
    assert!(v.iter().all(|x| x["verdict"] == "verified"), "{out}");
    let mut reader =
        pcap_file::pcap::PcapReader::new(std::fs::File::open(d.p("prot.pcap")).unwrap()).unwrap();
    let mut prot = Vec::new();
    while let Some(p) = reader.next_packet() {
        prot.push(p.unwrap().data.into_owned());
    }
    let mut again = prot.clone();
    again.extend(replays.iter().map(|&i| prot[i].clone()));
    write_pcap(&d.p("replayed.pcap"), &again);
    let (code, out, _) = verify_json(&d, "standard", "replayed.pcap");
    assert_eq!(code, 1, "{out}");
    let v = verdicts(&out);
    for i in 0..replays.len() {
        assert_eq!(v[prot.len() + i]["verdict"], "replay", "{out}");
    }
}

/// libiec61850's unsecured R-GOOSE SPDU with SPDU number `n` and the GOOSE APDU's `t` seconds.
fn rgoose_at(n: u32, t: u32) -> Vec<u8> {
    let mut p = hex::decode(LIB_PLAIN).unwrap();
    p[10..14].copy_from_slice(&n.to_be_bytes());
    let at = p.windows(2).position(|w| w == [0x84, 0x08]).expect("t") + 2;
    p[at..at + 4].copy_from_slice(&t.to_be_bytes());
    udp_frame(&p)
}

/// The same restart over R-GOOSE: a publisher restarted under the same key numbers its SPDUs
/// from 1 again, which the SPDU-number window alone refused as `replay` (TooOld) until the
/// numbers passed the old ones; its first APDU's later authenticated `t` now makes it a
/// restart. SPDUs from before the restart, replayed after it, stay replays.
#[test]
fn an_r_goose_publisher_restart_verifies_and_the_spdus_before_it_do_not_replay() {
    let (before, after) = (1_700_000_000u32, 1_700_000_078u32);
    let mut plain: Vec<Vec<u8>> = (5000..5003).map(|n| rgoose_at(n, before)).collect();
    plain.extend((1..=3).map(|n| rgoose_at(n, after)));
    every_frame_verifies_and_these_replay(&plain, &[2, 5]);
}

/// Writes `frames` as a pcap whose records keep (bytes captured, length on the wire), as a
/// capture with a snap length does.
fn write_cut_pcap(path: &Path, frames: &[(Vec<u8>, u32)]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (i, (f, orig)) in frames.iter().enumerate() {
        let ts = Duration::from_secs(1_790_000_000 + i as u64);
        w.write_packet(&PcapPacket::new(ts, *orig, f)).unwrap();
    }
}

/// The field test's `editcap -s 64` copy of a public capture (D_snap64p): every frame the snap
/// length cut was `malformed` ("truncated IPv4 packet"), NTP included, and `protect` stopped at
/// frame #1, an NTP frame. A cut frame is `capture-truncated` with both lengths and what its
/// headers show; `verify` does not call it a failure (unless --require-security, for IEC 61850
/// frames); `protect` copies cut other traffic as captured and stops at a cut GOOSE frame.
#[test]
fn frames_cut_by_the_snap_length_are_named_not_malformed() {
    let d = Dir::new();
    let mut ntp = udp_frame(&[0x23; 48]);
    // Port 123 both ways: an NTP datagram, not IEC 61850 (ports at 34..38).
    ntp[34..38].copy_from_slice(&[0, 123, 0, 123]);
    let goose = {
        let mut f = hex::decode(LIB_L2).unwrap();
        f.truncate(f.len() - 34);
        let len = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&len.to_be_bytes());
        f[18..22].copy_from_slice(&[0; 4]);
        f
    };
    let (nl, gl) = (ntp.len() as u32, goose.len() as u32);
    write_cut_pcap(
        &d.p("cut.pcap"),
        &[(ntp[..64].to_vec(), nl), (goose[..64].to_vec(), gl)],
    );
    let (code, out, err) = run(gander()
        .args(["frame", "show", "--json"])
        .arg(d.p("cut.pcap")));
    assert_eq!(code, 0, "{err}");
    let v = verdicts(&out);
    assert_eq!(v.len(), 2);
    for (o, carries, orig) in [(&v[0], "other", nl), (&v[1], "goose", gl)] {
        assert_eq!(o["kind"], "capture-truncated", "{o}");
        assert_eq!(o["carries"], carries, "{o}");
        assert_eq!(o["captured_len"], 64);
        assert_eq!(o["orig_len"], orig);
    }
    assert!(!out.contains("malformed"), "{out}");

    let (code, out, err) = verify_json(&d, "standard", "cut.pcap");
    assert_eq!(code, 0, "{err}\n{out}");
    let v = verdicts(&out);
    assert_eq!(v[1]["verdict"], "capture-truncated");
    assert_eq!(v[1]["ok"], true);
    assert!(err.contains("2 cut by the capture's snap length"), "{err}");
    let (code, out, _) = run(gander()
        .args(["frame", "verify", "--json", "--require-security", "--keys"])
        .arg(d.p("keys.toml"))
        .arg(d.p("cut.pcap")));
    assert_eq!(code, 1, "{out}");
    let v = verdicts(&out);
    assert_eq!(
        (v[0]["ok"].clone(), v[1]["ok"].clone()),
        (true.into(), false.into())
    );

    let protect = |input: &str, output: &str| {
        run(gander()
            .args(["frame", "protect", "--key-id", "1", "--keys"])
            .arg(d.p("keys.toml"))
            .arg(d.p(input))
            .arg(d.p(output)))
    };
    let (code, _, err) = protect("cut.pcap", "prot.pcap");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("frame #2") && err.contains("goose frame cut by the capture to 64 of"),
        "{err}"
    );
    assert!(!d.p("prot.pcap").exists());
    // Cut NTP and a whole GOOSE frame: the NTP record is copied cut, its length on the wire
    // kept; the GOOSE frame is protected.
    write_cut_pcap(
        &d.p("cut-ntp.pcap"),
        &[(ntp[..64].to_vec(), nl), (goose.clone(), gl)],
    );
    let (code, _, err) = protect("cut-ntp.pcap", "prot.pcap");
    assert_eq!(code, 0, "{err}");
    let mut r =
        pcap_file::pcap::PcapReader::new(std::fs::File::open(d.p("prot.pcap")).unwrap()).unwrap();
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!((&p.data[..], p.orig_len), (&ntp[..64], nl));
    let p = r.next_packet().unwrap().unwrap();
    assert!(p.data.len() > goose.len());
}
