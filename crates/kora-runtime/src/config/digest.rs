//! What a durable run remembers of `kora.toml`: one digest per top-level table, and the words for what changed.
//!
//! A resume re-runs the program from the top and expects the same code to reach the
//! same journal slots. Settings steer that code as much as the source does: a budget
//! limit decides where a loop stops, a sink policy decides whether a call is refused,
//! a model entry decides who answers the calls still to come. So a run records the
//! settings it started under, and a resume compares. Digests are per table so the
//! refusal can say which part moved; they are taken over the parsed values, so a
//! comment or a blank line is not a change.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// SHA-256 (hex) of each top-level table's parsed contents, keyed by the table's name
/// (`[fmt]` excepted).
pub fn table_digests(table: &toml::Table) -> BTreeMap<String, String> {
    table
        .iter()
        // How the sources are laid out, and where spans are exported, steer no effect: a
        // resume need not care.
        .filter(|(name, _)| name.as_str() != "fmt" && name.as_str() != "telemetry")
        .map(|(name, value)| {
            // toml's tables are ordered maps here, so equal contents render equally.
            let rendered = serde_json::to_string(value).unwrap_or_default();
            let digest = Sha256::digest(rendered.as_bytes());
            (name.clone(), format!("{digest:x}"))
        })
        .collect()
}

/// The tables that differ between the settings a run started under and the current ones,
/// as `[models] changed`, `[sinks] added`, `[budget] removed`; empty when nothing moved.
pub fn changes(started: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, digest) in started {
        match now.get(name) {
            Some(d) if d == digest => {}
            Some(_) => out.push(format!("[{name}] changed")),
            None => out.push(format!("[{name}] removed")),
        }
    }
    for name in now.keys().filter(|n| !started.contains_key(*n)) {
        out.push(format!("[{name}] added"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(text: &str) -> BTreeMap<String, String> {
        table_digests(&text.parse::<toml::Table>().expect("valid toml"))
    }

    #[test]
    fn comments_blank_lines_and_key_order_are_not_changes() {
        let a = digests("[models]\na = \"openai:x\"\nb = \"ollama:y\"\n[budget]\nusd = 1.0\n");
        let b = digests(
            "# settings\n[budget]\nusd = 1.0\n\n[models]\nb = \"ollama:y\" # local\na = \"openai:x\"\n",
        );
        assert_eq!(changes(&a, &b), Vec::<String>::new());
    }

    #[test]
    fn each_table_that_moved_is_named_once() {
        let a = digests("[models]\na = \"openai:x\"\n[budget]\nusd = 1.0\n");
        let b = digests("[models]\na = \"openai:z\"\n[sinks]\nx = [\"a\"]\n");
        assert_eq!(
            changes(&a, &b),
            vec!["[budget] removed", "[models] changed", "[sinks] added"]
        );
        assert_eq!(changes(&b, &b), Vec::<String>::new());
    }
}
