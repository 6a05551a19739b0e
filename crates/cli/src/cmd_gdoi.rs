//! `gander kdc --config FILE` (the IEC 62351-9 key server) and `gander gdoi register` (a group
//! member on its own): argument parsing and printing around `gander_gdoi` (docs/gdoi.md).
use crate::gdoi_member::{key_json, runner_config, MemberWords};
use anyhow::Context;
use clap::{Args, Subcommand};
use gander_gdoi::cert_auth::{CertMatch, Credentials};
use gander_gdoi::keylog::KeyLog;
use gander_gdoi::member_state::{FailPolicy, MemberEvent};
use gander_gdoi::net::member::{RegisterOptions, Runner};
use gander_gdoi::profile::PeerProfile;
use gander_gdoi::trust::TrustStore;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub(crate) enum Command {
    /// The IEC 62351-9 key server (GDOI, RFC 6407/8052): phase 1 with pre-shared keys,
    /// GROUPKEY-PULL for the groups and members of its configuration, GROUPKEY-PUSH rekeys on
    /// its key schedule; SIGHUP reloads the policy and revokes members that left it; RFC 5424
    /// events, OpenMetrics (docs/gdoi.md).
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
    /// Only check the configuration and the state file's permissions, then exit.
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
    /// The key server, HOST:PORT; repeat for a second one, tried when the first does not
    /// answer (failover).
    #[arg(long, required = true)]
    server: Vec<String>,
    /// The group identity: a name, sent as ID_KEY_ID, or oid:OID[/HEX], sent as ID_OID
    /// (RFC 8052 2.1: the OID and an optional OID-Specific Payload in hex), e.g.
    /// oid:1.2.840.10070.61850.8.1.2.
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
    /// Stay this many seconds for rekeys (pushes on --push-listen, and registration again
    /// before the key's lifetime ends), printing each new key; 0: register once.
    #[arg(long, default_value_t = 0.0)]
    follow: f64,
    /// Address to receive GROUPKEY-PUSH on (the key server's push target for this member).
    #[arg(long)]
    push_listen: Option<SocketAddr>,
    /// When no key server answers while following: keep-until-expiry or fail-closed.
    #[arg(long, default_value = "keep-until-expiry", value_parser = parse_policy)]
    policy: FailPolicy,
    /// One JSON line per key (the only output format; accepted for scripts that say so).
    #[arg(long)]
    json: bool,
    /// What gander writes for this key server: rfc (default), go-iec61850 (ECDSA phase-1
    /// signatures as github.com/dscsystems/go-iec61850 verifies them) or ipsec-doi (the
    /// phase-1 SA in the IPsec DOI, for strongSwan or a capture Wireshark should decrypt with
    /// --keylog); docs/gdoi.md, "Peer profiles".
    #[arg(long, default_value = "rfc", value_parser = parse_profile)]
    profile: PeerProfile,
}

fn parse_profile(s: &str) -> Result<PeerProfile, String> {
    s.parse()
        .map_err(|e: gander_gdoi::profile::UnknownProfile| e.to_string())
}

fn parse_policy(s: &str) -> Result<FailPolicy, String> {
    match s {
        "keep-until-expiry" => Ok(FailPolicy::KeepUntilExpiry),
        "fail-closed" => Ok(FailPolicy::FailClosed),
        _ => Err("keep-until-expiry or fail-closed".into()),
    }
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

pub(crate) fn run(c: Command) -> anyhow::Result<ExitCode> {
    match c {
        Command::Kdc(a) => kdc(a),
        Command::Gdoi {
            command: GdoiCommand::Register(a),
        } => member(*a),
    }
}

fn kdc(a: KdcArgs) -> anyhow::Result<ExitCode> {
    if a.check {
        let cfg = gander_gdoi::net::kdc_service::check(&a.config)?;
        crate::out(format!(
            "ok: {} groups, {} members",
            cfg.policy.groups.len(),
            cfg.policy.members.len()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    gander_gdoi::net::kdc_service::run(&a.config, open_keylog(a.keylog.as_deref())?)?;
    Ok(ExitCode::SUCCESS)
}

/// Registers (with failover), prints every key as one JSON line and, with `--follow`, stays
/// for rekeys; each member event is a JSON line on stderr. Exit 0 only when a key arrived.
fn member(a: RegisterArgs) -> anyhow::Result<ExitCode> {
    let _ = a.json;
    let cfg = runner_config(&MemberWords {
        servers: &a.server,
        group: &a.group,
        identity: a.identity.as_deref(),
        psk_hex: a.psk_hex.as_deref(),
        bind: a.bind,
        timeout: a.timeout,
        push_listen: a.push_listen,
        policy: a.policy,
    })?;
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
        profile: a.profile,
    };
    let mut r = Runner::new(cfg)?.with_options(opts);
    let mut printed: HashSet<u32> = HashSet::new();
    let follow = a.follow.clamp(0.0, 1e9);
    let end = Instant::now() + Duration::from_secs_f64(follow);
    loop {
        // Registration when due (each key server at most once per turn), then pushes.
        let wait = if follow > 0.0 {
            Duration::from_millis(200)
        } else {
            Duration::ZERO
        };
        r.step(wait)?;
        for e in r.state_mut().take_events() {
            eprintln!("{}", event_json(&e));
        }
        for k in r.state().keys() {
            if printed.insert(k.tek.key_id) {
                crate::out(key_json(&a.group, &k.tek, k.received));
            }
        }
        if follow <= 0.0 || Instant::now() >= end {
            break;
        }
    }
    let c = r.state().counters();
    eprintln!(
        "{}",
        serde_json::json!({"event": "counters", "counters": c})
    );
    Ok(if printed.is_empty() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// A member event as one JSON line.
fn event_json(e: &MemberEvent) -> serde_json::Value {
    use serde_json::json;
    match e {
        MemberEvent::Registered { server, key_ids } => {
            json!({"event": "registered", "server": server, "key_ids": key_ids})
        }
        MemberEvent::ServerFailed { server, reason } => {
            json!({"event": "server-failed", "server": server, "reason": reason})
        }
        MemberEvent::Failover { from, to } => json!({"event": "failover", "from": from, "to": to}),
        MemberEvent::NoServer { policy, holding } => {
            json!({"event": "no-key-server", "policy": policy.name(), "holding": holding})
        }
        MemberEvent::Rekeyed { seq, key_ids } => {
            json!({"event": "rekeyed", "seq": seq, "key_ids": key_ids})
        }
        MemberEvent::Deleted { key_ids } => json!({"event": "deleted", "key_ids": key_ids}),
        MemberEvent::PushRefused { reason } => json!({"event": "push-refused", "reason": reason}),
        MemberEvent::Expired {
            key_id,
            fail_closed,
        } => json!({"event": "expired", "key_id": key_id, "fail_closed": fail_closed}),
        other => json!({"event": format!("{other:?}")}),
    }
}
