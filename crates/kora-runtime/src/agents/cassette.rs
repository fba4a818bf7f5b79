//! Cassettes: recorded model answers, as human-readable JSON beside the program, keyed by SHA-256.
//!
//! A cassette is a fixture, not a cache: the key is a digest over
//! length-prefixed material (call site, model, prompt, resolved data, image
//! fingerprints), so no split of the same bytes across two fields makes one
//! key. `Failed` outcomes are never written: an afternoon's outage must not
//! fail every later run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub const FORMAT_VERSION: u32 = 1;

/// How a run uses its cassette.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Answer from the cassette where it has the call; call the model otherwise.
    Auto,
    /// Call the model for every call and write the answers.
    Record,
    /// Answer only from the cassette; a call it lacks is an error.
    Replay,
}

/// What identifies one model call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KeyMaterial {
    pub site: String,
    pub model: String,
    pub prompt: String,
    pub data: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// A tool loop's turn: the tool definitions offered.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub tools: serde_json::Value,
    /// A tool loop's turn: the exchanges sent with it, after the context fence.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub history: serde_json::Value,
}

impl KeyMaterial {
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        for field in [&self.site, &self.model, &self.prompt, &self.data] {
            h.update((field.len() as u64).to_le_bytes());
            h.update(field.as_bytes());
        }
        h.update((self.images.len() as u64).to_le_bytes());
        for img in &self.images {
            h.update((img.len() as u64).to_le_bytes());
            h.update(img.as_bytes());
        }
        // Only a tool loop's turns add these, so every plain call keeps the key it had.
        // Their JSON text is canonical: serde_json's maps keep keys sorted.
        if !self.tools.is_null() || !self.history.is_null() {
            h.update(b"tools");
            for field in [self.tools.to_string(), self.history.to_string()] {
                h.update((field.len() as u64).to_le_bytes());
                h.update(field.as_bytes());
            }
        }
        format!("{:x}", h.finalize())
    }
}

fn scrub_json(j: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match j {
        J::String(s) => J::String(crate::labels::label::scrub(&s)),
        J::Array(xs) => J::Array(xs.into_iter().map(scrub_json).collect()),
        J::Object(m) => J::Object(m.into_iter().map(|(k, v)| (k, scrub_json(v))).collect()),
        other => other,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    #[serde(flatten)]
    pub material: KeyMaterial,
    /// `{"ok": value}` or `{"uncertain": reason}`.
    pub outcome: serde_json::Value,
    #[serde(default)]
    pub usage: Usage,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    entries: Vec<Entry>,
}

pub struct Cassette {
    pub path: PathBuf,
    entries: Vec<Entry>,
    dirty: bool,
}

impl Cassette {
    /// The cassette of a program: `NAME.cassette.json` beside `NAME.ko`.
    pub fn path_for(program: &Path) -> PathBuf {
        let stem = program
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into());
        program.with_file_name(format!("{stem}.cassette.json"))
    }

    /// Opens a cassette; a missing file is an empty cassette.
    pub fn open(path: &Path) -> Result<Cassette, String> {
        let entries = match std::fs::read_to_string(path) {
            Ok(text) => {
                let f: File = serde_json::from_str(&text)
                    .map_err(|e| format!("{}: not a Kora cassette: {e}", path.display()))?;
                if f.version != FORMAT_VERSION {
                    return Err(format!(
                        "{}: cassette format {} is not the {} this build reads; re-record it with `kora run --record`",
                        path.display(),
                        f.version,
                        FORMAT_VERSION
                    ));
                }
                f.entries
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        Ok(Cassette {
            path: path.to_path_buf(),
            entries,
            dirty: false,
        })
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Why a lookup missed: which parts of the key material differ from the
    /// nearest recorded call at the same site.
    pub fn explain_miss(&self, m: &KeyMaterial) -> String {
        let same_site: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.material.site == m.site)
            .collect();
        if same_site.is_empty() {
            return if self.entries.is_empty() {
                format!("{} has no entries", self.path.display())
            } else {
                format!("{} has no call recorded at {}", self.path.display(), m.site)
            };
        }
        let mut best: Option<Vec<&str>> = None;
        for e in same_site {
            let mut diff = Vec::new();
            if e.material.model != m.model {
                diff.push("model");
            }
            if e.material.prompt != m.prompt {
                diff.push("prompt");
            }
            if e.material.data != m.data {
                diff.push("data");
            }
            if e.material.images != m.images {
                diff.push("images");
            }
            if e.material.tools != m.tools {
                diff.push("tool definitions");
            }
            if e.material.history != m.history {
                diff.push("tool results so far");
            }
            if best.as_ref().is_none_or(|b| diff.len() < b.len()) {
                best = Some(diff);
            }
        }
        let diff = best.unwrap_or_default();
        if diff.is_empty() {
            // Same request, another key: the file was edited by hand (a renamed site, say).
            return format!(
                "the call recorded at {} has this request but a key that does not match it (was the cassette edited by hand?)",
                m.site
            );
        }
        format!(
            "a call was recorded at {} but its {} differ{}",
            m.site,
            diff.join(" and "),
            if diff.len() == 1 { "s" } else { "" }
        )
    }

    pub fn put(&mut self, mut entry: Entry) {
        // A cassette is a file committed beside the program: a secret released to the model
        // is written as the placeholder. The key was computed from the real material.
        let m = &mut entry.material;
        m.data = crate::labels::label::scrub(&m.data);
        m.prompt = crate::labels::label::scrub(&m.prompt);
        m.history = scrub_json(std::mem::take(&mut m.history));
        self.entries.retain(|e| e.key != entry.key);
        self.entries.push(entry);
        self.dirty = true;
    }

    /// Writes the cassette if anything was recorded.
    pub fn save(&mut self) -> Result<(), String> {
        if !self.dirty {
            return Ok(());
        }
        let f = File {
            version: FORMAT_VERSION,
            entries: self.entries.clone(),
        };
        let mut text = serde_json::to_string_pretty(&f).map_err(|e| e.to_string())?;
        text.push('\n');
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &self.path))
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(prompt: &str, data: &str) -> KeyMaterial {
        KeyMaterial {
            site: "a.ko:<module>#0".into(),
            model: "m".into(),
            prompt: prompt.into(),
            data: data.into(),
            images: vec![],
            tools: serde_json::Value::Null,
            history: serde_json::Value::Null,
        }
    }

    #[test]
    fn length_prefixes_keep_fields_apart() {
        assert_ne!(m("ab", "c").key(), m("a", "bc").key());
        assert_eq!(m("ab", "c").key(), m("ab", "c").key());
        assert_eq!(m("x", "y").key().len(), 64);
    }

    #[test]
    fn tool_material_keys_tool_turns_only() {
        let plain = m("p", "d");
        let mut first = m("p", "d");
        first.history = serde_json::json!([]);
        let mut second = first.clone();
        second.history = serde_json::json!([{"name": "t", "result": 1}]);
        assert_ne!(plain.key(), first.key());
        assert_ne!(first.key(), second.key());
        // A plain call's JSON has no tool fields, so cassettes written before tool loops read back.
        let j = serde_json::to_value(&plain).expect("json");
        assert!(j.get("tools").is_none() && j.get("history").is_none());
    }

    #[test]
    fn miss_names_what_differs() {
        let dir = std::env::temp_dir().join(format!("kora-cassette-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let mut c = Cassette::open(&dir.join("t.cassette.json")).expect("empty");
        let rec = m("summarize", "{}");
        c.put(Entry {
            key: rec.key(),
            material: rec,
            outcome: serde_json::json!({"ok": "x"}),
            usage: Usage::default(),
        });
        let why = c.explain_miss(&m("summarise", "{}"));
        assert!(why.contains("prompt") && !why.contains("data"), "{why}");
        c.save().expect("saved");
        let again = Cassette::open(&c.path).expect("reads back");
        assert!(again.get(&m("summarize", "{}").key()).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
