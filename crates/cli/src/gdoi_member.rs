//! The group member's arguments and output shared by `gander gdoi register` and `gander frame
//! protect|verify --kdc`: key servers, credentials, the JSON line of one key, and a key store
//! made from one registration (docs/gdoi.md, "Member").
use anyhow::{bail, Context, Result};
use clap::Args;
use gander_gdoi::member_state::{FailPolicy, MemberTiming};
use gander_gdoi::net::member::{Runner, RunnerConfig};
use gander_gdoi::pull::TekKey;
use gander_sec::{default_provider, KeyStore};
use gander_wire::isakmp::iec61850::oid_to_string;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdOid, IdPayload, Traffic};
use serde_json::Value;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// `frame protect|verify --kdc`: the keys come from a registration instead of `--keys`.
#[derive(Args, Clone, Debug)]
pub(crate) struct KdcKeyArgs {
    /// Register with this key server (HOST:PORT) and use the group's keys; repeat for a
    /// second key server, tried when the first does not answer.
    #[arg(long = "kdc", value_name = "HOST:PORT")]
    pub kdc: Vec<String>,
    /// The group to register for (with --kdc): a name (ID_KEY_ID) or oid:OID[/HEX] (ID_OID).
    #[arg(long, requires = "kdc")]
    pub group: Option<String>,
    /// This member's identity (with --kdc).
    #[arg(long, requires = "kdc")]
    pub identity: Option<String>,
    /// The pre-shared key, hex (with --kdc).
    #[arg(long, requires = "kdc")]
    pub psk_hex: Option<String>,
    /// Local address to register from (the key server picks the PSK by it).
    #[arg(long, requires = "kdc")]
    pub bind: Option<SocketAddr>,
    /// Seconds to wait for each reply of the key server.
    #[arg(long = "kdc-timeout", default_value_t = 2.0)]
    pub timeout: f64,
}

/// An ID_KEY_ID identity (RFC 2407 4.6.2.1).
pub(crate) fn key_id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

/// The group named by `--group`: `oid:DOTTED` or `oid:DOTTED/HEX` is an ID_OID (RFC 8052 2.1:
/// the OID and an OID-Specific Payload in hex), anything else the ID_KEY_ID of those octets.
pub(crate) fn group_id(s: &str) -> Result<IdPayload> {
    let Some(rest) = s.strip_prefix("oid:") else {
        return Ok(key_id(s));
    };
    let (dotted, selector) = match rest.split_once('/') {
        Some((d, h)) => (
            d,
            hex::decode(h).context("--group oid:OID/HEX: HEX is not hex")?,
        ),
        None => (rest, Vec::new()),
    };
    let id =
        IdOid::new(dotted, selector).with_context(|| format!("--group {s}: not a dotted OID"))?;
    if !id.fits() {
        bail!("--group {s}: OID or payload too long");
    }
    Ok(IdPayload {
        id_type: id_type::OID,
        protocol: 0,
        port: 0,
        data: id.to_vec(),
    })
}

/// Everything a runner needs, from command-line words.
pub(crate) struct MemberWords<'a> {
    pub servers: &'a [String],
    pub group: &'a str,
    /// `None` with a certificate (its subject is the identity).
    pub identity: Option<&'a str>,
    /// `None` with a certificate.
    pub psk_hex: Option<&'a str>,
    pub bind: Option<SocketAddr>,
    pub timeout: f64,
    pub push_listen: Option<SocketAddr>,
    pub policy: FailPolicy,
}

/// The runner configuration of `w`.
pub(crate) fn runner_config(w: &MemberWords<'_>) -> Result<RunnerConfig> {
    if w.servers.is_empty() {
        bail!("no key server given");
    }
    let servers = w
        .servers
        .iter()
        .map(|s| {
            s.to_socket_addrs()
                .with_context(|| format!("key server {s}"))?
                .next()
                .with_context(|| format!("key server {s}: no address"))
        })
        .collect::<Result<Vec<_>>>()?;
    let psk = match w.psk_hex {
        Some(h) => {
            let psk = hex::decode(h).context("--psk-hex")?;
            if psk.is_empty() {
                bail!("--psk-hex is empty");
            }
            psk
        }
        None => Vec::new(),
    };
    Ok(RunnerConfig {
        servers,
        bind: w.bind,
        push_listen: w.push_listen,
        psk,
        identity: key_id(w.identity.unwrap_or_default()),
        group: group_id(w.group)?,
        timeout: Duration::from_secs_f64(w.timeout.clamp(0.05, 60.0)),
        tries: 3,
        policy: w.policy,
        timing: MemberTiming::default(),
    })
}

/// One key as printed by `gander gdoi register`: group, Key ID, OID, traffic, algorithm codes,
/// the keys in hex, lifetime, activation delay, overlap.
pub(crate) fn key_json(group: &str, t: &TekKey, received: u64) -> Value {
    let traffic = match t.traffic {
        None => serde_json::Value::Null,
        Some(Traffic::L2 { mac, appid }) => serde_json::json!({
            "dst_mac": mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":"),
            "appid": appid,
        }),
        Some(Traffic::Ipv4 { addr, port }) => {
            serde_json::json!({"dst_ip": std::net::Ipv4Addr::from(addr).to_string(), "port": port})
        }
        Some(Traffic::Ipv6 { addr, port }) => {
            serde_json::json!({"dst_ip": std::net::Ipv6Addr::from(addr).to_string(), "port": port})
        }
    };
    serde_json::json!({
        "group": group,
        "key_id": t.key_id,
        "oid": oid_to_string(&t.oid).unwrap_or_default(),
        "traffic": traffic,
        "mac_algorithm": t.mac_algorithm,
        "encryption_algorithm": t.encryption_algorithm,
        "key_hex": t.algorithm_key.as_ref().map(|k| hex::encode(&k[..])),
        "integrity_key_hex": t.integrity_key.as_ref().map(|k| hex::encode(&k[..])),
        "lifetime_s": t.lifetime_secs,
        "activation_delay_s": t.activation_delay_secs,
        "overlap_s": t.overlap_secs,
        "received": received,
    })
}

/// Registers once (`frame --kdc`) and returns a key store of the group's keys and their ids,
/// newest last. The entries carry no validity window: a capture is judged, or protected, with
/// the keys the key server hands out now, whatever time its frames carry.
pub(crate) fn store_from_kdc(a: &KdcKeyArgs) -> Result<(KeyStore, Vec<u32>)> {
    let need =
        |v: &Option<String>, what: &str| v.clone().with_context(|| format!("--kdc needs --{what}"));
    let (group, identity, psk_hex) = (
        need(&a.group, "group")?,
        need(&a.identity, "identity")?,
        need(&a.psk_hex, "psk-hex")?,
    );
    let cfg = runner_config(&MemberWords {
        servers: &a.kdc,
        group: &group,
        identity: Some(&identity),
        psk_hex: Some(&psk_hex),
        bind: a.bind,
        timeout: a.timeout,
        push_listen: None,
        policy: FailPolicy::FailClosed,
    })?;
    let mut r = Runner::new(cfg)?;
    for _ in 0..a.kdc.len() {
        if r.register_once() {
            break;
        }
    }
    for e in r.state_mut().take_events() {
        eprintln!("gdoi: {e:?}");
    }
    let ids = r.state().key_ids();
    if ids.is_empty() {
        bail!("no key from the key server(s) {}", a.kdc.join(", "));
    }
    let mut store = KeyStore::new();
    for e in r.state().key_entries(default_provider())? {
        store.insert(e.with_validity(None, None))?;
    }
    Ok((store, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_words_give_id_key_id_or_id_oid() {
        let k = group_id("ABCD").unwrap();
        assert_eq!(
            (k.id_type, k.data.as_slice()),
            (id_type::KEY_ID, &b"ABCD"[..])
        );
        // The bytes go-iec61850's member sends for this group (RFC 8052 2.1).
        let o = group_id("oid:1.2.840.10070.61850.8.1.2").unwrap();
        assert_eq!(o.id_type, id_type::OID);
        assert_eq!(hex::encode(&o.data), "0d060b2a8648ce5683e31a0801020000");
        let s = group_id("oid:1.2.840.10070.61850.8.1.2/0102").unwrap();
        assert_eq!(IdOid::parse(&s.data).unwrap().selector, vec![1, 2]);
        assert!(group_id("oid:1.x").is_err());
        assert!(group_id("oid:1.2/zz").is_err());
    }
}
