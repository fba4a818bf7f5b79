//! Git dependencies, fetched with the system `git` into the cache under `KORA_HOME`
//! (`~/.kora` by default). A locked repository is fetched by its commit, never by its
//! reference; every fetch is checked against `kora.lock`, the project's `kora.sums` and the
//! machine's log before a single file of it is used.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::lock::{Locked, Lockfile};
use crate::manifest::{GitRef, Manifest};
use crate::sums::{Sighting, SumLog};
use crate::tree_hash::tree_hash;

/// The machine's package store and the project whose lock and sums it keeps.
pub struct Store {
    pub home: PathBuf,
    /// The folder of the project's `kora.toml` (where `kora.lock` and `kora.sums` live).
    pub project: Option<PathBuf>,
    /// Writes to `kora.lock` from parallel fetches go one at a time.
    lock: Mutex<()>,
}

impl Store {
    /// `KORA_HOME`, else `~/.kora`.
    pub fn from_env() -> Store {
        let home = std::env::var_os("KORA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kora")))
            .unwrap_or_else(|| PathBuf::from(".kora"));
        Store::new(home, None)
    }

    pub fn new(home: PathBuf, project: Option<PathBuf>) -> Store {
        Store {
            home,
            project,
            lock: Mutex::new(()),
        }
    }

    pub fn cache(&self) -> PathBuf {
        self.home.join("cache")
    }

    fn repo_dir(&self, url: &str) -> PathBuf {
        let h = Sha256::digest(url.as_bytes());
        let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
        self.cache().join("git").join(hex)
    }

    /// The checked-out tree of dependency `name` (declared in `m`), fetching if needed.
    pub fn checkout(
        &self,
        m: &Manifest,
        name: &str,
        url: &str,
        reference: &GitRef,
    ) -> Result<PathBuf, String> {
        let url = absolute_url(url, &m.dir);
        let project = self.project.clone().unwrap_or_else(|| m.dir.clone());
        // A vendored copy wins: `kora vendor` made it from the lock, offline.
        let vendored = project.join("vendor").join(name);
        let lock = Lockfile::read(&project)?;
        if let Some(l) = lock.find(&url) {
            if vendored.join("kora.toml").is_file() {
                let got = tree_hash(&vendored)?;
                if got != l.tree {
                    return Err(format!(
                        "vendor/{name} does not match kora.lock (content {got}, locked {}); run `kora vendor` again",
                        l.tree
                    ));
                }
                return std::fs::canonicalize(&vendored).map_err(|e| e.to_string());
            }
            let l = l.clone();
            return self.materialize(&url, &l.commit, Some(&l.tree), tag_of(reference), name);
        }
        let commit = self.resolve_ref(&url, reference)?;
        let tree = self.materialize(&url, &commit, None, tag_of(reference), name)?;
        let hash = tree_hash(&tree)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut lock = Lockfile::read(&project)?;
        lock.put(Locked {
            name: name.to_string(),
            url: url.clone(),
            reference: reference.to_string(),
            commit,
            tree: hash,
        });
        lock.write(&project)?;
        Ok(tree)
    }

    /// What `reference` names on the remote now: a full commit id.
    pub fn resolve_ref(&self, url: &str, reference: &GitRef) -> Result<String, String> {
        let bare = self.bare(url)?;
        fetch_all(&bare, url)?;
        let local = match reference {
            GitRef::Tag(t) => format!("refs/kora/tags/{t}^{{commit}}"),
            GitRef::Branch(b) => format!("refs/kora/heads/{b}^{{commit}}"),
            GitRef::Rev(r) => format!("{r}^{{commit}}"),
            GitRef::Head => {
                let out = git(&bare, &["ls-remote", "--symref", "--", url, "HEAD"])
                    .map_err(|e| format!("cannot read {url}'s default branch: {e}"))?;
                let head = out
                    .lines()
                    .find_map(|l| l.strip_prefix("ref: refs/heads/"))
                    .and_then(|l| l.split('\t').next())
                    .ok_or_else(|| {
                        format!("{url} has no default branch; name a tag, rev or branch")
                    })?;
                format!("refs/kora/heads/{head}^{{commit}}")
            }
        };
        let out = git(&bare, &["rev-parse", "--verify", "--quiet", &local])
            .map_err(|_| format!("{url} has no {reference}"))?;
        Ok(out.trim().to_string())
    }

    fn bare(&self, url: &str) -> Result<PathBuf, String> {
        let dir = self.repo_dir(url).join("repo.git");
        if !dir.join("HEAD").is_file() {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            git(&dir, &["init", "--quiet", "--bare"])?;
        }
        Ok(dir)
    }

    /// The tree of `commit`, extracted once into the cache and checked against the lock and
    /// both logs before it is returned.
    fn materialize(
        &self,
        url: &str,
        commit: &str,
        locked_tree: Option<&str>,
        tag: Option<&str>,
        name: &str,
    ) -> Result<PathBuf, String> {
        let dest = self.repo_dir(url).join(commit);
        // Beside the tree, not in it: the marker is not content.
        let done = self.repo_dir(url).join(format!("{commit}.done"));
        if !done.is_file() {
            let bare = self.bare(url)?;
            let have = git(&bare, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok();
            if !have {
                fetch_all(&bare, url)?;
                git(&bare, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).map_err(|_| {
                    format!("{url} no longer has the locked commit {commit} of `{name}`; restore it, or `kora update {name}` to lock another")
                })?;
            }
            let tmp = self
                .repo_dir(url)
                .join(format!("{commit}.tmp{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
            let archive = Command::new("git")
                .arg("--git-dir")
                .arg(&bare)
                .args(["archive", "--format=tar", commit])
                .output()
                .map_err(|e| format!("cannot run git: {e}"))?;
            if !archive.status.success() {
                return Err(format!(
                    "git archive {commit}: {}",
                    String::from_utf8_lossy(&archive.stderr).trim()
                ));
            }
            unpack(&archive.stdout, &tmp)?;
            let _ = std::fs::remove_dir_all(&dest);
            std::fs::rename(&tmp, &dest)
                .map_err(|e| format!("cannot place {}: {e}", dest.display()))?;
            std::fs::write(&done, commit).map_err(|e| e.to_string())?;
        }
        let got = tree_hash(&dest)?;
        if let Some(want) = locked_tree {
            if got != want {
                return Err(format!(
                    "`{name}` at commit {commit} has content {got}, but kora.lock says {want}; refused"
                ));
            }
        }
        let sighting = Sighting {
            url: url.to_string(),
            tag: tag.map(str::to_string),
            commit: commit.to_string(),
            tree: got,
        };
        let logs = [
            self.project.as_deref().map(SumLog::project),
            Some(SumLog::machine(&self.home)),
        ];
        for log in logs.iter().flatten() {
            if let Some(why) = log.disagreement(&sighting) {
                return Err(format!("`{name}` refused by the checksum log: {why}"));
            }
        }
        for log in logs.iter().flatten() {
            log.record(&sighting)?;
        }
        std::fs::canonicalize(&dest).map_err(|e| e.to_string())
    }
}

fn tag_of(r: &GitRef) -> Option<&str> {
    match r {
        GitRef::Tag(t) => Some(t),
        _ => None,
    }
}

/// A relative `file:` or plain path URL resolves against the manifest's folder.
fn absolute_url(url: &str, dir: &Path) -> String {
    if url.contains("://") || url.contains('@') {
        return url.to_string();
    }
    let p = Path::new(url);
    if p.is_absolute() {
        url.to_string()
    } else {
        dir.join(p).display().to_string()
    }
}

fn unpack(tar: &[u8], dest: &Path) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(tar).map_err(|e| format!("tar: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// Runs `git` in `dir`; its stdout, or its stderr as the error.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Fetches every branch and tag of `url` into `bare` under `refs/kora/`, moved refs included:
/// what a reference names now is read from there, never from the remote's own names.
fn fetch_all(bare: &Path, url: &str) -> Result<(), String> {
    git(
        bare,
        &[
            "fetch",
            "--quiet",
            "--force",
            "--no-tags",
            "--",
            url,
            "+refs/heads/*:refs/kora/heads/*",
            "+refs/tags/*:refs/kora/tags/*",
        ],
    )
    .map(|_| ())
    .map_err(|e| format!("cannot fetch {url}: {e}"))
}
