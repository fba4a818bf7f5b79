//! The diagnostics worker: re-checks edited documents once typing pauses and publishes what it found.
//!
//! Edits arrive faster than a file can be checked; the worker waits for a
//! short quiet period, then checks only the newest text of each document
//! (and of the open documents that `use` it).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use tower_lsp_server::Client;

use crate::diagnostics::for_entry;
use crate::documents::Documents;

/// How long the editor must be quiet before a check starts. Short enough that
/// diagnostics of a 5,000-line file still follow an edit within a tenth of a second
/// (the check itself takes most of that; edits arriving during a check are coalesced too).
pub const QUIET: Duration = Duration::from_millis(15);

pub fn run(jobs: Receiver<PathBuf>, docs: Documents, client: Client, rt: tokio::runtime::Handle) {
    while let Ok(first) = jobs.recv() {
        let mut pending = BTreeSet::from([first]);
        loop {
            match jobs.recv_timeout(QUIET) {
                Ok(p) => {
                    pending.insert(p);
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let mut todo: BTreeSet<PathBuf> = BTreeSet::new();
        for p in pending {
            todo.extend(docs.dependents(&p));
            todo.insert(p);
        }
        for path in todo {
            let (Some((version, a)), Some(uri)) = (docs.analysis(&path), docs.uri(&path)) else {
                continue;
            };
            let diags = for_entry(&uri, &a);
            let client = client.clone();
            rt.spawn(async move {
                client.publish_diagnostics(uri, diags, Some(version)).await;
            });
        }
    }
}
