//! `gander_scl::load` on the repository's feeder protection CID written in each encoding an
//! XML declaration or byte order mark can name: the same model every time. Before, a
//! Latin-1 or UTF-16 file was refused whole as "not valid UTF-8" (docs/scl.md, "Character
//! encodings").

const CID: &str = include_str!("../data/feeder_protection.cid");

fn with_declaration(label: &str) -> String {
    let body = CID.split_once("?>").expect("an XML declaration").1;
    // Text outside ASCII, as German and French tools write descriptions.
    format!("<?xml version=\"1.0\" encoding=\"{label}\"?>\n<!-- Schaltgerät Öffnen -->{body}")
}

fn load(name: &str, bytes: &[u8]) -> Result<gander_scl::Scl, gander_scl::SclError> {
    let dir = std::env::temp_dir().join(format!("gander-scl-enc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let r = gander_scl::load(&path);
    let _ = std::fs::remove_file(&path);
    r
}

fn shape(s: &gander_scl::Scl) -> Vec<(String, usize, usize)> {
    s.ieds
        .iter()
        .flat_map(|i| {
            i.logical_devices.iter().map(move |ld| {
                (
                    format!("{}{}", i.name, ld.inst),
                    ld.logical_nodes.len(),
                    ld.logical_nodes.iter().map(|ln| ln.data_sets.len()).sum(),
                )
            })
        })
        .collect()
}

#[test]
fn every_declared_encoding_reads_the_same_model() {
    let reference = shape(&gander_scl::parse(CID).unwrap());
    assert!(!reference.is_empty());
    let utf8 = with_declaration("UTF-8");
    let latin1: Vec<u8> = with_declaration("ISO-8859-1")
        .chars()
        .map(|c| u8::try_from(u32::from(c)).expect("Latin-1"))
        .collect();
    let utf16 = |le: bool, bom: bool| {
        let mut b: Vec<u8> = Vec::new();
        if bom {
            b.extend(if le { [0xff, 0xfe] } else { [0xfe, 0xff] });
        }
        for u in with_declaration("UTF-16").encode_utf16() {
            b.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        b
    };
    let mut bom8 = vec![0xef, 0xbb, 0xbf];
    bom8.extend_from_slice(utf8.as_bytes());
    for (name, bytes) in [
        ("utf8.cid", utf8.as_bytes().to_vec()),
        ("bom8.cid", bom8),
        ("latin1.cid", latin1),
        ("utf16le.cid", utf16(true, true)),
        ("utf16be.cid", utf16(false, true)),
        ("utf16-nobom.cid", utf16(true, false)),
    ] {
        let s = load(name, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(shape(&s), reference, "{name}");
    }
}

#[test]
fn latin1_under_a_utf8_declaration_is_refused_with_its_line() {
    let text = with_declaration("UTF-8");
    let line = text.lines().position(|l| l.contains("Schaltger")).unwrap() + 1;
    let bytes: Vec<u8> = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).expect("Latin-1"))
        .collect();
    let e = load("mislabelled.cid", &bytes).unwrap_err();
    assert_eq!(e.at.map(|p| p.line), Some(line as u32), "{e}");
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
}
