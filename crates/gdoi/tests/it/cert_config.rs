//! The certificate parts of the key server's configuration: `cert`, `key`, `ca`, `crl` go
//! together, a member is a pre-shared key at an address or a certificate named by subject or
//! SAN (never both), a certificate member needs the key server's own certificate, and a key
//! that is not the certificate's is refused at load time.

use crate::pki;

use gander_gdoi::cert_auth::CertMatch;
use gander_gdoi::config::{load, ConfigError};
use pki::{Kind, Leaf, Pki};

const GROUP: &str = r#"
[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 3600
"#;

fn try_load(
    p: &Pki,
    head: &str,
    members: &str,
) -> Result<gander_gdoi::config::KdcConfig, ConfigError> {
    let path = p.dir.join("kdc.toml");
    std::fs::write(
        &path,
        format!(
            "listen = \"127.0.0.1:0\"\nstate = {:?}\n{head}\n{GROUP}\n{members}",
            p.dir.join("state.toml")
        ),
    )
    .unwrap();
    load(&path)
}

#[test]
fn certificate_configuration() {
    let p = Pki::new("gander test CA", Kind::P384);
    let (c, k) = p.leaf(&Leaf::new("kdc", Kind::P384));
    let (cert, key) = p.write("kdc", &c, &k);
    let (_, other_key) = p.leaf(&Leaf::new("x", Kind::P384));
    let (_, wrong_key) = p.write("other", &c, &other_key);
    let crl = p.crl(&[], "ca.crl");
    let head = format!(
        "cert = {cert:?}\nkey = {key:?}\nca = {:?}\ncrl = {crl:?}",
        p.ca_path()
    );
    let by_subject = "[[member]]\nidentity = \"ied-1\"\nsubject = \"O=gander test,CN=ied-1\"\ngroups = [\"goose-1\"]\n";
    let by_san =
        "[[member]]\nidentity = \"ied-2\"\nsan = \"ied-2.example\"\ngroups = [\"goose-1\"]\n";
    let psk = "[[member]]\nidentity = \"ied-3\"\naddress = \"127.0.0.3\"\npsk_hex = \"000102030405060708090a0b0c0d0e0f\"\ngroups = [\"goose-1\"]\n";

    let cfg = try_load(&p, &head, &format!("{by_subject}{by_san}{psk}")).unwrap();
    assert_eq!(cfg.credentials.len(), 1);
    let m = &cfg.policy.members;
    assert_eq!(
        m[0].cert,
        Some(CertMatch::Subject("O=gander test,CN=ied-1".into()))
    );
    assert_eq!(m[1].cert, Some(CertMatch::San("ied-2.example".into())));
    assert!(m[2].cert.is_none() && m[2].psk.len() == 16);

    // A certificate member without the key server's certificate.
    assert!(matches!(
        try_load(&p, "", by_subject),
        Err(ConfigError::Bad { .. })
    ));
    // cert without key and ca; crl alone.
    assert!(matches!(
        try_load(&p, &format!("cert = {cert:?}"), psk),
        Err(ConfigError::Bad { .. })
    ));
    assert!(matches!(
        try_load(&p, &format!("crl = {crl:?}"), psk),
        Err(ConfigError::Bad { .. })
    ));
    // Both a PSK and a subject; neither; a PSK member without its address.
    let both = "[[member]]\nidentity = \"x\"\naddress = \"127.0.0.9\"\npsk_hex = \"000102030405060708090a0b0c0d0e0f\"\nsubject = \"CN=x\"\ngroups = []\n";
    assert!(matches!(
        try_load(&p, &head, both),
        Err(ConfigError::Bad { .. })
    ));
    let neither = "[[member]]\nidentity = \"x\"\ngroups = []\n";
    assert!(matches!(
        try_load(&p, &head, neither),
        Err(ConfigError::Bad { .. })
    ));
    let no_addr = "[[member]]\nidentity = \"x\"\npsk_hex = \"000102030405060708090a0b0c0d0e0f\"\ngroups = []\n";
    assert!(matches!(
        try_load(&p, &head, no_addr),
        Err(ConfigError::Bad { .. })
    ));
    // A key that is not the certificate's, and a CA file that is not PEM.
    let head_wrong = format!(
        "cert = {cert:?}\nkey = {wrong_key:?}\nca = {:?}",
        p.ca_path()
    );
    assert!(matches!(
        try_load(&p, &head_wrong, by_subject),
        Err(ConfigError::Cert(_))
    ));
    let head_bad_ca = format!("cert = {cert:?}\nkey = {key:?}\nca = {key:?}");
    assert!(matches!(
        try_load(&p, &head_bad_ca, by_subject),
        Err(ConfigError::Cert(_))
    ));
}
