//! The gateway's policy core on hostile frames, both directions. The first input byte picks the
//! rule set (bits 1-2) and the direction (bit 0); the rest is the Ethernet frame. What a gateway
//! forwards is handed to a second gateway with the same rules in the other direction (the far
//! end of a protected link), and the frame is offered twice (replay state). Nothing may panic,
//! and the counters must add up.
#![no_main]
use gander_gateway::{Config, Decision, Direction, Policy};
use gander_sec::spdu::IvSource;
use gander_sec::{default_provider, KeyStore};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
enc = "aes-128-gcm"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 3
mac = "aes-gmac-128"
key_ascii = "0123456789ABCDEF"
"#;

const HEAD: &str = "driver = \"udp\"\nkeys = \"k.toml\"\n";
const UDP: &str = "[udp]\nied_listen = \"127.0.0.1:1\"\nnet_peer = \"127.0.0.1:2\"\nnet_listen = \"127.0.0.1:3\"\nied_peer = \"127.0.0.1:4\"\n";

const RULES: [&str; 4] = [
    // Protect outbound, verify and strip inbound.
    "other_inbound = \"drop\"\n[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = 1\n[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n",
    // Encrypting key, verify keeping the security, libiec61850 framing.
    "profile = \"libiec61850\"\n[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_ids = [2, 3]\n[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\nkeep_security = true\n",
    // GOOSE <-> R-GOOSE translation.
    "[[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\naction = \"translate\"\nkey_id = 1\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"02:00:00:00:00:02\"\nsrc_ip = \"10.85.0.254\"\ndst_ip = \"10.85.0.2\"\n[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\nvlan = 10\n",
    // Seclib framing, per-APPID pass/drop and a default of pass.
    "profile = \"seclib\"\ndefault = \"pass\"\nother = \"drop\"\n[[rule]]\ndirection = \"outbound\"\nappid = 4096\naction = \"protect\"\nkey_id = 1\n[[rule]]\ndirection = \"inbound\"\nkind = \"r-sv\"\naction = \"drop\"\n[[rule]]\ndirection = \"inbound\"\nkind = \"goose\"\naction = \"verify\"\n",
];

struct CountingIv(u64);
impl IvSource for CountingIv {
    fn next_iv(&mut self) -> [u8; 12] {
        self.0 += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.0.to_be_bytes());
        iv
    }
}

fn policy(rules: &str) -> Policy {
    let (top, rules) = match rules.find("[[rule]]") {
        Some(i) => rules.split_at(i),
        None => (rules, ""),
    };
    let cfg = Config::from_toml(&format!("{HEAD}{top}\n{UDP}{rules}"), Path::new(".")).unwrap();
    let store = KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap();
    let mut p = Policy::new(&cfg, store).unwrap();
    p.set_iv_source(Box::new(CountingIv(0)));
    p
}

fn other(d: Direction) -> Direction {
    match d {
        Direction::Outbound => Direction::Inbound,
        Direction::Inbound => Direction::Outbound,
    }
}

fn check(p: &Policy) {
    for c in [&p.counters().outbound, &p.counters().inbound] {
        let dropped: u64 = c.dropped.values().sum();
        assert_eq!(c.received, c.forwarded + dropped);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let rules = RULES[usize::from(sel >> 1) % RULES.len()];
    let dir = if sel & 1 == 0 {
        Direction::Outbound
    } else {
        Direction::Inbound
    };
    let mut near = policy(rules);
    let mut far = policy(rules);
    // One output buffer per hop, kept across the calls as the drivers keep theirs, so outputs
    // are also written over earlier, longer ones.
    let (mut out1, mut out2, mut out3) = (Vec::new(), Vec::new(), Vec::new());
    for now in [0, 1_000_000_000] {
        if let Decision::Forward(out) = near.handle(dir, frame, now, &mut out1) {
            if let Decision::Forward(back) = far.handle(other(dir), &out, now, &mut out2) {
                let _ = near.handle(dir, &back, now, &mut out3);
            }
        }
    }
    check(&near);
    check(&far);
});
