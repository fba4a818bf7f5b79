//! Spare trace files: the traces a prune retires, kept to be written over by later runs
//! instead of deleted.
//!
//! Giving a new file its pages and blocks, and taking them back from a deleted one, is most
//! of what writing a trace costs the kernel: on this project's machine (ext4) a new 630 KB
//! trace (a run of 1,000 model calls) took 0.34 ms to create, write and name and 0.07 ms to
//! delete, and the same bytes written over a retired trace 0.14 ms. So a prune moves the
//! traces past `store::KEEP` into `spare/` (up to `SPARES`), a run's trace file starts as one
//! of them when there is one, and the run cuts it to the length it wrote. Write-ahead logs
//! recycle their segments for the same reason.
//!
//! Claiming is a rename, so two runs starting at once never share a file: the one whose
//! rename fails tries the next spare or makes a new file.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The folder of spare files inside a trace folder: not a `.json` file, so listings of
/// traces never see it.
const SPARE_DIR: &str = "spare";

/// Spare files kept at most; a prune deletes what it retires beyond them.
pub(crate) const SPARES: usize = 48;

fn spare_dir(traces: &Path) -> PathBuf {
    traces.join(SPARE_DIR)
}

/// Moves `old` (a trace being pruned) into the spare folder, or deletes it when the folder
/// is full or cannot be made. `room` counts what the folder can still take.
pub(crate) fn retire(traces: &Path, old: &Path, room: &mut usize) {
    if *room > 0 {
        let spare = spare_dir(traces);
        let moved = old
            .file_name()
            .map(|name| spare.join(name))
            .is_some_and(|to| {
                std::fs::rename(old, &to).is_ok()
                    || (std::fs::create_dir_all(&spare).is_ok()
                        && std::fs::rename(old, &to).is_ok())
            });
        if moved {
            *room -= 1;
            return;
        }
    }
    let _ = std::fs::remove_file(old);
}

/// How many more files the spare folder takes.
pub(crate) fn room(traces: &Path) -> usize {
    let held = std::fs::read_dir(spare_dir(traces)).map_or(0, Iterator::count);
    SPARES.saturating_sub(held)
}

/// A spare file renamed to `tmp` and opened for writing from its start, its old bytes still
/// in it (the writer cuts them off); `None` when there is no spare to take.
pub(crate) fn claim(traces: &Path, tmp: &Path) -> Option<File> {
    let spares = std::fs::read_dir(spare_dir(traces)).ok()?;
    // The listing says a file from a folder's own entry, with no call per file.
    let files = spares
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()));
    for entry in files {
        if std::fs::rename(entry.path(), tmp).is_ok() {
            return OpenOptions::new().write(true).open(tmp).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retired_trace_is_claimed_once_and_the_folder_takes_no_more_than_its_room() {
        let root = std::env::temp_dir().join(format!("kora-recycle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("folder");
        assert_eq!(room(&root), SPARES);
        assert!(claim(&root, &root.join("a.json.tmp")).is_none());
        for i in 0..3 {
            std::fs::write(root.join(format!("{i}.json")), "old").expect("trace");
        }
        let mut left = 1;
        retire(&root, &root.join("0.json"), &mut left);
        retire(&root, &root.join("1.json"), &mut left);
        assert_eq!(left, 0);
        assert!(!root.join("0.json").exists() && !root.join("1.json").exists());
        assert_eq!(room(&root), SPARES - 1, "the second was deleted, not kept");
        let tmp = root.join("new.json.tmp");
        assert!(claim(&root, &tmp).is_some());
        assert_eq!(std::fs::read_to_string(&tmp).expect("claimed"), "old");
        assert!(
            claim(&root, &root.join("b.json.tmp")).is_none(),
            "taken once"
        );
        std::fs::create_dir_all(root.join("spare/not-a-trace")).expect("folder");
        assert!(
            claim(&root, &root.join("c.json.tmp")).is_none(),
            "a folder is no spare"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
