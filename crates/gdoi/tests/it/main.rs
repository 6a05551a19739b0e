//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod cert_config;
mod cert_main_mode;
mod cert_udp;
mod id_oid_udp;
mod interop_support;
mod kdc_rekey;
mod kdc_revocation;
mod kdc_support;
mod kdc_thread;
mod keylog_tshark;
mod main_mode;
mod member_netns;
mod notify_udp;
mod pki;
mod pull;
mod push;
mod runner_push;
mod strongswan_interop;
mod udp_loopback;
