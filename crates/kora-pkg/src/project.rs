//! The sources a check reads through when packages may be used: the disk, plus the resolver.

use std::path::{Path, PathBuf};

use kora_check::{Packages, Sources};
use kora_runtime::grants::GrantCheck;

use crate::git::Store;
use crate::resolve::Resolver;

/// Files from disk, packages from the resolver; after a check, what it reached.
pub struct Project {
    pub resolver: Resolver,
}

impl Project {
    /// The project of the program `entry` (its nearest `kora.toml` holds `kora.lock` and
    /// `kora.sums`); git dependencies are fetched into the store under `KORA_HOME`.
    pub fn for_entry(entry: &Path) -> Project {
        let dir = entry
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let project = dir
            .ancestors()
            .find(|d| d.join("kora.toml").is_file())
            .map(Path::to_path_buf);
        let mut store = Store::from_env();
        store.project = project;
        Project {
            resolver: Resolver::new(Some(store)),
        }
    }

    /// A problem in the project's own `kora.toml` `[package]`/`[dependencies]`, if any.
    pub fn manifest_error(&self) -> Option<crate::ManifestError> {
        let dir = self.resolver.git.as_ref()?.project.clone()?;
        self.resolver.manifest_for(&dir)?.err()
    }

    /// The observer confining every package the check reached; `entry` is the program's file.
    pub fn grant_check(&self, entry: &Path) -> Option<GrantCheck> {
        let reached = self.resolver.reached();
        if reached.is_empty() {
            return None;
        }
        let base = entry
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let base_dir = std::fs::canonicalize(&base).unwrap_or(base);
        Some(GrantCheck {
            packages: std::sync::Arc::new(reached.into_iter().map(|r| (r.id, r.grants)).collect()),
            base_dir,
        })
    }

    /// Dependencies the manifest beside `entry` declares that no `use` reached:
    /// `(manifest path, line, name)`.
    pub fn unused(&self, entry: &Path) -> Vec<(PathBuf, Option<usize>, String)> {
        let dir = entry
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let Some(Ok(m)) = self.resolver.manifest_for(&dir) else {
            return Vec::new();
        };
        m.deps
            .values()
            .filter(|d| !self.resolver.was_used(&m.path, &d.name))
            .map(|d| (m.path.clone(), d.line, d.name.clone()))
            .collect()
    }
}

impl Sources for Project {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        kora_check::loader::read_source(path)
    }
    fn packages(&self) -> Option<&dyn Packages> {
        Some(&self.resolver)
    }
    fn parse(&self, path: &Path, text: &str) -> kora_syntax::Parsed {
        crate::prefetch::take_tree(&self.resolver, path, text)
            .unwrap_or_else(|| kora_syntax::parse(text))
    }
}
