//! The content hash of a package's tree: every regular file's relative path and bytes, in
//! path order, through SHA-256. Independent of git, so a vendored copy checks the same way.

use std::path::Path;

use sha2::{Digest, Sha256};

/// `sha256:HEX` of the tree under `root` (a `.git` folder, if any, is not content).
pub fn tree_hash(root: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    walk(root, root, &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for rel in files {
        let bytes = std::fs::read(root.join(&rel))
            .map_err(|e| format!("cannot read {}: {e}", root.join(&rel).display()))?;
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let ty = e.file_type().map_err(|e| e.to_string())?;
        let p = e.path();
        if ty.is_dir() {
            if e.file_name() != ".git" {
                walk(root, &p, out)?;
            }
        } else {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}
