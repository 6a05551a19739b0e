//! Scenario files: a matrix of measurement cases (`docs/scenarios.md`).
//!
//! A scenario file is TOML: a name, `[defaults]` that every case starts from, an optional `[quick]`
//! table that `--quick` lays over every case (smaller counts, shorter period), explicit `[[row]]`
//! cases and `[[matrix]]` tables whose array-valued keys expand into the cartesian product of
//! cases. Each case is resolved against what this machine's TLS libraries can do
//! ([`gander_tls::backend::capabilities`]): `backend = "auto"` picks the first of OpenSSL, GnuTLS
//! and rustls that supports the suite at that version, and records why.
//!
//! Nothing here panics on a bad file: every problem is a [`ScenarioError`] naming the case.

use crate::link::profile::{self as link_profile, LinkProfile};
use gander_tls::backend::{self, BackendKind};
use gander_tls::pki::KeySpec;
use gander_tls::suites::{self, CipherSuite};
use gander_tls::{KxGroup, TlsVersion};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use toml::{Table, Value};

/// Everything that can be wrong with a scenario file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario file {path}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The scenario is not valid TOML.
    #[error("scenario {scenario}: not valid TOML")]
    Toml {
        /// The scenario's name.
        scenario: String,
        /// What the TOML parser said.
        #[source]
        source: toml::de::Error,
    },
    /// Something outside the cases is wrong (tables, defaults, unknown keys).
    #[error("scenario {scenario}: {what}")]
    File {
        /// The scenario's name.
        scenario: String,
        /// What is wrong.
        what: String,
    },
    /// A case does not resolve on this machine (suite, version, key, backend or link).
    #[error("scenario {scenario}, case {case}: {what}")]
    Case {
        /// The scenario's name.
        scenario: String,
        /// The case's name.
        case: String,
        /// What is wrong.
        what: String,
    },
    /// Neither a file nor a built-in scenario.
    #[error("unknown scenario {0:?}: not a file and not a built-in (see `gander scenarios`)")]
    Unknown(String),
}

/// Which implementation runs a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// `gander mms server|client`.
    Gander,
    /// libiec61850 1.6: the compiled harness `interop/cref` (`make cref`), or with
    /// `--libiec61850-python` the Python driver `interop/imp_libiec61850_peer.py`; both found by
    /// [`crate::assets`].
    Libiec61850,
}

impl Stack {
    /// Name in scenario files and results.
    pub fn name(self) -> &'static str {
        match self {
            Stack::Gander => "gander",
            Stack::Libiec61850 => "libiec61850",
        }
    }
}

/// What the client and server exchange after the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interaction {
    /// Server pushes unbuffered reports every `period_ms` (the RSE paper's RT).
    Report,
    /// Client reads, server responds (the Sandia report's request/response).
    Read,
    /// Client writes, server confirms.
    Write,
    /// Client operates one named control object (select, operate, CommandTermination,
    /// Cancel round trips; `gander_peers::client` `[control]`): against gander's server, its
    /// built-in control model (one object per ctlModel), or against a target, the object the
    /// row names. The case's `reports` is the number of operations.
    Control,
}

impl Interaction {
    /// Name in scenario files and results.
    pub fn name(self) -> &'static str {
        match self {
            Interaction::Report => "report",
            Interaction::Read => "read",
            Interaction::Write => "write",
            Interaction::Control => "control",
        }
    }
}

/// Session resumption for the handshakes after the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resumption {
    /// Every handshake is a full one.
    Off,
    /// TLS 1.2 session IDs (RFC 5246 §7.4.1.2).
    Id,
    /// TLS 1.2 session tickets (RFC 5077).
    Ticket,
    /// TLS 1.3 PSK from a NewSessionTicket (RFC 8446 §4.6.1, psk_dhe_ke).
    Psk,
}

impl Resumption {
    /// Name in scenario files and results.
    pub fn name(self) -> &'static str {
        match self {
            Resumption::Off => "off",
            Resumption::Id => "id",
            Resumption::Ticket => "ticket",
            Resumption::Psk => "psk",
        }
    }
}

/// Which link emulator applies a non-loopback profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmulatorChoice {
    /// `tc netem` when the kernel has it, otherwise the userspace relay.
    Auto,
    /// Kernel `tc netem` (the case fails where the kernel lacks it).
    Netem,
    /// gander's userspace relay, on any kernel.
    Userspace,
}

/// The parameters of one case, as written (after `[defaults]`, the row and `[quick]` are merged).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Unique within the scenario; also the file name under `DIR/scenarios/` (`/` becomes `_`).
    pub name: String,
    /// The report tables this case appears in (ids of `[[table]]` entries); a string or a list.
    #[serde(default, deserialize_with = "one_or_many")]
    pub table: Vec<String>,
    /// Row label in that table (e.g. "iii.) (TLS v1.0)").
    #[serde(default)]
    pub label: String,
    /// Which implementation runs the server.
    #[serde(default = "default_stack")]
    pub server_stack: Stack,
    /// Which implementation runs the client.
    #[serde(default = "default_stack")]
    pub client_stack: Stack,
    /// `auto`, `openssl`, `gnutls`, `rustls`, `rustls-awslc` or `openssl35`.
    #[serde(default = "default_auto")]
    pub backend: String,
    /// Key-exchange group (`x25519`, `secp256r1`, `X25519MLKEM768`, `MLKEM768`); empty: the
    /// library's default. A `[[matrix]]` list makes it a dimension.
    #[serde(default)]
    pub group: String,
    /// `1.0` .. `1.3`, or `none` for cleartext MMS.
    #[serde(default = "default_version")]
    pub tls_version: String,
    /// IANA name or `0xC02F`; ignored when `tls_version = "none"`.
    #[serde(default)]
    pub cipher_suite: String,
    /// `rsa1024` .. `rsa8192`, `p256`, `p384`, `mldsa44`, `mldsa65`.
    #[serde(default = "default_key")]
    pub key: String,
    /// What the peers exchange after the handshake.
    #[serde(default = "default_interaction")]
    pub interaction: Interaction,
    /// Report / request payload in bytes (the RSE paper's 125-byte reports).
    #[serde(default = "default_payload")]
    pub payload: u32,
    /// Report period, or the pause between requests, in milliseconds.
    #[serde(default = "default_period")]
    pub period_ms: u64,
    /// Link profile name (`loopback`, `lan`, `wan`, `4g`, `5g`).
    #[serde(default = "default_link")]
    pub link: String,
    /// Which emulator applies a non-loopback link profile.
    #[serde(default = "default_emulator")]
    pub emulator: EmulatorChoice,
    /// Handshakes (HT samples).
    #[serde(default = "default_connections")]
    pub connections: u32,
    /// Reports or requests (RT samples).
    #[serde(default = "default_reports")]
    pub reports: u32,
    /// Samples measured, then discarded and counted, at the start of each loop.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// Session resumption for the handshakes after the first.
    #[serde(default = "default_resumption")]
    pub session_resumption: Resumption,
    /// Case whose means VAR% is computed against (the papers' reference row); none = no VAR%.
    #[serde(default)]
    pub reference: Option<String>,
    /// Also run the same exchange in cleartext for the RT floor.
    #[serde(default = "default_true")]
    pub cleartext_baseline: bool,
    /// Report cases with a cleartext baseline: the RT loop is split into this many TLS blocks
    /// alternating (TLS, clear, clear, TLS, ...) with as many cleartext blocks of the same size,
    /// each on its own pair of peers, so that the machine's state weighs on both alike; the
    /// first `warmup` reports of every block are discarded. 0: one RT loop after the HT loop,
    /// and one cleartext run shared by every case with the same exchange.
    #[serde(default = "default_rt_blocks")]
    pub rt_blocks: u32,
    /// `interaction = "control"`: the object operated, `LD/LN.DO` (gander's built-in control
    /// model: `CTRLLD0/GGIO1.SPCSO1` .. `SPCSO4` for ctlModel 1 .. 4). Nothing is operated
    /// unless a row names it.
    #[serde(default)]
    pub control_object: String,
    /// `interaction = "control"`: the Test flag of every command (IEC 61850-7-2 20.2.2);
    /// `false` operates the process (the state is restored either way).
    #[serde(default = "default_true")]
    pub control_test: bool,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// A report table: which cases, in what layout, and its VAR% reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Id the cases' `table` refers to.
    pub id: String,
    /// Heading of the table in the report.
    pub title: String,
    /// Case the VAR% column of this table is computed against.
    #[serde(default)]
    pub reference: Option<String>,
    /// `rse` (mean, sd, VAR% of HT and RT, like RSE Tables 1-6), `sandia` (mean and sd of the
    /// TLS-minus-cleartext differences, payload rows by suite columns, like Sandia Table 2),
    /// `pq` (group, certificate, HT, floor, bytes on the wire and the HT verdict) or `plain`
    /// (every statistic).
    #[serde(default = "default_layout")]
    pub layout: String,
    /// How rows are labelled: `suite` (the paper's label), `version`, `key`, `name`.
    #[serde(default = "default_row_label")]
    pub row_label: String,
}

fn default_layout() -> String {
    "plain".into()
}
fn default_row_label() -> String {
    "name".into()
}

fn default_stack() -> Stack {
    Stack::Gander
}
fn default_auto() -> String {
    "auto".into()
}
fn default_version() -> String {
    "1.2".into()
}
fn default_key() -> String {
    "rsa2048".into()
}
fn default_interaction() -> Interaction {
    Interaction::Report
}
fn default_payload() -> u32 {
    125
}
fn default_period() -> u64 {
    500
}
fn default_link() -> String {
    "loopback".into()
}
fn default_emulator() -> EmulatorChoice {
    EmulatorChoice::Auto
}
fn default_connections() -> u32 {
    100
}
fn default_reports() -> u32 {
    100
}
fn default_warmup() -> u32 {
    5
}
fn default_resumption() -> Resumption {
    Resumption::Off
}
fn default_rt_blocks() -> u32 {
    8
}
fn default_true() -> bool {
    true
}

/// A case resolved against this machine: the suite, version, key and backend it will use.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    /// The parameters as written.
    pub params: Params,
    /// `None` for cleartext.
    pub tls: Option<TlsChoice>,
    /// The certificate key type.
    pub key: KeySpecName,
    /// The link profile `params.link` names.
    pub link: LinkProfile,
    /// Why the case is not run on this machine (a group or certificate the backend cannot
    /// do): the run records it as `skipped` with this reason.
    pub skip: Option<String>,
}

/// The TLS side of a case.
#[derive(Clone, Debug, Serialize)]
pub struct TlsChoice {
    /// The TLS version.
    pub version: TlsVersion,
    /// The cipher suite.
    #[serde(serialize_with = "ser_suite")]
    pub suite: &'static CipherSuite,
    /// The TLS library that runs it.
    pub backend: BackendKind,
    /// Why this backend (e.g. "auto: openssl lacks TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA here").
    pub backend_reason: String,
    /// The library and version, from the backend itself.
    pub library: String,
    /// The key-exchange group both peers are restricted to (`None`: library defaults).
    pub group: Option<KxGroup>,
}

fn ser_suite<S: serde::Serializer>(s: &&'static CipherSuite, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.name)
}

/// A key spec that serialises as its directory name (`rsa2048`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpecName(pub KeySpec);

impl Serialize for KeySpecName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.dir_name())
    }
}

impl fmt::Display for KeySpecName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.dir_name())
    }
}

impl Case {
    /// The case's name (`params.name`).
    pub fn name(&self) -> &str {
        &self.params.name
    }
    /// `gander`, `libiec61850`, or `server/client` when they differ.
    pub fn stack(&self) -> String {
        let (s, c) = (self.params.server_stack, self.params.client_stack);
        if s == c {
            s.name().into()
        } else {
            format!("{}-server/{}-client", s.name(), c.name())
        }
    }
    /// The file-system-safe name used under `DIR/scenarios/`.
    pub fn file_stem(&self) -> String {
        file_stem(&self.params.name)
    }
}

/// `/` and other separators become `_`.
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A parsed and resolved scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Scenario name (its built-in name or file stem).
    pub name: String,
    /// What the scenario measures, one paragraph.
    pub description: String,
    /// Publication or purpose the matrix follows.
    pub source: String,
    /// Whether the `[quick]` overrides (fewer connections and reports) were applied.
    pub quick: bool,
    /// The report tables.
    pub tables: Vec<TableSpec>,
    /// The cases, in run order.
    pub cases: Vec<Case>,
    /// An external server to run against instead of local pairs ([`crate::target`]).
    pub target: Option<crate::target::TargetSpec>,
}

/// Raw parse of a file: the merged parameter tables of every case (before resolution).
pub fn parse(
    scenario_hint: &str,
    text: &str,
    quick: bool,
) -> Result<(Scenario, Vec<Params>), ScenarioError> {
    parse_at(scenario_hint, text, quick, None)
}

/// [`parse`], with the directory relative paths of `[target]` are taken from.
pub fn parse_at(
    scenario_hint: &str,
    text: &str,
    quick: bool,
    base: Option<&Path>,
) -> Result<(Scenario, Vec<Params>), ScenarioError> {
    let toml_err = |source| ScenarioError::Toml {
        scenario: scenario_hint.to_string(),
        source,
    };
    let mut root: Table = text.parse::<Table>().map_err(toml_err)?;
    let file_err = |what: String| ScenarioError::File {
        scenario: scenario_hint.to_string(),
        what,
    };
    let name = match root.remove("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(_) => return Err(file_err("`name` must be a non-empty string".into())),
        None => return Err(file_err("missing `name`".into())),
    };
    let take_string = |root: &mut Table, key: &str| -> Result<String, ScenarioError> {
        match root.remove(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(ScenarioError::File {
                scenario: name.clone(),
                what: format!("`{key}` must be a string"),
            }),
        }
    };
    let description = take_string(&mut root, "description")?;
    let source = take_string(&mut root, "source")?;
    let take_table = |root: &mut Table, key: &str| -> Result<Table, ScenarioError> {
        match root.remove(key) {
            None => Ok(Table::new()),
            Some(Value::Table(t)) => Ok(t),
            Some(_) => Err(ScenarioError::File {
                scenario: name.clone(),
                what: format!("`[{key}]` must be a table"),
            }),
        }
    };
    let defaults = take_table(&mut root, "defaults")?;
    let quick_table = take_table(&mut root, "quick")?;
    let take_array = |root: &mut Table, key: &str| -> Result<Vec<Table>, ScenarioError> {
        match root.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .into_iter()
                .map(|v| match v {
                    Value::Table(t) => Ok(t),
                    _ => Err(ScenarioError::File {
                        scenario: name.clone(),
                        what: format!("`[[{key}]]` entries must be tables"),
                    }),
                })
                .collect(),
            Some(_) => Err(ScenarioError::File {
                scenario: name.clone(),
                what: format!("`{key}` must be an array of tables (`[[{key}]]`)"),
            }),
        }
    };
    let target = match root.remove("target") {
        None => None,
        Some(Value::Table(t)) => Some(crate::target::TargetSpec::from_table(&name, t, base)?),
        Some(_) => return Err(file_err("`[target]` must be a table".into())),
    };
    let rows = take_array(&mut root, "row")?;
    let table_tables = take_array(&mut root, "table")?;
    let matrices = take_array(&mut root, "matrix")?;
    if let Some(k) = root.keys().next() {
        return Err(file_err(format!(
            "unknown top-level key `{k}` (expected name, description, source, [defaults], [quick], [target], [[table]], [[row]], [[matrix]])"
        )));
    }

    let mut tables: Vec<Table> = rows;
    for (i, m) in matrices.into_iter().enumerate() {
        tables.extend(expand_matrix(&name, i, m)?);
    }
    if tables.is_empty() {
        return Err(file_err(
            "no cases: add [[row]] or [[matrix]] tables".into(),
        ));
    }

    let mut params = Vec::with_capacity(tables.len());
    let mut seen = BTreeSet::new();
    for (i, row) in tables.into_iter().enumerate() {
        let case_name = match row.get("name") {
            Some(Value::String(s)) => s.clone(),
            _ => format!("#{}", i + 1),
        };
        let mut merged = defaults.clone();
        merged.remove("name");
        for (k, v) in row {
            merged.insert(k, v);
        }
        if quick {
            for (k, v) in &quick_table {
                merged.insert(k.clone(), v.clone());
            }
        }
        if !merged.contains_key("name") {
            return Err(ScenarioError::Case {
                scenario: name.clone(),
                case: case_name,
                what: "missing `name`".into(),
            });
        }
        let p: Params = Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| ScenarioError::Case {
                scenario: name.clone(),
                case: case_name.clone(),
                what: e.message().to_string(),
            })?;
        if !seen.insert(p.name.clone()) {
            return Err(ScenarioError::Case {
                scenario: name.clone(),
                case: p.name,
                what: "duplicate case name".into(),
            });
        }
        params.push(p);
    }
    // References must name a case of the same file.
    for p in &params {
        if let Some(r) = &p.reference {
            if !seen.contains(r) {
                return Err(ScenarioError::Case {
                    scenario: name.clone(),
                    case: p.name.clone(),
                    what: format!("reference {r:?} is not a case of this scenario"),
                });
            }
        }
    }
    let mut tables = Vec::new();
    for t in table_tables {
        let spec: TableSpec =
            Value::Table(t)
                .try_into()
                .map_err(|e: toml::de::Error| ScenarioError::File {
                    scenario: name.clone(),
                    what: format!("[[table]]: {}", e.message()),
                })?;
        if !["rse", "sandia", "plain", "pq"].contains(&spec.layout.as_str()) {
            return Err(file_err(format!(
                "[[table]] {}: unknown layout {:?} (expected rse, sandia, plain or pq)",
                spec.id, spec.layout
            )));
        }
        if !["suite", "version", "key", "library", "name"].contains(&spec.row_label.as_str()) {
            return Err(file_err(format!(
                "[[table]] {}: unknown row_label {:?} (expected suite, version, key, library or name)",
                spec.id, spec.row_label
            )));
        }
        if let Some(r) = &spec.reference {
            if !seen.contains(r) {
                return Err(file_err(format!(
                    "[[table]] {}: reference {r:?} is not a case of this scenario",
                    spec.id
                )));
            }
        }
        tables.push(spec);
    }
    for p in &params {
        for t in &p.table {
            if !tables.iter().any(|s| &s.id == t) {
                return Err(ScenarioError::Case {
                    scenario: name.clone(),
                    case: p.name.clone(),
                    what: format!("table {t:?} is not declared with [[table]]"),
                });
            }
        }
    }
    Ok((
        Scenario {
            name,
            description,
            source,
            quick,
            tables,
            cases: Vec::new(),
            target,
        },
        params,
    ))
}

/// Expands one `[[matrix]]` table: every array-valued key is a dimension; `name` is a prefix to
/// which each dimension's short value label is appended with `/`.
fn expand_matrix(scenario: &str, index: usize, m: Table) -> Result<Vec<Table>, ScenarioError> {
    let prefix = match m.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(ScenarioError::File {
                scenario: scenario.into(),
                what: format!("[[matrix]] #{}: `name` must be a string", index + 1),
            })
        }
        None => format!("m{}", index + 1),
    };
    let mut fixed = Table::new();
    let mut dims: Vec<(String, Vec<Value>)> = Vec::new();
    for (k, v) in m {
        if k == "name" {
            continue;
        }
        match v {
            Value::Array(a) => {
                if a.is_empty() {
                    return Err(ScenarioError::File {
                        scenario: scenario.into(),
                        what: format!("[[matrix]] {prefix}: `{k}` is an empty list"),
                    });
                }
                dims.push((k, a));
            }
            other => {
                fixed.insert(k, other);
            }
        }
    }
    let mut out = vec![(prefix, fixed)];
    for (k, values) in dims {
        let mut next = Vec::with_capacity(out.len() * values.len());
        for (n, t) in &out {
            for v in &values {
                let mut t = t.clone();
                t.insert(k.clone(), v.clone());
                next.push((format!("{n}/{}", value_label(&k, v)), t));
            }
        }
        out = next;
    }
    Ok(out
        .into_iter()
        .map(|(n, mut t)| {
            t.insert("name".into(), Value::String(n));
            t
        })
        .collect())
}

/// Short label of a matrix value: suites by their paper label when they have one.
fn value_label(key: &str, v: &Value) -> String {
    match v {
        Value::String(s) if key == "cipher_suite" => match suites::lookup(s) {
            Some(cs) => cs
                .sandia
                .map(str::to_string)
                .or_else(|| cs.rse.map(|r| format!("rse-{r}")))
                .unwrap_or_else(|| cs.name.to_string()),
            None => s.clone(),
        },
        Value::String(s) => s.clone(),
        Value::Integer(i) if key == "payload" => format!("{i}B"),
        other => other.to_string(),
    }
}

impl Scenario {
    /// Parses and resolves a scenario file's text.
    pub fn from_str(hint: &str, text: &str, quick: bool) -> Result<Scenario, ScenarioError> {
        Self::from_str_at(hint, text, quick, None)
    }

    /// [`Scenario::from_str`] for a file in `base` (relative `[target]` paths).
    pub fn from_str_at(
        hint: &str,
        text: &str,
        quick: bool,
        base: Option<&Path>,
    ) -> Result<Scenario, ScenarioError> {
        let (mut sc, params) = parse_at(hint, text, quick, base)?;
        for p in params {
            let case = resolve(&sc.name, p)?;
            sc.cases.push(case);
        }
        sc.check_target()?;
        Ok(sc)
    }

    /// Runs the matrix against `target` instead of local pairs (`gander run --target`).
    pub fn set_target(&mut self, target: crate::target::TargetSpec) -> Result<(), ScenarioError> {
        self.target = Some(target);
        self.check_target()
    }

    /// Against a target only gander's client runs, and only the report exchange.
    fn check_target(&self) -> Result<(), ScenarioError> {
        if self.target.is_none() {
            return Ok(());
        }
        for c in &self.cases {
            if c.params.client_stack != Stack::Gander
                || !matches!(
                    c.params.interaction,
                    Interaction::Report | Interaction::Control
                )
            {
                return Err(ScenarioError::Case {
                    scenario: self.name.clone(),
                    case: c.params.name.clone(),
                    what: "against a [target], cases run gander's client with reports or controls"
                        .into(),
                });
            }
        }
        Ok(())
    }

    /// A built-in name (`rse2019`, ...) or a path to a TOML file.
    pub fn load(name_or_path: &str, quick: bool) -> Result<Scenario, ScenarioError> {
        if let Some(b) = crate::builtin::lookup(name_or_path) {
            return Scenario::from_str(b.name, b.toml, quick);
        }
        let path = Path::new(name_or_path);
        if path.exists() || name_or_path.ends_with(".toml") {
            let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
                path: name_or_path.to_string(),
                source,
            })?;
            return Scenario::from_str_at(name_or_path, &text, quick, path.parent());
        }
        Err(ScenarioError::Unknown(name_or_path.to_string()))
    }

    /// The case named `name`.
    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.params.name == name)
    }
}

/// Resolves one case: suite, version, key, backend and link must all exist and fit together here.
pub fn resolve(scenario: &str, p: Params) -> Result<Case, ScenarioError> {
    let err = |what: String| ScenarioError::Case {
        scenario: scenario.to_string(),
        case: p.name.clone(),
        what,
    };
    let key: KeySpec = p.key.parse().map_err(|e| err(format!("{e}")))?;
    let mut skip = None;
    let link = *link_profile::lookup(&p.link).ok_or_else(|| {
        err(format!(
            "unknown link profile {:?} (expected one of {})",
            p.link,
            link_profile::names().join(", ")
        ))
    })?;
    if p.connections == 0 && p.reports == 0 {
        return Err(err(
            "connections and reports are both 0: nothing to measure".into(),
        ));
    }
    if p.interaction == Interaction::Control {
        // Operating a control changes a device: only a named object, only gander's peers
        // (the control model is gander's server's; the measuring client is gander's).
        if !crate::control_rows::valid_object(&p.control_object) {
            return Err(err(format!(
                "interaction = \"control\" needs control_object = \"LD/LN.DO\" (got {:?})",
                p.control_object
            )));
        }
        if p.server_stack != Stack::Gander || p.client_stack != Stack::Gander {
            return Err(err(
                "control rows run gander's server and client (or gander's client against a [target])"
                    .into(),
            ));
        }
        if p.reports == 0 {
            return Err(err("control rows need reports > 0 (the operations)".into()));
        }
    }
    if p.interaction == Interaction::Report && p.period_ms == 0 {
        return Err(err("period_ms must be > 0 for report pushes".into()));
    }
    if p.payload > 65_000 {
        return Err(err(format!(
            "payload {} bytes is above the 65000-byte limit",
            p.payload
        )));
    }
    let tls = if p.tls_version.trim().eq_ignore_ascii_case("none") {
        None
    } else {
        let version: TlsVersion = p.tls_version.parse().map_err(|e| err(format!("{e}")))?;
        if p.cipher_suite.trim().is_empty() {
            return Err(err(
                "`cipher_suite` is required unless tls_version = \"none\"".into(),
            ));
        }
        let suite = suites::lookup(&p.cipher_suite).ok_or_else(|| {
            err(format!(
                "unknown cipher suite {:?} (see `gander suites`)",
                p.cipher_suite
            ))
        })?;
        if !suite.allows(version) {
            return Err(err(format!(
                "{} is not defined for TLS {} (only {}..{})",
                suite.name,
                version.short(),
                suite.min_version.short(),
                suite.max_version.short()
            )));
        }
        let auth_ok = matches!(
            (suite.kx.auth(), key),
            ("RSA", KeySpec::Rsa(_)) | ("ECDSA", KeySpec::P256 | KeySpec::P384) | ("any", _)
        );
        if key.is_ml_dsa() && version != TlsVersion::Tls13 {
            return Err(err(format!(
                "{} certificates need TLS 1.3 (draft-ietf-tls-mldsa defines no TLS 1.2 use)",
                key.dir_name()
            )));
        }
        if !auth_ok {
            return Err(err(format!(
                "{} needs {} keys, not {}",
                suite.name,
                suite.kx.auth(),
                key.dir_name()
            )));
        }
        match (p.session_resumption, version) {
            (Resumption::Psk, v) if v != TlsVersion::Tls13 => {
                return Err(err("session_resumption = \"psk\" needs TLS 1.3".into()))
            }
            (Resumption::Id | Resumption::Ticket, TlsVersion::Tls13) => {
                return Err(err(
                    "TLS 1.3 resumes with PSK tickets: use session_resumption = \"psk\"".into(),
                ))
            }
            _ => {}
        }
        let group = if p.group.trim().is_empty() {
            None
        } else {
            let g: KxGroup = p.group.parse().map_err(|e| err(format!("{e}")))?;
            use gander_tls::suites::KeyExchange;
            if !matches!(
                suite.kx,
                KeyExchange::EcdheRsa | KeyExchange::EcdheEcdsa | KeyExchange::AnyTls13
            ) {
                return Err(err(format!(
                    "group {g} needs an (EC)DHE suite or TLS 1.3, not {}",
                    suite.name
                )));
            }
            Some(g)
        };
        let (backend, backend_reason) =
            choose_backend(&p.backend, suite, version).map_err(|e| err(e.to_string()))?;
        let caps = backend::capabilities(backend);
        if let Some(g) = group {
            if version != TlsVersion::Tls13 && !g.tls12() {
                skip = Some(format!(
                    "{g} is defined for TLS 1.3 only (draft-ietf-tls-ecdhe-mlkem)"
                ));
            } else if caps.in_process && !caps.groups.contains(&g) {
                skip = Some(format!(
                    "{} ({}) cannot negotiate {g}",
                    backend.name(),
                    caps.library
                ));
            }
        }
        if key.is_ml_dsa()
            && caps.in_process
            && !caps.signature_schemes.iter().any(|s| *s == key.dir_name())
        {
            skip.get_or_insert(format!(
                "{} ({}) cannot sign or verify {} in TLS",
                backend.name(),
                caps.library,
                key.dir_name()
            ));
        }
        Some(TlsChoice {
            version,
            suite,
            backend,
            backend_reason,
            library: caps.library.clone(),
            group,
        })
    };
    if tls.is_none() && p.session_resumption != Resumption::Off {
        return Err(err("session resumption needs TLS".into()));
    }
    if tls.is_none() && key.is_ml_dsa() {
        skip = Some("cleartext: no certificate".into());
    }
    Ok(Case {
        params: p,
        tls,
        key: KeySpecName(key),
        link,
        skip,
    })
}

/// Why no backend could be chosen for a case.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum BackendChoiceError {
    /// `backend = "auto"`, and no library here has the suite at this version.
    #[error("no backend on this machine supports {suite} at TLS {version}")]
    NoneSupports {
        /// The suite's name.
        suite: &'static str,
        /// The TLS version, e.g. `1.2`.
        version: &'static str,
    },
    /// The backend named does not have the suite at this version here.
    #[error("backend {backend} does not support {suite} at TLS {version} on this machine (try backend = \"auto\")")]
    Unsupported {
        /// The backend named in the scenario.
        backend: BackendKind,
        /// The suite's name.
        suite: &'static str,
        /// The TLS version, e.g. `1.2`.
        version: &'static str,
    },
    /// Not a backend's name.
    #[error(transparent)]
    Unknown(#[from] gander_tls::backend::UnknownBackend),
}

/// Picks the backend for a suite and version, asking each library what it supports here.
pub fn choose_backend(
    wanted: &str,
    suite: &CipherSuite,
    version: TlsVersion,
) -> Result<(BackendKind, String), BackendChoiceError> {
    let supports = |b: BackendKind| {
        let caps = backend::capabilities(b);
        // A backend that runs in another binary (openssl35) is asked there, when the case runs.
        !caps.in_process || (caps.suites.contains(&suite.code) && caps.versions.contains(&version))
    };
    if wanted.trim().eq_ignore_ascii_case("auto") {
        let mut lacking = Vec::new();
        for b in BackendKind::ALL.into_iter().filter(|b| b.in_process()) {
            if supports(b) {
                let reason = if lacking.is_empty() {
                    format!(
                        "auto: first backend with {} at TLS {}",
                        suite.name,
                        version.short()
                    )
                } else {
                    format!(
                        "auto: {} {} {} at TLS {} here",
                        lacking.join(" and "),
                        if lacking.len() == 1 { "lacks" } else { "lack" },
                        suite.name,
                        version.short()
                    )
                };
                return Ok((b, reason));
            }
            lacking.push(b.name());
        }
        return Err(BackendChoiceError::NoneSupports {
            suite: suite.name,
            version: version.short(),
        });
    }
    let b: BackendKind = wanted.parse().map_err(BackendChoiceError::Unknown)?;
    if !supports(b) {
        return Err(BackendChoiceError::Unsupported {
            backend: b,
            suite: suite.name,
            version: version.short(),
        });
    }
    Ok((b, "chosen in the scenario".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = r#"
name = "t"
[defaults]
cipher_suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
connections = 10
reports = 20
[quick]
connections = 2
[[row]]
name = "a"
[[row]]
name = "b"
key = "rsa1024"
reference = "a"
"#;

    #[test]
    fn defaults_rows_and_quick() {
        let s = Scenario::from_str("t", MIN, false).unwrap();
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[0].params.connections, 10);
        assert_eq!(s.cases[1].key.to_string(), "rsa1024");
        assert_eq!(s.cases[1].params.reference.as_deref(), Some("a"));
        let q = Scenario::from_str("t", MIN, true).unwrap();
        assert_eq!(q.cases[0].params.connections, 2);
        assert_eq!(q.cases[0].params.reports, 20);
    }

    #[test]
    fn matrix_expands_in_order() {
        let t = r#"
name = "m"
[[matrix]]
name = "x"
tls_version = "1.2"
cipher_suite = ["TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
payload = [0, 512]
"#;
        let s = Scenario::from_str("m", t, false).unwrap();
        let names: Vec<_> = s.cases.iter().map(|c| c.name().to_string()).collect();
        assert_eq!(names, ["x/CS1/0B", "x/CS1/512B", "x/CS6/0B", "x/CS6/512B"]);
    }

    fn case_err(text: &str) -> String {
        Scenario::from_str("t", text, false)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn groups_are_a_dimension_and_unsupported_ones_are_skipped() {
        let text = r#"
name = "g"
[defaults]
tls_version = "1.3"
cipher_suite = "TLS_AES_128_GCM_SHA256"
key = "p256"
[[matrix]]
name = "kx"
backend = ["rustls", "rustls-awslc"]
group = ["x25519", "X25519MLKEM768", "MLKEM768"]
"#;
        let s = Scenario::from_str("g", text, false).unwrap();
        let names: Vec<&str> = s.cases.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), 6);
        assert_eq!(names[1], "kx/rustls/X25519MLKEM768");
        let g = |c: &Case| c.tls.as_ref().and_then(|t| t.group);
        assert_eq!(g(&s.cases[1]), Some(KxGroup::X25519Mlkem768));
        // ring has no ML-KEM: skipped with the reason; aws-lc-rs runs all three.
        assert_eq!(s.cases[0].skip, None);
        let why = s.cases[1].skip.as_deref().unwrap_or("");
        assert!(why.contains("cannot negotiate X25519MLKEM768"), "{why}");
        assert!(s.cases[2].skip.is_some());
        assert!(s.cases[3..].iter().all(|c| c.skip.is_none()));
        // ML-KEM at TLS 1.2: skipped; a group with RSA key transport: an error.
        let t12 = "name = \"t\"\n[[row]]\nname = \"a\"\nbackend = \"rustls-awslc\"\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"\ngroup = \"MLKEM768\"";
        let s = Scenario::from_str("t", t12, false).unwrap();
        assert!(s.cases[0]
            .skip
            .as_deref()
            .unwrap_or("")
            .contains("TLS 1.3 only"));
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_RSA_WITH_AES_128_CBC_SHA256\"\ngroup = \"x25519\"");
        assert!(e.contains("needs an (EC)DHE suite"), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_AES_128_GCM_SHA256\"\ntls_version = \"1.3\"\ngroup = \"x448\"");
        assert!(e.contains("unknown key-exchange group"), "{e}");
        // ML-DSA certificates: TLS 1.3 only; ring cannot verify them.
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\"\nkey = \"mldsa44\"");
        assert!(e.contains("need TLS 1.3"), "{e}");
        let ml = "name = \"t\"\n[[row]]\nname = \"a\"\nbackend = \"rustls\"\ntls_version = \"1.3\"\ncipher_suite = \"TLS_AES_128_GCM_SHA256\"\nkey = \"mldsa65\"";
        let s = Scenario::from_str("t", ml, false).unwrap();
        assert!(s.cases[0].skip.as_deref().unwrap_or("").contains("mldsa65"));
    }

    #[test]
    fn bad_files_are_specific_errors() {
        assert!(case_err("name = ").contains("not valid TOML"));
        assert!(case_err("x = 1").contains("missing `name`"));
        assert!(case_err("name = \"t\"").contains("no cases"));
        assert!(case_err("name = \"t\"\nfoo = 1\n[[row]]\nname=\"a\"")
            .contains("unknown top-level key `foo`"));
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_NOPE\"");
        assert!(
            e.contains("case a") && e.contains("unknown cipher suite"),
            "{e}"
        );
        let e = case_err(
            "name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_AES_128_GCM_SHA256\"",
        );
        assert!(e.contains("not defined for TLS 1.2"), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"\nkey = \"p256\"");
        assert!(e.contains("needs RSA keys"), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"\nkey = \"rsa999\"");
        assert!(e.contains("unknown key type"), "{e}");
        let e = case_err(
            "name = \"t\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"\nlink = \"moon\"",
        );
        assert!(e.contains("unknown link profile"), "{e}");
        let e = case_err(
            "name = \"t\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"\nconnectoins = 3",
        );
        assert!(e.contains("unknown field `connectoins`"), "{e}");
        let e = case_err(
            "name = \"t\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"\nconnections = -3",
        );
        assert!(e.contains("case a"), "{e}");
        let e = case_err(
            "name = \"t\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"\nreference = \"zz\"",
        );
        assert!(e.contains("reference \"zz\""), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"\n[[row]]\nname = \"a\"\ntls_version = \"none\"");
        assert!(e.contains("duplicate"), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"\nsession_resumption = \"psk\"");
        assert!(e.contains("needs TLS 1.3"), "{e}");
        let e = case_err("name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"\nbackend = \"wolfssl\"");
        assert!(e.contains("unknown TLS backend"), "{e}");
        assert!(matches!(
            Scenario::load("no-such-builtin", false),
            Err(ScenarioError::Unknown(_))
        ));
        assert!(matches!(
            Scenario::load("/nonexistent/x.toml", false),
            Err(ScenarioError::Read { .. })
        ));
    }

    #[test]
    fn auto_backend_picks_gnutls_for_3des() {
        let t = "name = \"t\"\n[[row]]\nname = \"a\"\ncipher_suite = \"TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA\"\ntls_version = \"1.0\"";
        let s = Scenario::from_str("t", t, false).unwrap();
        let tls = s.cases[0].tls.as_ref().unwrap();
        // Debian's OpenSSL lacks 3DES; GnuTLS has it (docs/tls.md).
        if !backend::capabilities(BackendKind::Openssl)
            .suites
            .contains(&0x0016)
        {
            assert_eq!(tls.backend, BackendKind::Gnutls);
            assert!(
                tls.backend_reason.contains("openssl"),
                "{}",
                tls.backend_reason
            );
        }
    }
}
