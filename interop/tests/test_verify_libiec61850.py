"""(a) gander verifies every libiec61850 1.6.1 R-GOOSE mode, and rejects every single-bit flip.

Captures are published live by libiec61850 (interop/rgoose_publish.py). Contract (docs/frame-cli.md):
`gander frame verify --keys K --profile libiec61850 --json FILE` prints one JSON object per frame
(`index`, `ok`, `kind`, `verdict`, `key_id`, ...) and exits non-zero if any secured frame fails.
"""
from __future__ import annotations

import random

import pytest

import pcap
import rgoose_layout
from conftest import FRAMES, verify
from modes import MODES, SECURED_MODES

SEED = 61850
RANDOM_FLIPS = 64
MAC_LEN = {"hmac-sha256-128": 16, "hmac-sha256-256": 32}


@pytest.mark.parametrize("mode", list(MODES))
def test_verify_accepts_libiec61850_capture(gander, captures, mode):
    m = MODES[mode]
    cap = captures[mode]
    v = verify(gander, cap["keys"], cap["pcap"])
    assert v.rc == 0, v.describe()
    for f, exp in zip(v.require(FRAMES), cap["meta"]["frames"]):
        where = f"frame {f['index']}: {f}"
        assert f["ok"] is True, where
        assert f["kind"] == "r-goose", where
        if m.secured:
            assert f["verdict"] != "unsecured", where
            assert f.get("key_id") == m.key_id, where
        else:
            assert f["verdict"] == "unsecured", where
        if f.get("spdu_number") is not None:
            assert f["spdu_number"] == exp["spdu_number"], where
        # stNum/sqNum where gander reports them (an encrypted frame's only after decryption)
        if f.get("st_num") is not None:
            assert f["st_num"] == exp["st_num"], where
        if f.get("sq_num") is not None:
            assert f["sq_num"] == exp["sq_num"], where


def flip_plan(payloads: list[bytes], seed: int = SEED) -> list[tuple[int, int, int]]:
    """(frame, byte, bit): every byte of frame 0 (bit = byte % 8), plus random positions in all frames."""
    rng = random.Random(seed)
    plan = [(0, pos, pos % 8) for pos in range(len(payloads[0]))]
    for _ in range(RANDOM_FLIPS):
        k = rng.randrange(len(payloads))
        pos = rng.randrange(len(payloads[k]))
        plan.append((k, pos, rng.randrange(8)))
    return plan


@pytest.mark.parametrize("mode", [m.name for m in SECURED_MODES])
def test_verify_rejects_every_bit_flip(gander, captures, tmp_path, mode):
    """Each flipped frame must fail, including flips in LI/TI, length fields, the KeyID (a flip to 0
    leaves IV/trailers that an unsecured frame must not have), the 85/length bytes around the MAC or
    tag (not MAC-covered, but a strict parser rejects them) and the tag itself."""
    m = MODES[mode]
    cap = captures[mode]
    payloads = pcap.rgoose_payloads(cap["pcap"])
    assert len(payloads) == FRAMES
    plan = flip_plan(payloads)
    flipped = []
    for k, pos, bit in plan:
        b = bytearray(payloads[k])
        b[pos] ^= 1 << bit
        flipped.append(bytes(b))
    out = tmp_path / f"{mode}.flipped.pcap"
    pcap.write_udp_pcap(out, flipped)

    v = verify(gander, cap["keys"], out)
    assert v.rc != 0, "gander exited 0 on a capture of tampered frames\n" + v.describe()
    verdicts = v.require(len(plan))
    passed = []
    for (k, pos, bit), f in zip(plan, verdicts):
        text = f"{f.get('verdict', '')} {f.get('error', '')}".lower()
        if f.get("ok") is not False or "replay" in text:
            lay = rgoose_layout.parse(payloads[k], mac_len=None if m.encrypted else MAC_LEN.get(m.mac))
            passed.append(f"frame {k} byte {pos} ({lay.field_at(pos)}) bit {bit}: {f}")
    assert not passed, (f"{len(passed)} of {len(plan)} single-bit flips were not rejected on their merits:\n"
                        + "\n".join(passed[:40]))
    for f in verdicts:
        assert f.get("error"), f"a failed verdict should carry `error`: {f}"
