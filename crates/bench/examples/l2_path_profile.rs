//! Where the layer-2 `gander` rows of `bench crypto` spend their time beyond the primitive:
//! loops `l2::protect_into` or `view::classify` + `view::verify` on the 12-object GOOSE frame
//! of the layer-2 AES-GMAC-128 row (259 covered bytes), or the bare MAC over the same bytes, for
//! a profiler (`perf record -g target/profiling/examples/l2_path_profile verify 3000000`), and
//! prints the mean time per call.
//!
//! Usage: `l2_path_profile [protect|verify|strip|mac|mac-verify|mac-in-frame|goose|goose-fields|all-data|classify|extension] [iterations] [gmac|ascon|hmac]`.
//!
//! The third argument picks the key: AES-GMAC-128 (the default, profile `standard`), the
//! Ascon-AEAD128 MAC (profile `experimental`) or HMAC-SHA256-128 (`standard`), on the same
//! frame. `strip` is what the gateway does with a verified frame it forwards to a legacy
//! subscriber: classify, verify, and write the frame without its extension
//! (`StrippedL2Repr`) into a reused buffer.

use gander_bench::crypto::{goose_apdu, ELEMENT_HEADER_LEN, HEADER_LEN_NO_IV, NOW};
use gander_sec::spdu::RandomIv;
use gander_sec::Profile;
use gander_sec::{default_provider, l2, view, EncAlgorithm, KeyEntry, KeyStore, MacAlgorithm};
use gander_wire::data;
use gander_wire::ethernet::{EthernetRepr, ETHERTYPE_GOOSE};
use gander_wire::goose::GooseView;
use gander_wire::l2_emit::StrippedL2Repr;
use gander_wire::l2_extension::ExtensionView;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use std::hint::black_box;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "verify".into());
    let n: usize = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let (mac, key_len, profile) = match args.next().as_deref() {
        None | Some("gmac") => (MacAlgorithm::AesGmac128, 16, Profile::Standard),
        Some("ascon") => (MacAlgorithm::AsconAead128Mac, 16, Profile::Experimental),
        Some("hmac") => (MacAlgorithm::HmacSha256_128, 32, Profile::Standard),
        Some(other) => return Err(format!("unknown algorithm {other}").into()),
    };
    let secret: Vec<u8> = (0..key_len as u8)
        .map(|i| i.wrapping_mul(29).wrapping_add(17))
        .collect();
    let mut store = KeyStore::new();
    store.insert(KeyEntry::new(
        3,
        mac,
        EncAlgorithm::None,
        &secret,
        default_provider(),
    )?)?;
    let entry = store.require(3)?;
    let apdu = goose_apdu(256 - HEADER_LEN_NO_IV - ELEMENT_HEADER_LEN, 12)?;
    let plain = L2Frame {
        eth: EthernetRepr {
            dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            src: [0x02, 0, 0, 0, 0, 0x01],
            vlan: None,
            ethertype: ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid: 0x3001,
            reserved1: 0,
            reserved2: 0,
            apdu,
            extension: None,
        },
    }
    .to_vec()?;
    let frame = l2::protect(profile, entry, &plain, &mut RandomIv, NOW)?;
    let v = view::classify(profile, &frame)?;
    let view::Content::L2(l) = &v.content else {
        return Err("not layer 2".into());
    };
    let ext_range = l.extension.clone().ok_or("no extension")?;
    let ext = ExtensionView::parse(&frame[ext_range.clone()])?;
    let covered = frame[l.header_offset - 2..ext_range.start + ext.layout.auth_value.end].to_vec();
    let covered_in_frame = &frame[l.header_offset - 2..ext_range.start + ext.layout.auth_value.end];
    let iv = ext.iv.unwrap_or_default().to_vec();
    let tag = ext.mac.to_vec();
    let apdu_bytes = &frame[l.apdu.clone()];
    let all_data = GooseView::parse(apdu_bytes)?.all_data;
    let mk = entry.mac_key().ok_or("no MAC key")?;
    let mut out = Vec::new();
    let mut ivs = RandomIv;
    let start = Instant::now();
    for _ in 0..n {
        match mode.as_str() {
            "protect" => {
                l2::protect_into(profile, entry, black_box(&plain), &mut ivs, NOW, &mut out)?;
                black_box(&out);
            }
            "verify" => {
                let v = view::classify(profile, black_box(&frame))?;
                black_box(view::verify(profile, &store, &v, NOW)?);
            }
            "strip" => {
                let v = view::classify(profile, black_box(&frame))?;
                black_box(view::verify(profile, &store, &v, NOW)?);
                let view::Content::L2(l) = &v.content else {
                    return Err("not layer 2".into());
                };
                let s = StrippedL2Repr::new(v.frame, l.header_offset, l.apdu.clone())?;
                out.resize(s.buffer_len(), 0);
                s.emit(&mut out)?;
                black_box(&out);
            }
            "mac" => {
                let mut t = [0u8; 16];
                mk.sign(black_box(&iv), black_box(&covered), &mut t[..tag.len()])?;
                black_box(&t);
            }
            "mac-verify" => mk.verify(black_box(&iv), black_box(&covered), black_box(&tag))?,
            // The same MAC over the covered bytes where they sit in the frame (from the
            // EtherType, offset 12), as protect and verify compute it.
            "mac-in-frame" => {
                let mut t = [0u8; 16];
                mk.sign(
                    black_box(&iv),
                    black_box(covered_in_frame),
                    &mut t[..tag.len()],
                )?;
                black_box(&t);
            }
            "goose" => {
                black_box(GooseView::parse(black_box(apdu_bytes))?);
            }
            "goose-fields" => {
                black_box(GooseView::parse_fields(black_box(apdu_bytes))?);
            }
            "all-data" => data::check_seq(black_box(all_data))?,
            "classify" => {
                black_box(view::classify(profile, black_box(&frame))?);
            }
            "extension" => {
                black_box(ExtensionView::parse(black_box(&frame[ext_range.clone()]))?);
            }
            other => return Err(format!("unknown mode {other}").into()),
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{mode}: {ns:.1} ns per call over {n} calls ({} covered bytes)",
        covered.len()
    );
    Ok(())
}
