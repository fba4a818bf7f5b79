//! Where labels come from and what left with a release: process-wide tables that a label's
//! number points into, shared by every thread (a `Portable` value carries the numbers).
//!
//! An origin is an interned description ("`classified(...)` at main.ko:3:7"); the texts of
//! released secrets sent to a model are kept so files recording the exchange can scrub them.

use std::sync::Mutex;

use crate::label::placeholder;

/// Process-wide tables: origins are interned descriptions.
struct Tables {
    /// Few: one per `classified(...)` site and per input source that labels.
    origins: Vec<String>,
}

static TABLES: Mutex<Tables> = Mutex::new(Tables {
    origins: Vec::new(),
});

fn tables() -> std::sync::MutexGuard<'static, Tables> {
    // A panic while holding the lock leaves the tables consistent (each write is one push).
    TABLES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The id of an origin description such as "`classified(...)` at main.ko:3:7".
pub fn origin(description: &str) -> u32 {
    let mut t = tables();
    if let Some(i) = t.origins.iter().position(|o| o == description) {
        return i as u32 + 1;
    }
    t.origins.push(description.to_string());
    t.origins.len() as u32
}

/// The description of an origin id, for messages.
pub fn origin_text(id: u32) -> String {
    let t = tables();
    match id.checked_sub(1).and_then(|i| t.origins.get(i as usize)) {
        Some(s) => s.clone(),
        None => "a classified value".to_string(),
    }
}

/// Texts of classified values a release let reach a model: scrubbed from files that record
/// the exchange (cassettes).
static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers the text of a released secret that was sent to a model.
pub fn note_sent(text: String) {
    let mut s = SENT.lock().unwrap_or_else(|e| e.into_inner());
    if !text.is_empty() && !s.contains(&text) {
        // Longest first, so a secret that contains another is replaced whole.
        s.push(text);
        s.sort_by_key(|t| std::cmp::Reverse(t.len()));
    }
}

/// `text` with every released secret it quotes replaced by the placeholder. JSON text quotes
/// strings with escapes, so the escaped form is replaced too.
pub fn scrub(text: &str) -> String {
    let s = SENT.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    for secret in s.iter() {
        out = out.replace(secret.as_str(), placeholder());
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let inner = escaped.trim_matches('"');
        if inner != secret {
            out = out.replace(inner, placeholder());
        }
    }
    out
}
