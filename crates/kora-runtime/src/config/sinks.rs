//! `[sinks]` and `[output]` of `kora.toml`: where a `declassify` may release to, and what a
//! rendering shows in place of a classified value.
//!
//! A sink is a name a `declassify x for NAME:` block can give. Every `[models]` entry is a
//! sink under its own key (`default` too); `[sinks]` adds names that stand for several
//! entries (`local = ["llama", "qwen"]`); `local_model`, unless `[sinks]` redefines it, is
//! every entry spoken to in Ollama's wire format, which is how a local model is served.

use kora_models::{Api, ModelEntry};

use crate::config::Config;

/// The parsed `[sinks]` and `[output]` tables.
#[derive(Debug, Clone, Default)]
pub struct SinkPolicy {
    /// `name = ["entry", ...]`, in written order.
    pub named: Vec<(String, Vec<String>)>,
    /// `[output] classified = "..."`: the placeholder (default `__CLASSIFIED__`).
    pub placeholder: Option<String>,
}

/// Reads `[sinks]` and `[output]`; an error is (the key, the message).
pub fn parse(table: &toml::Table) -> Result<SinkPolicy, (String, String)> {
    let mut policy = SinkPolicy::default();
    if let Some(sinks) = table.get("sinks").and_then(|t| t.as_table()) {
        for (name, v) in sinks {
            let entries = v
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .map(|x| x.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| {
                    (
                        name.clone(),
                        format!("`[sinks].{name}` must list `[models]` entries by name, e.g. `{name} = [\"local\"]`"),
                    )
                })?;
            policy.named.push((name.clone(), entries));
        }
    }
    if let Some(output) = table.get("output").and_then(|t| t.as_table()) {
        for (k, v) in output {
            match (k.as_str(), v.as_str()) {
                ("classified", Some(text)) if !text.is_empty() => {
                    policy.placeholder = Some(text.to_string())
                }
                ("classified", _) => {
                    return Err((
                        k.clone(),
                        "`[output].classified` must be a non-empty string, the text shown in place of a classified value".into(),
                    ))
                }
                _ => {
                    return Err((
                        k.clone(),
                        format!("unknown key `[output].{k}` (known: classified)"),
                    ))
                }
            }
        }
    }
    Ok(policy)
}

impl Config {
    /// Whether `sink` names something a release can go to.
    pub fn knows_sink(&self, sink: &str) -> bool {
        sink == "default"
            || sink == "local_model"
            || sink == "http"
            || sink == "python"
            || sink == "pdf"
            || sink == "helper"
            || self.external_sinks.iter().any(|s| s == sink)
            || self.models.iter().any(|m| m.key == sink)
            || self.sinks.named.iter().any(|(n, _)| n == sink)
    }

    /// Every sink name this configuration knows, for messages.
    pub fn sink_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.models.iter().map(|m| m.key.clone()).collect();
        names.push("default".into());
        names.push("http".into());
        names.extend(self.sinks.named.iter().map(|(n, _)| n.clone()));
        names.extend(self.external_sinks.iter().cloned());
        names.push("python".into());
        names.push("pdf".into());
        names.push("helper".into());
        if !names.iter().any(|n| n == "local_model") {
            names.push("local_model".into());
        }
        names
    }

    /// Whether a release to `sink` covers a model call that named `called` (or none) and
    /// resolved to `entry`.
    pub fn sink_covers(&self, sink: &str, called: Option<&str>, entry: &ModelEntry) -> bool {
        let keys = self.call_keys(called);
        if keys.iter().any(|k| k == sink) {
            return true;
        }
        if let Some((_, entries)) = self.sinks.named.iter().find(|(n, _)| n == sink) {
            return entries.iter().any(|e| keys.contains(e));
        }
        sink == "local_model" && entry.api == Api::Ollama
    }

    /// The `[models]` keys a call is made under: the one it names, or `default` and the
    /// entry `default` names.
    fn call_keys(&self, called: Option<&str>) -> Vec<String> {
        match called {
            Some(k) => vec![k.to_string()],
            None => {
                let mut keys = vec!["default".to_string()];
                keys.extend(self.default_alias.clone());
                if self.default_model.is_none() && self.models.len() == 1 {
                    keys.push(self.models[0].key.clone());
                }
                keys
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(Path::new("kora.toml"), text).expect("parses")
    }

    #[test]
    fn an_entry_key_a_named_sink_and_local_model_each_cover_their_calls() {
        let c = config(
            "[models]\ndefault = \"cloud\"\ncloud = { name = \"m\", endpoint = \"http://127.0.0.1:9/v1\" }\nllama = { name = \"l\", endpoint = \"http://127.0.0.1:9\", api = \"ollama\" }\n[sinks]\nlocal = [\"llama\"]\n",
        );
        let cloud = c.resolve(Some("cloud")).expect("entry");
        let llama = c.resolve(Some("llama")).expect("entry");
        assert!(c.sink_covers("cloud", Some("cloud"), &cloud));
        assert!(c.sink_covers("cloud", None, &cloud), "default names cloud");
        assert!(!c.sink_covers("llama", Some("cloud"), &cloud));
        assert!(c.sink_covers("local", Some("llama"), &llama));
        assert!(!c.sink_covers("local", Some("cloud"), &cloud));
        assert!(c.sink_covers("local_model", Some("llama"), &llama));
        assert!(!c.sink_covers("local_model", Some("cloud"), &cloud));
        assert!(c.knows_sink("local") && !c.knows_sink("locl"));
    }

    #[test]
    fn bad_tables_are_errors_naming_the_key() {
        let e = Config::parse(Path::new("kora.toml"), "[sinks]\nlocal = \"llama\"\n")
            .expect_err("not a list");
        assert!(e.message.contains("[sinks].local"), "{}", e.message);
        let e = Config::parse(Path::new("kora.toml"), "[output]\nredacted = \"x\"\n")
            .expect_err("unknown key");
        assert!(e.message.contains("[output].redacted"), "{}", e.message);
        let c = config("[output]\nclassified = \"<hidden>\"\n");
        assert_eq!(c.sinks.placeholder.as_deref(), Some("<hidden>"));
    }
}
