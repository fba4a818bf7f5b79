//! The worker module Kora ships inside its binary, written once to a cache folder.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

pub const SOURCE: &str = include_str!("worker.py");

/// Where the worker module is (written now if it is not there yet): under `$XDG_CACHE_HOME`
/// or `~/.cache`, else the temp folder, named by its digest so two Kora versions never share one.
pub fn path() -> Result<PathBuf, String> {
    let digest = Sha256::digest(SOURCE.as_bytes());
    let tag: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("kora").join("python");
    let file = dir.join(format!("kora_worker_{tag}.py"));
    if std::fs::read_to_string(&file).is_ok_and(|t| t == SOURCE) {
        return Ok(file);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tmp = dir.join(format!("kora_worker_{tag}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, SOURCE)
        .and_then(|_| std::fs::rename(&tmp, &file))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}
