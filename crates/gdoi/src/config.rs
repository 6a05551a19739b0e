//! `gander kdc --config FILE`: the key server's TOML policy (groups, algorithms, lifetimes,
//! members with their PSK identity, address and push target), where its state file is
//! (`kdc_state`: keys, Key IDs, SEQ, KEK; mode 0600) and where events and metrics go
//! (docs/gdoi.md, "Key server").
//!
//! ```toml
//! listen = "0.0.0.0:848"
//! state = "/var/lib/gander/kdc-state.toml"   # written with mode 0600, refused if readable by others
//! identity = "kdc"
//! events = "stdout"             # stdout | unix:/dev/log | udp:HOST:PORT (RFC 5424), or json lines
//! metrics = "127.0.0.1:9848"    # OpenMetrics on GET /metrics (optional)
//!
//! [[group]]
//! id = "goose-1"
//! protocol = "goose"            # goose | sv | r-goose | r-sv
//! dst_mac = "01:0c:cd:01:00:01" # layer 2: destination MAC and APPID
//! appid = 1
//! # dst_ip = "239.0.0.1"        # R-GOOSE/R-SV: destination address and UDP port
//! # port = 102
//! mac = 2                       # IEC 62351-6 MAC code (2 = HMAC-SHA256-128)
//! enc = 0                       # IEC 62351-6 encryption code
//! lifetime_s = 3600
//! activation_delay_s = 0
//! overlap_s = 60
//! # oid = "1.2.840.10070.61850.8.1.1"  # the group's OID if not the protocol's: members may
//! #                                    # name the group by it (ID_OID, RFC 8052 2.1)
//!
//! [[member]]
//! identity = "ied-1"
//! address = "192.0.2.10"
//! psk_hex = "..."
//! groups = ["goose-1"]
//!
//! # Certificates (RFC 2409 5.1): the key server's own certificate (PEM, intermediates after
//! # it), its key, the CAs members' certificates must chain to, and optionally CRLs.
//! # cert = "/etc/gander/kdc.pem"
//! # key = "/etc/gander/kdc.key"
//! # ca = "/etc/gander/ca.pem"
//! # crl = "/etc/gander/ca.crl"
//!
//! [[member]]
//! identity = "ied-2"                     # a name for events; the certificate authenticates
//! subject = "O=Utility,CN=ied-2"         # or: san = "ied-2.substation.example"
//! groups = ["goose-1"]
//! push = "192.0.2.11:848"                 # where it listens for GROUPKEY-PUSH (optional)
//! # profile = "go-iec61850"              # what gander writes for it: rfc (default) or
//! #                                      # go-iec61850 (ECDSA signatures; docs/gdoi.md)
//! ```

use crate::cert_auth::{CertMatch, Credentials};
use crate::kdc_events::EventTarget;
use crate::net::kdc::{GroupPolicy, KdcPolicy, MemberPolicy};
use crate::profile::PeerProfile;
use crate::trust::TrustStore;
use gander_wire::isakmp::iec61850::{encode_oid, oid};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroize::Zeroizing;

/// Why a configuration or state file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Cannot read or write a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not valid TOML of the expected shape.
    #[error("{path}: {source}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// The error.
        source: toml::de::Error,
    },
    /// The key server's certificate, key, CA or CRL file cannot be used.
    #[error("certificates: {0}")]
    Cert(String),
    /// A value that is not allowed.
    #[error("{what}: {detail}")]
    Bad {
        /// Where.
        what: String,
        /// What is wrong.
        detail: &'static str,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGroup {
    id: String,
    protocol: String,
    /// The group's OID when not the protocol's (RFC 8052 2.1: members may name the group by
    /// it, ID_OID; `net::group_lookup`).
    #[serde(default)]
    oid: Option<String>,
    dst_mac: Option<String>,
    appid: Option<u16>,
    dst_ip: Option<IpAddr>,
    port: Option<u16>,
    mac: u16,
    enc: u16,
    lifetime_s: u64,
    #[serde(default)]
    activation_delay_s: u64,
    #[serde(default)]
    overlap_s: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMember {
    identity: String,
    address: Option<IpAddr>,
    psk_hex: Option<String>,
    subject: Option<String>,
    san: Option<String>,
    groups: Vec<String>,
    #[serde(default)]
    push: Option<SocketAddr>,
    /// What gander writes for this member (`profile::PeerProfile`): "rfc" (default) or
    /// "go-iec61850".
    #[serde(default)]
    profile: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: SocketAddr,
    state: PathBuf,
    #[serde(default = "default_identity")]
    identity: String,
    #[serde(default)]
    events: Option<String>,
    #[serde(default)]
    metrics: Option<SocketAddr>,
    #[serde(rename = "group", default)]
    groups: Vec<FileGroup>,
    #[serde(rename = "member", default)]
    members: Vec<FileMember>,
    cert: Option<OneOrMore>,
    key: Option<OneOrMore>,
    ca: Option<PathBuf>,
    crl: Option<PathBuf>,
}

/// `cert` and `key`: one file, or a list (one certificate per key type, in the same order).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMore {
    One(PathBuf),
    More(Vec<PathBuf>),
}

impl OneOrMore {
    fn paths(&self) -> &[PathBuf] {
        match self {
            OneOrMore::One(p) => std::slice::from_ref(p),
            OneOrMore::More(v) => v,
        }
    }
}

fn default_identity() -> String {
    "gander-kdc".into()
}

/// A loaded key server configuration.
pub struct KdcConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The state file.
    pub state_path: PathBuf,
    /// The policy (keys are in the state, `kdc_state`).
    pub policy: KdcPolicy,
    /// The key server's certificate credentials (`cert`, `key`, `ca`, `crl`), if configured:
    /// one per key type.
    pub credentials: Vec<Arc<Credentials>>,
    /// Where security events go.
    pub events: EventTarget,
    /// Where OpenMetrics are served, if anywhere.
    pub metrics: Option<SocketAddr>,
    /// The peer profile of each certificate member that names one (`[[member]] profile`); a
    /// pre-shared-key member's profile changes nothing gander writes today, so none is kept.
    pub profiles: Vec<(CertMatch, PeerProfile)>,
}

fn event_target(s: Option<&str>) -> Result<EventTarget, ConfigError> {
    let bad = || ConfigError::Bad {
        what: "events".into(),
        detail: "not stdout, json, unix:PATH or udp:HOST:PORT",
    };
    match s {
        None | Some("stdout") => Ok(EventTarget::Stdout),
        Some("json") => Ok(EventTarget::Json),
        Some(x) => {
            if let Some(p) = x.strip_prefix("unix:") {
                Ok(EventTarget::Unix(PathBuf::from(p)))
            } else if let Some(a) = x.strip_prefix("udp:") {
                a.parse().map(EventTarget::Udp).map_err(|_| bad())
            } else {
                Err(bad())
            }
        }
    }
}

fn parse_mac(s: &str, what: &str) -> Result<[u8; 6], ConfigError> {
    let bad = || ConfigError::Bad {
        what: what.into(),
        detail: "dst_mac is not six hex octets",
    };
    let v: Vec<u8> = s
        .split([':', '-'])
        .map(|x| u8::from_str_radix(x, 16))
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    v.try_into().map_err(|_| bad())
}

/// Loads the configuration (the state file is the key server's: `net::kdc::Kdc::open`).
pub fn load(path: &Path) -> Result<KdcConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.into(),
        source,
    })?;
    let f: FileConfig = toml::from_str(&text).map_err(|source| ConfigError::Toml {
        path: path.into(),
        source,
    })?;
    let mut groups = Vec::new();
    for g in &f.groups {
        let what = format!("group {}", g.id);
        if g.lifetime_s == 0 || g.activation_delay_s >= g.lifetime_s {
            return Err(ConfigError::Bad {
                what,
                detail: "lifetime_s must be at least 1 and above activation_delay_s",
            });
        }
        if groups.iter().any(|x: &GroupPolicy| x.id == g.id.as_bytes()) {
            return Err(ConfigError::Bad {
                what,
                detail: "two groups with one id",
            });
        }
        let o = match (g.protocol.as_str(), &g.oid) {
            (_, Some(o)) if ["goose", "sv", "r-goose", "r-sv"].contains(&g.protocol.as_str()) => {
                o.as_str()
            }
            ("goose", None) => oid::GOOSE,
            ("sv", None) => oid::SV,
            ("r-goose", None) => oid::R_GOOSE,
            ("r-sv", None) => oid::R_SV,
            _ => {
                return Err(ConfigError::Bad {
                    what,
                    detail: "protocol is not goose, sv, r-goose or r-sv",
                })
            }
        };
        let traffic = match (
            g.protocol.starts_with("r-"),
            &g.dst_mac,
            g.appid,
            g.dst_ip,
            g.port,
        ) {
            (false, Some(m), Some(appid), None, None) => Traffic::L2 {
                mac: parse_mac(m, &what)?,
                appid,
            },
            (true, None, None, Some(IpAddr::V4(a)), p) => Traffic::Ipv4 {
                addr: a.octets(),
                port: p.unwrap_or(102),
            },
            (true, None, None, Some(IpAddr::V6(a)), p) => Traffic::Ipv6 {
                addr: a.octets(),
                port: p.unwrap_or(102),
            },
            _ => {
                return Err(ConfigError::Bad {
                    what,
                    detail: "layer 2 needs dst_mac and appid, R-GOOSE/R-SV dst_ip (and port)",
                })
            }
        };
        encode_oid(o).map_err(|_| ConfigError::Bad {
            what: what.clone(),
            detail: "OID",
        })?;
        groups.push(GroupPolicy {
            id: g.id.as_bytes().to_vec(),
            oid: o.to_string(),
            traffic,
            mac_code: g.mac,
            enc_code: g.enc,
            lifetime_secs: g.lifetime_s,
            activation_delay_secs: g.activation_delay_s,
            overlap_secs: g.overlap_s,
            key_id: 0,
            key: Zeroizing::new(Vec::new()),
        });
    }
    let credentials = load_credentials(&f)?;
    let mut members = Vec::new();
    let mut profiles = Vec::new();
    for m in &f.members {
        let member = member_policy(m)?;
        if let Some(p) = &m.profile {
            let p: PeerProfile = p.parse().map_err(|_| ConfigError::Bad {
                what: format!("member {}", m.identity),
                detail: "profile is not one of rfc, go-iec61850, ipsec-doi",
            })?;
            if let Some(c) = &member.cert {
                profiles.push((c.clone(), p));
            }
        }
        if member.cert.is_some() && credentials.is_empty() {
            return Err(ConfigError::Bad {
                what: format!("member {}", m.identity),
                detail: "a certificate member needs the key server's cert, key and ca",
            });
        }
        if member.cert.is_none()
            && members
                .iter()
                .any(|x: &MemberPolicy| x.cert.is_none() && x.address == member.address)
        {
            return Err(ConfigError::Bad {
                what: format!("member {}", m.identity),
                detail: "two members at one address (main mode picks the PSK by address)",
            });
        }
        members.push(member);
    }
    for m in &f.members {
        if let Some(g) = m
            .groups
            .iter()
            .find(|g| !f.groups.iter().any(|x| &x.id == *g))
        {
            return Err(ConfigError::Bad {
                what: format!("member {} group {g}", m.identity),
                detail: "no such group",
            });
        }
    }
    Ok(KdcConfig {
        events: event_target(f.events.as_deref())?,
        metrics: f.metrics,
        listen: f.listen,
        state_path: f.state,
        policy: KdcPolicy {
            identity: IdPayload {
                id_type: id_type::KEY_ID,
                protocol: 0,
                port: 0,
                data: f.identity.into_bytes(),
            },
            members,
            groups,
        },
        credentials,
        profiles,
    })
}

/// One `[[member]]`: either a pre-shared key bound to an address, or a certificate named by
/// its subject or one subjectAltName.
fn member_policy(m: &FileMember) -> Result<MemberPolicy, ConfigError> {
    let bad = |detail| ConfigError::Bad {
        what: format!("member {}", m.identity),
        detail,
    };
    let groups = m.groups.iter().map(|g| g.as_bytes().to_vec()).collect();
    let identity = m.identity.as_bytes().to_vec();
    match (&m.psk_hex, &m.subject, &m.san) {
        (Some(psk_hex), None, None) => {
            let psk = hex::decode(psk_hex).map_err(|_| bad("psk_hex is not hex"))?;
            if psk.len() < 16 {
                return Err(bad("pre-shared key shorter than 16 octets"));
            }
            Ok(MemberPolicy {
                identity,
                psk: Zeroizing::new(psk),
                address: m
                    .address
                    .ok_or(bad("a pre-shared-key member needs its address"))?,
                groups,
                cert: None,
                push: m.push,
            })
        }
        (None, Some(_), None) | (None, None, Some(_)) => Ok(MemberPolicy {
            identity,
            psk: Zeroizing::new(Vec::new()),
            address: m.address.unwrap_or(IpAddr::from([0, 0, 0, 0])),
            groups,
            push: m.push,
            cert: Some(match (&m.subject, &m.san) {
                (Some(s), _) => CertMatch::Subject(s.clone()),
                (_, Some(s)) => CertMatch::San(s.clone()),
                _ => return Err(bad("subject or san")),
            }),
        }),
        _ => Err(bad("exactly one of psk_hex, subject or san")),
    }
}

/// The key server's credentials from `cert`, `key`, `ca` (and `crl`): all three or none; as
/// many keys as certificates, at most one per signature method.
fn load_credentials(f: &FileConfig) -> Result<Vec<Arc<Credentials>>, ConfigError> {
    let bad = |detail| ConfigError::Bad {
        what: "certificates".into(),
        detail,
    };
    let (cert, key, ca) = match (&f.cert, &f.key, &f.ca) {
        (None, None, None) if f.crl.is_none() => return Ok(Vec::new()),
        (Some(c), Some(k), Some(a)) => (c.paths(), k.paths(), a),
        _ => return Err(bad("cert, key and ca go together (crl needs them)")),
    };
    if cert.len() != key.len() || cert.is_empty() {
        return Err(bad("as many keys as certificates"));
    }
    let cred_err = |e: crate::cert_auth::CertError| ConfigError::Cert(e.to_string());
    let trust = Arc::new(TrustStore::load(ca, f.crl.as_deref()).map_err(cred_err)?);
    let mut v: Vec<Arc<Credentials>> = Vec::new();
    for (c, k) in cert.iter().zip(key) {
        let creds = Credentials::load(c, k, trust.clone()).map_err(cred_err)?;
        if v.iter().any(|x| x.method() == creds.method()) {
            return Err(bad("two certificates of one key type"));
        }
        v.push(Arc::new(creds));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../packaging/kdc.toml.example"
        ))
        .unwrap()
    }

    fn load_text(name: &str, text: &str) -> Result<KdcConfig, ConfigError> {
        let p = std::env::temp_dir().join(format!("gander-kdc-cfg-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        let r = load(&p);
        let _ = std::fs::remove_file(&p);
        r
    }

    #[test]
    fn shipped_example_loads() {
        let c = load_text("example", &example()).unwrap();
        assert_eq!(c.policy.groups.len(), 2);
        assert!(c.policy.members.iter().all(|m| m.push.is_some()));
        assert_eq!(c.events, EventTarget::Stdout);
        assert_eq!(c.metrics, Some("127.0.0.1:9848".parse().unwrap()));
    }

    #[test]
    fn member_profiles_are_read_and_unknown_names_refused() {
        let cert_member =
            "\n[[member]]\nidentity = \"go\"\nsan = \"go.example\"\ngroups = [\"goose-bay1\"]\n";
        // A certificate member needs the key server's certificates: cut them in by hand.
        let base = example();
        let with = |profile: &str| format!("{base}{cert_member}profile = \"{profile}\"\n");
        let e = load_text("bad-profile", &with("strongswan")).err().unwrap();
        assert!(e.to_string().contains(crate::profile::PROFILE_NAMES), "{e}");
        // A PSK member may name a profile too (it changes nothing it is sent today).
        let psk = base.replacen(
            "groups = [\"goose-bay1\", \"rsv-bay1\"]",
            "groups = [\"goose-bay1\", \"rsv-bay1\"]\nprofile = \"go-iec61850\"",
            1,
        );
        assert!(load_text("psk-profile", &psk).unwrap().profiles.is_empty());
    }

    #[test]
    fn bad_schedule_unknown_group_and_bad_events_refused() {
        let zero = example().replacen("lifetime_s = 3600", "lifetime_s = 0", 1);
        assert!(load_text("zero", &zero)
            .err()
            .unwrap()
            .to_string()
            .contains("lifetime_s"));
        let unknown = example().replacen(
            "groups = [\"goose-bay1\", \"rsv-bay1\"]",
            "groups = [\"nope\"]",
            1,
        );
        assert!(load_text("unknown", &unknown)
            .err()
            .unwrap()
            .to_string()
            .contains("no such group"));
        let ev = example().replacen("events = \"stdout\"", "events = \"file:/x\"", 1);
        assert!(load_text("ev", &ev).is_err());
        let udp = example().replacen("events = \"stdout\"", "events = \"udp:127.0.0.1:514\"", 1);
        assert_eq!(
            load_text("udp", &udp).unwrap().events,
            EventTarget::Udp("127.0.0.1:514".parse().unwrap())
        );
    }
}
