//! Where the key server's time goes in a registration with ECDSA P-256 certificates: runs only
//! the certificate row of `gander bench gdoi` (`gander_bench::gdoi_cert`) for a profiler
//! (`perf record --call-graph dwarf target/profiling/examples/gdoi_cert_profile 2000`) and prints
//! its progress line.
//!
//! Usage: `gdoi_cert_profile [registrations] [members]` (defaults 2000 and 64).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n = args.next().map_or(Ok(2000), |a| a.parse())?;
    let members = args
        .next()
        .map_or(Ok(gander_bench::gdoi_cert::MEMBERS), |a| a.parse())?;
    gander_bench::gdoi_cert::registrations(n, members, &mut |line| println!("{line}"))?;
    Ok(())
}
