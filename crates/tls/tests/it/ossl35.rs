//! OpenSSL 3.5 (the binary `make build-ossl35` builds) against rustls with aws-lc-rs: hybrid and
//! post-quantum key exchange and ML-DSA certificates across two libraries. Runs when that binary
//! exists (`GANDER_OSSL35`, or `ossl35/release/gander` in this target directory); otherwise it
//! says so and passes, as `make test` builds the binary only for the pq checks.

use gander_tls::pki::{KeySpec, PkiSet};
use gander_tls::{backend, BackendKind, KxGroup, TlsProfile, TlsVersion};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn ossl35() -> Option<PathBuf> {
    let p = std::env::var_os("GANDER_OSSL35")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../ossl35/release/gander")
        });
    if p.is_file() {
        Some(p)
    } else {
        eprintln!(
            "ossl35: {} not built (make build-ossl35): not run",
            p.display()
        );
        None
    }
}

/// Starts `gander mms server` of the OpenSSL 3.5 binary with `key` certificates and `group`,
/// and returns its address and process.
fn server(
    exe: &PathBuf,
    set: &PkiSet,
    group: KxGroup,
    dir: &std::path::Path,
) -> (String, std::process::Child) {
    let cfg = dir.join(format!("server-{}-{group}.toml", set.spec));
    let mut f = std::fs::File::create(&cfg).unwrap();
    writeln!(
        f,
        "listen = \"127.0.0.1:0\"\nevents = {:?}\n[reports]\nperiod_ms = 100\nsize = 125\n[tls]\nbackend = \"openssl35\"\nca = {:?}\ncert = {:?}\nkey = {:?}\nversions = [\"1.3\"]\ncipher_suites = [\"TLS_AES_128_GCM_SHA256\"]\ngroups = [\"{}\"]",
        dir.join("server.events"),
        set.ca,
        set.server,
        set.server_key,
        group.name()
    )
    .unwrap();
    let mut child = Command::new(exe)
        .args(["mms", "server", "--config"])
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while r.read_line(&mut line).unwrap() > 0 {
        if let Some(a) = line.trim().strip_prefix("READY ") {
            return (a.to_string(), child);
        }
        line.clear();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("OpenSSL 3.5 server did not start");
}

#[test]
fn openssl35_server_and_aws_lc_client_agree_on_pq_groups_and_ml_dsa() {
    let Some(exe) = ossl35() else { return };
    let dir = tempfile::tempdir().unwrap();
    // ML-DSA certificates come from the OpenSSL 3.5 binary (the system OpenSSL 3.0 cannot).
    let st = Command::new(&exe)
        .args([
            "pki", "init", "--rsa", "none", "--ecdsa", "p256", "--mldsa", "44,65", "--dir",
        ])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(st.success());
    for (spec, group) in [
        (KeySpec::P256, KxGroup::X25519Mlkem768),
        (KeySpec::P256, KxGroup::Mlkem768),
        (KeySpec::MlDsa44, KxGroup::X25519Mlkem768),
        (KeySpec::MlDsa65, KxGroup::Mlkem768),
    ] {
        let set = PkiSet::paths(dir.path(), spec);
        let (addr, mut child) = server(&exe, &set, group, dir.path());
        let client = TlsProfile {
            versions: vec![TlsVersion::Tls13],
            groups: vec![group],
            io_timeout_ms: 5000,
            ..set.profile(BackendKind::RustlsAwslc, false)
        };
        let cb = backend::open(&client).unwrap_or_else(|e| panic!("{spec} {group}: {e}"));
        let mut s = cb.client(TcpStream::connect(&addr).unwrap()).unwrap();
        let r = s.handshake();
        let g = s.negotiated_group();
        let _ = s.shutdown();
        let _ = child.kill();
        let _ = child.wait();
        r.unwrap_or_else(|e| panic!("{spec} {group}: {e}"));
        assert_eq!(g, Some(group), "{spec}");
    }
}
