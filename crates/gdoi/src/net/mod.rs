//! The only I/O of GDOI: the key server's and the member's UDP loops (port 848, RFC 6407 2)
//! around the sans-I/O state machines.

pub mod cert_members;
pub mod group_lookup;
pub mod kdc;
pub mod kdc_service;
pub mod member;

/// What a socket wait that brought no datagram ended with: its timeout (`WouldBlock`,
/// `TimedOut`), or a signal handled while it waited (`Interrupted`, EINTR: `recvfrom(2)` is
/// not restarted after a handler installed without `SA_RESTART`, which is how the gateway's and
/// a test harness's handlers are installed). None is a socket error: the caller waits again or
/// ends its turn early. Treating EINTR as an error made a member's turn fail whenever another
/// thread of the process caught a signal (seen in CI: a rekey-push test failed with
/// "Interrupted system call" while the strongSwan tests beside it ran their daemons).
pub(crate) enum NoDatagram {
    /// The wait's timeout ran out.
    TimedOut,
    /// A signal ended the wait early.
    Interrupted,
}

/// Classifies a receive error: `Some` when it only means no datagram arrived.
pub(crate) fn no_datagram(e: &std::io::Error) -> Option<NoDatagram> {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Some(NoDatagram::TimedOut),
        std::io::ErrorKind::Interrupted => Some(NoDatagram::Interrupted),
        _ => None,
    }
}
