//! Reader for `tests/vectors/golden_frames.txt`: GOOSE and R-GOOSE frames written by other
//! implementations (libiec61850, the gateway paper's SecLib), one record per frame with its
//! source, layer, profile, key id, key and algorithms. Where each frame comes from is stated in
//! the file's header; the layouts are described in `docs/session-layout.md`.
//!
//! The file is compiled in, so the tests need nothing outside the repository at run time.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};

const PATH: &str = "tests/vectors/golden_frames.txt";
const TEXT: &str = include_str!("../vectors/golden_frames.txt");

/// One record of the file.
#[derive(Debug, Clone)]
pub struct Golden {
    /// 1-based line where the record starts, for messages.
    line: usize,
    fields: BTreeMap<String, String>,
}

impl Golden {
    pub fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("{PATH}:{}: no field {name}", self.line))
    }

    pub fn name(&self) -> &str {
        self.field("Name")
    }

    fn hex(&self, name: &str) -> Vec<u8> {
        hex::decode(self.field(name))
            .unwrap_or_else(|e| panic!("{PATH}:{}: {name} is not hex: {e}", self.line))
    }

    /// The frame's bytes (a UDP payload or a whole Ethernet frame, see [`Golden::is_ethernet`]).
    pub fn frame(&self) -> Vec<u8> {
        self.hex("Frame")
    }

    /// Whether the frame is a whole Ethernet frame rather than a UDP payload.
    pub fn is_ethernet(&self) -> bool {
        match self.field("Layer") {
            "ethernet" => true,
            "udp-payload" => false,
            other => panic!("{PATH}:{}: unknown Layer {other}", self.line),
        }
    }

    pub fn profile(&self) -> Profile {
        self.field("Profile")
            .parse()
            .unwrap_or_else(|_| panic!("{PATH}:{}: unknown Profile", self.line))
    }

    pub fn key_id(&self) -> u32 {
        self.field("KeyId")
            .parse()
            .unwrap_or_else(|_| panic!("{PATH}:{}: KeyId is not a number", self.line))
    }

    pub fn key(&self) -> Vec<u8> {
        self.hex("Key")
    }

    pub fn mac(&self) -> MacAlgorithm {
        self.field("Mac")
            .parse()
            .unwrap_or_else(|_| panic!("{PATH}:{}: unknown Mac", self.line))
    }

    pub fn enc(&self) -> EncAlgorithm {
        self.field("Enc")
            .parse()
            .unwrap_or_else(|_| panic!("{PATH}:{}: unknown Enc", self.line))
    }

    /// A key store holding this record's key under its key id, with its algorithms.
    pub fn store(&self) -> KeyStore {
        let mut s = KeyStore::new();
        s.insert(
            KeyEntry::new(
                self.key_id(),
                self.mac(),
                self.enc(),
                &self.key(),
                default_provider(),
            )
            .unwrap(),
        )
        .unwrap();
        s
    }
}

/// Every record, in file order.
pub fn all() -> Vec<Golden> {
    let mut out = Vec::new();
    let mut cur: Option<Golden> = None;
    for (i, raw) in TEXT.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            out.extend(cur.take());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let rec = cur.get_or_insert_with(|| Golden {
            line: i + 1,
            fields: BTreeMap::new(),
        });
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{PATH}:{}: not `Name = value`", i + 1));
        rec.fields
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    out.extend(cur);
    out
}

/// The record called `name`.
pub fn get(name: &str) -> Golden {
    all()
        .into_iter()
        .find(|g| g.name() == name)
        .unwrap_or_else(|| panic!("{PATH}: no record named {name}"))
}
