//! One process per run: an advisory lock on `RUN_DIR/lock`, held for as long as the run goes.

use std::fs::{File, OpenOptions};
use std::path::Path;

use fs2::FileExt;

/// Holds the run's lock; dropping it (or the process dying) releases it.
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock or says at once that another process holds it.
    pub fn take(run_dir: &Path, run_id: &str) -> Result<RunLock, String> {
        let path = run_dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match file.try_lock_exclusive() {
            Ok(()) => Ok(RunLock { _file: file }),
            Err(_) => Err(format!(
                "run {run_id} is already running in another process; wait for it to end (or stop it) before resuming"
            )),
        }
    }
}
