//! The open documents and the newest analysis of each, shared by the request handlers and the diagnostics worker.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tower_lsp_server::ls_types::Uri;

use crate::analysis::{analyze, Analysis};
use crate::trees::Trees;

pub struct Doc {
    pub uri: Uri,
    pub text: String,
    pub version: i32,
}

#[derive(Default)]
struct Inner {
    /// Keyed by canonical path, the key the checker's loader uses.
    docs: HashMap<PathBuf, Doc>,
    analyses: HashMap<PathBuf, (i32, Arc<Analysis>)>,
    /// The analysis each document had before its newest one: completion after a `.` just typed
    /// answers from it (see `analysis_without`), as the newest text may not parse yet.
    previous: HashMap<PathBuf, Arc<Analysis>>,
}

#[derive(Clone, Default)]
pub struct Documents {
    inner: Arc<Mutex<Inner>>,
    /// Each open document's last parse tree, outside `inner` so parsing never holds its lock.
    trees: Trees,
}

/// The path a document is known by: its file, canonical when it exists on disk.
pub fn path_of(uri: &Uri) -> PathBuf {
    match uri.to_file_path() {
        Some(p) => std::fs::canonicalize(&p).unwrap_or_else(|_| p.into_owned()),
        // `untitled:` buffers have no file; the URI text stands in for one.
        None => PathBuf::from(uri.as_str()),
    }
}

impl Documents {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A handler that panicked left the maps consistent (each update is one insert).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn open(&self, uri: Uri, text: String, version: i32) -> PathBuf {
        let path = path_of(&uri);
        self.lock()
            .docs
            .insert(path.clone(), Doc { uri, text, version });
        path
    }

    /// Applies an edit to an open document; `false` when it is not open.
    pub fn edit(&self, uri: &Uri, version: i32, f: impl FnOnce(&mut String)) -> Option<PathBuf> {
        let path = path_of(uri);
        let mut inner = self.lock();
        let doc = inner.docs.get_mut(&path)?;
        f(&mut doc.text);
        doc.version = version;
        Some(path)
    }

    pub fn close(&self, uri: &Uri) {
        let path = path_of(uri);
        let mut inner = self.lock();
        inner.docs.remove(&path);
        inner.analyses.remove(&path);
        inner.previous.remove(&path);
        self.trees.forget(&path);
    }

    pub fn text(&self, path: &Path) -> Option<String> {
        self.lock().docs.get(path).map(|d| d.text.clone())
    }

    pub fn uri(&self, path: &Path) -> Option<Uri> {
        self.lock().docs.get(path).map(|d| d.uri.clone())
    }

    /// Open documents whose newest analysis read `changed` (other than `changed` itself).
    pub fn dependents(&self, changed: &Path) -> Vec<PathBuf> {
        let inner = self.lock();
        inner
            .analyses
            .iter()
            .filter(|(p, (_, a))| p.as_path() != changed && a.depends_on(changed))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The analysis of the document's current text: cached, or computed now.
    pub fn analysis(&self, path: &Path) -> Option<(i32, Arc<Analysis>)> {
        let (version, open) = {
            let inner = self.lock();
            let doc = inner.docs.get(path)?;
            if let Some((v, a)) = inner.analyses.get(path) {
                if *v == doc.version {
                    return Some((*v, a.clone()));
                }
            }
            (doc.version, snapshot(&inner))
        };
        let a = Arc::new(analyze(path, &open, Some(&self.trees)));
        let mut inner = self.lock();
        let current = inner.docs.get(path).map(|d| d.version);
        if current == Some(version) {
            let old = inner
                .analyses
                .insert(path.to_path_buf(), (version, a.clone()));
            if let Some((_, old)) = old {
                inner.previous.insert(path.to_path_buf(), old);
            }
        }
        Some((version, a))
    }

    /// A kept analysis of exactly `text` without `text[from..to]` (a `.` just typed, with any
    /// blanks after it). Every offset before `from` means the same in both texts and the code
    /// after is unchanged, so what that analysis knows about the expression ending at `from`
    /// holds for `text` too; no new check is needed.
    pub fn analysis_without(
        &self,
        path: &Path,
        text: &str,
        from: usize,
        to: usize,
    ) -> Option<Arc<Analysis>> {
        let (Some(head), Some(tail)) = (text.get(..from), text.get(to..)) else {
            return None;
        };
        let inner = self.lock();
        let newest = inner.analyses.get(path).map(|(_, a)| a);
        let found = [newest, inner.previous.get(path)]
            .into_iter()
            .flatten()
            .find(|a| {
                a.entry().is_some_and(|f| {
                    f.text.len() == head.len() + tail.len()
                        && f.text.starts_with(head)
                        && f.text.ends_with(tail)
                })
            })
            .cloned();
        found
    }

    /// An analysis with `path` as its entry: the open document's, else one of the file as it is on
    /// disk (with open buffers for what it uses), not cached.
    pub fn analysis_of_path(&self, path: &Path) -> Option<Arc<Analysis>> {
        if let Some((_, a)) = self.analysis(path) {
            return Some(a);
        }
        let open = snapshot(&self.lock());
        let a = analyze(path, &open, Some(&self.trees));
        a.unreadable.is_none().then(|| Arc::new(a))
    }

    /// An analysis of the document as if its text were `text` (completion's placeholder); not cached.
    pub fn analysis_of_text(&self, path: &Path, text: String) -> Analysis {
        let mut open = snapshot(&self.lock());
        open.insert(path.to_path_buf(), text);
        analyze(path, &open, Some(&self.trees))
    }
}

fn snapshot(inner: &Inner) -> HashMap<PathBuf, String> {
    inner
        .docs
        .iter()
        .map(|(p, d)| (p.clone(), d.text.clone()))
        .collect()
}

impl Documents {
    /// The paths of every open document.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        self.lock().docs.keys().cloned().collect()
    }
}
