//! The borrowed layer-2 views that the fast protect/verify path reads must agree with the owned
//! parsers they replaced, value for value and error for error, on any input: VisibleStr,
//! GooseView (its canonical fast path and the general parser behind it), SavView, ExtensionView,
//! `data::check_seq`, and `l2_frame::locate`; and `emit_secured` must write a frame that
//! `L2Frame::parse` reads back with the extension where it says, and `StrippedL2Repr` must
//! give the unsecured frame back from it.
#![no_main]
use gander_wire::data::{self, Data};
use gander_wire::goose::{GoosePdu, GooseView};
use gander_wire::l2_emit::StrippedL2Repr;
use gander_wire::l2_extension::{CrcByteOrder, ExtensionFields, ExtensionView, SecurityExtension};
use gander_wire::l2_frame::{self, L2Frame};
use gander_wire::sv::{SavPdu, SavView};
use gander_wire::visible_str::VisibleStr;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert_eq!(
        VisibleStr::new(data).map(|v| v.as_str()),
        gander_wire::ber::visible_str(data, "VisibleString").ok()
    );
    let view = GooseView::parse(data);
    assert_eq!(GoosePdu::parse(data), view.clone().and_then(|v| v.to_pdu()));
    match (&view, GooseView::parse_fields(data)) {
        (Ok(v), fields) => assert_eq!(fields.as_ref(), Ok(v)),
        (Err(_), Ok(f)) => assert!(f.check_all_data().is_err()),
        (Err(_), Err(_)) => {}
    }
    match (SavView::parse(data), SavPdu::parse(data)) {
        (Ok(v), Ok(p)) => {
            assert_eq!(v.no_asdu, p.asdus.len());
            assert_eq!(v.first.map(|a| a.to_asdu()).as_ref(), p.asdus.first());
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("SavView {a:?} SavPdu {b:?}"),
    }
    match (ExtensionView::parse(data), SecurityExtension::parse_with_layout(data)) {
        (Ok(v), Ok((e, l))) => {
            assert_eq!(v.to_extension(), e);
            assert_eq!(v.layout, l);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("ExtensionView {a:?} owned {b:?}"),
    }
    assert_eq!(data::check_seq(data), Data::parse_seq(data).map(|_| ()));
    match (l2_frame::locate(data), L2Frame::parse(data)) {
        (Ok((et, layout)), Ok((frame, l))) => {
            assert_eq!(layout, l);
            assert_eq!(et, frame.eth.ethertype);
            if layout.extension.is_none() {
                let fields = ExtensionFields {
                    key_id: 7,
                    time_of_current_key: 1,
                    time_to_next_key: -1,
                    iv: Some(&[9; 12]),
                    mac_len: 16,
                };
                let mut out = Vec::new();
                if let Ok(at) =
                    l2_frame::emit_secured(data, et, &layout, &fields, CrcByteOrder::LowFirst, &mut out)
                {
                    let (f2, l2) = L2Frame::parse(&out).expect("secured frame parses");
                    assert_eq!(f2.body.apdu, frame.body.apdu);
                    assert!(f2.crc_order().is_some(), "Reserved2 carries the header CRC");
                    let ext = l2.extension.expect("extension");
                    assert_eq!(at.mac.end, ext.end);
                    assert!(at.covered.end <= at.mac.start);
                    // Stripping the secured frame gives the unsecured one back (Reserved1 with
                    // only the simulation bit, Reserved2 zero, padding dropped).
                    let stripped = StrippedL2Repr::new(&out, l2.header_offset, l2.apdu.clone())
                        .and_then(|s| s.to_vec())
                        .expect("strip of a located frame");
                    let (f3, l3) = L2Frame::parse(&stripped).expect("stripped frame parses");
                    assert_eq!(f3.eth, frame.eth);
                    assert_eq!(f3.body.apdu, frame.body.apdu);
                    assert_eq!(f3.body.reserved1, frame.body.reserved1 & 0x8000);
                    assert_eq!((f3.body.reserved2, l3.extension), (0, None));
                }
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("locate {a:?} parse {b:?}"),
    }
});
