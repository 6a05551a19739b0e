//! gander's benchmarks, each on top of the crates it measures and all computed with the one
//! statistics module and machine description of `gander-measure`:
//!
//! * [`crypto`] and [`crypto_report`]: `gander bench crypto`, the per-operation cost of
//!   IEC 62351-6 protection (`gander-sec`); [`crypto_ascon`] adds the experimental
//!   Ascon-AEAD128 rows and the layer-2 GOOSE rows.
//! * [`mms`]: `gander bench mms`, MMS over TLS (`gander-peers`, `gander-tls`).
//! * [`gateway`]: `gander bench gateway`, the security gateway in the namespace lab
//!   (`gander-gateway`, `gander-lab`).
//! * [`process_bus`]: `gander bench gateway --profile process-bus`, layer-2 SV through the
//!   gateway.
//! * [`scl`]: `gander bench scl`, reading SCL files (`gander-scl`) on generated SCDs of 1, 10
//!   and 100 IEDs and on files given.
//! * [`gdoi`]: `gander bench gdoi`, the IEC 62351-9 key server's registrations per second
//!   against their bare cryptography, and a push rekey to 100 members (`gander-gdoi`);
//!   [`gdoi_cert`]: its row with ECDSA P-256 certificates;
//!   [`gdoi_gateway`]: `gander bench gdoi --gateway`, the gateway under process-bus load with
//!   its keys rolled once a second.
//! * [`anatomy`]: where a TLS 1.2 handshake's time goes (the `handshake_anatomy` example).
//! * [`fleet`]: `gander bench fleet`, one sweep of a substation of N IEDs in namespaces
//!   (`gander probe --scd`) against the 2-minute target; [`fleet_scd`] writes its SCD.

pub mod anatomy;
pub mod audit;
pub mod audit_live;
pub mod audit_memory;
pub mod crypto;
pub mod crypto_ascon;
pub mod crypto_report;
pub mod fleet;
pub mod fleet_scd;
pub mod gateway;
pub(crate) mod gateway_floor;
pub mod gdoi;
pub mod gdoi_cert;
pub mod gdoi_gateway;
pub mod mms;
pub mod process_bus;
pub mod scl;
