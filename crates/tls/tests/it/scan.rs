//! The scanner against real servers started here: `openssl s_server` and `gnutls-serv` with
//! known configurations; the scan must find exactly what they were told to accept.
use crate::common;

use gander_tls::pki::{KeySpec, PkiSet};
use gander_tls::scan::{self, ProtocolVersion, ScanOptions, ScanReport, WeaknessState};
use gander_tls::survey::Level;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process, killed (by its own handle) when the test ends.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Starts `program args` (with `{port}` replaced) and waits until it listens.
fn start(program: &str, args: &[String]) -> Server {
    let port = free_port();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{port}", &port.to_string()))
        .collect();
    let child = Command::new(program)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} must be installed: {e}"));
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let t0 = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{program} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Server { child, addr }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// `openssl s_server` with the set's server certificate and `extra` arguments.
fn openssl_server(set: &PkiSet, extra: &[&str]) -> Server {
    let mut a = s(&[
        "s_server",
        "-accept",
        "127.0.0.1:{port}",
        "-quiet",
        "-naccept",
        "1000",
    ]);
    a.extend(s(&[
        "-cert",
        set.server.to_str().unwrap(),
        "-key",
        set.server_key.to_str().unwrap(),
    ]));
    a.extend(s(extra));
    start("openssl", &a)
}

/// `gnutls-serv` with the set's server certificate and a priority string.
fn gnutls_server(set: &PkiSet, priority: &str) -> Server {
    start(
        "gnutls-serv",
        &s(&[
            "--port",
            "{port}",
            "--echo",
            "--heartbeat",
            "--x509certfile",
            set.server.to_str().unwrap(),
            "--x509keyfile",
            set.server_key.to_str().unwrap(),
            "--priority",
            priority,
        ]),
    )
}

fn opts() -> ScanOptions {
    ScanOptions {
        timeout: Duration::from_secs(3),
        pause: Duration::from_millis(0),
        ..ScanOptions::default()
    }
}

fn run(addr: SocketAddr) -> ScanReport {
    let r = scan::scan(addr, &opts()).expect("scan");
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    r
}

fn names(r: &ScanReport, v: ProtocolVersion) -> Vec<&'static str> {
    let mut n: Vec<&str> = r
        .version(v)
        .map(|s| s.suites.iter().map(|x| x.name).collect())
        .unwrap_or_default();
    n.sort();
    n
}

fn accepted(r: &ScanReport) -> Vec<&'static str> {
    r.versions
        .iter()
        .filter(|v| v.accepted)
        .map(|v| v.version.name())
        .collect()
}

fn level(r: &ScanReport, id: &str) -> Option<Level> {
    r.verdicts.iter().find(|v| v.id == id).map(|v| v.level)
}

fn state(r: &ScanReport, id: &str) -> Option<WeaknessState> {
    r.weaknesses.iter().find(|w| w.id == id).map(|w| w.state)
}

/// The openssl binary's own list of what a cipher string enables at one version, as IANA
/// names (`openssl ciphers -stdname`), for comparison: the TLS 1.2-and-below suites an RSA
/// certificate (or none, anonymous) can serve.
fn openssl_list(cipher: &str, version_flag: &str) -> Vec<String> {
    let out = Command::new("openssl")
        .args(["ciphers", "-stdname", version_flag, cipher])
        .output()
        .expect("openssl ciphers");
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n.starts_with("TLS_") && n.contains("_WITH_"))
        .filter(|n| !["PSK", "SRP", "ECDSA", "DSS"].iter().any(|x| n.contains(x)))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The worst case: `ALL:@SECLEVEL=0` on TLS 1.0 to 1.2 accepts the anonymous ADH and
/// AECDH suites, which no TLS library's client offers by default.
#[test]
fn openssl_all_seclevel0_finds_anonymous_and_legacy() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-cipher", "ALL:@SECLEVEL=0", "-no_tls1_3"]);
    let r = run(srv.addr);
    assert_eq!(accepted(&r), vec!["1.0", "1.1", "1.2"]);
    let t12 = names(&r, ProtocolVersion::Tls12);
    // Exactly what the openssl binary says the cipher string enables (PSK and SRP suites need
    // credentials the server was not given).
    assert_eq!(t12, openssl_list("ALL:@SECLEVEL=0", "-tls1_2"));
    let anon: Vec<&str> = t12
        .iter()
        .copied()
        .filter(|n| n.contains("_anon_"))
        .collect();
    assert!(
        anon.contains(&"TLS_DH_anon_WITH_AES_128_CBC_SHA"),
        "{anon:?}"
    );
    assert!(
        anon.contains(&"TLS_ECDH_anon_WITH_AES_256_CBC_SHA"),
        "{anon:?}"
    );
    assert_eq!(level(&r, "scan-anonymous-suites"), Some(Level::Fail));
    assert!(!r.sslv2.accepted);
    assert_eq!(level(&r, "scan-sslv2"), Some(Level::Pass));
    assert_eq!(state(&r, "heartbleed"), Some(WeaknessState::NotVulnerable));
    assert_eq!(
        state(&r, "ccs-injection"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(state(&r, "compression"), Some(WeaknessState::NotVulnerable));
    assert_eq!(
        state(&r, "fallback-scsv"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(
        state(&r, "extended-master-secret"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(
        state(&r, "secure-renegotiation"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(
        state(&r, "client-certificate-request"),
        Some(WeaknessState::Vulnerable)
    );
    // OpenSSL's default: its own order off, the client's order followed.
    assert_eq!(
        r.version(ProtocolVersion::Tls12).unwrap().server_order,
        Some(false)
    );
    let groups: Vec<&str> = r
        .version(ProtocolVersion::Tls12)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert!(
        groups.contains(&"x25519") && groups.contains(&"secp256r1"),
        "{groups:?}"
    );
    assert!(!r.capped);
}

/// TLS 1.3 only with P-384 and ffdhe2048: both groups found through HelloRetryRequests, and
/// nothing below 1.3.
#[test]
fn openssl_tls13_only_p384_ffdhe2048() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-tls1_3", "-groups", "P-384:ffdhe2048"]);
    let r = run(srv.addr);
    assert_eq!(accepted(&r), vec!["1.3"]);
    let t13 = r.version(ProtocolVersion::Tls13).unwrap();
    let mut g: Vec<&str> = t13.groups.iter().map(|g| g.name.as_str()).collect();
    g.sort();
    assert_eq!(g, vec!["ffdhe2048", "secp384r1"]);
    assert_eq!(
        names(&r, ProtocolVersion::Tls13),
        vec![
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256"
        ]
    );
    // Nothing up to TLS 1.2: those checks say so instead of guessing.
    assert_eq!(state(&r, "heartbleed"), Some(WeaknessState::NotTested));
    assert_eq!(state(&r, "fallback-scsv"), Some(WeaknessState::NotTested));
    assert_eq!(level(&r, "scan-3des-suites"), Some(Level::Pass));
}

/// GnuTLS with a restricted priority and its own order: two suites, one curve, TLS 1.2 only,
/// server precedence; its heartbeat extension is on and the over-long request is not answered.
#[test]
fn gnutls_restricted_priority_server_order_heartbeat() {
    let set = common::rsa();
    let srv = gnutls_server(
        &set,
        "NONE:+VERS-TLS1.2:+AES-256-GCM:+AES-128-GCM:+AEAD:+ECDHE-RSA:+SIGN-ALL:+GROUP-SECP384R1:+COMP-NULL:%SERVER_PRECEDENCE",
    );
    let r = run(srv.addr);
    assert_eq!(accepted(&r), vec!["1.2"]);
    assert_eq!(
        names(&r, ProtocolVersion::Tls12),
        vec![
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
        ]
    );
    let t12 = r.version(ProtocolVersion::Tls12).unwrap();
    assert_eq!(t12.server_order, Some(true));
    assert_eq!(t12.groups.len(), 1);
    assert_eq!(t12.groups[0].name, "secp384r1");
    assert_eq!(
        state(&r, "ccs-injection"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(state(&r, "heartbleed"), Some(WeaknessState::NotVulnerable));
}

/// A server that accepts only 3DES (GnuTLS; OpenSSL 3 has no 3DES suites left): the SWEET32
/// finding fails, at every version it is offered.
#[test]
fn gnutls_3des_only_fails_sweet32() {
    let set = common::rsa();
    let srv = gnutls_server(
        &set,
        "NONE:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0:+3DES-CBC:+SHA1:+RSA:+ECDHE-RSA:+SIGN-ALL:+GROUP-ALL:+COMP-NULL",
    );
    let r = run(srv.addr);
    assert_eq!(accepted(&r), vec!["1.0", "1.1", "1.2"]);
    for v in [
        ProtocolVersion::Tls10,
        ProtocolVersion::Tls11,
        ProtocolVersion::Tls12,
    ] {
        assert_eq!(
            names(&r, v),
            vec![
                "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
                "TLS_RSA_WITH_3DES_EDE_CBC_SHA"
            ],
            "{v:?}"
        );
    }
    assert_eq!(level(&r, "scan-3des-suites"), Some(Level::Fail));
    assert_eq!(level(&r, "scan-anonymous-suites"), Some(Level::Pass));
    assert_eq!(
        state(&r, "fallback-scsv"),
        Some(WeaknessState::NotVulnerable)
    );
}

/// Field test defect A: a PSK-only gnutls-serv. The DHE_PSK and ECDHE_PSK ServerKeyExchanges
/// carry psk_identity_hint before the parameters (RFC 4279 §3, RFC 5489 §2); read without it,
/// the empty hint was a "0-bit prime" (FAIL) and no curve was found.
#[test]
fn gnutls_psk_only_dhe_and_ecdhe_parameters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let psk = dir.path().join("psk.txt");
    std::fs::write(&psk, "ied:0123456789abcdef0123456789abcdef\n").expect("psk file");
    let srv = start(
        "gnutls-serv",
        &s(&[
            "--port",
            "{port}",
            "--pskpasswd",
            psk.to_str().unwrap(),
            "--priority",
            "NORMAL:-VERS-TLS1.3:-KX-ALL:+PSK:+DHE-PSK:+ECDHE-PSK",
        ]),
    );
    let r = run(srv.addr);
    let v = r.version(ProtocolVersion::Tls12).expect("TLS 1.2 scanned");
    assert!(v.accepted, "{v:?}");
    let n = names(&r, ProtocolVersion::Tls12);
    assert!(n.contains(&"TLS_DHE_PSK_WITH_AES_128_CBC_SHA"), "{n:?}");
    assert!(n.contains(&"TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA"), "{n:?}");
    let p = v.dh_prime.as_ref().expect("the DHE_PSK prime is read");
    assert!(p.bits >= 2048, "{p:?}");
    let groups: Vec<&str> = v.groups.iter().map(|g| g.name.as_str()).collect();
    assert!(groups.contains(&"x25519"), "{groups:?}");
    let g = r
        .verdicts
        .iter()
        .find(|x| x.id == "scan-groups")
        .expect("groups verdict");
    assert_ne!(g.level, Level::Fail, "{g:?}");
    assert!(!g.detail.contains("0-bit"), "{g:?}");
}

/// Field test defect B: alert 112 (unrecognized_name) refuses the name, not the version
/// (RFC 6066 §3). The scan says so and surveys the versions without SNI.
#[test]
fn sni_refusal_is_a_finding_and_the_scan_goes_on_without_sni() {
    let set = common::rsa();
    let ec = common::pki(KeySpec::P256);
    let srv = openssl_server(
        &set,
        &[
            "-servername",
            "ied.substation.local",
            "-cert2",
            ec.server.to_str().unwrap(),
            "-key2",
            ec.server_key.to_str().unwrap(),
            "-servername_fatal",
        ],
    );
    let o = ScanOptions {
        server_name: Some("localhost".into()),
        ..opts()
    };
    let r = scan::scan(srv.addr, &o).expect("scan");
    assert_eq!(accepted(&r), vec!["1.2", "1.3"]);
    let v = r
        .verdicts
        .iter()
        .find(|x| x.id == "scan-sni")
        .expect("a server-name finding");
    assert_eq!(v.level, Level::Warn);
    assert!(v.detail.contains("\"localhost\""), "{v:?}");
    // The name the device expects is not refused: no finding.
    let o = ScanOptions {
        server_name: Some("ied.substation.local".into()),
        ..opts()
    };
    let r = scan::scan(srv.addr, &o).expect("scan");
    assert_eq!(accepted(&r), vec!["1.2", "1.3"]);
    assert_eq!(level(&r, "scan-sni"), None);
}

/// Field test defect D: a port that takes the connection and never answers. The scan stops
/// after the first ClientHello that gets nothing back, instead of one timeout per probe.
#[test]
fn silent_port_stops_the_scan_at_once() {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = held.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            h.lock().unwrap().push(c);
        }
    });
    let o = ScanOptions {
        timeout: Duration::from_millis(500),
        ..opts()
    };
    let t0 = Instant::now();
    let e = scan::scan(addr, &o).expect_err("a silent port cannot be scanned");
    assert!(matches!(e, scan::ScanError::Silent { .. }), "{e}");
    // SSL 2.0 and the first TLS ClientHello: two timeouts, not one per probe.
    assert!(
        t0.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(held.lock().unwrap().len(), 2);
}

/// A server that asks for a client certificate sends CertificateRequest in its first flight.
#[test]
fn openssl_client_certificate_requested() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-verify", "1", "-no_tls1_3"]);
    let r = run(srv.addr);
    assert_eq!(
        state(&r, "client-certificate-request"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(level(&r, "scan-certificate-request"), Some(Level::Pass));
}

/// The connection cap is honoured: the scan stops, says so, and keeps what it found.
#[test]
fn connection_cap_is_honoured() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-cipher", "ALL:@SECLEVEL=0"]);
    let o = ScanOptions {
        max_connections: 12,
        ..opts()
    };
    let r = scan::scan(srv.addr, &o).expect("scan");
    assert!(r.capped);
    assert!(r.connections <= 12);
}

/// Nothing listening is an error of the scan, not a result.
#[test]
fn nothing_listening_is_an_error() {
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    assert!(matches!(
        scan::scan(addr, &opts()),
        Err(scan::ScanError::Connect { .. })
    ));
}

/// An RSA and an ECDSA certificate on one server: the ECDSA suites are found beside the RSA
/// ones, each in the registry's name.
#[test]
fn openssl_rsa_and_ecdsa_certificates() {
    let rsa = common::rsa();
    let ec = common::pki(KeySpec::P256);
    let srv = openssl_server(
        &rsa,
        &[
            "-dcert",
            ec.server.to_str().unwrap(),
            "-dkey",
            ec.server_key.to_str().unwrap(),
            "-no_tls1_3",
            "-cipher",
            "ECDHE+AESGCM",
        ],
    );
    let r = run(srv.addr);
    assert_eq!(
        names(&r, ProtocolVersion::Tls12),
        vec![
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        ]
    );
    assert!(r
        .verdicts
        .iter()
        .filter(|v| v.id.ends_with("-suites"))
        .all(|v| v.level == Level::Pass));
}

/// A scripted TLS 1.2 server with the old flaws no maintained library has any more: it takes
/// DEFLATE, echoes heartbeat and answers an over-long heartbeat request (Heartbleed), takes an
/// early ChangeCipherSpec and then fails the next record (CCS injection), and accepts only 3DES
/// and AES-128-CBC with RSA. It writes only what a vulnerable server's answer looks like; the
/// scan must call each flaw by its name.
fn scripted_vulnerable_server() -> SocketAddr {
    use gander_tls::scan::hello::parse_client_hello;
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        for mut tcp in l.incoming().flatten() {
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
            let mut buf = vec![0u8; 8192];
            let n = tcp.read(&mut buf).unwrap_or(0);
            let Ok(ch) = parse_client_hello(&buf[..n]) else {
                let _ = tcp.write_all(&[21, 3, 3, 0, 2, 2, 70]);
                continue;
            };
            let chosen = ch
                .suites
                .iter()
                .copied()
                .find(|s| *s == 0x000A || *s == 0x002F);
            let (true, Some(suite)) = (
                ch.client_version == 0x0303 && ch.supported_versions.is_empty(),
                chosen,
            ) else {
                let d = if ch.client_version != 0x0303 || !ch.supported_versions.is_empty() {
                    70
                } else {
                    40
                };
                let _ = tcp.write_all(&[21, 3, 3, 0, 2, 2, d]);
                continue;
            };
            let comp = u8::from(ch.compression.contains(&1));
            let mut sh = vec![3, 3];
            sh.extend([7u8; 32]);
            sh.push(0);
            sh.extend(suite.to_be_bytes());
            sh.push(comp);
            sh.extend([0, 5, 0, 15, 0, 1, 1]); // heartbeat, peer_allowed_to_send
            let mut out = Vec::new();
            for (t, body) in [(2u8, sh), (11, vec![0, 0, 0]), (14, vec![])] {
                out.extend([22, 3, 3]);
                out.extend(((body.len() + 4) as u16).to_be_bytes());
                out.push(t);
                out.extend(&(body.len() as u32).to_be_bytes()[1..]);
                out.extend(body);
            }
            let _ = tcp.write_all(&out);
            let mut ccs_seen = false;
            loop {
                let n = match tcp.read(&mut buf) {
                    Ok(n) if n >= 5 => n,
                    _ => break,
                };
                match buf[0] {
                    24 => {
                        // "Memory" back, as much as was claimed would be; a few octets do.
                        let _ = tcp.write_all(&[24, 3, 3, 0, 4, 2, 0x40, 0, 0xAA]);
                    }
                    20 if !ccs_seen => ccs_seen = true,
                    20 => {
                        let _ = tcp.write_all(&[21, 3, 3, 0, 2, 2, 20]);
                    }
                    _ => break,
                }
                let _ = n;
            }
        }
    });
    addr
}

#[test]
fn scripted_server_heartbleed_ccs_compression_3des() {
    let r = run(scripted_vulnerable_server());
    assert_eq!(accepted(&r), vec!["1.2"]);
    assert_eq!(
        names(&r, ProtocolVersion::Tls12),
        vec![
            "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
            "TLS_RSA_WITH_AES_128_CBC_SHA"
        ]
    );
    assert_eq!(state(&r, "heartbleed"), Some(WeaknessState::Vulnerable));
    assert_eq!(state(&r, "ccs-injection"), Some(WeaknessState::Vulnerable));
    assert_eq!(state(&r, "compression"), Some(WeaknessState::Vulnerable));
    assert_eq!(
        state(&r, "extended-master-secret"),
        Some(WeaknessState::Vulnerable)
    );
    assert_eq!(
        state(&r, "secure-renegotiation"),
        Some(WeaknessState::Vulnerable)
    );
    for id in [
        "scan-heartbleed",
        "scan-ccs-injection",
        "scan-compression",
        "scan-3des-suites",
    ] {
        assert_eq!(level(&r, id), Some(Level::Fail), "{id}");
    }
    // The scripted server picks the first suite it knows in the client's list.
    assert_eq!(
        r.version(ProtocolVersion::Tls12).unwrap().server_order,
        Some(false)
    );
}

fn robot(r: &ScanReport) -> scan::robot::Verdict {
    r.robot.as_ref().expect("the ROBOT check ran").verdict
}

/// ROBOT against OpenSSL with RSA key exchange: OpenSSL answers every malformed premaster
/// secret as a good one (RFC 5246 §7.4.7.1), so the five payloads get one answer: not vulnerable.
#[test]
fn openssl_rsa_key_exchange_is_not_a_robot_oracle() {
    let set = common::rsa();
    let srv = openssl_server(
        &set,
        &[
            "-no_tls1_3",
            "-cipher",
            "AES128-GCM-SHA256:AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256",
        ],
    );
    let r = run(srv.addr);
    let rb = r.robot.as_ref().expect("robot");
    assert_eq!(rb.verdict, scan::robot::Verdict::NotVulnerable, "{rb:?}");
    assert_eq!(rb.modulus_bits, Some(2048));
    assert_eq!(rb.answers.len(), 5);
    assert_eq!(level(&r, "scan-robot"), Some(Level::Pass));
    assert_eq!(state(&r, "robot"), Some(WeaknessState::NotVulnerable));
}

/// No RSA key exchange at all (ECDHE only, and TLS 1.3): ROBOT does not apply.
#[test]
fn openssl_without_rsa_key_exchange_robot_not_applicable() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-cipher", "ECDHE-RSA-AES128-GCM-SHA256"]);
    let r = run(srv.addr);
    assert_eq!(robot(&r), scan::robot::Verdict::NotApplicable);
    assert_eq!(level(&r, "scan-robot"), Some(Level::Info));
}

/// A scripted TLS 1.2 server with a real RSA key that checks the PKCS #1 padding the way the
/// ROBOT paper found vulnerable stacks doing: `00 02`, a zero somewhere after eight octets of
/// padding, without checking the premaster's length; bad_record_mac when the padding looked
/// right (its Finished then fails), decrypt_error when not. The malformed payloads are told
/// apart from each other: a strong oracle, and the scan must say "vulnerable".
fn scripted_robot_oracle_server(set: &PkiSet) -> SocketAddr {
    use gander_tls::scan::hello::parse_client_hello;
    use std::io::{Read, Write};
    let pem = std::fs::read(&set.server).expect("cert");
    let der = openssl::x509::X509::from_pem(&pem)
        .expect("pem")
        .to_der()
        .expect("der");
    let key =
        openssl::rsa::Rsa::private_key_from_pem(&std::fs::read(&set.server_key).expect("key"))
            .expect("rsa key");
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    std::thread::spawn(move || {
        for mut tcp in l.incoming().flatten() {
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = vec![0u8; 8192];
            let n = tcp.read(&mut buf).unwrap_or(0);
            let alert = |tcp: &mut TcpStream, d: u8| {
                let _ = tcp.write_all(&[21, 3, 3, 0, 2, 2, d]);
            };
            let Ok(ch) = parse_client_hello(&buf[..n]) else {
                alert(&mut tcp, 70);
                continue;
            };
            if ch.client_version != 0x0303 || !ch.supported_versions.is_empty() {
                alert(&mut tcp, 70);
                continue;
            }
            let Some(suite) = ch
                .suites
                .iter()
                .copied()
                .find(|s| *s == 0x009C || *s == 0x002F)
            else {
                alert(&mut tcp, 40);
                continue;
            };
            let mut sh = vec![3, 3];
            sh.extend([7u8; 32]);
            sh.push(0);
            sh.extend(suite.to_be_bytes());
            sh.push(0);
            let mut cert = (der.len() as u32).to_be_bytes()[1..].to_vec();
            cert.extend(&der);
            let mut certs = (cert.len() as u32).to_be_bytes()[1..].to_vec();
            certs.extend(cert);
            let mut out = Vec::new();
            for (t, body) in [(2u8, sh), (11, certs), (14, vec![])] {
                out.extend([22, 3, 3]);
                out.extend(((body.len() + 4) as u16).to_be_bytes());
                out.push(t);
                out.extend(&(body.len() as u32).to_be_bytes()[1..]);
                out.extend(body);
            }
            let _ = tcp.write_all(&out);
            // The ClientKeyExchange: record header 5, handshake header 4, length 2.
            let mut got = Vec::new();
            while got.len() < 11 || got.len() < 5 + u16::from_be_bytes([got[3], got[4]]) as usize {
                match tcp.read(&mut buf) {
                    Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            if got.len() < 11 || got[0] != 22 || got[5] != 16 {
                continue;
            }
            let clen = u16::from_be_bytes([got[9], got[10]]) as usize;
            let Some(c) = got.get(11..11 + clen) else {
                continue;
            };
            let mut m = vec![0u8; key.size() as usize];
            let ok = match key.private_decrypt(c, &mut m, openssl::rsa::Padding::NONE) {
                Ok(k) => {
                    let m = &m[..k];
                    m.len() > 11
                        && m[0] == 0
                        && m[1] == 2
                        && m[10..].contains(&0)
                        && !m[2..10].contains(&0)
                }
                Err(_) => false,
            };
            alert(&mut tcp, if ok { 20 } else { 51 });
        }
    });
    addr
}

#[test]
fn scripted_strong_robot_oracle_is_vulnerable() {
    let set = common::rsa();
    let r = run(scripted_robot_oracle_server(&set));
    let rb = r.robot.as_ref().expect("robot");
    assert_eq!(rb.verdict, scan::robot::Verdict::Vulnerable, "{rb:?}");
    // Two rounds, alike.
    assert!(rb
        .answers
        .iter()
        .all(|a| a.answers.len() == 2 && a.answers[0] == a.answers[1]));
    assert_eq!(level(&r, "scan-robot"), Some(Level::Fail));
    assert_eq!(state(&r, "robot"), Some(WeaknessState::Vulnerable));
}

fn early(r: &ScanReport) -> &scan::early_data::EarlyDataResult {
    r.early_data.as_ref().expect("the 0-RTT check ran")
}

/// `openssl s_server -early_data` advertises early data in its tickets and accepts it on
/// resumption: replayable, the verdict warns.
#[test]
fn openssl_early_data_accepted_warns() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-tls1_3", "-early_data"]);
    let r = run(srv.addr);
    let e = early(&r);
    assert_eq!(e.verdict, scan::early_data::Verdict::Accepted, "{e:?}");
    assert!(e.max_early_data_size.unwrap_or(0) > 0);
    assert_eq!(e.accepted, Some(true));
    assert_eq!(level(&r, "scan-early-data"), Some(Level::Warn));
    assert_eq!(state(&r, "early-data"), Some(WeaknessState::Vulnerable));
}

/// Without `-early_data` the tickets carry no early_data extension: no 0-RTT.
#[test]
fn openssl_without_early_data_passes() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-tls1_3"]);
    let r = run(srv.addr);
    let e = early(&r);
    assert_eq!(e.verdict, scan::early_data::Verdict::NotAdvertised, "{e:?}");
    assert_eq!(e.max_early_data_size, Some(0));
    assert_eq!(level(&r, "scan-early-data"), Some(Level::Pass));
}

/// A server that requires a client certificate issues no ticket to a client without one; with
/// the profile's identity the check goes through.
#[test]
fn early_data_with_client_identity_against_required_client_auth() {
    let set = common::rsa();
    let srv = openssl_server(
        &set,
        &[
            "-tls1_3",
            "-early_data",
            "-Verify",
            "1",
            "-verify_return_error",
            "-CAfile",
            set.ca.to_str().unwrap(),
        ],
    );
    let without = run(srv.addr);
    assert_eq!(
        early(&without).verdict,
        scan::early_data::Verdict::Undetermined,
        "{:?}",
        early(&without)
    );
    let o = ScanOptions {
        client_identity: Some((set.client.clone(), set.client_key.clone())),
        ..opts()
    };
    let with = scan::scan(srv.addr, &o).expect("scan");
    assert_eq!(
        early(&with).verdict,
        scan::early_data::Verdict::Accepted,
        "{:?}",
        early(&with)
    );
}

/// The survey after a scan skips the catalogue suites the scan found refused, and finds the
/// same accepted suites as the survey alone, with fewer handshakes (`openssl s_server`, TLS 1.2
/// and 1.3, three TLS 1.2 suites).
#[test]
fn survey_after_scan_finds_the_same_suites_with_fewer_handshakes() {
    use gander_tls::survey::{self, SurveyOptions};
    use gander_tls::{BackendKind, TlsProfile};
    let set = common::rsa();
    let srv = openssl_server(
        &set,
        &[
            "-cipher",
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:AES128-SHA256",
        ],
    );
    let client = TlsProfile {
        io_timeout_ms: 2000,
        ..set.profile(BackendKind::Openssl, false)
    };
    let so = SurveyOptions {
        timeout: Duration::from_secs(2),
        pause: Duration::from_millis(5),
        ..SurveyOptions::default()
    };
    let accepted = |s: &survey::TlsSurvey| {
        let mut v: Vec<(&str, Option<gander_tls::TlsVersion>)> = s
            .suites
            .iter()
            .filter(|p| p.accepted)
            .map(|p| (p.name, p.version))
            .collect();
        v.sort();
        v
    };
    let alone = survey::survey(srv.addr, &client, &so).expect("survey");
    let sc = scan::scan(srv.addr, &opts()).expect("scan");
    let after = survey::survey_after_scan(srv.addr, &client, &so, Some(&sc)).expect("survey");
    assert_eq!(accepted(&alone), accepted(&after));
    assert_eq!(accepted(&after).len(), 3 + 3, "{:?}", accepted(&after));
    assert!(
        after.handshakes + 20 < alone.handshakes,
        "{} against {}",
        after.handshakes,
        alone.handshakes
    );
    let skipped = after
        .suites
        .iter()
        .filter(|p| p.reason.as_deref().is_some_and(|r| r.contains("scan")))
        .count();
    assert!(skipped > 20, "{skipped}");
}

/// Field test defect E: an RSA-1024 and an ECDSA P-256 certificate on one server. A library
/// handshake sees only one (TLS 1.3 picks the ECDSA one), so the weak RSA key behind the
/// ECDHE_RSA suites passed. The scan keeps the certificate of each authentication class from
/// the TLS 1.2 first flights, in the clear, and judges every one.
#[test]
fn every_certificate_of_a_dual_certificate_server_is_judged() {
    let weak = common::pki(KeySpec::Rsa(1024));
    let ec = common::pki(KeySpec::P256);
    let srv = openssl_server(
        &weak,
        &[
            "-dcert",
            ec.server.to_str().unwrap(),
            "-dkey",
            ec.server_key.to_str().unwrap(),
            "-cipher",
            "DEFAULT:@SECLEVEL=0",
        ],
    );
    let r = run(srv.addr);
    let v12 = r.version(ProtocolVersion::Tls12).expect("TLS 1.2");
    let mut got: Vec<(&str, &str, u32)> = v12
        .certificates
        .iter()
        .map(|c| (c.auth, c.cert.key_type.as_str(), c.cert.key_bits))
        .collect();
    got.sort();
    assert_eq!(got, vec![("ECDSA", "EC", 256), ("RSA", "RSA", 1024)]);
    let v = r
        .verdicts
        .iter()
        .find(|v| v.id == "scan-certificate-keys")
        .expect("certificate verdict");
    assert_eq!(v.level, Level::Fail, "{v:?}");
    assert!(v.detail.contains("RSA 1024 bits"), "{v:?}");
}

/// Field test defect F: servers the library probes cannot handshake with (PSK only; brainpool
/// curves only) end the survey with "no TLS handshake succeeded"; the message now says what
/// the scan found that the libraries do not offer.
#[test]
fn no_handshake_says_what_the_libraries_lack() {
    use gander_tls::survey::{self, SurveyError, SurveyOptions};
    let dir = tempfile::tempdir().expect("tempdir");
    let psk = dir.path().join("psk.txt");
    std::fs::write(&psk, "ied:0123456789abcdef0123456789abcdef\n").expect("psk file");
    let ec = common::pki(KeySpec::P256);
    let servers = [
        (
            start(
                "gnutls-serv",
                &s(&[
                    "--port",
                    "{port}",
                    "--pskpasswd",
                    psk.to_str().unwrap(),
                    "--priority",
                    "NORMAL:-VERS-TLS1.3:-KX-ALL:+PSK:+DHE-PSK:+ECDHE-PSK",
                ]),
            ),
            "pre-shared keys (PSK)",
        ),
        (
            openssl_server(
                &ec,
                &[
                    "-no_tls1_3",
                    "-groups",
                    "brainpoolP384r1",
                    "-cipher",
                    "ECDHE",
                ],
            ),
            "only the groups brainpoolP384r1",
        ),
    ];
    let profile = gander_tls::TlsProfile {
        io_timeout_ms: 3000,
        ..ec.profile(gander_tls::BackendKind::Openssl, false)
    };
    let so = SurveyOptions {
        timeout: Duration::from_secs(3),
        pause: Duration::from_millis(5),
        quick: true,
        ..SurveyOptions::default()
    };
    for (srv, want) in &servers {
        let r = run(srv.addr);
        match survey::survey_after_scan(srv.addr, &profile, &so, Some(&r)) {
            Err(SurveyError::NoHandshake { detail, .. }) => {
                assert!(detail.contains(want), "{want}: {detail}")
            }
            other => panic!("{want}: expected no handshake, got {:?}", other.map(|_| ())),
        }
    }
}

/// A TLS 1.3-only server with an RSA-1024 and an ECDSA P-256 certificate that requires a
/// client certificate. TLS 1.3 encrypts the Certificate and the CertificateRequest (RFC 8446
/// §4.3-4.4), so the scan's ClientHellos saw neither: the weak key went unjudged and the
/// request was "not tested" (testssl.sh 3.0.8 lists both certificates of this server). One
/// completed handshake per class of signature scheme shows each certificate; OpenSSL's message
/// callback shows the CertificateRequest.
#[test]
fn tls13_only_server_shows_every_certificate_and_its_request() {
    let weak = common::pki(KeySpec::Rsa(1024));
    let ec = common::pki(KeySpec::P256);
    let srv = openssl_server(
        &weak,
        &[
            "-tls1_3",
            "-dcert",
            ec.server.to_str().unwrap(),
            "-dkey",
            ec.server_key.to_str().unwrap(),
            "-cipher",
            "DEFAULT:@SECLEVEL=0",
            "-Verify",
            "1",
        ],
    );
    let r = run(srv.addr);
    let v13 = r.version(ProtocolVersion::Tls13).expect("TLS 1.3");
    let mut got: Vec<(&str, &str, u32)> = v13
        .certificates
        .iter()
        .map(|c| (c.auth, c.cert.key_type.as_str(), c.cert.key_bits))
        .collect();
    got.sort();
    assert_eq!(got, vec![("ECDSA", "EC", 256), ("RSA", "RSA", 1024)]);
    let classes: Vec<(&str, bool)> = v13
        .signature_classes
        .iter()
        .map(|c| (c.auth, c.accepted))
        .collect();
    assert_eq!(
        classes,
        vec![
            ("RSA", true),
            ("RSA-PSS", false),
            ("ECDSA", true),
            ("EdDSA", false)
        ]
    );
    let v = r
        .verdicts
        .iter()
        .find(|v| v.id == "scan-certificate-keys")
        .expect("certificate verdict");
    assert_eq!(v.level, Level::Fail, "{v:?}");
    assert!(v.detail.contains("RSA 1024 bits"), "{v:?}");
    assert_eq!(
        state(&r, "client-certificate-request"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(level(&r, "scan-certificate-request"), Some(Level::Pass));
    // No status_request answer was configured.
    assert_eq!(state(&r, "ocsp-stapling"), Some(WeaknessState::Vulnerable));
}

/// The same server without `-Verify`: the decrypted handshake carries no CertificateRequest,
/// which is now a finding instead of "not tested".
#[test]
fn tls13_only_server_without_a_request_is_a_finding() {
    let set = common::rsa();
    let srv = openssl_server(&set, &["-tls1_3"]);
    let r = run(srv.addr);
    assert_eq!(
        state(&r, "client-certificate-request"),
        Some(WeaknessState::Vulnerable)
    );
    assert_eq!(level(&r, "scan-certificate-request"), Some(Level::Fail));
    let v13 = r.version(ProtocolVersion::Tls13).expect("TLS 1.3");
    assert_eq!(v13.certificates.len(), 1);
    assert_eq!(v13.certificates[0].cert.key_bits, 2048);
}

/// A stapled OCSP response travels in TLS 1.3's encrypted Certificate entry (RFC 8446
/// §4.4.2.1). `openssl ocsp` signs a response for the server's certificate with the CA's key
/// (an empty index: status unknown, which is still a response) and `s_server -status_file`
/// staples it.
#[test]
fn tls13_stapled_ocsp_is_seen() {
    let set = common::rsa();
    let dir = tempfile::tempdir().expect("tempdir");
    let index = dir.path().join("index.txt");
    std::fs::write(&index, b"").expect("index");
    let resp = dir.path().join("resp.der");
    let ok = Command::new("openssl")
        .args(["ocsp", "-index"])
        .arg(&index)
        .arg("-rsigner")
        .arg(&set.ca)
        .arg("-rkey")
        .arg(&set.ca_key)
        .arg("-CA")
        .arg(&set.ca)
        .arg("-issuer")
        .arg(&set.ca)
        .arg("-cert")
        .arg(&set.server)
        .arg("-respout")
        .arg(&resp)
        .args(["-ndays", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl ocsp")
        .success();
    assert!(ok && resp.exists(), "openssl ocsp made no response");
    let srv = openssl_server(&set, &["-tls1_3", "-status_file", resp.to_str().unwrap()]);
    let r = run(srv.addr);
    assert_eq!(
        state(&r, "ocsp-stapling"),
        Some(WeaknessState::NotVulnerable)
    );
    assert_eq!(level(&r, "scan-ocsp-stapling"), Some(Level::Pass));
}
