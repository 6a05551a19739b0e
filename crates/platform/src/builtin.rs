//! The built-in scenarios (`gander scenarios`): the files under `scenarios/`, compiled in so
//! `gander run rse2019` works from any directory.

/// One built-in scenario.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// Name on the command line (`gander run NAME`).
    pub name: &'static str,
    /// One line for `gander scenarios`.
    pub summary: &'static str,
    /// Whether it needs root (network namespaces) or the Python venv (libiec61850).
    pub needs: &'static str,
    /// The scenario file's text.
    pub toml: &'static str,
}

/// Every built-in, the default first.
pub const BUILTINS: [Builtin; 7] = [
    Builtin {
        name: "rse2019",
        summary: "RSE 2019 Tables 1-6: five suites at TLS 1.2, suite iii at TLS 1.0/1.1/1.2, suite v at RSA 1024-8192, plus suite iv on rustls and GnuTLS; 1090 connections, 4000 reports at 500 ms",
        needs: "-",
        toml: include_str!("../../../scenarios/rse2019.toml"),
    },
    Builtin {
        name: "sandia2023",
        summary: "Sandia 2023 Table 2: TLS 1.2 minus cleartext request/response, seven suites, payloads 0/512/1024 B, 100 repetitions, no tickets",
        needs: "-",
        toml: include_str!("../../../scenarios/sandia2023.toml"),
    },
    Builtin {
        name: "resumption",
        summary: "full versus resumed handshakes: TLS 1.2 session ID and ticket, TLS 1.3 PSK",
        needs: "-",
        toml: include_str!("../../../scenarios/resumption.toml"),
    },
    Builtin {
        name: "links",
        summary: "HT and RT across link profiles (loopback, LAN, WAN, 4G, 5G) between network namespaces",
        needs: "root (ip netns)",
        toml: include_str!("../../../scenarios/links.toml"),
    },
    Builtin {
        name: "stacks",
        summary: "gander against libiec61850 in every server/client pairing on the suites both support",
        needs: ".venv with pyiec61850-ng and `make cref`",
        toml: include_str!("../../../scenarios/stacks.toml"),
    },
    Builtin {
        name: "pq2026",
        summary: "classical vs hybrid (X25519MLKEM768) vs post-quantum (MLKEM768, ML-DSA) TLS 1.3 handshakes on rustls (aws-lc-rs) and OpenSSL 3.5, with bytes on the wire and floors",
        needs: "make build-ossl35",
        toml: include_str!("../../../scenarios/pq2026.toml"),
    },
    Builtin {
        name: "controls",
        summary: "control round trips per ctlModel (select, operate, CommandTermination, Cancel) over TLS 1.3 on each backend against cleartext, gander's built-in control model, Test set and states restored",
        needs: "-",
        toml: include_str!("../../../scenarios/controls.toml"),
    },
];

/// The scenario `gander run` runs with no argument (with `--quick`).
pub const DEFAULT: &str = "rse2019";

/// The built-in scenario called `name`.
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn every_builtin_parses_and_resolves() {
        for b in BUILTINS {
            for quick in [false, true] {
                let s = Scenario::from_str(b.name, b.toml, quick)
                    .unwrap_or_else(|e| panic!("{}: {e}", b.name));
                assert_eq!(s.name, b.name);
                assert!(!s.cases.is_empty());
            }
        }
    }

    #[test]
    fn rse2019_is_the_published_matrix() {
        let s = Scenario::from_str("rse2019", lookup("rse2019").unwrap().toml, false).unwrap();
        // The paper's 10 rows, plus suite iv on rustls and GnuTLS (the `libraries` table).
        assert_eq!(s.cases.len(), 12);
        let backends: Vec<_> = s
            .cases
            .iter()
            .filter(|c| c.name().starts_with("libraries/"))
            .map(|c| c.tls.as_ref().unwrap().backend.name())
            .collect();
        assert_eq!(backends, ["rustls", "gnutls"]);
        for c in &s.cases {
            assert_eq!(c.params.connections, 1090);
            assert_eq!(c.params.reports, 4000);
            assert_eq!(c.params.period_ms, 500);
            assert_eq!(c.params.payload, 125);
        }
        let versions: Vec<_> = s
            .cases
            .iter()
            .filter(|c| c.tls.as_ref().unwrap().suite.rse == Some("iii"))
            .map(|c| c.tls.as_ref().unwrap().version.short())
            .collect();
        assert_eq!(versions, ["1.2", "1.0", "1.1"]);
        let keys: Vec<_> = s
            .cases
            .iter()
            .filter(|c| c.tls.as_ref().unwrap().suite.rse == Some("v"))
            .map(|c| c.key.to_string())
            .collect();
        assert_eq!(keys, ["rsa2048", "rsa1024", "rsa4096", "rsa8192"]);
        let q = Scenario::from_str("rse2019", lookup("rse2019").unwrap().toml, true).unwrap();
        assert_eq!(q.cases.len(), 12);
        assert!(q
            .cases
            .iter()
            .all(|c| c.params.connections < 1090 && c.params.period_ms < 500));
    }

    #[test]
    fn sandia2023_has_21_cells() {
        let s =
            Scenario::from_str("sandia2023", lookup("sandia2023").unwrap().toml, false).unwrap();
        assert_eq!(s.cases.len(), 21);
        assert!(s
            .cases
            .iter()
            .all(|c| c.params.reports == 100 && c.params.cleartext_baseline));
    }
}
