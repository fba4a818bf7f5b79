//! The parse tree kept for each open document, so the next version re-parses only the top-level statements an edit touched.
//!
//! The checker asks its `Sources` for every file's tree (`Sources::parse`);
//! the server answers from here. `kora_syntax::reparse` either gives exactly
//! the whole parse of the new text or declines, so what is kept can only
//! make a check faster, never different.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use kora_syntax::Parsed;

/// One kept tree and the text it is the parse of.
struct Kept {
    text: Arc<str>,
    parsed: Parsed,
}

#[derive(Clone, Default)]
pub struct Trees {
    inner: Arc<Mutex<HashMap<PathBuf, Kept>>>,
}

impl Trees {
    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Kept>> {
        // Each update is one insert, so a panicked holder left the map consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The parse of `text`, the current text of `path`: reused, re-parsed in part, or whole.
    pub fn parse(&self, path: &Path, text: &str) -> Parsed {
        let kept = self.lock().remove(path);
        let parsed = match &kept {
            Some(k) if &*k.text == text => k.parsed.clone(),
            Some(k) => kora_syntax::reparse::reparse(&k.parsed, &k.text, text)
                .unwrap_or_else(|| kora_syntax::parse(text)),
            None => kora_syntax::parse(text),
        };
        self.lock().insert(
            path.to_path_buf(),
            Kept {
                text: Arc::from(text),
                parsed: parsed.clone(),
            },
        );
        parsed
    }

    /// Forgets a closed document's tree.
    pub fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }
}
