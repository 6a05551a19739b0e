"""Field map of an IEC 61850-90-5 session PDU as libiec61850 1.6.1 writes it (protocol version 2).

Used by the tests to name the field a flipped bit landed in and to check captures independently of
gander (e.g. recompute libiec61850's HMAC with the stdlib). Offsets from the first UDP payload byte;
docs/session-layout.md §1 has the table this follows.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac


@dataclasses.dataclass
class Layout:
    spdu_number: int
    version: int
    key_id: int
    iv: bytes
    payload_start: int  # first byte after PayloadLength (payload type tag)
    payload_end: int  # end of the payload elements (start of the first 0x85 trailer, if any)
    trailers: list[tuple[int, int, bytes]]  # (offset, length byte, value): HMAC, or the GCM tag
    fields: list[tuple[str, int, int]]  # (name, start, end)

    def field_at(self, pos: int) -> str:
        for name, s, e in self.fields:
            if s <= pos < e:
                return name
        return "beyond-known-fields"


def parse(p: bytes, *, mac_len: int | None = None) -> Layout:
    """Parse a version-2 libiec61850 SPDU. ``mac_len``: true length of an unencrypted HMAC trailer
    (libiec61850 writes 32 bytes under a length byte of 16 for HMAC-SHA256-256)."""
    if len(p) < 31 or p[0] != 0x01 or p[1] != 0x40:
        raise ValueError("not a 90-5 session PDU")
    ivlen = p[26]
    ps = 27 + ivlen + 4
    plen = int.from_bytes(p[27 + ivlen:ps], "big")
    pe = ps + plen
    fields = [("LI", 0, 1), ("TI", 1, 2), ("SI", 2, 3), ("session-header-length", 3, 4),
              ("common-header-tag", 4, 5), ("common-header-length", 5, 6), ("spdu-length", 6, 10),
              ("spdu-number", 10, 14), ("version", 14, 16), ("time-of-current-key", 16, 20),
              ("time-to-next-key", 20, 22), ("key-id", 22, 26), ("iv-length", 26, 27),
              ("iv", 27, 27 + ivlen), ("payload-length", 27 + ivlen, ps),
              ("payload-type", ps, ps + 1), ("simulation", ps + 1, ps + 2), ("appid", ps + 2, ps + 4),
              ("apdu-length", ps + 4, ps + 6), ("apdu", ps + 6, pe)]
    trailers = []
    off = pe
    end = len(p)
    if ivlen:
        # Encrypted: MAC-then-encrypt, so an inner HMAC trailer (if any) is ciphertext; the GCM tag
        # trailer (85 10 + 16 bytes) ends the message.
        tag_off = max(pe, end - 18)
        if tag_off > pe:
            fields.append(("encrypted-hmac-trailer", pe, tag_off))
        trailers.append((tag_off, p[tag_off + 1] if tag_off + 1 < end else -1, p[tag_off + 2:end]))
        fields += [("gcm-tag-tag", tag_off, tag_off + 1), ("gcm-tag-length", tag_off + 1, tag_off + 2),
                   ("gcm-tag", tag_off + 2, end)]
    elif off + 2 <= end and p[off] == 0x85:
        ln = p[off + 1]
        # libiec61850's HMAC-SHA256-256 quirk: the length byte says 16 and 32 bytes follow.
        ln_eff = min(mac_len if mac_len is not None else ln, end - off - 2)
        trailers.append((off, ln, p[off + 2:off + 2 + ln_eff]))
        fields += [("mac-tag", off, off + 1), ("mac-length", off + 1, off + 2),
                   ("mac", off + 2, off + 2 + ln_eff)]
    return Layout(int.from_bytes(p[10:14], "big"), int.from_bytes(p[14:16], "big"),
                  int.from_bytes(p[22:26], "big"), p[27:27 + ivlen], ps, pe, trailers, fields)


def libiec61850_hmac(key: bytes, p: bytes, payload_end: int, out_len: int) -> bytes:
    """HMAC-SHA256 over LI..end of payload, truncated to ``out_len`` (libiec61850 encodePacket)."""
    return hmac.new(key, p[:payload_end], hashlib.sha256).digest()[:out_len]
