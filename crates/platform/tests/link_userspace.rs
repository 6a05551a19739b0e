//! The userspace link emulator between two network namespaces achieves the profile it is given:
//! one-way delay within 2.5 ms and rate within 40% of a 10 ms / 10 Mbit/s profile. Needs root
//! (network namespaces): fails with the reason elsewhere, or skips saying so when
//! `GANDER_SKIP_NETNS=1` (`gander_testkit::netns`).
use gander_platform::link::profile::LinkProfile;
use gander_platform::link::{LinkEnv, LinkError};
use gander_platform::scenario::EmulatorChoice;

#[test]
fn userspace_relay_achieves_delay_and_rate() {
    if !gander_testkit::netns::available("userspace_relay_achieves_delay_and_rate") {
        return;
    }
    let env = LinkEnv::up().unwrap();
    let p = LinkProfile {
        name: "test",
        delay_ms: 10.0,
        jitter_ms: 0.0,
        loss_pct: 0.0,
        rate_mbit: 10.0,
        source: "test",
    };
    let link = env.start(p, EmulatorChoice::Userspace).unwrap();
    assert!(link.emulator.contains("userspace"));
    let m = env.measure(&p).unwrap();
    let d = m["achieved"]["one_way_delay_ms"].as_f64().unwrap();
    let r = m["achieved"]["rate_mbit"].as_f64().unwrap();
    // Bounds leave room for a loaded CI machine; the point is that the delay and the rate are
    // applied (10 ms of delay, a rate cap near 10 Mbit/s), not their precision (see docs/scenarios.md).
    assert!((9.9..12.5).contains(&d), "delay {d} ms: {m}");
    assert!((6.0..11.0).contains(&r), "rate {r} Mbit/s: {m}");
    drop(link);
    // netem is refused with a reason on a kernel without it.
    if !env.netem_available() {
        let e = env.start(p, EmulatorChoice::Netem).err().unwrap();
        assert!(matches!(e, LinkError::NoNetem), "{e}");
        assert!(e.to_string().contains("no tc netem"), "{e}");
    }
}
