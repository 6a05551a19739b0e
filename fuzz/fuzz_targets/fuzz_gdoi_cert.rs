//! Certificate authentication on arbitrary input: a CERT payload's certificate, an ID payload
//! and a SIG, checked for each signature method against a trust store, and the key server's
//! subject / subjectAltName match on the ID. None may panic; nothing but a valid chain to the
//! fixture CA with a matching ID and signature could pass (and the fuzzer cannot sign).
#![no_main]
use gander_gdoi::cert_auth::{id_matches, verify_peer, CertMatch};
use gander_gdoi::trust::TrustStore;
use gander_gdoi::AuthMethod;
use gander_wire::isakmp::payload::CERT_X509_SIG;
use gander_wire::isakmp::{CertPayload, IdPayload};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A P-256 test CA made for this target with the openssl command (public certificate only).
const CA: &str = "
-----BEGIN CERTIFICATE-----
MIIBqzCCAVGgAwIBAgIUU1xiVtJ/fk07quMRQuQAM6DmIDgwCgYIKoZIzj0EAwIw
IzEUMBIGA1UECgwLZ2FuZGVyIHRlc3QxCzAJBgNVBAMMAkNBMB4XDTI2MTEyNjIz
MjM1N1oXDTI2MTEyODIzMjM1N1owIzEUMBIGA1UECgwLZ2FuZGVyIHRlc3QxCzAJ
BgNVBAMMAkNBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8zqijLTZeLeb0pY2
UwQf6Lzvxm2SMjKev2dc50Ae2lSZ1BjaFZfW0bRiSWKqrLDZwhHAXzhvNRmwpwWx
NPe2lqNjMGEwHQYDVR0OBBYEFF5ZXwpIAdhn6m54P7JVXhCgdaIcMB8GA1UdIwQY
MBaAFF5ZXwpIAdhn6m54P7JVXhCgdaIcMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P
AQH/BAQDAgEGMAoGCCqGSM49BAMCA0gAMEUCIQDNe7m8weV3SbSnitnctU1AkTmt
q2XIoLBxZtMZhCkJ3QIgU2eI2jY76yVK+V0DIf31HXwwZJ1Z6r+WU5k4AMHbGI8=
-----END CERTIFICATE-----
";

fn trust() -> &'static TrustStore {
    static T: OnceLock<TrustStore> = OnceLock::new();
    T.get_or_init(|| TrustStore::from_pem(CA.trim().as_bytes(), None).expect("fixture CA"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&ty, rest)) = data.split_first() else { return };
    let Some((&a, rest)) = rest.split_first() else { return };
    let Some((&b, rest)) = rest.split_first() else { return };
    let a = usize::from(a).min(rest.len());
    let (cert, rest) = rest.split_at(a);
    let b = usize::from(b).min(rest.len());
    let (id_data, sig) = rest.split_at(b);
    let id = IdPayload { id_type: ty, protocol: 0, port: 0, data: id_data.to_vec() };
    let cp = CertPayload { encoding: CERT_X509_SIG, data: cert.to_vec() };
    for m in [AuthMethod::RsaSig, AuthMethod::EcdsaP256, AuthMethod::EcdsaP384] {
        assert!(verify_peer(trust(), m, &[&cp, &cp], &id, b"HASH_I", sig).is_err());
    }
    if let Ok(c) = openssl::x509::X509::from_der(cert) {
        let _ = id_matches(&id, &c);
    }
    if let Ok(ca) = openssl::x509::X509::from_pem(CA.trim().as_bytes()) {
        let _ = id_matches(&id, &ca);
    }
    let _ = CertMatch::Subject("O=gander test,CN=ied-1".into()).matches_id(&id);
    let _ = CertMatch::San("192.0.2.1".into()).matches_id(&id);
});
