//! BER BIT STRING values with named-bit access (X.690 8.6).
//!
//! MMS and IEC 61850 use bit strings for the initiate parameter CBB and servicesSupported
//! (ISO 9506-2 clause 8.2), for OptFlds, TrgOps, the report inclusion field and reason codes
//! (IEC 61850-8-1 clauses 17.2 and 8.1.3.x). Bit 0 is the most significant bit of the first
//! octet (X.690 8.6.2.1), which is how IEC 61850-8-1 numbers OptFlds and TrgOps bits.

use gander_wire::data::Data;

/// A bit string of `len()` bits, stored MSB first; padding bits are zero.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BitString {
    bytes: Vec<u8>,
    len: usize,
}

impl BitString {
    /// `len` bits, all clear.
    pub fn new(len: usize) -> Self {
        BitString {
            bytes: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// `len` bits with the given bits set (bits beyond `len` are ignored).
    pub fn with_bits(len: usize, set: &[usize]) -> Self {
        let mut b = BitString::new(len);
        for &i in set {
            b.set(i, true);
        }
        b
    }

    /// From BER contents: the unused-bits octet and the octets (X.690 8.6.2). Padding bits
    /// are cleared so that equality compares only meaningful bits.
    pub fn from_parts(unused_bits: u8, bytes: &[u8]) -> Option<Self> {
        if unused_bits > 7 || (bytes.is_empty() && unused_bits != 0) {
            return None;
        }
        let mut v = bytes.to_vec();
        if let Some(last) = v.last_mut() {
            *last &= 0xffu8 << unused_bits;
        }
        Some(BitString {
            len: bytes.len() * 8 - unused_bits as usize,
            bytes: v,
        })
    }

    /// From BER contents octets (first octet = number of unused bits).
    pub fn from_contents(contents: &[u8]) -> Option<Self> {
        let (&unused, bytes) = contents.split_first()?;
        BitString::from_parts(unused, bytes)
    }

    /// From a `Data::BitString`.
    pub fn from_data(d: &Data) -> Option<Self> {
        match d {
            Data::BitString { unused_bits, bytes } => BitString::from_parts(*unused_bits, bytes),
            _ => None,
        }
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the string has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of unused bits in the last octet.
    pub fn unused_bits(&self) -> u8 {
        (self.bytes.len() * 8 - self.len) as u8
    }

    /// The octets (padding bits zero).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Bit `i`, counted from the MSB of the first octet; false beyond the end.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.bytes[i / 8] & (0x80 >> (i % 8)) != 0
    }

    /// Set or clear bit `i`; ignored beyond the end.
    pub fn set(&mut self, i: usize, v: bool) {
        if i < self.len {
            if v {
                self.bytes[i / 8] |= 0x80 >> (i % 8);
            } else {
                self.bytes[i / 8] &= !(0x80 >> (i % 8));
            }
        }
    }

    /// Indices of the set bits.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.get(i))
    }

    /// Bitwise AND over the common length; the result has `self`'s length.
    pub fn and(&self, other: &BitString) -> BitString {
        let mut out = self.clone();
        for (i, b) in out.bytes.iter_mut().enumerate() {
            *b &= other.bytes.get(i).copied().unwrap_or(0);
        }
        out
    }

    /// BER contents octets: unused-bits octet then the octets.
    pub fn contents(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(1 + self.bytes.len());
        v.push(self.unused_bits());
        v.extend_from_slice(&self.bytes);
        v
    }

    /// As an MMS `Data::BitString`.
    pub fn to_data(&self) -> Data {
        Data::BitString {
            unused_bits: self.unused_bits(),
            bytes: self.bytes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn libiec61850_optflds_and_trgops() {
        // OptFlds 84 03 06 7800: seq-num, time-stamp, reason, data-set (`docs/mms-bytes.md` §2).
        let o = BitString::from_contents(&[0x06, 0x78, 0x00]).unwrap();
        assert_eq!(o.len(), 10);
        assert_eq!(o.ones().collect::<Vec<_>>(), vec![1, 2, 3, 4]);
        // TrgOps 84 02 02 44: dchg and GI.
        let t = BitString::from_contents(&[0x02, 0x44]).unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!(t.ones().collect::<Vec<_>>(), vec![1, 5]);
        assert_eq!(
            BitString::with_bits(6, &[1, 5]).contents(),
            vec![0x02, 0x44]
        );
        assert!(BitString::from_contents(&[8, 0]).is_none());
        assert!(BitString::from_contents(&[1]).is_none());
        assert!(BitString::from_contents(&[]).is_none());
    }

    proptest! {
        #[test]
        fn round_trip(len in 0usize..80, bits in proptest::collection::vec(0usize..80, 0..10)) {
            let b = BitString::with_bits(len, &bits);
            let again = BitString::from_contents(&b.contents()).unwrap();
            prop_assert_eq!(&again, &b);
            prop_assert_eq!(BitString::from_data(&b.to_data()).unwrap(), b);
        }
    }
}
