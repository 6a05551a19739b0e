//! `gander kdc --config FILE` (the IEC 62351-9 key server) and `gander gdoi register` (a group
//! member on its own): argument parsing and printing around `gander_gdoi` (docs/gdoi.md).
use anyhow::Context;
use clap::{Args, Subcommand};
use gander_gdoi::cert_auth::{CertMatch, Credentials};
use gander_gdoi::keylog::KeyLog;
use gander_gdoi::net::cert_members::KdcCerts;
use gander_gdoi::net::kdc::{Kdc, KdcEvent};
use gander_gdoi::net::member::{register_with, MemberConfig, RegisterOptions};
use gander_gdoi::trust::TrustStore;
use gander_wire::isakmp::iec61850::oid_to_string;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// The IEC 62351-9 key server (GDOI, RFC 6407/8052): phase 1 with pre-shared keys and
    /// GROUPKEY-PULL for the groups and members of its configuration; one JSON line per event.
    Kdc(KdcArgs),
    /// GDOI group member tools.
    Gdoi {
        #[command(subcommand)]
        command: GdoiCommand,
    },
}

#[derive(Args)]
pub(crate) struct KdcArgs {
    /// Key server configuration (TOML, docs/gdoi.md).
    #[arg(long)]
    config: PathBuf,
    /// Only read the configuration and write the state file, then exit.
    #[arg(long)]
    check: bool,
    /// LAB ONLY: append each phase-1 SA's key to FILE in Wireshark's ikev1_decryption_table
    /// form, so tshark can decrypt the key server's exchanges (and the group keys in them).
    #[arg(long, value_name = "FILE")]
    keylog: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum GdoiCommand {
    /// Register with a key server and print every key received as one JSON line; exit 0 only
    /// when a key arrived.
    Register(Box<RegisterArgs>),
}

#[derive(Args)]
pub(crate) struct RegisterArgs {
    /// The key server, HOST:PORT.
    #[arg(long)]
    server: String,
    /// The group identity.
    #[arg(long)]
    group: String,
    /// This member's identity (with --psk-hex; with --cert the identity is the
    /// certificate's subject).
    #[arg(long, required_unless_present = "cert")]
    identity: Option<String>,
    /// The pre-shared key, hex.
    #[arg(long, required_unless_present = "cert", conflicts_with = "cert")]
    psk_hex: Option<String>,
    /// Authenticate with this certificate (PEM; intermediates after it) instead of a PSK.
    #[arg(long, requires_all = ["key", "ca"])]
    cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// The CA certificates (PEM) the key server's certificate must chain to.
    #[arg(long, requires = "cert")]
    ca: Option<PathBuf>,
    /// The key server's certificate name: its subject DN (`O=Utility,CN=kdc`, anything with
    /// `=`) or a subjectAltName. Without it any certificate of the CA passes as key server.
    #[arg(long, requires = "cert", value_name = "NAME")]
    server_name: Option<String>,
    /// CRLs (PEM) the key server's certificate is checked against.
    #[arg(long, requires = "ca")]
    crl: Option<PathBuf>,
    /// LAB ONLY: append the phase-1 SA's key to FILE (Wireshark ikev1_decryption_table).
    #[arg(long, value_name = "FILE")]
    keylog: Option<PathBuf>,
    /// Local address to send from (the key server picks the PSK by it).
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Seconds to wait for each reply.
    #[arg(long, default_value_t = 2.0)]
    timeout: f64,
}

/// Opens the lab key log, warning on stderr that it must never be used in production.
fn open_keylog(p: Option<&std::path::Path>) -> anyhow::Result<Option<Arc<KeyLog>>> {
    let Some(p) = p else { return Ok(None) };
    eprintln!(
        "WARNING: --keylog {}: phase-1 keys are written in the clear; anyone with this file and a \
         capture reads the group keys. Lab use only, never in production.",
        p.display()
    );
    Ok(Some(Arc::new(
        KeyLog::open(p).with_context(|| format!("--keylog {}", p.display()))?,
    )))
}

fn key_id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

pub(crate) fn run(c: Command) -> anyhow::Result<ExitCode> {
    match c {
        Command::Kdc(a) => kdc(a),
        Command::Gdoi {
            command: GdoiCommand::Register(a),
        } => member(*a),
    }
}

fn kdc(a: KdcArgs) -> anyhow::Result<ExitCode> {
    let cfg = gander_gdoi::config::load(&a.config)?;
    if a.check {
        crate::out(format!(
            "ok: {} groups, {} members",
            cfg.policy.groups.len(),
            cfg.policy.members.len()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let sock = UdpSocket::bind(cfg.listen).with_context(|| format!("bind {}", cfg.listen))?;
    let certs = KdcCerts {
        creds: cfg.credentials,
        keylog: open_keylog(a.keylog.as_deref())?,
    };
    let mut k = Kdc::new(sock, cfg.policy);
    k.set_certs(certs);
    crate::out(serde_json::json!({"event": "listening", "addr": k.local_addr()?.to_string()}));
    loop {
        let Some(ev) = k.poll(Duration::from_secs(1))? else {
            continue;
        };
        let line = match ev {
            KdcEvent::Registered {
                peer,
                identity,
                group,
            } => serde_json::json!({"event": "registered", "peer": peer.to_string(),
                "identity": String::from_utf8_lossy(&identity), "group": String::from_utf8_lossy(&group)}),
            KdcEvent::Phase1 { peer, identity } => {
                serde_json::json!({"event": "phase1", "peer": peer.to_string(), "identity": String::from_utf8_lossy(&identity)})
            }
            KdcEvent::Refused {
                peer,
                reason,
                notify,
            } => {
                serde_json::json!({"event": "refused", "peer": peer.to_string(), "reason": reason, "notify": notify})
            }
            KdcEvent::Retransmitted { .. } | KdcEvent::Progress { .. } => continue,
        };
        crate::out(line);
    }
}

fn member(a: RegisterArgs) -> anyhow::Result<ExitCode> {
    let server = a
        .server
        .to_socket_addrs()?
        .next()
        .context("server address")?;
    let cfg = MemberConfig {
        server,
        bind: a.bind,
        psk: match &a.psk_hex {
            Some(h) => hex::decode(h).context("--psk-hex")?,
            None => Vec::new(),
        },
        identity: key_id(a.identity.as_deref().unwrap_or_default()),
        group: key_id(&a.group),
        timeout: Duration::from_secs_f64(a.timeout.clamp(0.05, 60.0)),
        tries: 3,
    };
    let cert = match (&a.cert, &a.key, &a.ca) {
        (Some(c), Some(k), Some(ca)) => {
            let trust = TrustStore::load(ca, a.crl.as_deref())?;
            Some(Arc::new(Credentials::load(c, k, Arc::new(trust))?))
        }
        _ => None,
    };
    if cert.is_some() && a.server_name.is_none() {
        eprintln!(
            "warning: no --server-name: any certificate of the CA is accepted as the key server"
        );
    }
    let opts = RegisterOptions {
        cert,
        keylog: open_keylog(a.keylog.as_deref())?,
        server_cert: a.server_name.map(|n| {
            if n.contains('=') {
                CertMatch::Subject(n)
            } else {
                CertMatch::San(n)
            }
        }),
    };
    let keys = register_with(&cfg, &opts)?;
    for t in &keys.teks {
        let traffic = match t.traffic {
            Traffic::L2 { mac, appid } => {
                serde_json::json!({"dst_mac": mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":"), "appid": appid})
            }
            Traffic::Ipv4 { addr, port } => {
                serde_json::json!({"dst_ip": std::net::Ipv4Addr::from(addr).to_string(), "port": port})
            }
            Traffic::Ipv6 { addr, port } => {
                serde_json::json!({"dst_ip": std::net::Ipv6Addr::from(addr).to_string(), "port": port})
            }
        };
        crate::out(serde_json::json!({
            "group": a.group,
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
        }));
    }
    Ok(if keys.teks.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
