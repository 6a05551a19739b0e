//! Sans-I/O ISO upper layers and MMS for IEC 61850 (IEC 61850-8-1 over RFC 1006, optionally
//! inside TLS per IEC 62351-3/-4), with client and server association state machines and
//! gander's fixed IEC 61850 server model.
//!
//! No sockets, clocks or threads: the caller moves bytes and passes timestamps in. The byte
//! layouts are those libiec61850 1.6.1 sends and accepts (`docs/mms-bytes.md`,
//! `docs/mms-services.md`), checked by golden tests.
//!
//! # Layers (one module each, bottom up)
//! | module | standard | holds |
//! |---|---|---|
//! | [`tpkt`] | RFC 1006 | framing, streaming [`tpkt::Reassembler`] with a size cap |
//! | [`cotp`] | ISO 8073 class 0 | CR/CC/DT/DR/ER, fragmentation, [`cotp::DtReassembler`] |
//! | [`iso_session`] | ISO 8327-1 kernel+duplex | CN/AC/DATA/FINISH/DISCONNECT/ABORT/REFUSE |
//! | [`presentation`] | ISO 8823-1 kernel | CP/CPA/CPR/ARU/ARP, P-DATA user data |
//! | [`acse`] | ISO 8650-1 | AARQ/AARE/RLRQ/RLRE/ABRT, AP titles, password |
//! | [`pdu`], [`service`] | ISO 9506-2 | MMS PDUs: initiate, identify, getNameList, read, write (with alternate access), getVariableAccessAttributes, getNamedVariableListAttributes, information report, conclude, reject, errors |
//! | [`report`], [`rcb`], [`rcb_plan`], [`last_appl_error`] | IEC 61850-8-1 17, 20 | report layout and segments; URCB values; the RCB enable write; enable/restore planning for any RCB; LastApplError |
//! | [`control`] | IEC 61850-7-2 20, 8-1 20 | Oper/SBOw/Cancel, CommandTermination, the server's control state machine, a client's control operation |
//! | [`model`] | gander (`docs/mms-peers.md`) | IED `IMP`, domain `IMPLD0`, DS1, `LLN0$RP$urcb01`, GGIO1 |
//! | [`association`] | all of the above | [`association::ClientAssociation`], [`association::ServerAssociation`] |
//!
//! Each codec has `parse` (or `decode_contents`) and implements [`Codec`] (re-exported from
//! gander-wire: `buffer_len`, in-place `emit`, `to_vec`) through one encoder that writes to an
//! [`asn1::Sink`], or has `encode_contents` for a service body;
//! every parse/emit pair has a property test, every parser a no-panic test and a fuzz target.
//!
//! # Driving an association (what a network peer does)
//! Both machines follow the same loop (quinn-proto style):
//!
//! ```
//! use gander_mms::association::*;
//! use gander_mms::model::{ImpModel, ModelConfig, Trigger};
//! use gander_mms::rcb::{enable_reporting, mms_name};
//!
//! let mut model = ImpModel::new(ModelConfig::default());    // server side, shared by connections
//! let mut server = ServerAssociation::new(ServerConfig::default(), /*conn id*/ 1, /*now*/ 0);
//! let mut client = ClientAssociation::new(ClientConfig::default());
//!
//! client.connect(10).unwrap();                               // after TCP (and TLS) is up: HT sub-step start
//! // In a real peer each side writes poll_transmit() packets to its socket and feeds what it
//! // reads to handle_input(now, bytes). Here the two are wired directly:
//! let mut pump = |c: &mut ClientAssociation, s: &mut ServerAssociation, m: &mut ImpModel, now| loop {
//!     let mut moved = false;
//!     while let Some(p) = c.poll_transmit() { s.handle_input(now, &p, m); moved = true; }
//!     while let Some(p) = s.poll_transmit() { c.handle_input(now, &p); moved = true; }
//!     if !moved { break; }
//! };
//! pump(&mut client, &mut server, &mut model, 20);
//! assert_eq!(client.state(), ClientState::Associated);
//!
//! client.write(30, enable_reporting(&mms_name(gander_mms::model::RCB_REF).unwrap(), true)).unwrap();
//! pump(&mut client, &mut server, &mut model, 40);
//! if model.take_gi(server.conn_id()) {                       // GI requested by the write
//!     let r = model.build_report(server.conn_id(), Trigger::GeneralInterrogation, 0).unwrap();
//!     server.send_information_report(&r).unwrap();           // RT_START just before writing it
//! }
//! pump(&mut client, &mut server, &mut model, 50);
//! while let Some(ev) = client.poll_event() {
//!     if let Event::InformationReport { report, at } = ev {  // RT_END at `at`
//!         let r = gander_mms::report::Report::from_information_report(&report).unwrap();
//!         assert_eq!(r.rpt_id, "rpt01");
//!     }
//! }
//! client.release(60).unwrap();
//! pump(&mut client, &mut server, &mut model, 70);
//! assert!(client.is_closed() && server.is_closed());
//! ```
//!
//! A driver must:
//! 1. create the machine when the stream is up (server: `ServerAssociation::new(config,
//!    conn_id, now)` per accepted connection, with a unique `conn_id`; client: `connect(now)`);
//! 2. write every `poll_transmit()` packet, in order, after every call into the machine;
//! 3. feed every received chunk to `handle_input(now, bytes[, handler])`; chunk boundaries
//!    do not matter;
//! 4. drain `poll_event()`: [`association::Event::Step`] timestamps are the HT sub-steps
//!    (COTP connect, then association = session + presentation + ACSE + initiate);
//!    [`association::Event::InformationReport`] carries RT_END's timestamp;
//! 5. arm a timer for `poll_timeout()` and call `handle_timeout(now)`;
//! 6. on [`association::Event::Closed`], flush `poll_transmit()` and close the stream; the
//!    server machine has already told its handler `connection_closed`. If the stream closes
//!    first, call `abort(now, ..)` so RCB reservations are freed.
//! 7. server only: after each `handle_input`, check `model.take_gi(conn)`; to send a report,
//!    change values (`model.change_all(unix_ms)`), `model.build_report(conn, trigger,
//!    unix_ms)`, then `send_information_report`.
//!
//! # Panic contract
//! No function panics on any input bytes; malformed input yields a specific [`Error`]
//! (one variant per kind, tagged with its [`Layer`]) and, in a machine, one
//! `Event::Closed { reason: CloseReason::Error(e) }`.

#![forbid(unsafe_code)]

/// [`gander_wire::Codec`] for a type with `fn encode(&self, out: &mut dyn asn1::Sink)`:
/// `buffer_len` counts with [`asn1::Counter`], `emit` writes in place through
/// [`asn1::SliceSink`], `emit_vec` appends.
macro_rules! sink_codec {
    () => {
        fn buffer_len(&self) -> usize {
            let mut c = crate::asn1::Counter::default();
            self.encode(&mut c);
            c.0
        }

        fn emit(&self, buf: &mut [u8]) -> usize {
            let mut w = crate::asn1::SliceSink::new(buf);
            self.encode(&mut w);
            w.pos
        }

        fn emit_vec(&self, out: &mut Vec<u8>) {
            self.encode(out);
        }
    };
}

pub mod acse;
pub mod asn1;
pub mod association;
pub mod bit_string;
pub mod control;
pub mod cotp;
pub mod error;
#[cfg(test)]
mod golden;
pub mod iso_session;
pub mod last_appl_error;
pub mod model;
pub mod pdu;
pub mod presentation;
pub mod rcb;
pub mod rcb_plan;
pub mod report;
pub mod server_model;
pub mod service;
pub mod tpkt;

pub use error::{Error, Layer, Result};
pub use gander_wire::Codec;
