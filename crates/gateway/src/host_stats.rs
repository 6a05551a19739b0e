//! The host's own drop counters, read without privileges: where a frame can be lost outside the
//! gateway process (loss accounting, `docs/gateway.md`).
//!
//! * Interface counters (`/sys/class/net/<if>/statistics/{rx_dropped,rx_missed_errors,tx_dropped}`,
//!   one decimal number per file). sysfs shows the interfaces of the network namespace it was
//!   mounted in, not the reading thread's; a thread that entered another namespace with
//!   `setns` reads `/proc/thread-self/net/dev` instead ([`IfStats::read_proc`]), whose `drop`
//!   columns are the kernel's `rx_dropped + rx_missed_errors` (receive) and `tx_dropped`
//!   (transmit).
//! * `/proc/net/softnet_stat`: one line per CPU, hexadecimal columns; the first is frames
//!   processed, the second frames dropped because the CPU's backlog queue
//!   (`net.core.netdev_max_backlog`) was full. The counters are per CPU, not per namespace.

use std::io;
use std::path::Path;

/// Drop counters of one network interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IfStats {
    /// Received frames the kernel dropped (no buffer, a full queue, an unknown protocol).
    pub rx_dropped: u64,
    /// Received frames the device missed (its receive ring was full).
    pub rx_missed_errors: u64,
    /// Frames dropped on transmit.
    pub tx_dropped: u64,
}

impl IfStats {
    /// Every drop on the interface, both directions.
    pub fn total(&self) -> u64 {
        self.rx_dropped + self.rx_missed_errors + self.tx_dropped
    }

    /// What happened between `before` and `self` (counters only grow; a reset reads as 0).
    pub fn since(&self, before: &IfStats) -> IfStats {
        IfStats {
            rx_dropped: self.rx_dropped.saturating_sub(before.rx_dropped),
            rx_missed_errors: self
                .rx_missed_errors
                .saturating_sub(before.rx_missed_errors),
            tx_dropped: self.tx_dropped.saturating_sub(before.tx_dropped),
        }
    }

    /// Reads `/sys/class/net/<ifname>/statistics/` (the namespace sysfs was mounted in).
    pub fn read_sys(ifname: &str) -> io::Result<IfStats> {
        let dir = Path::new("/sys/class/net").join(ifname).join("statistics");
        let one = |name: &str| -> io::Result<u64> {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p)?;
            parse_counter(&text).ok_or_else(|| bad_data(&p))
        };
        Ok(IfStats {
            rx_dropped: one("rx_dropped")?,
            rx_missed_errors: one("rx_missed_errors")?,
            tx_dropped: one("tx_dropped")?,
        })
    }

    /// Reads `ifname` from `/proc/thread-self/net/dev`: the calling thread's network namespace.
    /// The receive `drop` column already adds `rx_missed_errors`, so it is reported as
    /// `rx_dropped` and `rx_missed_errors` is 0.
    pub fn read_proc(ifname: &str) -> io::Result<IfStats> {
        let p = Path::new("/proc/thread-self/net/dev");
        let text = std::fs::read_to_string(p)?;
        parse_proc_net_dev(&text, ifname).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no interface {ifname} in {}", p.display()),
            )
        })
    }
}

fn bad_data(p: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unreadable counter in {}", p.display()),
    )
}

/// One counter file of sysfs: a decimal number and a newline.
pub fn parse_counter(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The drop columns of `ifname` in the text of `/proc/net/dev`: after `name:`, eight receive
/// columns (bytes packets errs drop fifo frame compressed multicast), then eight transmit
/// columns (bytes packets errs drop fifo colls carrier compressed).
pub fn parse_proc_net_dev(text: &str, ifname: &str) -> Option<IfStats> {
    text.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != ifname {
            return None;
        }
        let cols: Vec<u64> = rest
            .split_whitespace()
            .map(|c| c.parse().ok())
            .collect::<Option<_>>()?;
        if cols.len() < 16 {
            return None;
        }
        Some(IfStats {
            rx_dropped: cols[3],
            rx_missed_errors: 0,
            tx_dropped: cols[11],
        })
    })
}

/// The drops of `/proc/net/softnet_stat`: the second (hexadecimal) column of each CPU's line,
/// one entry per CPU line. `None` if a line has fewer than two columns or a column is not hex.
pub fn parse_softnet_dropped(text: &str) -> Option<Vec<u64>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let col = l.split_whitespace().nth(1)?;
            u64::from_str_radix(col, 16).ok()
        })
        .collect()
}

/// The sum over CPUs of the backlog drops in `/proc/net/softnet_stat` (the host's, whichever
/// namespace reads it).
pub fn softnet_dropped() -> io::Result<u64> {
    let p = Path::new("/proc/net/softnet_stat");
    let text = std::fs::read_to_string(p)?;
    parse_softnet_dropped(&text)
        .map(|v| v.iter().sum())
        .ok_or_else(|| bad_data(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_file() {
        assert_eq!(parse_counter("1234\n"), Some(1234));
        assert_eq!(parse_counter("0"), Some(0));
        assert_eq!(parse_counter("x\n"), None);
        assert_eq!(parse_counter(""), None);
    }

    const NET_DEV: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
   gi0: 9876543   12345    0   17    0     0          0       250   555555    4321    0    3    0     0       0          0
";

    #[test]
    fn proc_net_dev() {
        assert_eq!(
            parse_proc_net_dev(NET_DEV, "gi0"),
            Some(IfStats {
                rx_dropped: 17,
                rx_missed_errors: 0,
                tx_dropped: 3
            })
        );
        assert_eq!(parse_proc_net_dev(NET_DEV, "lo"), Some(IfStats::default()));
        assert_eq!(parse_proc_net_dev(NET_DEV, "gi"), None);
        assert_eq!(parse_proc_net_dev("gi0: 1 2 3\n", "gi0"), None);
    }

    const SOFTNET: &str = "\
003b3e94 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
001d7eb4 0000001a 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000
";

    #[test]
    fn softnet_stat() {
        assert_eq!(parse_softnet_dropped(SOFTNET), Some(vec![0, 0x1a]));
        assert_eq!(parse_softnet_dropped(""), Some(vec![]));
        assert_eq!(parse_softnet_dropped("0001\n"), None);
        assert_eq!(parse_softnet_dropped("0001 zz\n"), None);
    }

    #[test]
    fn since_saturates() {
        let a = IfStats {
            rx_dropped: 5,
            rx_missed_errors: 1,
            tx_dropped: 2,
        };
        let b = IfStats {
            rx_dropped: 9,
            rx_missed_errors: 1,
            tx_dropped: 0,
        };
        assert_eq!(
            b.since(&a),
            IfStats {
                rx_dropped: 4,
                rx_missed_errors: 0,
                tx_dropped: 0
            }
        );
        assert_eq!(b.since(&a).total(), 4);
    }

    #[test]
    fn reads_this_host() {
        // Both files exist on every Linux host; lo is in every namespace.
        assert!(softnet_dropped().is_ok());
        assert!(IfStats::read_proc("lo").is_ok());
    }
}
