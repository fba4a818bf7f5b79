//! A table of kora.toml that a crate of its own reads strictly (`[python]`, `[pdf]`): its keys,
//! errors that name the file and the key's line, and the settings such tables share.

use std::path::PathBuf;

use super::{line_of, Config, ConfigError};

/// `[name]` as written: its keys, and where to point when one of them is wrong.
pub struct Section<'a> {
    pub name: &'static str,
    pub table: &'a toml::Table,
    text: &'a str,
    path: PathBuf,
}

impl Config {
    /// `[name]`, when the file has that table.
    pub fn section(&self, name: &'static str) -> Option<Section<'_>> {
        let raw = self.raw.as_ref()?;
        let table = raw.1.get(name)?.as_table()?;
        Some(Section {
            name,
            table,
            text: &raw.0,
            path: self
                .path
                .clone()
                .unwrap_or_else(|| PathBuf::from("kora.toml")),
        })
    }
}

impl Section<'_> {
    /// A problem with `key` of this table, placed at the key's line (else the table's).
    pub fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            path: self.path.clone(),
            line: line_of(self.text, key, Some(self.name))
                .or_else(|| line_of(self.text, self.name, None)),
            message: message.into(),
        }
    }

    /// The error for a key the table does not have, listing the ones it does.
    pub fn unknown(&self, key: &str, known: &[&str]) -> ConfigError {
        self.error(
            key,
            format!(
                "unknown key `[{}].{key}` (known: {})",
                self.name,
                known.join(", ")
            ),
        )
    }
}

/// A number of seconds written as an integer or a float; `None` when it is neither or not
/// finite.
pub fn seconds(v: &toml::Value) -> Option<f64> {
    v.as_float()
        .or_else(|| v.as_integer().map(|i| i as f64))
        .filter(|s| s.is_finite())
}

/// A deadline: a positive number of seconds, capped at a day.
pub fn deadline_secs(v: &toml::Value) -> Option<f64> {
    seconds(v).filter(|s| *s > 0.0).map(|s| s.min(86_400.0))
}
