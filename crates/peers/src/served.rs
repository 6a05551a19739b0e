//! The model a server serves: gander's fixed measurement model, or an IED's model read from an
//! SCL file. Both answer the association through [`ServerHandler`]; they differ in how reports
//! are driven, which this module hides from the connection loop.
//!
//! - Fixed model: a GI when the client asks for one; every period, every DS1 member changes
//!   and one data-change report goes out (the RSE paper's 61850SER).
//! - SCL model: every period the stimulus leaves change (the first changeable attribute of the
//!   first member of each data set used by an RCB with dchg, `ServerModel::stimuli`), and every
//!   RCB enabled by the connection reports what is due: GI, integrity period, data changes
//!   (including those from clients' writes of CF/DC/SP/SV/SE attributes). That is the
//!   `values = "stimulus"` mode; by default (`drift`) there is no stimulus and the model's
//!   values drift like a real IED's instead (`ServerModel::drift`, timed by the wall clock
//!   whoever calls it); `static` moves nothing.

use super::clock::{now_ns, unix_ms};
use gander_mms::association::{ConnId, ServerHandler};
use gander_mms::model::{ImpModel, Trigger};
use gander_mms::report::Report;
use gander_mms::server_model::ServerModel;
use gander_mms::service::InformationReport;

/// The served model.
pub(crate) enum Served {
    Fixed(Box<ImpModel>),
    Scl(Box<ServerModel>),
}

/// A report ready to send, with the RT_START stamp (taken after the values changed, before the
/// report was built) and its SqNum.
pub(crate) struct Built {
    pub(crate) t_rt: u64,
    pub(crate) seq: u64,
    pub(crate) ir: InformationReport,
}

impl Served {
    /// The model, its clock set to now (an SCL model's SGCB stamps LActTm with it and ends
    /// setting group edit reservations whose time ran out; controls run sboTimeout and operTm
    /// on it).
    pub(crate) fn handler(&mut self) -> &mut dyn ServerHandler {
        match self {
            Served::Fixed(m) => m.as_mut(),
            Served::Scl(m) => {
                m.tick(unix_ms());
                m.as_mut()
            }
        }
    }

    pub(crate) fn is_enabled_for(&self, conn: ConnId) -> bool {
        match self {
            Served::Fixed(m) => m.is_enabled_for(conn),
            Served::Scl(m) => m.reports_enabled(conn),
        }
    }

    /// Reports that do not wait for the period.
    pub(crate) fn immediate(&mut self, conn: ConnId) -> Vec<Built> {
        let ms = unix_ms();
        match self {
            Served::Fixed(m) => {
                if !m.take_gi(conn) {
                    return Vec::new();
                }
                let t_rt = now_ns();
                let seq = m.rcb().sq_num as u64;
                m.build_report(conn, Trigger::GeneralInterrogation, ms)
                    .map(|ir| Built { t_rt, seq, ir })
                    .into_iter()
                    .collect()
            }
            Served::Scl(m) => {
                // The drift is timed by the wall clock, not by this loop: calling it from
                // every connection's loop makes no more changes than calling it once.
                m.drift(ms);
                let t_rt = now_ns();
                scl_built(m.due_reports(conn, ms), t_rt)
            }
        }
    }

    /// The periodic data change and its reports.
    pub(crate) fn periodic(&mut self, conn: ConnId) -> Vec<Built> {
        let ms = unix_ms();
        match self {
            Served::Fixed(m) => {
                let trigger = m.change_all(ms);
                let t_rt = now_ns();
                let seq = m.rcb().sq_num as u64;
                m.build_report(conn, trigger, ms)
                    .map(|ir| Built { t_rt, seq, ir })
                    .into_iter()
                    .collect()
            }
            Served::Scl(m) => {
                m.step_stimuli(ms);
                let t_rt = now_ns();
                scl_built(m.due_reports(conn, ms), t_rt)
            }
        }
    }
}

fn scl_built(irs: Vec<InformationReport>, t_rt: u64) -> Vec<Built> {
    irs.into_iter()
        .map(|ir| {
            let seq = Report::from_information_report(&ir)
                .ok()
                .and_then(|r| r.seq_num)
                .unwrap_or(0) as u64;
            Built { t_rt, seq, ir }
        })
        .collect()
}
