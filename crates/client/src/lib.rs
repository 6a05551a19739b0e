//! gander's one MMS client, used by `gander probe`, `gander run`'s client and the TLS survey, so
//! that every fix to how gander talks to an IEC 61850 server lands once.
//!
//! - [`core`]: sans-I/O: the requests an IEC 61850 client makes, which association event
//!   answers which request (invokeID), and the decoding of answers into values or errors.
//! - [`session`]: the one blocking session above it: plain TCP or TLS through `gander-tls`,
//!   COTP connect and MMS initiate, a timeout on every step, CLOCK_MONOTONIC stamps of the
//!   handshake's sub-steps (and [`session::ConnectHooks`] for event logs), request-and-wait,
//!   GetNameList with `continueAfter`, Read, Write, unsolicited reports in order, release and
//!   abort.
//! - [`error`]: [`ClientError`], one typed error with a stable kind.
//! - [`reference`]: IEC 61850 object references as users write them, as MMS names.
//! - [`detect`]: TLS or plain ISO transport on a port; the one COTP connection request.
//! - [`stream`]: the byte stream (plain or TLS), readiness polling, error kinds of event logs.
//! - [`clock`]: CLOCK_MONOTONIC nanoseconds.
//! - [`control`]: one IEC 61850-7-2 control operation of a named object (select, operate,
//!   CommandTermination, Cancel) on the session; [`control_rt`]: its phases measured over
//!   repeated operations, the device left as found.
//! - [`writes`]: a planned sequence of writes (a control block's enable, rollback, restore).
//!
//! The protocol is `gander-mms` (sans-I/O); this crate adds sockets, clocks and timeouts and
//! nothing else. `docs/architecture.md` places it between `gander-mms`/`gander-tls` and the
//! programs (`gander-peers`, `gander-probe`).

pub mod clock;
pub mod control;
pub mod control_rt;
pub mod core;
pub mod detect;
pub mod error;
pub mod reference;
pub mod session;
pub mod stream;
pub mod writes;

pub use error::ClientError;
pub use session::{Connector, Received, Released, Session, Timings, TlsInfo};
