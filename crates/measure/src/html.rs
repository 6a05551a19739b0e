//! Text escaping for the HTML reports (`gander run`, `gander audit`, the fleet sweep): one
//! function so that every report escapes the same five characters (HTML Living Standard,
//! "serializing HTML fragments": `&`, `<`, `>` in text, `"` and `'` in attribute values).

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_both_quotes() {
        assert_eq!(
            esc(r#"<a href="x">Tom & 'Jerry'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("LD0/LLN0$ST"), "LD0/LLN0$ST");
    }
}
