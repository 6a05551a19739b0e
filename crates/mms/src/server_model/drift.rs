//! Values that change like a real IED's: measurands drift, status points toggle now and then,
//! each change with its data object's quality and time stamp, so that data-change and
//! integrity reports flow from a served SCL model as they would from the device (IEC 61850-7-2
//! 17.2.3: dchg fires on a change of a data attribute of a data set member).
//!
//! What moves:
//! - **Measurands**: FC MX floats and integers named `f` / `i` under `mag`, `instMag` or `ang`
//!   (the AnalogueValue of MV, CMV, WYE/DEL phases, ...). Each change is a mean-reverting
//!   random step of up to 2 % of the configured value (at least 1.0 around zero).
//! - **Status points**: FC ST `stVal` of BOOLEAN (SPS, SPC), Dbpos (DPS, DPC: on/off) and
//!   integers (INS) toggle between the configured value and the next; the data objects that
//!   say what the device *is* (`Mod`, `Beh`, `Health`, `EEHealth`, `NamPlt`), the
//!   local/remote switches that decide whether a control is accepted (`Loc`, `LocKey`,
//!   `LocSta`) and LLN0/LPHD stay still, since an IED does not wander between modes on its own; so does the status of a
//!   controllable object (a data object with a `CO` part: SPC, DPC, INC, ...), which a real
//!   IED changes only when it is operated (IEC 61850-7-2 clause 20; the served controls do it).
//! - With every change: the data object's `q` is set to good (validity good, no detail bits)
//!   and its `t` to the change time (IEC 61850-8-1 8.1.3.7 UtcTime).
//!
//! Cost and determinism: the points are collected once ([`ServerModel::enable_drift`]); each
//! [`ServerModel::drift`] call makes `changes_per_second` × elapsed time changes (at most
//! [`MAX_CHANGES_PER_CALL`]), picked by a xorshift generator seeded from [`DriftConfig`],
//! so the same seed and call times give the same values, and a 20 000-leaf model costs no
//! more per call than a small one.

use gander_wire::data::Data;

use super::{ModelNode, ServerModel};
use crate::bit_string::BitString;

/// Most changes one [`ServerModel::drift`] call makes (a stalled caller does not burst).
pub const MAX_CHANGES_PER_CALL: usize = 64;

/// Data objects that describe the device's state and never drift. `Loc`, `LocKey` and
/// `LocSta` (IEC 61850-7-4: local/remote control behaviour, the key switch, station-level
/// authority) decide whether a remote control is accepted: toggling them made the served
/// XCBR and CSWI refuse operates at random (Blocked-by-switching-hierarchy), which no real
/// breaker does while nobody turns its key (iec61850bean's client against `Ed2TestIED.icd`).
const STILL_OBJECTS: [&str; 8] = [
    "Mod", "Beh", "Health", "NamPlt", "Loc", "LocKey", "LocSta", "EEHealth",
];

/// How values drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriftConfig {
    /// Seed of the generator that picks points and steps.
    pub seed: u64,
    /// Changes per second over the whole model.
    pub changes_per_second: u32,
    /// Of 10 changes, how many go to status points (when there are any).
    pub status_share_of_10: u8,
}

impl Default for DriftConfig {
    fn default() -> Self {
        DriftConfig {
            seed: 0x6185_0001,
            changes_per_second: 10,
            status_share_of_10: 2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A measurand around its configured value.
    Analog(f64),
    /// A status value toggled between its configured value and the next.
    Status,
}

#[derive(Debug, Clone, PartialEq)]
struct Point {
    domain: usize,
    /// `LN$FC$...` with array elements as `[n]`.
    key: String,
    kind: Kind,
    q: Option<String>,
    t: Option<String>,
}

/// The drift state: the points that may change, the generator and the time account.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    config: DriftConfig,
    analog: Vec<Point>,
    status: Vec<Point>,
    rng: u64,
    last_ms: Option<u64>,
    /// Changes owed, in thousandths.
    owed_milli: u64,
}

impl Drift {
    /// Points that drift: (measurands, status points).
    pub fn points(&self) -> (usize, usize) {
        (self.analog.len(), self.status.len())
    }

    fn next(&mut self) -> u64 {
        // xorshift64* (Vigna 2016): small, fast, good enough to pick points.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The node at `key` below `node`: `$`-joined components, `[n]` for array elements.
pub(crate) fn find_key<'a>(node: &'a ModelNode, key: &str) -> Option<&'a ModelNode> {
    if key.is_empty() {
        return Some(node);
    }
    let mut n = node;
    for part in key.split('$') {
        n = match (n, index_of(part)) {
            (ModelNode::Array(e), Some(i)) => e.get(i)?,
            (ModelNode::Struct(c), None) => &c.iter().find(|(x, _)| x == part)?.1,
            _ => return None,
        };
    }
    Some(n)
}

fn find_key_mut<'a>(node: &'a mut ModelNode, key: &str) -> Option<&'a mut ModelNode> {
    if key.is_empty() {
        return Some(node);
    }
    let mut n = node;
    for part in key.split('$') {
        n = match (n, index_of(part)) {
            (ModelNode::Array(e), Some(i)) => e.get_mut(i)?,
            (ModelNode::Struct(c), None) => &mut c.iter_mut().find(|(x, _)| x == part)?.1,
            _ => return None,
        };
    }
    Some(n)
}

fn index_of(part: &str) -> Option<usize> {
    part.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

fn walk(node: &ModelNode, path: &mut String, out: &mut Vec<(String, Data)>) {
    match node {
        ModelNode::Leaf { value, .. } => out.push((path.clone(), value.clone())),
        ModelNode::Struct(c) => {
            for (name, child) in c {
                let len = path.len();
                if !path.is_empty() {
                    path.push('$');
                }
                path.push_str(name);
                walk(child, path, out);
                path.truncate(len);
            }
        }
        ModelNode::Array(e) => {
            for (i, child) in e.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("$[{i}]"));
                walk(child, path, out);
                path.truncate(len);
            }
        }
    }
}

fn kind_of(key: &str, value: &Data) -> Option<Kind> {
    let parts: Vec<&str> = key.split('$').collect();
    let (ln, fc, last) = (parts.first()?, parts.get(1)?, parts.last()?);
    let parent = parts.len().checked_sub(2).and_then(|i| parts.get(i))?;
    match *fc {
        "MX" if matches!(*last, "f" | "i") && matches!(*parent, "mag" | "instMag" | "ang") => {
            match value {
                Data::FloatingPoint32(v) => Some(Kind::Analog(f64::from(*v))),
                Data::FloatingPoint64(v) => Some(Kind::Analog(*v)),
                Data::Integer(v) => Some(Kind::Analog(*v as f64)),
                _ => None,
            }
        }
        "ST" if *last == "stVal" => {
            let dobj = parts.get(2)?;
            if *ln == "LLN0" || ln.starts_with("LPHD") || STILL_OBJECTS.contains(dobj) {
                return None;
            }
            match value {
                Data::Boolean(_) | Data::Integer(_) | Data::Unsigned(_) => Some(Kind::Status),
                Data::BitString { .. } => {
                    (BitString::from_data(value)?.len() == 2).then_some(Kind::Status)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether the status point `rel` (`ST$DO$...`) belongs to a data object that also has a
/// `CO` part, i.e. a controllable object whose status only an operate changes.
fn controllable(ln: &ModelNode, rel: &str) -> bool {
    rel.split('$')
        .nth(1)
        .is_some_and(|dobj| find_key(ln, &format!("CO${dobj}")).is_some())
}

/// The nearest data object above `key` (below the FC) that has `q` (a bit string) and `t`
/// (a UtcTime): their keys.
fn q_and_t(ln: &ModelNode, key: &str) -> (Option<String>, Option<String>) {
    let mut prefix = key;
    while let Some((up, _)) = prefix.rsplit_once('$') {
        // `up` is `FC$DO...`; stop at the FC itself.
        if !up.contains('$') {
            break;
        }
        let q = format!("{up}$q");
        let t = format!("{up}$t");
        let has_q = matches!(
            find_key(ln, &q),
            Some(ModelNode::Leaf {
                value: Data::BitString { .. },
                ..
            })
        );
        let has_t = matches!(
            find_key(ln, &t),
            Some(ModelNode::Leaf {
                value: Data::UtcTime(_),
                ..
            })
        );
        if has_q || has_t {
            return (has_q.then_some(q), has_t.then_some(t));
        }
        prefix = up;
    }
    (None, None)
}

impl ServerModel {
    /// Switch the drift on (collects the points once; call after the model is complete).
    pub fn enable_drift(&mut self, config: DriftConfig) {
        let (mut analog, mut status) = (Vec::new(), Vec::new());
        for (di, d) in self.domains.iter().enumerate() {
            for (ln, node) in &d.lns {
                let mut leaves = Vec::new();
                walk(node, &mut String::new(), &mut leaves);
                for (rel, value) in leaves {
                    let key = format!("{ln}${rel}");
                    let Some(kind) = kind_of(&key, &value) else {
                        continue;
                    };
                    if matches!(kind, Kind::Status) && controllable(node, &rel) {
                        continue;
                    }
                    let (q, t) = q_and_t(node, &rel);
                    let with_ln = |k: Option<String>| k.map(|k| format!("{ln}${k}"));
                    let p = Point {
                        domain: di,
                        key,
                        kind,
                        q: with_ln(q),
                        t: with_ln(t),
                    };
                    match kind {
                        Kind::Analog(_) => analog.push(p),
                        Kind::Status => status.push(p),
                    }
                }
            }
        }
        self.drift = Some(Drift {
            rng: config.seed.max(1),
            config,
            analog,
            status,
            last_ms: None,
            owed_milli: 0,
        });
    }

    /// The drift state, when switched on.
    pub fn drift_state(&self) -> Option<&Drift> {
        self.drift.as_ref()
    }

    /// Make the changes due at `unix_ms` (none on the first call, which starts the clock);
    /// returns how many were made. Nothing happens unless [`ServerModel::enable_drift`] ran.
    pub fn drift(&mut self, unix_ms: u64) -> usize {
        let Some(mut d) = self.drift.take() else {
            return 0;
        };
        let n = match d.last_ms {
            None => 0,
            Some(last) => {
                let dt = unix_ms.saturating_sub(last);
                d.owed_milli = d
                    .owed_milli
                    .saturating_add(dt.saturating_mul(u64::from(d.config.changes_per_second)));
                let n = (d.owed_milli / 1000).min(MAX_CHANGES_PER_CALL as u64);
                // A stall forgives what it could not make.
                d.owed_milli = if n == MAX_CHANGES_PER_CALL as u64 {
                    0
                } else {
                    d.owed_milli - n * 1000
                };
                n as usize
            }
        };
        d.last_ms = Some(unix_ms);
        let mut made = 0;
        for _ in 0..n {
            let r = d.next();
            let status = !d.status.is_empty()
                && (d.analog.is_empty() || r % 10 < u64::from(d.config.status_share_of_10));
            let pick = d.next();
            let noise = d.next();
            let pool = if status { &d.status } else { &d.analog };
            if pool.is_empty() {
                break;
            }
            let p = pool[(pick % pool.len() as u64) as usize].clone();
            if self.change_point(&p, noise, unix_ms) {
                made += 1;
            }
        }
        self.drift = Some(d);
        made
    }

    fn change_point(&mut self, p: &Point, noise: u64, unix_ms: u64) -> bool {
        let Some(dom) = self.domains.get(p.domain).map(|d| d.name.clone()) else {
            return false;
        };
        let Some(leaf) = self.node_by_key_mut(p.domain, &p.key) else {
            return false;
        };
        let ModelNode::Leaf { value, .. } = leaf else {
            return false;
        };
        // A step in [-1, 1), from the top 53 bits.
        let u = (noise >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        let next = match (p.kind, &*value) {
            (Kind::Analog(base), v) => {
                let scale = base.abs().max(1.0);
                let cur = match v {
                    Data::FloatingPoint32(x) => f64::from(*x),
                    Data::FloatingPoint64(x) => *x,
                    Data::Integer(x) => *x as f64,
                    _ => return false,
                };
                // Mean-reverting: a tenth of the way back to the base, plus up to 2 %.
                let new = cur + (base - cur) * 0.1 + u * 0.02 * scale;
                match v {
                    Data::FloatingPoint32(_) => Data::FloatingPoint32(new as f32),
                    Data::FloatingPoint64(_) => Data::FloatingPoint64(new),
                    _ => {
                        let step = if u < 0.0 { -1 } else { 1 };
                        Data::Integer(match cur as i64 {
                            c if (c as f64) < base - scale * 0.2 => c + 1,
                            c if (c as f64) > base + scale * 0.2 => c - 1,
                            c => c.saturating_add(step),
                        })
                    }
                }
            }
            (Kind::Status, Data::Boolean(b)) => Data::Boolean(!b),
            (Kind::Status, Data::Integer(i)) => {
                Data::Integer(if i % 2 == 0 { i + 1 } else { i - 1 })
            }
            (Kind::Status, Data::Unsigned(i)) => Data::Unsigned(i ^ 1),
            (Kind::Status, v @ Data::BitString { .. }) => {
                // Dbpos: off (01) <-> on (10); intermediate or bad go to on.
                let on = BitString::from_data(v).is_some_and(|b| b.get(0) && !b.get(1));
                BitString::with_bits(2, &[if on { 1 } else { 0 }]).to_data()
            }
            _ => return false,
        };
        *value = next;
        self.mark_changed(&dom, &p.key);
        if let Some(q) = &p.q {
            if let Some(ModelNode::Leaf { value, .. }) = self.node_by_key_mut(p.domain, q) {
                if let Some(bits) = BitString::from_data(value) {
                    let good = BitString::new(bits.len()).to_data();
                    if *value != good {
                        *value = good;
                        self.mark_changed(&dom, q);
                    }
                }
            }
        }
        if let Some(t) = &p.t {
            if let Some(ModelNode::Leaf { value, .. }) = self.node_by_key_mut(p.domain, t) {
                *value = Data::UtcTime(crate::model::utc_time(unix_ms));
            }
        }
        true
    }

    fn node_by_key_mut(&mut self, domain: usize, key: &str) -> Option<&mut ModelNode> {
        let (ln, rest) = key.split_once('$').unwrap_or((key, ""));
        let d = self.domains.get_mut(domain)?;
        let (_, node) = d.lns.iter_mut().find(|(n, _)| n == ln)?;
        find_key_mut(node, rest)
    }
}

#[cfg(test)]
mod tests;
