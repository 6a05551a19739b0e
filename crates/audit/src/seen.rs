//! What one classified frame shows without a key: the fields the inventory and the behaviour
//! checks read, taken from borrowed views that allocate nothing (`GooseView`, `SavView`,
//! `ExtensionView`), so the keyless audit stays on the hot path's budget.

use gander_sec::view::{Content, FrameView};
use gander_sec::Profile;
use gander_wire::ethernet::{ETHERTYPE_GOOSE, ETHERTYPE_SV};
use gander_wire::goose::{GooseView, TAG_GOOSE_PDU};
use gander_wire::l2_extension::ExtensionView;
use gander_wire::sv::{SavView, TAG_SAV_PDU};

/// The readable fields of one IEC 61850 frame.
#[derive(Clone, Debug, Default)]
pub struct Seen<'a> {
    /// APPID (layer 2, or the first payload element of a cleartext SPDU).
    pub appid: Option<u16>,
    /// gocbRef or svID.
    pub id: Option<&'a str>,
    /// datSet.
    pub dat_set: Option<&'a str>,
    /// goID.
    pub go_id: Option<&'a str>,
    /// confRev.
    pub conf_rev: Option<u32>,
    /// timeAllowedtoLive, milliseconds.
    pub tal_ms: Option<u32>,
    /// stNum, sqNum.
    pub st_sq: Option<(u32, u32)>,
    /// GOOSE `t`, the time of the state, ordered as `gander_sec::replay::goose_time` orders it:
    /// what tells a publisher restart from a delayed or replayed frame.
    pub t: Option<u64>,
    /// The simulation bit (Reserved1, the payload element's, or the GOOSE APDU's).
    pub simulation: bool,
    /// ndsCom.
    pub nds_com: bool,
    /// smpCnt of the first ASDU.
    pub smp_cnt: Option<u16>,
    /// smpSynch of the first ASDU.
    pub smp_synch: Option<u8>,
    /// smpRate of the first ASDU.
    pub smp_rate: Option<u16>,
    /// Key id (layer-2 extension or session header).
    pub key_id: Option<u32>,
    /// Length of the layer-2 mAC field (its algorithm needs the key to name).
    pub mac_len: Option<usize>,
    /// SPDU number (sessions).
    pub spdu_number: Option<u32>,
    /// The APDU of a frame readable without a key did not parse.
    pub apdu_error: Option<gander_wire::Error>,
}

impl<'a> Seen<'a> {
    /// Reads what `v` shows in cleartext.
    pub fn read(profile: Profile, v: &FrameView<'a>) -> Seen<'a> {
        let mut s = Seen::default();
        match &v.content {
            Content::L2(l) => {
                s.appid = Some(l.appid);
                s.simulation = l.simulation();
                if let Some(r) = &l.extension {
                    if let Ok(x) = ExtensionView::parse(&v.frame[r.clone()]) {
                        s.key_id = Some(x.key_id);
                        s.mac_len = Some(x.mac.len());
                    }
                }
                let apdu = &v.frame[l.apdu.clone()];
                match l.ethertype {
                    ETHERTYPE_GOOSE => s.goose(apdu, true),
                    ETHERTYPE_SV => s.sv(apdu, true),
                    _ => {}
                }
            }
            Content::Session(ss) => {
                s.key_id = Some(ss.pdu.header.security.key_id());
                s.spdu_number = Some(ss.pdu.header.spdu_number);
                let payload = ss.pdu.payload();
                let dialect = profile.dialect();
                let first = gander_wire::spdu::elements(payload, &dialect).next();
                // An encrypted payload does not read as elements: nothing to report without
                // the key. A cleartext one that does not parse is malformed.
                if let Some(Ok(e)) = first {
                    if ss.secured {
                        // Without the key a version-2 header does not say whether the payload
                        // is encrypted, and random ciphertext can look like an element header
                        // (a payload type, a simulation octet, an APPID). Only a payload whose
                        // every element parses and whose APDU decodes is read as cleartext.
                        let all = gander_wire::spdu::elements(payload, &dialect).all(|r| r.is_ok());
                        let apdu_ok = match e.apdu.first() {
                            Some(&TAG_GOOSE_PDU) => GooseView::parse(e.apdu).is_ok(),
                            Some(&TAG_SAV_PDU) => SavView::parse(e.apdu).is_ok(),
                            _ => false,
                        };
                        if !(all && apdu_ok) {
                            return s;
                        }
                    }
                    s.appid = Some(e.appid);
                    s.simulation |= e.simulation != 0;
                    match e.apdu.first() {
                        Some(&TAG_GOOSE_PDU) => s.goose(e.apdu, !ss.secured),
                        Some(&TAG_SAV_PDU) => s.sv(e.apdu, !ss.secured),
                        _ => {}
                    }
                }
            }
            Content::Other => {}
        }
        s
    }

    fn goose(&mut self, apdu: &'a [u8], report: bool) {
        match GooseView::parse(apdu) {
            Ok(g) => {
                self.id = Some(g.gocb_ref.as_str());
                self.dat_set = Some(g.dat_set.as_str());
                self.go_id = g.go_id.map(|g| g.as_str());
                self.conf_rev = Some(g.conf_rev);
                self.tal_ms = Some(g.time_allowed_to_live);
                self.st_sq = Some((g.st_num, g.sq_num));
                self.t = Some(gander_sec::replay::goose_time(&g.t));
                self.simulation |= g.simulation;
                self.nds_com = g.nds_com;
            }
            Err(e) if report => self.apdu_error = Some(e),
            Err(_) => {}
        }
    }

    fn sv(&mut self, apdu: &'a [u8], report: bool) {
        match SavView::parse(apdu) {
            Ok(p) => {
                if let Some(a) = p.first {
                    self.id = Some(a.sv_id);
                    self.dat_set = a.dat_set;
                    self.conf_rev = Some(a.conf_rev);
                    self.smp_cnt = Some(a.smp_cnt);
                    self.smp_synch = Some(a.smp_synch);
                    self.smp_rate = a.smp_rate;
                }
            }
            Err(e) if report => self.apdu_error = Some(e),
            Err(_) => {}
        }
    }
}
