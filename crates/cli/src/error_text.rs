//! The text of an error for the terminal: anyhow's chain without the repeats.
//!
//! Many of the workspace's error types already put their source in their own message
//! (`#[error("{path}: {source}")]`, `#[error("client TLS settings: {0}")]` with `#[from]`), and a
//! context added above them often names the same file again. Printed with `{:#}`, which joins
//! every cause of the chain, one TOML mistake in a key server's configuration came out three
//! times. This keeps a cause only when the message above it does not already end with it.

/// The error and each cause not already at the end of the message above it, joined by ": ".
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut above: Option<String> = None;
    for cause in e.chain() {
        let text = cause.to_string();
        match &above {
            Some(a) if a.trim_end().ends_with(text.trim_end()) => {}
            Some(_) => {
                out.push_str(": ");
                out.push_str(&text);
            }
            None => out.push_str(&text),
        }
        above = Some(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("inner failure")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("settings: {0}")]
    struct Outer(#[from] Inner);

    #[test]
    fn a_source_already_in_the_message_is_printed_once() {
        let e = anyhow::Error::from(Outer(Inner)).context("settings: inner failure");
        assert_eq!(error_text(&e), "settings: inner failure");
    }

    #[test]
    fn a_cause_the_message_does_not_carry_is_kept() {
        let e = anyhow::Error::from(Inner).context("--config kdc.toml");
        assert_eq!(error_text(&e), "--config kdc.toml: inner failure");
        let e: anyhow::Error = std::io::Error::other("disk full").into();
        let e = e.context("writing out/report.html");
        assert_eq!(error_text(&e), "writing out/report.html: disk full");
    }

    #[test]
    fn a_cause_only_mentioned_in_the_middle_is_kept() {
        let e = anyhow::Error::from(Inner).context("inner failure of the first file, then");
        assert_eq!(
            error_text(&e),
            "inner failure of the first file, then: inner failure"
        );
    }
}
