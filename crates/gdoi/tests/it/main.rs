//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod interop_support;
mod kdc_support;
mod pki;
mod cert_config;
mod cert_main_mode;
mod cert_udp;
mod kdc_rekey;
mod kdc_revocation;
mod keylog_tshark;
mod main_mode;
mod member_netns;
mod notify_udp;
mod pull;
mod push;
mod runner_push;
mod strongswan_interop;
mod udp_loopback;
