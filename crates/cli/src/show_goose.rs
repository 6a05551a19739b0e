//! `frame show` of a GOOSE APDU: every field, and, when a value inside allData is malformed,
//! the header and every other value still, with the bad one marked, as tshark shows it.
//!
//! kit-dsn/zeek-goose-analyzer's test traces (`integer.pcap`: a zero-length INTEGER, X.690
//! 8.3.1; `bit-string.pcap`: eight unused bits, X.690 8.6.2.2; `all_arrays.pcap`: an array sent
//! as the primitive [1] 0x81 instead of the constructed 0xA1) showed only the error, without the
//! gocbRef, stNum and sqNum of the publisher that sent the bad value.

use gander_wire::ber::Reader;
use gander_wire::data::Data;
use gander_wire::goose::{GoosePdu, GooseView};
use serde_json::{json, Value};

/// The JSON of a GOOSE APDU (`61 L ...`). A malformed APDU keeps its `error`; with it come the
/// header fields when they parse, and allData value by value.
pub(crate) fn goose_json(apdu: &[u8]) -> Value {
    match GoosePdu::parse(apdu) {
        Ok(g) => json!({
            "gocbRef": g.gocb_ref,
            "timeAllowedtoLive": g.time_allowed_to_live,
            "datSet": g.dat_set,
            "goID": g.go_id,
            "t": hex::encode(g.t),
            "stNum": g.st_num,
            "sqNum": g.sq_num,
            "simulation": g.simulation,
            "confRev": g.conf_rev,
            "ndsCom": g.nds_com,
            "numDatSetEntries": g.num_dat_set_entries,
            "allData": g.all_data.iter().map(|d| format!("{d:?}")).collect::<Vec<_>>(),
        }),
        Err(e) => {
            let mut o = json!({ "error": e.to_string(), "bytes": apdu.len() });
            // The header checked without allData's values (its own framing included).
            if let Ok(v) = GooseView::parse_fields(apdu) {
                o["gocbRef"] = json!(v.gocb_ref.as_str());
                o["timeAllowedtoLive"] = json!(v.time_allowed_to_live);
                o["datSet"] = json!(v.dat_set.as_str());
                o["goID"] = json!(v.go_id.map(|s| s.as_str()));
                o["t"] = json!(hex::encode(v.t));
                o["stNum"] = json!(v.st_num);
                o["sqNum"] = json!(v.sq_num);
                o["simulation"] = json!(v.simulation);
                o["confRev"] = json!(v.conf_rev);
                o["ndsCom"] = json!(v.nds_com);
                o["numDatSetEntries"] = json!(v.num_dat_set_entries);
                o["allData"] = json!(values(v.all_data));
            }
            o
        }
    }
}

/// allData's values one by one: a value whose own encoding is wrong (its tag and length
/// intact) is shown as `Malformed { error, octets }` and the next value read; where the
/// framing itself breaks, the rest is one `Malformed` entry.
fn values(all_data: &[u8]) -> Vec<String> {
    let mut r = Reader::new(all_data);
    let mut out = Vec::new();
    while !r.is_empty() {
        let start = r.position();
        match r.read_tlv("Data") {
            Ok(t) => {
                let octets = &all_data[start..t.offset + t.header_len + t.value.len()];
                out.push(match Data::parse(octets) {
                    Ok(d) => format!("{d:?}"),
                    Err(e) => malformed(&e.to_string(), octets),
                });
            }
            Err(e) => {
                out.push(malformed(&e.to_string(), &all_data[start..]));
                break;
            }
        }
    }
    out
}

fn malformed(error: &str, octets: &[u8]) -> String {
    format!(
        "Malformed {{ error: {error:?}, octets: {:?} }}",
        hex::encode(octets)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_testkit::frames::goose_apdu;

    /// The testkit's APDU with its first allData value (INTEGER 1000, `85 02 03 e8`) replaced
    /// by `value`, lengths fixed.
    fn with_first_value(value: &[u8]) -> Vec<u8> {
        let good = goose_apdu(157_971, 56, 3);
        let at = good
            .windows(4)
            .position(|w| w == [0x85, 0x02, 0x03, 0xe8])
            .expect("the first value");
        let mut a = good[..at].to_vec();
        a.extend_from_slice(value);
        a.extend_from_slice(&good[at + 4..]);
        let delta = value.len() as isize - 4;
        // allData's and the PDU's short-form lengths (the testkit's APDU is under 128 octets).
        let all_data = at - 2;
        assert_eq!(a[all_data], 0xab);
        a[all_data + 1] = (a[all_data + 1] as isize + delta) as u8;
        a[1] = (a[1] as isize + delta) as u8;
        a
    }

    #[test]
    fn a_bad_value_keeps_the_header_and_the_other_values() {
        // A zero-length INTEGER, as kit-dsn's integer.pcap sends.
        let o = goose_json(&with_first_value(&[0x85, 0x00]));
        assert!(o["error"].as_str().unwrap().contains("integer"), "{o}");
        assert_eq!(o["gocbRef"], "GANDERIED/LLN0$GO$gcb01");
        assert_eq!(
            (o["stNum"].as_u64(), o["sqNum"].as_u64()),
            (Some(157_971), Some(56))
        );
        let all: Vec<&str> = o["allData"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(
            all[0].starts_with("Malformed") && all[0].contains("\"8500\""),
            "{all:?}"
        );
        assert_eq!(&all[1..], ["Integer(1001)", "Integer(1002)"]);
    }

    #[test]
    fn a_value_whose_framing_breaks_ends_the_list() {
        // An array announcing 6 octets of which 3 are there: the rest cannot be framed.
        let o = goose_json(&with_first_value(&[0xa1, 0x06, 0x85, 0x01, 0x01]));
        let all = o["allData"].as_array().unwrap();
        assert!(all[0].as_str().unwrap().starts_with("Malformed"), "{o}");
        assert_eq!(o["sqNum"].as_u64(), Some(56));
    }

    #[test]
    fn a_whole_apdu_is_shown_as_before() {
        let o = goose_json(&goose_apdu(1, 2, 2));
        assert!(o.get("error").is_none());
        assert_eq!(o["allData"], json!(["Integer(1000)", "Integer(1001)"]));
    }
}
