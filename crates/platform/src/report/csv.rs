//! `samples.csv`: every raw sample of the run, warm-up included and marked, one per line:
//! `scenario,metric,index,warmup,ns`. Metrics: `ht`, `ht_tcp`, `ht_tls`, `ht_mms`, `rt`,
//! `rt_enc`, `rt_net`, `rt_dec`, `rt_clear`.
use crate::results::RunResults;
use std::fmt::Write;

/// Renders `samples.csv`.
pub fn samples_csv(run: &RunResults) -> String {
    let mut out = String::from("scenario,metric,index,warmup,ns\n");
    for r in &run.scenarios {
        let Some(s) = &r.samples else { continue };
        let w = r.warmup as usize;
        let name = csv_field(&r.name);
        let rt_mask = crate::results::warmup_mask(s.rt.len(), &s.rt_block, w);
        let clear_mask = crate::results::warmup_mask(s.rt_clear.len(), &s.rt_clear_block, w);
        for (metric, v) in [
            ("ht", &s.ht),
            ("ht_tcp", &s.ht_tcp),
            ("ht_tls", &s.ht_tls),
            ("ht_mms", &s.ht_mms),
            ("rt", &s.rt),
            ("rt_enc", &s.rt_enc),
            ("rt_net", &s.rt_net),
            ("rt_dec", &s.rt_dec),
            ("rt_clear", &s.rt_clear),
        ] {
            let mask = match metric {
                "rt_clear" => Some(&clear_mask),
                "rt" | "rt_enc" | "rt_net" | "rt_dec" if v.len() == s.rt.len() => Some(&rt_mask),
                _ => None,
            };
            for (i, ns) in v.iter().enumerate() {
                let warm = mask.map_or(i < w, |m| m[i]);
                let _ = writeln!(out, "{name},{metric},{i},{},{ns}", u8::from(warm));
            }
        }
    }
    out
}

/// Quotes a field that holds a comma, a quote or a line break (RFC 4180 §2).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn quoting() {
        assert_eq!(csv_field("a/b"), "a/b");
        assert_eq!(csv_field("a,\"b"), "\"a,\"\"b\"");
    }
}
