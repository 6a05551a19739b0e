//! Reader for `tests/vectors/golden_frames.txt`: GOOSE and R-GOOSE frames written by other
//! implementations (libiec61850, the gateway paper's SecLib), one record per frame with its
//! source, layer, profile, key id, key and algorithms. Where each frame comes from is stated in
//! the file's header; the layouts are described in `docs/session-layout.md`.
//!
//! The file is compiled in, so the tests need nothing outside the repository at run time.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use crate::records::{parse_records, Record};
use gander_sec::{default_provider, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm, Profile};

const PATH: &str = "tests/vectors/golden_frames.txt";
const TEXT: &str = include_str!("../../vectors/golden_frames.txt");

/// One record of the file.
#[derive(Debug, Clone)]
pub(crate) struct Golden(Record);

impl Golden {
    pub(crate) fn field(&self, name: &str) -> &str {
        self.0.field(name)
    }

    pub(crate) fn name(&self) -> &str {
        self.field("Name")
    }

    fn hex(&self, name: &str) -> Vec<u8> {
        self.0.hex(name)
    }

    /// The frame's bytes (a UDP payload or a whole Ethernet frame, see [`Golden::is_ethernet`]).
    pub(crate) fn frame(&self) -> Vec<u8> {
        self.hex("Frame")
    }

    /// Whether the frame is a whole Ethernet frame rather than a UDP payload.
    pub(crate) fn is_ethernet(&self) -> bool {
        match self.field("Layer") {
            "ethernet" => true,
            "udp-payload" => false,
            other => panic!("{}: unknown Layer {other}", self.0.origin),
        }
    }

    pub(crate) fn profile(&self) -> Profile {
        self.field("Profile")
            .parse()
            .unwrap_or_else(|_| panic!("{}: unknown Profile", self.0.origin))
    }

    pub(crate) fn key_id(&self) -> u32 {
        self.field("KeyId")
            .parse()
            .unwrap_or_else(|_| panic!("{}: KeyId is not a number", self.0.origin))
    }

    pub(crate) fn key(&self) -> Vec<u8> {
        self.hex("Key")
    }

    pub(crate) fn mac(&self) -> MacAlgorithm {
        self.field("Mac")
            .parse()
            .unwrap_or_else(|_| panic!("{}: unknown Mac", self.0.origin))
    }

    pub(crate) fn enc(&self) -> EncAlgorithm {
        self.field("Enc")
            .parse()
            .unwrap_or_else(|_| panic!("{}: unknown Enc", self.0.origin))
    }

    /// A key store holding this record's key under its key id, with its algorithms.
    pub(crate) fn store(&self) -> KeyStore {
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
pub(crate) fn all() -> Vec<Golden> {
    parse_records(PATH, TEXT).into_iter().map(Golden).collect()
}

/// The record called `name`.
pub(crate) fn get(name: &str) -> Golden {
    all()
        .into_iter()
        .find(|g| g.name() == name)
        .unwrap_or_else(|| panic!("{PATH}: no record named {name}"))
}
