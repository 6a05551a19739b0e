//! `gander kdc --config FILE` (the IEC 62351-9 key server) and `gander gdoi register` (a group
//! member on its own): argument parsing and printing around `gander_gdoi` (docs/gdoi.md).
use anyhow::Context;
use clap::{Args, Subcommand};
use gander_gdoi::net::member::{register, MemberConfig};
use gander_wire::isakmp::iec61850::oid_to_string;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, Traffic};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
}

#[derive(Subcommand)]
pub(crate) enum GdoiCommand {
    /// Register with a key server and print every key received as one JSON line; exit 0 only
    /// when a key arrived.
    Register(RegisterArgs),
}

#[derive(Args)]
pub(crate) struct RegisterArgs {
    /// The key server, HOST:PORT.
    #[arg(long)]
    server: String,
    /// The group identity.
    #[arg(long)]
    group: String,
    /// This member's identity.
    #[arg(long)]
    identity: String,
    /// The pre-shared key, hex.
    #[arg(long)]
    psk_hex: String,
    /// Local address to send from (the key server picks the PSK by it).
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Seconds to wait for each reply.
    #[arg(long, default_value_t = 2.0)]
    timeout: f64,
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
        } => member(a),
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
    gander_gdoi::net::kdc_service::run(&a.config)?;
    Ok(ExitCode::SUCCESS)
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
        psk: hex::decode(&a.psk_hex).context("--psk-hex")?,
        identity: key_id(&a.identity),
        group: key_id(&a.group),
        timeout: Duration::from_secs_f64(a.timeout.clamp(0.05, 60.0)),
        tries: 3,
    };
    let keys = register(&cfg)?;
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
