//! An SCL file's bytes to text, by the XML rules for character encodings (XML 1.0, section 4.3.3
//! and Appendix F): a byte order mark decides first (UTF-8, UTF-16LE, UTF-16BE), then a UTF-16
//! document without one is recognised by its first `<?` (two octets per character), then the
//! `encoding` of the XML declaration, and UTF-8 when nothing names another.
//!
//! Why: IEC 61850-6 files are XML, and XML lets the file name its encoding. Engineering tools
//! that write `encoding="ISO-8859-1"` (descriptions with umlauts or accents in a Latin-1 byte
//! each) or save as UTF-16 from a Windows editor produce files every XML tool reads; reading
//! them as UTF-8 refused the whole file with "stream did not contain valid UTF-8". Labels are
//! resolved by `encoding_rs` (the WHATWG Encoding Standard's label table: `ISO-8859-1` and
//! `latin1` decode as windows-1252, a superset for every printable Latin-1 character). Bytes
//! that are not valid in the encoding used are an error naming the line, never replaced.

use crate::error::{Position, SclError, SclErrorKind};
use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};

/// Decodes `bytes` (a whole SCL file) to text; `path` only names the file in errors.
pub fn decode(path: &str, bytes: &[u8]) -> Result<String, SclError> {
    let (enc, body) = detect(path, bytes)?;
    match enc.decode_without_bom_handling_and_without_replacement(body) {
        Some(text) => Ok(text.into_owned()),
        None => {
            let (line, column) = first_bad(enc, body);
            Err(err(
                path,
                format!(
                    "not valid {} text{}",
                    enc.name(),
                    if enc == UTF_8 && declared(body).is_none() {
                        " (the file names no other encoding in its XML declaration)"
                    } else {
                        ""
                    }
                ),
                Some(Position { line, column }),
            ))
        }
    }
}

fn err(path: &str, reason: String, at: Option<Position>) -> SclError {
    SclError::new(
        SclErrorKind::Io {
            path: path.to_string(),
            reason,
        },
        at,
    )
}

/// The encoding and the bytes after any byte order mark; an error for a declared label that
/// names no encoding.
fn detect<'a>(path: &str, bytes: &'a [u8]) -> Result<(&'static Encoding, &'a [u8]), SclError> {
    if let Some((enc, bom)) = Encoding::for_bom(bytes) {
        return Ok((enc, &bytes[bom..]));
    }
    // No mark: "<?" in UTF-16 (XML 1.0 Appendix F, "without a BOM").
    match bytes {
        [0x3c, 0, 0x3f, 0, ..] => return Ok((UTF_16LE, bytes)),
        [0, 0x3c, 0, 0x3f, ..] => return Ok((UTF_16BE, bytes)),
        _ => {}
    }
    match declared(bytes) {
        None => Ok((UTF_8, bytes)),
        Some(label) => match Encoding::for_label(label.as_bytes()) {
            // A UTF-16 label on a file that is evidently 8-bit (its declaration was read as
            // ASCII) is the writer's mistake; the octets decide.
            Some(e) if e == UTF_16LE || e == UTF_16BE => Ok((UTF_8, bytes)),
            Some(e) => Ok((e, bytes)),
            None => Err(err(
                path,
                format!(
                    "the XML declaration names the encoding {label:?}, which gander does not know"
                ),
                None,
            )),
        },
    }
}

/// The `encoding` pseudo-attribute of an XML declaration at the start of `bytes` (read as
/// ASCII, as every encoding gander accepts without a BOM agrees with it there).
fn declared(bytes: &[u8]) -> Option<String> {
    let head = bytes.strip_prefix(b"<?xml")?;
    let end = head.windows(2).position(|w| w == b"?>")?;
    let decl = std::str::from_utf8(&head[..end]).ok()?;
    let at = decl.find("encoding")?;
    let rest = decl[at + "encoding".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &rest[1..];
    Some(value[..value.find(quote)?].to_string())
}

/// Line and column (1-based, in characters) of the first octet `enc` cannot decode.
fn first_bad(enc: &'static Encoding, body: &[u8]) -> (u32, u32) {
    let mut decoder = enc.new_decoder_without_bom_handling();
    let cap = decoder
        .max_utf8_buffer_length_without_replacement(body.len())
        .unwrap_or(usize::MAX / 2);
    let mut good = String::with_capacity(cap.min(body.len().saturating_mul(3) + 16));
    // Decodes up to the first malformed sequence and stops there.
    let _ = decoder.decode_to_string_without_replacement(body, &mut good, true);
    let line = good.matches('\n').count() + 1;
    let column = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "<?xml version=\"1.0\" encoding=\"ENC\"?>\n<SCL desc=\"Schalter Öffnen\"/>\n";

    fn doc(label: &str) -> String {
        DOC.replace("ENC", label)
    }

    #[test]
    fn utf8_with_and_without_a_mark() {
        let t = doc("UTF-8");
        assert_eq!(decode("f", t.as_bytes()).unwrap(), t);
        let mut b = vec![0xef, 0xbb, 0xbf];
        b.extend_from_slice(t.as_bytes());
        assert_eq!(decode("f", &b).unwrap(), t);
    }

    #[test]
    fn latin1_as_declared() {
        let t = doc("ISO-8859-1");
        let bytes: Vec<u8> = t.chars().map(|c| c as u32 as u8).collect();
        assert!(bytes.contains(&0xd6));
        assert_eq!(decode("f", &bytes).unwrap(), t);
        let t = doc("windows-1252");
        let bytes: Vec<u8> = t.chars().map(|c| c as u32 as u8).collect();
        assert_eq!(decode("f", &bytes).unwrap(), t);
    }

    #[test]
    fn utf16_with_a_mark_and_without() {
        let t = doc("UTF-16");
        for (bom, le) in [
            (Some([0xff, 0xfe]), true),
            (Some([0xfe, 0xff]), false),
            (None, true),
        ] {
            let mut b: Vec<u8> = bom.map(|m| m.to_vec()).unwrap_or_default();
            for u in t.encode_utf16() {
                b.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
            }
            assert_eq!(decode("f", &b).unwrap(), t, "{bom:?} {le}");
        }
    }

    #[test]
    fn latin1_bytes_in_a_utf8_file_name_the_line() {
        // What an editor saving in Latin-1 without changing the declaration leaves.
        let t = doc("UTF-8");
        let bytes: Vec<u8> = t.chars().map(|c| c as u32 as u8).collect();
        let e = decode("a.icd", &bytes).unwrap_err();
        let at = e.at.expect("position");
        assert_eq!((at.line, at.column), (2, 21), "{e}");
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
        // No declaration at all: the message says no other encoding was named.
        let e = decode("a.icd", b"<SCL desc=\"\xd6\"/>").unwrap_err();
        assert!(e.to_string().contains("names no other encoding"), "{e}");
    }

    #[test]
    fn an_unknown_label_is_named() {
        let e = decode("a.icd", doc("x-klingon").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("\"x-klingon\""), "{e}");
    }

    #[test]
    fn declaration_forms() {
        assert_eq!(
            declared(b"<?xml version='1.0' encoding = 'latin1' ?><a/>").as_deref(),
            Some("latin1")
        );
        assert_eq!(declared(b"<?xml version=\"1.0\"?><a/>"), None);
        assert_eq!(declared(b"<a/>"), None);
        assert_eq!(declared(b"<?xml encoding=\"unterminated"), None);
    }
}
