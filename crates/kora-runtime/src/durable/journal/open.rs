//! Opening an existing run's journal: its folder, its lock taken, its records loaded.
//!
//! A resume and `kora answer` both start here, so a missing run, a run held by another
//! process and an unreadable journal are reported the same way by both.

use std::path::{Path, PathBuf};

use super::lock::RunLock;
use super::run::{RunError, DAMAGED, OTHER_FORMAT};
use super::store::{load, LoadError, Loaded};

/// An existing run, locked for this process.
pub(crate) struct Opened {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub lock: RunLock,
    pub loaded: Loaded,
}

/// Opens run `id` of the project: not found, locked by another process, or unreadable are errors.
pub(crate) fn open_journal(project_dir: &Path, id: &str) -> Result<Opened, RunError> {
    let path = super::journal_path(project_dir, id);
    let dir = match path.parent() {
        Some(d) if path.is_file() => d.to_path_buf(),
        _ => {
            return Err(RunError::NotFound(format!(
                "no run {id} under {} (`kora runs` lists the runs here)",
                super::runs_root(project_dir).display()
            )))
        }
    };
    let lock = RunLock::take(&dir, id).map_err(RunError::Locked)?;
    let loaded = load(&path).map_err(|e| match e {
        LoadError::Io(e) => RunError::Io(format!("cannot read {}: {e}", path.display())),
        e @ LoadError::Format { .. } => RunError::Load {
            code: OTHER_FORMAT,
            text: format!("run {id}: {e}"),
        },
        e => RunError::Load {
            code: DAMAGED,
            text: format!("run {id}: {e}"),
        },
    })?;
    Ok(Opened {
        path,
        dir,
        lock,
        loaded,
    })
}
