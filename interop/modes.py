"""The libiec61850 R-GOOSE security modes the harness exercises, and their gander key-file entries.

libiec61850 1.6.1 binds the algorithms to the key id (protocol version 2 does not carry algorithm
codes), so every mode gets its own key id. 128-bit modes use the 16-byte ASCII key "0123456789ABCDEF"
(the key of the libiec61850 records in crates/sec/tests/vectors/golden_frames.txt); 256-bit modes use
a 32-byte ASCII key.
"""
from __future__ import annotations

import dataclasses

from iec import (SEC_AES_128_GCM, SEC_AES_256_GCM, SEC_NONE, SIG_HMAC_SHA256_128,
                 SIG_HMAC_SHA256_256, SIG_NONE)

KEY_128 = "0123456789ABCDEF"
KEY_256 = "0123456789ABCDEFGHIJKLMNOPQRSTUV"


@dataclasses.dataclass(frozen=True)
class Mode:
    name: str
    key_id: int  # 0: no key (unsecured)
    sec: int  # RSecurityAlgorithm
    sig: int  # RSignatureAlgorithm
    enc: str  # gander key file "enc"
    mac: str  # gander key file "mac"
    key_ascii: str

    @property
    def secured(self) -> bool:
        return self.key_id != 0

    @property
    def encrypted(self) -> bool:
        return self.sec != SEC_NONE

    @property
    def signed(self) -> bool:
        return self.sig != SIG_NONE

    def key_toml(self, key_id: int | None = None, key_ascii: str | None = None) -> str:
        return key_entry(self.key_id if key_id is None else key_id, self.mac, self.enc,
                         key_ascii=self.key_ascii if key_ascii is None else key_ascii)


MODES: dict[str, Mode] = {m.name: m for m in [
    Mode("none", 0, SEC_NONE, SIG_NONE, "none", "none", ""),
    Mode("aes-128-gcm", 1, SEC_AES_128_GCM, SIG_NONE, "aes-128-gcm", "none", KEY_128),
    Mode("aes-256-gcm", 2, SEC_AES_256_GCM, SIG_NONE, "aes-256-gcm", "none", KEY_256),
    Mode("hmac-sha256-128", 3, SEC_NONE, SIG_HMAC_SHA256_128, "none", "hmac-sha256-128", KEY_128),
    Mode("hmac-sha256-256", 4, SEC_NONE, SIG_HMAC_SHA256_256, "none", "hmac-sha256-256", KEY_256),
    Mode("aes-128-gcm+hmac-sha256-128", 5, SEC_AES_128_GCM, SIG_HMAC_SHA256_128,
         "aes-128-gcm", "hmac-sha256-128", KEY_128),
    Mode("aes-256-gcm+hmac-sha256-256", 6, SEC_AES_256_GCM, SIG_HMAC_SHA256_256,
         "aes-256-gcm", "hmac-sha256-256", KEY_256),
]}

SECURED_MODES = [m for m in MODES.values() if m.secured]


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def key_entry(key_id: int, mac: str, enc: str, *, key_ascii: str | None = None,
              key_hex: str | None = None) -> str:
    """One `[[key]]` table in gander's key-file format (docs/keys.md)."""
    lines = ["[[key]]", f"id = {key_id}", f"mac = {_toml_str(mac)}", f"enc = {_toml_str(enc)}"]
    if key_hex is not None:
        lines.append(f"key = {_toml_str(key_hex)}")
    elif key_ascii is not None:
        lines.append(f"key_ascii = {_toml_str(key_ascii)}")
    return "\n".join(lines) + "\n"


def keyring_toml(modes=None) -> str:
    """A key file holding the keys of the given (default: all secured) modes."""
    modes = SECURED_MODES if modes is None else [m for m in modes if m.secured]
    header = "# gander key file written by the interop harness (libiec61850 R-GOOSE modes)\n\n"
    return header + "\n".join(m.key_toml() for m in modes)
