//! Where an OpenSSL TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256 handshake with RSA-2048 mutual
//! authentication spends its time (`docs/reproduction.md`, "Where HT goes").
//!
//! `cargo run --release -p gander-bench --example handshake_anatomy [PKI_DIR] [SECONDS_PER_ITEM]`
//! (PKI_DIR defaults to ~/.cache/gander/pki, made by `gander run` or `gander pki init`).
use gander_bench::anatomy::{self, Creds};
use gander_tls::pki::{KeySpec, PkiSet};
use std::time::Duration;

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let root = args
        .get(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/gander/pki")
        });
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let budget = Duration::from_secs_f64(secs);
    let p = PkiSet::paths(&root, KeySpec::Rsa(2048));
    let server = Creds {
        ca: &p.ca,
        cert: &p.server,
        key: &p.server_key,
        peer: &p.client,
    };
    let client = Creds {
        ca: &p.ca,
        cert: &p.client,
        key: &p.client_key,
        peer: &p.server,
    };
    if args.get(3).map(String::as_str) == Some("loop") {
        // For a profiler: only in-memory handshakes of the second variant.
        let v = &anatomy::variants()[1];
        let (sctx, spin) = anatomy::context(true, &server, v)?;
        let (cctx, cpin) = anatomy::context(false, &client, v)?;
        let s = anatomy::time(budget, 1, || {
            anatomy::mem_handshake(&sctx, &cctx, v, &spin, &cpin).map(|_| ())
        })?;
        println!("{} handshakes, median {} ms", s.n, ms(s.p50));
        return Ok(());
    }
    println!(
        "machine: {}",
        serde_json::to_string(&gander_measure::machine::Machine::describe()).unwrap_or_default()
    );
    println!("library: {}\n", openssl::version::version());
    println!("## 1-2. In-memory handshakes, one thread (median ms; client and server CPU)\n");
    println!("| variant | handshake | client | server | group | server sig | client sig | certs sent by the server |\n|---|---|---|---|---|---|---|---|");
    for v in anatomy::variants() {
        let (sctx, spin) = anatomy::context(true, &server, &v)?;
        let (cctx, cpin) = anatomy::context(false, &client, &v)?;
        let mut last = None;
        let (mut cv, mut sv) = (Vec::new(), Vec::new());
        let s = anatomy::time(budget, 30, || {
            let h = anatomy::mem_handshake(&sctx, &cctx, &v, &spin, &cpin)?;
            cv.push(h.client_ns);
            sv.push(h.server_ns);
            last = Some(h);
            Ok(())
        })?;
        let h = last.ok_or("no handshake")?;
        let med = |v: &[u64]| {
            gander_measure::stats::Summary::from_samples(v)
                .map(|s| s.p50)
                .unwrap_or(0.0)
        };
        println!(
            "| {} | {} (n={}) | {} | {} | {} | {} | {} | {} |",
            v.name,
            ms(s.p50),
            s.n,
            ms(med(&cv)),
            ms(med(&sv)),
            h.group,
            h.server_sig,
            h.client_sig,
            h.server_chain_len
        );
    }
    println!(
        "\n## 2b. Record layer in memory after the handshake (gander's configuration, AES-128-GCM)\n\n\
         | application data | SSL_write median | SSL_read median | n |\n|---|---|---|---|"
    );
    {
        let v = &anatomy::variants()[1];
        let (sctx, spin) = anatomy::context(true, &server, v)?;
        let (cctx, cpin) = anatomy::context(false, &client, v)?;
        for len in [125usize, 1024] {
            let n = 100_000;
            let (w, r) = anatomy::mem_records(&sctx, &cctx, v, &spin, &cpin, len, n)?;
            println!(
                "| {len} B | {:.2} us | {:.2} us | {n} |",
                w as f64 / 1e3,
                r as f64 / 1e3
            );
        }
    }
    println!("\n## 3. Components (median ms)\n\n| operation | median | n |\n|---|---|---|");
    for (name, s) in anatomy::components(&server, &client, budget)? {
        println!("| {name} | {} | {} |", ms(s.p50), s.n);
    }
    println!(
        "\n## 4. Two threads (medians, ms): the client's wall time and each side's thread CPU time\n\n\
         | transport | handshake | p95 | client CPU | server CPU | n |\n|---|---|---|---|---|---|"
    );
    for v in &anatomy::variants()[..2] {
        let (sctx, spin) = anatomy::context(true, &server, v)?;
        let (cctx, cpin) = anatomy::context(false, &client, v)?;
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let addr = l.local_addr().map_err(|e| e.to_string())?;
        let tcp = || -> std::io::Result<_> {
            let c = std::net::TcpStream::connect(addr)?;
            let (sv, _) = l.accept()?;
            let _ = c.set_nodelay(true);
            let _ = sv.set_nodelay(true);
            Ok((c, sv))
        };
        for transport in [
            "Unix socketpair, blocking",
            "loopback TCP (after connect), blocking",
            "loopback TCP, both peers busy-polling",
        ] {
            let mut runs = Vec::new();
            let s = anatomy::time(budget, 30, || {
                let t = match transport {
                    "Unix socketpair, blocking" => {
                        let pair = std::os::unix::net::UnixStream::pair()?;
                        anatomy::threaded_handshake(&sctx, &cctx, v, &spin, &cpin, pair)?
                    }
                    "loopback TCP (after connect), blocking" => {
                        anatomy::threaded_handshake(&sctx, &cctx, v, &spin, &cpin, tcp()?)?
                    }
                    _ => {
                        let (c, sv) = tcp()?;
                        let c = anatomy::Spin::new(c)?;
                        let sv = anatomy::Spin::new(sv)?;
                        anatomy::threaded_handshake(&sctx, &cctx, v, &spin, &cpin, (c, sv))?
                    }
                };
                runs.push(t);
                Ok(())
            })?;
            let med = |f: fn(&anatomy::Threaded) -> u64| {
                let v: Vec<u64> = runs.iter().map(f).collect();
                gander_measure::stats::Summary::from_samples(&v)
                    .map(|s| s.p50)
                    .unwrap_or(0.0)
            };
            println!(
                "| {transport} | {} | {} | {} | {} | {} |",
                ms(s.p50),
                ms(s.p95),
                ms(med(|t| t.client_cpu_ns)),
                ms(med(|t| t.server_cpu_ns)),
                s.n
            );
        }
        println!("| (above: {}) | | | | | |", v.name);
    }
    Ok(())
}
