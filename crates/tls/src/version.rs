//! TLS protocol versions: TLS 1.0 (RFC 2246), 1.1 (RFC 4346), 1.2 (RFC 5246) and 1.3 (RFC 8446).
//!
//! IEC 62351-3 Ed.1 Amd1/Amd2 makes TLS 1.2 mandatory and keeps 1.0/1.1 optional "with a warning";
//! IEC 62351-3 Ed.2 (2023) adds TLS 1.3 (see `docs/tls.md`).
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A TLS protocol version. SSL 3.0 is not offered by any backend here and is not representable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TlsVersion {
    /// TLS 1.0 (RFC 2246).
    #[serde(rename = "1.0")]
    Tls10,
    /// TLS 1.1 (RFC 4346).
    #[serde(rename = "1.1")]
    Tls11,
    /// TLS 1.2 (RFC 5246).
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 (RFC 8446).
    #[serde(rename = "1.3")]
    Tls13,
}

impl TlsVersion {
    /// Every version, oldest first.
    pub const ALL: [TlsVersion; 4] = [Self::Tls10, Self::Tls11, Self::Tls12, Self::Tls13];

    /// `ProtocolVersion` on the wire (RFC 5246 §6.2.1, RFC 8446 §4.2.1).
    pub fn wire(self) -> u16 {
        match self {
            Self::Tls10 => 0x0301,
            Self::Tls11 => 0x0302,
            Self::Tls12 => 0x0303,
            Self::Tls13 => 0x0304,
        }
    }

    /// The inverse of [`TlsVersion::wire`].
    pub fn from_wire(v: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.wire() == v)
    }

    /// Short form used in profiles: `"1.2"`.
    pub fn short(self) -> &'static str {
        match self {
            Self::Tls10 => "1.0",
            Self::Tls11 => "1.1",
            Self::Tls12 => "1.2",
            Self::Tls13 => "1.3",
        }
    }
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TLSv{}", self.short())
    }
}

/// A TLS version name [`TlsVersion`]'s parser does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown TLS version {0:?} (expected 1.0, 1.1, 1.2 or 1.3)")]
pub struct UnknownVersion(pub String);

impl From<UnknownVersion> for String {
    fn from(e: UnknownVersion) -> Self {
        e.to_string()
    }
}

/// Parses `1.2`, `TLS1.2`, `TLSv1.2` or `tls12` (case-insensitive).
impl FromStr for TlsVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, UnknownVersion> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix("tls").unwrap_or(&t);
        let t = t.strip_prefix('v').unwrap_or(t);
        match t {
            "1.0" | "10" => Ok(Self::Tls10),
            "1.1" | "11" => Ok(Self::Tls11),
            "1.2" | "12" => Ok(Self::Tls12),
            "1.3" | "13" => Ok(Self::Tls13),
            _ => Err(UnknownVersion(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_and_wire() {
        for v in TlsVersion::ALL {
            assert_eq!(v.short().parse::<TlsVersion>(), Ok(v));
            assert_eq!(v.to_string().parse::<TlsVersion>(), Ok(v));
            assert_eq!(TlsVersion::from_wire(v.wire()), Some(v));
        }
        assert!("1.4".parse::<TlsVersion>().is_err());
        assert!("ssl3".parse::<TlsVersion>().is_err());
    }
}
