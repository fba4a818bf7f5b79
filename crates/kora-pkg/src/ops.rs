//! `kora install`, `kora vendor` and `kora update`: the lockfile's entries fetched, copied
//! into `vendor/`, or moved on. Only `update` changes `kora.lock`, and it refuses a bump
//! whose new version asks for more than the locked one until the user accepts it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::git::{absolute_url, Store};
use crate::lock::{Locked, Lockfile};
use crate::manifest::{GitRef, Manifest, Source};
use crate::profile::Profile;
use crate::tree_hash::tree_hash;

/// The folder of the nearest `kora.toml` at or above `start`.
pub fn project_dir(start: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .find(|d| d.join("kora.toml").is_file())
        .map(Path::to_path_buf)
}

/// Every locked tree, fetched side by side, in the lock's order; the first failure is the
/// answer.
fn fetch_all_locked(store: &Store, entries: &[Locked]) -> Result<Vec<PathBuf>, String> {
    // Two entries on one repository are fetched one after the other: its cache folder takes
    // one writer at a time.
    let mut by_repo: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in entries.iter().enumerate() {
        by_repo.entry(&l.url).or_default().push(i);
    }
    let groups: Vec<Vec<usize>> = by_repo.into_values().collect();
    let done = crate::fan_out::each(&groups, |g| {
        g.iter()
            .map(|&i| (i, store.fetch_locked(&entries[i])))
            .collect::<Vec<_>>()
    });
    let mut out = vec![None; entries.len()];
    for (i, tree) in done.into_iter().flatten().flatten() {
        out[i] = Some(tree);
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("a fetch thread panicked".to_string())))
        .collect()
}

/// `kora install`: every locked commit fetched and checked, then the pinned helper binary of
/// each package that ships one for this platform (the locked ones and the project's path
/// dependencies), so a run after it needs no network; one line per package and per helper.
pub fn install(store: &Store, project: &Path) -> Result<Vec<String>, String> {
    let lock = Lockfile::read(project)?;
    let trees = fetch_all_locked(store, &lock.entries)?;
    let mut lines: Vec<String> = lock
        .entries
        .iter()
        .map(|l| format!("{} {} ({})", l.name, short(&l.commit), l.reference))
        .collect();
    let mut roots: Vec<PathBuf> = trees;
    if let Ok(m) = Manifest::read(&project.join("kora.toml")) {
        roots.extend(m.deps.values().filter_map(|d| match &d.source {
            Source::Path { dir, .. } => Some(dir.clone()),
            Source::Git { .. } => None,
        }));
    }
    let platform = crate::helper_decl::this_platform();
    for root in roots {
        let Ok(m) = Manifest::read(&root.join("kora.toml")) else {
            continue;
        };
        let Some(p) = &m.package else { continue };
        let Some(pin) = p.helper.as_ref().and_then(|h| h.fetch.get(&platform)) else {
            continue;
        };
        crate::helper_decl::fetch(&p.name, pin, &store.home)?;
        lines.push(format!(
            "{} helper {} ({platform})",
            p.name,
            &pin.sha256[..12.min(pin.sha256.len())]
        ));
    }
    Ok(lines)
}

/// `kora vendor`: every locked tree copied to `vendor/NAME` and checked against the lock.
pub fn vendor(store: &Store, project: &Path) -> Result<Vec<String>, String> {
    let lock = Lockfile::read(project)?;
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for l in &lock.entries {
        if let Some(other) = names.insert(&l.name, &l.url) {
            return Err(format!(
                "two locked packages are called `{}` ({other} and {}); `vendor/{}` can hold one",
                l.name, l.url, l.name
            ));
        }
    }
    let vendor = project.join("vendor");
    let mut out = Vec::new();
    let trees = fetch_all_locked(store, &lock.entries)?;
    for (l, src) in lock.entries.iter().zip(trees) {
        let dest = vendor.join(&l.name);
        if dest.exists() {
            std::fs::remove_dir_all(&dest)
                .map_err(|e| format!("cannot replace {}: {e}", dest.display()))?;
        }
        copy_tree(&src, &dest)?;
        let got = tree_hash(&dest)?;
        if got != l.tree {
            return Err(format!(
                "{} has content {got} after copying, but kora.lock says {}",
                dest.display(),
                l.tree
            ));
        }
        out.push(format!(
            "vendor/{} {} ({})",
            l.name,
            short(&l.commit),
            l.reference
        ));
    }
    Ok(out)
}

fn copy_tree(src: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let entries =
        std::fs::read_dir(src).map_err(|e| format!("cannot list {}: {e}", src.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot list {}: {e}", src.display()))?;
        let ty = e.file_type().map_err(|e| e.to_string())?;
        let to = dest.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &to)?;
        } else if ty.is_file() {
            std::fs::copy(e.path(), &to)
                .map_err(|e2| format!("cannot copy {}: {e2}", e.path().display()))?;
        } else if ty.is_symlink() {
            let target = std::fs::read_link(e.path()).map_err(|e| e.to_string())?;
            std::os::unix::fs::symlink(&target, &to).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// What `kora update` did to one package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    UpToDate {
        commit: String,
    },
    /// Locked for the first time: there was nothing to compare with.
    Locked {
        commit: String,
    },
    Moved {
        from: String,
        to: String,
        widened: Vec<String>,
    },
    /// Not written: the new version asks for more (`widened`) and `--accept` was not given.
    Refused {
        from: String,
        to: String,
        widened: Vec<String>,
    },
}

/// `kora update [NAME] [--accept]`: each git dependency of the project (direct, as its
/// `kora.toml` now writes it, or locked for a package) resolved again.
pub fn update(
    store: &Store,
    project: &Path,
    only: Option<&str>,
    accept: bool,
) -> Result<Vec<(String, Outcome)>, String> {
    let manifest = Manifest::read(&project.join("kora.toml")).map_err(|e| e.to_string())?;
    let mut lock = Lockfile::read(project)?;
    let mut wanted: Vec<(String, String, GitRef)> = Vec::new();
    for d in manifest.deps.values() {
        if let Source::Git { url, reference } = &d.source {
            wanted.push((
                d.name.clone(),
                absolute_url(url, &manifest.dir),
                reference.clone(),
            ));
        }
    }
    for l in &lock.entries {
        if !wanted.iter().any(|(_, u, _)| *u == l.url) {
            wanted.push((
                l.name.clone(),
                l.url.clone(),
                GitRef::parse_written(&l.reference),
            ));
        }
    }
    if let Some(n) = only {
        if !wanted.iter().any(|(name, _, _)| name == n) {
            let names: Vec<&str> = wanted.iter().map(|(n, _, _)| n.as_str()).collect();
            return Err(format!(
                "no git dependency `{n}` to update ({})",
                if names.is_empty() {
                    "the project has none".to_string()
                } else {
                    format!("there are: {}", names.join(", "))
                }
            ));
        }
        wanted.retain(|(name, _, _)| name == n);
    }
    let mut out = Vec::new();
    let mut changed = false;
    for (name, url, reference) in wanted {
        let commit = store.resolve_ref(&url, &reference)?;
        let old = lock.find(&url).cloned();
        if let Some(o) = &old {
            if o.commit == commit && o.reference == reference.to_string() {
                out.push((name, Outcome::UpToDate { commit }));
                continue;
            }
        }
        let tree = store.materialize(&url, &commit, None, reference.tag(), &name)?;
        let entry = Locked {
            name: name.clone(),
            url: url.clone(),
            reference: reference.to_string(),
            commit: commit.clone(),
            tree: tree_hash(&tree)?,
        };
        let outcome = match old {
            None => Outcome::Locked { commit },
            Some(o) => {
                let widened = match store.fetch_locked(&o) {
                    Ok(before) => Profile::of(&before).widened_by(&Profile::of(&tree)),
                    Err(why) => vec![format!(
                        "the locked version cannot be read to compare with ({why})"
                    )],
                };
                if !widened.is_empty() && !accept {
                    out.push((
                        name,
                        Outcome::Refused {
                            from: o.commit,
                            to: commit,
                            widened,
                        },
                    ));
                    continue;
                }
                Outcome::Moved {
                    from: o.commit,
                    to: commit,
                    widened,
                }
            }
        };
        lock.put(entry);
        changed = true;
        out.push((name, outcome));
    }
    if changed {
        lock.write(project)?;
    }
    Ok(out)
}

pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
