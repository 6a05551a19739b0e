//! A long run of frames through one policy writes every output into the one buffer its caller
//! keeps (as each driver's packet thread does): the buffer moves or grows only for an output
//! longer than any before, so no forwarded frame allocates its output; and every output
//! is byte for byte what a fresh buffer gets, so nothing of a longer earlier output is left
//! behind a shorter one. Every rewriting path: protect, verify and strip, translation both
//! ways, on R-GOOSE and layer-2 GOOSE; and `keep_security`, which writes nothing.

use super::*;
use gander_sec::default_provider;
use gander_testkit::frames::{self as craft, UdpAddrs};
use std::path::Path;

/// IVs counted from 0, so that twin policies given the same frames write the same bytes.
struct CountingIv(u64);
impl IvSource for CountingIv {
    fn next_iv(&mut self) -> [u8; 12] {
        self.0 += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.0.to_be_bytes());
        iv
    }
}

const IED_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];
/// Frames per run: enough that an allocation per frame could not hide in a warm-up.
const FRAMES: u32 = 300;

fn policy(rules: &str) -> Policy {
    let text = format!(
        "driver = \"l2\"\nkeys = \"unused\"\nprofile = \"standard\"\nreflected = \"allow\"\n[l2]\nied = \"a\"\nnet = \"b\"\n{rules}"
    );
    let cfg = Config::from_toml(&text, Path::new(".")).unwrap();
    let keys = KeyStore::from_toml(
        gander_testkit::keys::ALGORITHMS,
        Path::new("."),
        default_provider(),
    )
    .unwrap();
    let mut p = Policy::new(&cfg, keys).unwrap();
    p.set_iv_source(Box::new(CountingIv(0)));
    p
}

const PROTECT: &str = "[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 1\n";
const STRIP: &str = "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n";
const KEEP: &str = "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkeep_security = true\n";
const TO_L2: &str = "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\n";
const TO_L2_SECURED: &str = "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\nkey_ids = [1, 2]\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\n";
const TO_RGOOSE: &str = "[[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\naction = \"translate\"\nkey_id = 1\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"02:00:00:00:00:02\"\nsrc_ip = \"10.85.0.254\"\ndst_ip = \"10.85.0.2\"\n";

fn rgoose(n: u32) -> Vec<u8> {
    craft::udp_frame(
        &UdpAddrs::IED_TO_SUB,
        &craft::rgoose_spdu(Profile::Standard, 0x10, n, 1, n),
    )
}

fn goose(sq: u32) -> Vec<u8> {
    craft::goose_frame(IED_MAC, GOOSE_DST, None, 0x10, 1, sq)
}

/// `frames` protected by a gateway with key 1 (distinct SPDU numbers or sqNum: none is a
/// replay of another).
fn secured(frames: impl Iterator<Item = Vec<u8>>) -> Vec<Vec<u8>> {
    let mut p = policy(PROTECT);
    frames
        .map(
            |f| match p.handle(Direction::Outbound, &f, 0, &mut Vec::new()) {
                Decision::Forward(b) => b.to_vec(),
                Decision::Drop(r) => panic!("protect refused: {r}"),
            },
        )
        .collect()
}

/// Runs `inputs` in `dir` through two twin policies of `rules`: one writing into a buffer kept
/// across frames, one into a fresh buffer per frame. Every frame must be forwarded the same way
/// with the same bytes by both, and the kept buffer may move or grow only for an output longer
/// than every earlier one (a BER length that gains an octet when sqNum passes 127, the first
/// R-GOOSE after a shorter GOOSE): never per frame. Returns the number of rewritten outputs.
fn run(rules: &str, dir: Direction, inputs: &[Vec<u8>]) -> usize {
    let (mut kept, mut fresh) = (policy(rules), policy(rules));
    let mut out = Vec::new();
    let (mut longest, mut last, mut grew) = (0, (std::ptr::null(), 0), 0);
    let mut rewritten = 0;
    for (i, f) in inputs.iter().enumerate() {
        let a = match kept.handle_at(dir, f, 0, i as u64, &mut out) {
            Decision::Forward(fw) => (fw.is_rewritten(), fw.to_vec()),
            Decision::Drop(r) => panic!("{rules}: frame {i} dropped: {r}"),
        };
        let b = match fresh.handle_at(dir, f, 0, i as u64, &mut Vec::new()) {
            Decision::Forward(fw) => (fw.is_rewritten(), fw.to_vec()),
            Decision::Drop(r) => panic!("{rules}: frame {i} dropped by the twin: {r}"),
        };
        assert_eq!(a, b, "{rules}: frame {i}");
        if !a.0 {
            assert_eq!(&a.1, f, "{rules}: frame {i}: unchanged means the input");
            continue;
        }
        rewritten += 1;
        let now = (out.as_ptr(), out.capacity());
        if now != last {
            assert!(
                out.len() > longest,
                "{rules}: frame {i} moved or grew the kept buffer for an output of {} octets, \
                 no longer than an earlier one ({longest})",
                out.len()
            );
            grew += 1;
        }
        (longest, last) = (longest.max(out.len()), now);
    }
    assert!(grew <= 3, "{rules}: the kept buffer grew {grew} times");
    rewritten
}

#[test]
fn every_rewriting_path_reuses_the_callers_buffer() {
    let n = FRAMES;
    let rgoose_in: Vec<_> = (1..=n).map(|_| rgoose(1)).collect();
    let goose_in: Vec<_> = (1..=n).map(|_| goose(1)).collect();
    let rgoose_secured = secured((1..=n).map(rgoose));
    let goose_secured = secured((1..=n).map(goose));
    let cases: [(&str, &str, Direction, &[Vec<u8>]); 7] = [
        ("R-GOOSE protect", PROTECT, Direction::Outbound, &rgoose_in),
        ("R-GOOSE strip", STRIP, Direction::Inbound, &rgoose_secured),
        ("GOOSE protect", PROTECT, Direction::Outbound, &goose_in),
        ("GOOSE strip", STRIP, Direction::Inbound, &goose_secured),
        (
            "R-GOOSE to GOOSE",
            TO_L2,
            Direction::Inbound,
            &rgoose_secured,
        ),
        (
            "R-GOOSE to secured GOOSE",
            TO_L2_SECURED,
            Direction::Inbound,
            &rgoose_secured,
        ),
        (
            "GOOSE to R-GOOSE",
            TO_RGOOSE,
            Direction::Outbound,
            &goose_in,
        ),
    ];
    for (what, rules, dir, inputs) in cases {
        assert_eq!(run(rules, dir, inputs), inputs.len(), "{what}");
    }
    // Kept security: forwarded as received, nothing written.
    assert_eq!(run(KEEP, Direction::Inbound, &rgoose_secured), 0);
    assert_eq!(run(KEEP, Direction::Inbound, &goose_secured), 0);
}

#[test]
fn outputs_of_different_lengths_share_one_buffer() {
    // R-GOOSE and layer-2 GOOSE protected in turn by one rule: each output is written over the
    // other's, longer or shorter, and must come out whole and alone.
    let inputs: Vec<_> = (1..=FRAMES)
        .map(|i| if i % 2 == 0 { rgoose(i) } else { goose(i) })
        .collect();
    assert_eq!(run(PROTECT, Direction::Outbound, &inputs), inputs.len());
    let back = secured(inputs.into_iter());
    assert_eq!(run(STRIP, Direction::Inbound, &back), back.len());
}
