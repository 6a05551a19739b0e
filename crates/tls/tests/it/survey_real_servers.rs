//! The TLS survey against real third-party servers started by the test (`openssl s_server`,
//! `gnutls-serv`), each configured to show one defect of issue #22 the survey had: a server
//! without RFC 5746, TLS 1.3 certificate_required after the handshake, a completed
//! renegotiation on a server that does not answer MMS, groups beyond x25519/P-256, an expired
//! or untrusted server certificate, and a TLS 1.2 refusal of a missing client certificate.
//!
//! Every server runs in a network namespace of its own (created by the test's thread with
//! `unshare(CLONE_NEWNET)`, loopback only), so that `gnutls-serv`, which listens on every
//! address, is reachable from nowhere else. Like every namespace test of the workspace, a test
//! that cannot create the namespace fails with the reason, or skips saying so when
//! `GANDER_SKIP_NETNS=1`.
use crate::common;

use gander_tls::pki::PkiSet;
use gander_tls::survey::{self, Level, SurveyOptions, TlsSurvey};
use gander_tls::{BackendKind, TlsProfile, TlsVersion};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The survey's application round as an MMS client makes it (TPKT + COTP CR); the servers here
/// do not speak MMS, which is the point: the survey must not wait out a timeout per probe.
#[derive(Debug)]
struct CotpRound;

impl survey::AppRound for CotpRound {
    fn request(&self) -> Vec<u8> {
        vec![
            0x03, 0x00, 0x00, 0x16, 0x11, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xC0, 0x01, 0x0D,
            0xC1, 0x02, 0x00, 0x01, 0xC2, 0x02, 0x00, 0x01,
        ]
    }
    fn is_confirm(&self, b: &[u8]) -> bool {
        b.len() >= 6 && b[0] == 3 && b[1] == 0 && b[5] & 0xF0 == 0xD0
    }
}

const PORT: u16 = 4433;

fn opts() -> SurveyOptions {
    SurveyOptions {
        timeout: Duration::from_millis(1500),
        pause: Duration::from_millis(5),
        quick: true,
        round: Some(Arc::new(CotpRound)),
        ..SurveyOptions::default()
    }
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn p(x: &Path) -> String {
    x.display().to_string()
}

/// `openssl s_server` on 127.0.0.1:PORT serving `cert`/`key`, trusting the set's CA for client
/// certificates; `args` add to that. Its standard input stays open (a closed one ends it).
fn openssl_server(set: &PkiSet, cert: &Path, key: &Path, args: &[&str]) -> Server {
    let child = Command::new("openssl")
        .args([
            "s_server",
            "-quiet",
            "-accept",
            &format!("127.0.0.1:{PORT}"),
        ])
        .args(["-cert", &p(cert), "-key", &p(key), "-CAfile", &p(&set.ca)])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_server (package openssl)");
    wait_listening(Server(child))
}

/// `gnutls-serv` on PORT (every address of the test's namespace) with the set's server
/// credentials and CA; `args` add to that.
fn gnutls_server(set: &PkiSet, args: &[&str]) -> Server {
    let child = Command::new("gnutls-serv")
        .args(["--quiet", "--port", &PORT.to_string()])
        .args(["--x509certfile", &p(&set.server)])
        .args(["--x509keyfile", &p(&set.server_key)])
        .args(["--x509cafile", &p(&set.ca)])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gnutls-serv (package gnutls-bin)");
    wait_listening(Server(child))
}

fn wait_listening(mut s: Server) -> Server {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(Some(st)) = s.0.try_wait() {
            panic!("server exited at start: {st}");
        }
        if TcpStream::connect(addr()).is_ok() {
            // The probe connection above is closed at once; give the server its accept loop back.
            std::thread::sleep(Duration::from_millis(50));
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("server did not listen within 10 s");
}

fn addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], PORT))
}

/// Runs `f` on a thread of its own in a fresh network namespace with loopback up; processes
/// that thread starts inherit the namespace. `None`: skipped (`GANDER_SKIP_NETNS=1`).
fn in_netns<T: Send + 'static>(test: &str, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let test = test.to_string();
    std::thread::spawn(move || {
        // SAFETY: unshare affects only the calling thread's network namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            let e = std::io::Error::last_os_error();
            if std::env::var("GANDER_SKIP_NETNS").as_deref() == Ok("1") {
                eprintln!("{test}: skipped (GANDER_SKIP_NETNS=1): unshare(CLONE_NEWNET): {e}");
                return None;
            }
            panic!("{test}: namespace test cannot run: unshare(CLONE_NEWNET): {e} (root needed; set GANDER_SKIP_NETNS=1 to skip)");
        }
        let st = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status()
            .expect("ip (package iproute2)");
        assert!(st.success(), "ip link set lo up: {st}");
        Some(f())
    })
    .join()
    .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn client(set: &PkiSet) -> TlsProfile {
    TlsProfile {
        io_timeout_ms: 1500,
        ..set.profile(BackendKind::Openssl, false)
    }
}

/// The engineer who has only the CA.
fn anonymous(set: &PkiSet) -> TlsProfile {
    TlsProfile {
        cert: None,
        key: None,
        require_client_auth: false,
        ..client(set)
    }
}

fn level(s: &TlsSurvey, id: &str) -> Option<Level> {
    s.verdicts.iter().find(|v| v.id == id).map(|v| v.level)
}

fn run(s: &TlsSurvey) -> &TlsSurvey {
    println!("{}", survey::render(s));
    s
}

#[test]
fn server_without_rfc5746_is_surveyed_and_the_verdict_fires() {
    // Issue #22 defect 1: OpenSSL 3's client refuses such a server ("unsafe legacy
    // renegotiation disabled") unless SSL_OP_LEGACY_SERVER_CONNECT; the survey must connect,
    // report the missing signal, and try whether the server renegotiates insecurely.
    let set = common::rsa();
    let s = in_netns("no_rfc5746", move || {
        let _srv = gnutls_server(
            &set,
            &[
                "--priority",
                "NORMAL:-VERS-TLS1.3:%DISABLE_SAFE_RENEGOTIATION",
            ],
        );
        survey::survey(addr(), &client(&set), &opts())
    });
    let Some(s) = s else { return };
    let s = s.expect("a server without RFC 5746 is surveyed");
    run(&s);
    assert_eq!(s.versions.get("1.2"), Some(&true));
    assert_eq!(s.renegotiation.secure_renegotiation, Some(false));
    assert!(s.renegotiation.insecure);
    let v = s
        .verdicts
        .iter()
        .find(|v| v.id == "secure-renegotiation")
        .expect("verdict");
    assert!(v.level >= Level::Warn, "{v:?}");
    // GnuTLS with safe renegotiation disabled renegotiates the unsafe way: the worst case.
    if s.renegotiation.client_initiated.ok == Some(true) {
        assert_eq!(v.level, Level::Fail, "{v:?}");
    }
    assert!(s.negotiated.is_some(), "{:?}", s.negotiated_error);
}

#[test]
fn tls13_certificate_required_after_the_handshake_is_counted() {
    // Defects 2 and 3: a TLS 1.3 server requiring a certificate, surveyed without one. The
    // refusal (certificate_required, alert 116) comes after the client's Finished; it counts for
    // both client-authentication verdicts, and the KeyUpdate verdict does not blame it.
    let set = common::rsa();
    let s = in_netns("tls13_cert_required", move || {
        let mut out = Vec::new();
        {
            let _srv = openssl_server(
                &set,
                &set.server,
                &set.server_key,
                &["-tls1_3", "-Verify", "1", "-verify_return_error"],
            );
            out.push(survey::survey(addr(), &anonymous(&set), &opts()));
        }
        {
            let _srv = gnutls_server(
                &set,
                &[
                    "-r",
                    "--verify-client-cert",
                    "--priority",
                    "NORMAL:-VERS-ALL:+VERS-TLS1.3",
                ],
            );
            out.push(survey::survey(addr(), &anonymous(&set), &opts()));
        }
        out
    });
    let Some(all) = s else { return };
    for (who, s) in ["openssl s_server", "gnutls-serv"].iter().zip(all) {
        let s = s.unwrap_or_else(|e| panic!("{who}: {e}"));
        run(&s);
        assert_eq!(s.versions.get("1.3"), Some(&true), "{who}");
        assert_eq!(
            s.client_cert_required,
            Some(true),
            "{who}: {:?}",
            s.client_auth
        );
        assert_eq!(
            s.untrusted_client_cert_refused,
            Some(true),
            "{who}: {:?}",
            s.client_auth
        );
        assert_eq!(
            level(&s, "client-cert-required"),
            Some(Level::Pass),
            "{who}"
        );
        assert_eq!(
            level(&s, "untrusted-client-cert"),
            Some(Level::Pass),
            "{who}"
        );
        assert_ne!(s.key_update.ok, Some(false), "{who}: {:?}", s.key_update);
        assert_ne!(level(&s, "key-update"), Some(Level::Warn), "{who}");
        assert_eq!(
            s.client_auth.without_cert.certificate_requested,
            Some(true),
            "{who}"
        );
    }
}

#[test]
fn completed_renegotiation_is_judged_at_the_tls_layer() {
    // Defect 4: `openssl s_server` answers nothing to the MMS round; a renegotiation it
    // completes is accepted all the same, one it refuses (no -client_renegotiation) is not.
    let set = common::rsa();
    let s = in_netns("renegotiation", move || {
        let mut out = Vec::new();
        for extra in [&["-client_renegotiation"][..], &[][..]] {
            let mut args = vec!["-tls1_2", "-Verify", "1", "-verify_return_error"];
            args.extend_from_slice(extra);
            let _srv = openssl_server(&set, &set.server, &set.server_key, &args);
            let t0 = Instant::now();
            let s = survey::survey(addr(), &client(&set), &opts());
            out.push((s, t0.elapsed()));
        }
        out
    });
    let Some(all) = s else { return };
    let mut it = all.into_iter();
    let (allowed, took) = it.next().expect("first");
    let allowed = allowed.expect("survey");
    run(&allowed);
    assert_eq!(
        allowed.renegotiation.client_initiated.ok,
        Some(true),
        "{:?}",
        allowed.renegotiation
    );
    assert_eq!(level(&allowed, "client-renegotiation"), Some(Level::Pass));
    assert_eq!(allowed.renegotiation.secure_renegotiation, Some(true));
    assert_eq!(allowed.client_cert_required, Some(true));
    // Learned once that the port does not answer: one full wait (1.5 s here), not one per
    // round (9 rounds); the bound leaves room for a loaded machine.
    assert_eq!(allowed.round_answered, Some(false));
    assert!(
        took < Duration::from_millis(1500 * 4),
        "took {took:?}: rounds waited the timeout more than once"
    );
    let (refused, _) = it.next().expect("second");
    let refused = refused.expect("survey");
    run(&refused);
    assert_eq!(
        refused.renegotiation.client_initiated.ok,
        Some(false),
        "{:?}",
        refused.renegotiation
    );
}

#[test]
fn every_negotiated_group_is_named() {
    // Defect 5: the default handshake's group was null for anything but x25519, P-256 and
    // ML-KEM. OpenSSL 3.0's client offers x25519, P-256, x448, P-521, P-384 and (TLS 1.3)
    // ffdhe2048..8192 by default; each server here allows one of them.
    let set = common::rsa();
    let cases: Vec<(Vec<&'static str>, &'static str)> = vec![
        (vec!["-groups", "P-384"], "secp384r1"),
        (vec!["-groups", "P-521"], "secp521r1"),
        (vec!["-groups", "X448"], "x448"),
        (vec!["-tls1_3", "-groups", "ffdhe2048"], "ffdhe2048"),
        (vec!["-tls1_3", "-groups", "ffdhe3072"], "ffdhe3072"),
        (vec!["-tls1_2", "-groups", "P-384"], "secp384r1"),
    ];
    let got = in_netns("groups", move || {
        let mut out = Vec::new();
        for (args, want) in cases {
            let _srv = openssl_server(&set, &set.server, &set.server_key, &args);
            let o = SurveyOptions {
                quick: true,
                ..opts()
            };
            let s = survey::survey(addr(), &client(&set), &o).expect("survey");
            out.push((want, s.negotiated.and_then(|n| n.group)));
        }
        // GnuTLS too, and TLS 1.2 finite-field DHE (the server's parameters, no group code).
        {
            let _srv = gnutls_server(&set, &["--priority", "NORMAL:-GROUP-ALL:+GROUP-SECP384R1"]);
            let s = survey::survey(addr(), &client(&set), &opts()).expect("survey");
            out.push(("secp384r1", s.negotiated.and_then(|n| n.group)));
        }
        {
            let _srv = openssl_server(
                &set,
                &set.server,
                &set.server_key,
                &["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"],
            );
            let s = survey::survey(addr(), &client(&set), &opts()).expect("survey");
            out.push(("DHE", s.negotiated.and_then(|n| n.group)));
        }
        out
    });
    let Some(got) = got else { return };
    for (want, group) in got {
        if want == "DHE" {
            let g = group.expect("a TLS 1.2 DHE group is described");
            assert!(
                g.starts_with("ffdhe") || g.starts_with("modp") || g.starts_with("DH-"),
                "{g}"
            );
        } else {
            assert_eq!(group.as_deref(), Some(want));
        }
    }
}

#[test]
fn expired_or_untrusted_server_certificate_does_not_stop_the_survey() {
    // Defect 6: the survey went on after versions and suites with nothing determined. Now the
    // chain's failure is reported and the later probes run with verification off.
    let set = common::rsa();
    let s = in_netns("bad_server_cert", move || {
        let mut out = Vec::new();
        for cert in [&set.expired, &set.other] {
            let _srv = openssl_server(
                &set,
                cert,
                &set.client_key,
                &["-Verify", "1", "-verify_return_error"],
            );
            out.push(survey::survey(addr(), &client(&set), &opts()));
        }
        out
    });
    let Some(all) = s else { return };
    for (who, s) in ["expired", "untrusted"].iter().zip(all) {
        let s = s.unwrap_or_else(|e| panic!("{who}: {e}"));
        run(&s);
        assert_eq!(s.chain_trusted, Some(false), "{who}");
        assert!(s.server_verification_error.is_some(), "{who}");
        assert_eq!(
            level(&s, "server-chain-trusted"),
            Some(Level::Warn),
            "{who}"
        );
        let n = s
            .negotiated
            .as_ref()
            .expect("default handshake, verification off");
        assert!(n.group.is_some(), "{who}: {n:?}");
        assert_eq!(s.client_cert_required, Some(true), "{who}");
        assert_eq!(s.untrusted_client_cert_refused, Some(true), "{who}");
        assert!(s.resumption.tls12_session_id.ok.is_some(), "{who}");
        assert!(s.resumption.tls13_psk.ok.is_some(), "{who}");
        assert_eq!(s.renegotiation.secure_renegotiation, Some(true), "{who}");
        assert!(s.renegotiation.client_initiated.ok.is_some(), "{who}");
        assert!(s.key_update.detail.is_some(), "{who}");
        if *who == "expired" {
            assert!(!s.chain[0].valid_now);
            assert_eq!(level(&s, "validity"), Some(Level::Fail));
        }
    }
}

#[test]
fn tls12_refusal_of_a_missing_certificate_is_not_a_missing_suite() {
    // Defect 7: OpenSSL servers answer a missing client certificate with handshake_failure
    // (alert 40) after their ServerHello; that is a refusal of the client, not "no shared
    // cipher suite".
    let set = common::rsa();
    let s = in_netns("tls12_missing_cert", move || {
        let _srv = openssl_server(
            &set,
            &set.server,
            &set.server_key,
            &["-tls1_2", "-Verify", "1", "-verify_return_error"],
        );
        survey::survey(addr(), &anonymous(&set), &opts())
    });
    let Some(s) = s else { return };
    let s = s.expect("survey");
    run(&s);
    assert_eq!(s.client_cert_required, Some(true));
    let p = &s.client_auth.without_cert;
    assert_eq!(p.certificate_requested, Some(true), "{p:?}");
    let d = p.detail.as_deref().unwrap_or_default();
    assert!(!d.contains("no shared cipher"), "{d}");
    assert!(d.contains("refusal of the client"), "{d}");
    let e = s.negotiated_error.as_deref().unwrap_or_default();
    assert!(!e.contains("no shared cipher"), "{e}");
    // The suites the server chose before refusing are still found.
    assert!(s.suites.iter().any(|p| p.accepted));
    assert_eq!(s.client_auth.version, Some(TlsVersion::Tls12));
}

#[test]
fn parallel_mode_finds_what_the_sequential_survey_finds() {
    // `--parallel N`: the suite probes run N at a time; the findings do not change.
    let set = common::rsa();
    let got = in_netns("parallel", move || {
        let _srv = gnutls_server(&set, &["--priority", "NORMAL:+3DES-CBC"]);
        let full = |parallel| SurveyOptions {
            quick: false,
            parallel,
            ..opts()
        };
        let one = survey::survey(addr(), &client(&set), &full(1)).expect("sequential");
        let four = survey::survey(addr(), &client(&set), &full(4)).expect("parallel");
        (one, four)
    });
    let Some((one, four)) = got else { return };
    let acc = |s: &TlsSurvey| -> Vec<&str> {
        s.suites
            .iter()
            .filter(|p| p.accepted)
            .map(|p| p.name)
            .collect()
    };
    assert!(acc(&one).len() > 3, "{:?}", acc(&one));
    assert!(
        acc(&one).contains(&"TLS_RSA_WITH_3DES_EDE_CBC_SHA"),
        "{:?}",
        acc(&one)
    );
    assert_eq!(acc(&one), acc(&four));
    assert_eq!(one.suites.len(), four.suites.len());
    assert_eq!(one.handshakes, four.handshakes);
    assert_eq!(one.versions, four.versions);
}

/// Runs `openssl args` and fails the test with its output if it fails.
fn openssl_cmd(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl (package openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An intermediate CA under the set's CA and a leaf (DNS:localhost) under the intermediate, made
/// with the openssl command in `dir`: (intermediate.pem, leaf.pem, leaf.key).
fn chain_with_intermediate(
    set: &PkiSet,
    dir: &Path,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let f = |n: &str| dir.join(n).display().to_string();
    std::fs::write(
        dir.join("ext.cnf"),
        "[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n\
         [leaf]\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n\
         subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .expect("ext.cnf");
    for (name, cn) in [("int", "gander test intermediate"), ("leaf", "localhost")] {
        openssl_cmd(&[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &f(&format!("{name}.key")),
            "-out",
            &f(&format!("{name}.csr")),
        ]);
    }
    openssl_cmd(&[
        "x509",
        "-req",
        "-in",
        &f("int.csr"),
        "-CA",
        &p(&set.ca),
        "-CAkey",
        &p(&set.ca_key),
        "-CAcreateserial",
        "-days",
        "30",
        "-extfile",
        &f("ext.cnf"),
        "-extensions",
        "ca",
        "-out",
        &f("int.pem"),
    ]);
    openssl_cmd(&[
        "x509",
        "-req",
        "-in",
        &f("leaf.csr"),
        "-CA",
        &f("int.pem"),
        "-CAkey",
        &f("int.key"),
        "-CAcreateserial",
        "-days",
        "30",
        "-extfile",
        &f("ext.cnf"),
        "-extensions",
        "leaf",
        "-out",
        &f("leaf.pem"),
    ]);
    (
        dir.join("int.pem"),
        dir.join("leaf.pem"),
        dir.join("leaf.key"),
    )
}

#[test]
fn sni_refusal_is_reported_and_the_survey_goes_on_without_it() {
    // Field test defect B: `-servername_fatal` answers any other name with unrecognized_name
    // (alert 112). That refuses the name, not the version (RFC 6066 §3): the survey reports the
    // name and surveys the versions and suites without SNI.
    let set = common::rsa();
    let ec = common::pki(gander_tls::pki::KeySpec::P256);
    let s = in_netns("sni_fatal", move || {
        let _srv = openssl_server(
            &set,
            &set.server,
            &set.server_key,
            &[
                "-servername",
                "ied.substation.local",
                "-cert2",
                &p(&ec.server),
                "-key2",
                &p(&ec.server_key),
                "-servername_fatal",
            ],
        );
        let prof = TlsProfile {
            server_name: Some("localhost".into()),
            ..client(&set)
        };
        survey::survey(addr(), &prof, &opts())
    });
    let Some(s) = s else { return };
    let s = s.expect("a server refusing the name is surveyed");
    run(&s);
    assert_eq!(s.server_name_refused.as_deref(), Some("localhost"));
    assert_eq!(s.versions.get("1.2"), Some(&true));
    assert_eq!(s.versions.get("1.3"), Some(&true));
    assert!(s.negotiated.is_some(), "{:?}", s.negotiated_error);
    assert!(s.suites.iter().any(|p| p.accepted));
    let v = s
        .verdicts
        .iter()
        .find(|v| v.id == "sni")
        .expect("sni verdict");
    assert_eq!(v.level, Level::Warn);
    assert!(v.detail.contains("\"localhost\""), "{v:?}");
}

#[test]
fn name_mismatch_is_its_own_verdict_and_the_chain_passes() {
    // Field test defect C: with verify_hostname and a certificate for another name, the chain
    // verifies and only the name fails (X509_V_ERR 62): two verdicts, not "untrusted chain".
    // Without verify_hostname the name is said not to be checked.
    let set = common::rsa();
    let got = in_netns("name_mismatch", move || {
        let _srv = openssl_server(&set, &set.server, &set.server_key, &[]);
        let checked = TlsProfile {
            server_name: Some("ied7.example.org".into()),
            verify_hostname: true,
            ..client(&set)
        };
        let matching = TlsProfile {
            server_name: Some("localhost".into()),
            verify_hostname: true,
            ..client(&set)
        };
        (
            survey::survey(addr(), &checked, &opts()),
            survey::survey(addr(), &matching, &opts()),
            survey::survey(addr(), &client(&set), &opts()),
        )
    });
    let Some((wrong, right, unchecked)) = got else {
        return;
    };
    let wrong = wrong.expect("surveyed");
    run(&wrong);
    assert_eq!(
        wrong.name_check.matched,
        Some(false),
        "{:?}",
        wrong.name_check
    );
    assert_eq!(wrong.chain_trusted, Some(true));
    assert_eq!(wrong.server_verification_error, None);
    assert_eq!(level(&wrong, "server-chain-trusted"), Some(Level::Pass));
    assert_eq!(level(&wrong, "server-name-match"), Some(Level::Fail));
    assert!(wrong.negotiated.is_some(), "{:?}", wrong.negotiated_error);
    // The later probes ran: the client-authentication verdicts are determined.
    assert!(wrong.client_cert_required.is_some());
    let right = right.expect("surveyed");
    assert_eq!(right.name_check.matched, Some(true));
    assert_eq!(level(&right, "server-name-match"), Some(Level::Pass));
    let unchecked = unchecked.expect("surveyed");
    assert_eq!(unchecked.name_check.matched, None);
    let v = unchecked
        .verdicts
        .iter()
        .find(|v| v.id == "server-name-match")
        .expect("name verdict");
    assert_eq!(v.level, Level::Info);
    assert!(v.detail.contains("not checked"), "{v:?}");
}

/// No file at all (`gander tls survey HOST:PORT` without `--tls`): what sslscan and testssl.sh
/// start from.
fn nothing() -> TlsProfile {
    TlsProfile {
        io_timeout_ms: 1500,
        ..TlsProfile::from_toml("").expect("empty profile")
    }
}

fn accepted_suites(s: &TlsSurvey) -> Vec<String> {
    let mut v: Vec<String> = s
        .suites
        .iter()
        .filter(|p| p.accepted)
        .map(|p| p.name.to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_survey_without_any_credentials_finds_what_the_ca_holder_finds() {
    // A security engineer without the substation's CA or a certificate: the survey used to
    // refuse to start ("ca is required", after its scan had already run). Two servers: one
    // that requires a client certificate (an IED under IEC 62351-3), and one that sends its
    // leaf without the intermediate and asks for no client certificate.
    let set = common::rsa();
    let dir = tempfile::tempdir().expect("tempdir");
    let (_int, leaf, key) = chain_with_intermediate(&set, dir.path());
    let got = in_netns("no_credentials", move || {
        let mut out = Vec::new();
        {
            let _srv = openssl_server(
                &set,
                &set.server,
                &set.server_key,
                &["-Verify", "1", "-verify_return_error"],
            );
            out.push((
                survey::survey(addr(), &anonymous(&set), &opts()),
                survey::survey(addr(), &nothing(), &opts()),
            ));
        }
        {
            let _srv = openssl_server(&set, &leaf, &key, &[]);
            out.push((
                survey::survey(addr(), &anonymous(&set), &opts()),
                survey::survey(addr(), &nothing(), &opts()),
            ));
        }
        out
    });
    let Some(pairs) = got else { return };
    for (who, (with_ca, bare)) in ["client-auth", "leaf-alone"].iter().zip(pairs) {
        let with_ca = with_ca.unwrap_or_else(|e| panic!("{who}, with the CA: {e}"));
        let bare = bare.unwrap_or_else(|e| panic!("{who}, without anything: {e}"));
        run(&bare);
        assert!(with_ca.trust_anchors && !bare.trust_anchors, "{who}");
        // What the survey found of the server is the same.
        assert_eq!(bare.versions, with_ca.versions, "{who}");
        assert_eq!(accepted_suites(&bare), accepted_suites(&with_ca), "{who}");
        assert!(!accepted_suites(&bare).is_empty(), "{who}");
        assert_eq!(bare.chain, with_ca.chain, "{who}");
        assert_eq!(
            bare.client_cert_required, with_ca.client_cert_required,
            "{who}"
        );
        assert_eq!(
            bare.resumption.tls13_psk.ok, with_ca.resumption.tls13_psk.ok,
            "{who}"
        );
        assert!(
            bare.negotiated.is_some(),
            "{who}: {:?}",
            bare.negotiated_error
        );
        // And the stand-in anchor's "unknown CA" is claimed of nothing.
        assert_eq!(bare.chain_trusted, None, "{who}");
        assert_eq!(bare.server_verification_error, None, "{who}");
        assert!(!bare.chain_incomplete, "{who}");
        assert_eq!(
            level(&bare, "server-chain-trusted"),
            Some(Level::Info),
            "{who}"
        );
        assert!(
            survey::render(&bare).contains("not verified: no CA given"),
            "{who}"
        );
    }
}

#[test]
fn missing_intermediate_is_an_incomplete_chain_not_an_unknown_ca() {
    // Field test defect C: a server that sends its leaf without the intermediate fails with
    // X509_V_ERR 20 like an unknown CA; the survey names the real fault.
    let set = common::rsa();
    let dir = tempfile::tempdir().expect("tempdir");
    let (int, leaf, key) = chain_with_intermediate(&set, dir.path());
    let got = in_netns("incomplete_chain", move || {
        let alone = {
            let _srv = openssl_server(&set, &leaf, &key, &[]);
            survey::survey(addr(), &client(&set), &opts())
        };
        let full = {
            let _srv = openssl_server(&set, &leaf, &key, &["-cert_chain", &p(&int)]);
            survey::survey(addr(), &client(&set), &opts())
        };
        (alone, full)
    });
    let Some((alone, full)) = got else { return };
    let alone = alone.expect("surveyed");
    run(&alone);
    assert!(alone.chain_incomplete);
    assert_eq!(alone.chain_trusted, Some(false));
    let v = alone
        .verdicts
        .iter()
        .find(|v| v.id == "server-chain-trusted")
        .expect("chain verdict");
    assert_eq!(v.level, Level::Warn);
    assert!(v.detail.starts_with("chain incomplete"), "{v:?}");
    let full = full.expect("surveyed");
    assert!(!full.chain_incomplete);
    assert_eq!(full.chain_trusted, Some(true));
    assert_eq!(level(&full, "server-chain-trusted"), Some(Level::Pass));
}

#[test]
fn silent_port_ends_after_one_unanswered_handshake() {
    // Field test defect D: a port that accepts and never answers took 19 connections, one
    // timeout each. The survey stops after the first ClientHello without answer (and one
    // clear request that would reveal a plain port).
    let prof = anonymous(&common::rsa());
    let got = in_netns("silent", move || {
        let l = std::net::TcpListener::bind(addr()).expect("bind");
        let count = Arc::new(std::sync::Mutex::new(Vec::new()));
        let held = count.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                held.lock().unwrap().push(c);
            }
        });
        let t0 = Instant::now();
        let r = survey::survey(addr(), &prof, &opts());
        let took = t0.elapsed();
        let n = count.lock().unwrap().len();
        (r.map(|_| ()).map_err(|e| e.to_string()), took, n)
    });
    let Some((r, took, n)) = got else { return };
    let e = r.expect_err("a silent port cannot be surveyed");
    assert!(e.contains("does not answer"), "{e}");
    // Connections: the listening check, the default handshake, the clear request.
    assert!(n <= 3, "{n} connections");
    assert!(took < Duration::from_millis(3 * 1500 + 1000), "{took:?}");
}
