//! Writing files so that a resume can tell whether a write happened: `fs.write` by rename, `fs.append` in order at a known offset.
//!
//! `fs.write` puts the new text in a temporary file beside the target and renames it
//! over the target, so the file holds all of the old text or all of the new; the
//! attempt record names the new text's digest. `fs.append` takes its place in line
//! before its attempt is written: the offset it will land at (the file's length after
//! every append of this process ahead of it) goes in the record with the text's
//! digest, and appends to one file reach the disk in that order, so at any kill the
//! file holds every earlier append whole, at most one partial one, and nothing after.
//! A resume reads the region to tell, and cuts a partial append back. In a durable
//! run both sync the file before their outcome is journaled.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::fs::io_why;
use crate::durable::effect::{Intent, Sending};
use crate::durable::journal::check::Check;

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The file a write lands in: a symbolic link is written through, not replaced.
fn real_target(full: &Path) -> PathBuf {
    match std::fs::symlink_metadata(full) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(full).unwrap_or_else(|_| full.to_path_buf())
        }
        _ => full.to_path_buf(),
    }
}

/// `fs.write`: the whole text or none of it, by rename; synced in a durable run.
pub(super) fn write_whole(
    s: &mut Sending,
    shown: &str,
    full: &Path,
    text: &[u8],
    durable: bool,
) -> Result<(), String> {
    static TEMPS: AtomicU64 = AtomicU64::new(0);
    let target = real_target(full);
    s.intent(&Intent {
        check: Some(Check::File {
            path: target.to_string_lossy().into_owned(),
            sha256: sha256(text),
        }),
        done_as: None,
    });
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.kora-{}-{}.tmp",
        std::process::id(),
        TEMPS.fetch_add(1, Ordering::Relaxed)
    ));
    let why = |e: std::io::Error| io_why(shown, &e);
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        // The replacement keeps the permissions of the file it replaces.
        if let Ok(m) = std::fs::metadata(&target) {
            let _ = f.set_permissions(m.permissions());
        }
        f.write_all(text)?;
        if durable {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &target)?;
        if durable {
            sync_dir(&dir)?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(why)
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// The appends of this process to one file: where the next one lands and how far they got.
#[derive(Default)]
struct Line {
    /// The offset after every append that has taken its place.
    next: u64,
    /// The offset every append before it has reached the file up to.
    written: u64,
    /// Appends that took a place and have not finished.
    waiting: u32,
}

type Queue = Arc<(Mutex<Line>, Condvar)>;

fn queue(path: &Path) -> Queue {
    static QUEUES: OnceLock<Mutex<HashMap<PathBuf, Queue>>> = OnceLock::new();
    let mut all = QUEUES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    all.entry(path.to_path_buf()).or_default().clone()
}

fn lock(q: &Queue) -> std::sync::MutexGuard<'_, Line> {
    q.0.lock().unwrap_or_else(|p| p.into_inner())
}

/// An append's place in line; leaving it (done or not) lets the next one go.
struct Place<'a> {
    q: &'a Queue,
    end: u64,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut l = lock(self.q);
        l.written = l.written.max(self.end);
        l.waiting -= 1;
        self.q.1.notify_all();
    }
}

/// `fs.append`. In a durable run the text lands at the offset its attempt record names,
/// after every earlier append of the run to that file, and is synced.
pub(super) fn append(
    s: &mut Sending,
    shown: &str,
    full: &Path,
    text: &[u8],
    durable: bool,
) -> Result<(), String> {
    let why = |e: std::io::Error| io_why(shown, &e);
    if !durable {
        s.intent(&Intent::default());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(full)
            .map_err(why)?;
        return f.write_all(text).map_err(why);
    }
    // Opened before taking a place, so a file that cannot be written takes none.
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(full)
        .map_err(why)?;
    let path = std::fs::canonicalize(full).unwrap_or_else(|_| full.to_path_buf());
    let q = queue(&path);
    let at = {
        let mut l = lock(&q);
        if l.waiting == 0 {
            let size = f.metadata().map_err(why)?.len();
            l.next = size;
            l.written = size;
        }
        let at = l.next;
        l.next += text.len() as u64;
        l.waiting += 1;
        at
    };
    let place = Place {
        q: &q,
        end: at + text.len() as u64,
    };
    s.intent(&Intent {
        check: Some(Check::Append {
            path: path.to_string_lossy().into_owned(),
            at,
            len: text.len() as u64,
            sha256: sha256(text),
        }),
        done_as: None,
    });
    {
        let mut l = lock(&q);
        while l.written < at {
            l = q.1.wait(l).unwrap_or_else(|p| p.into_inner());
        }
        // Its turn: written while the line waits, so appends reach the file in order.
        let wrote = f.write_all(text);
        drop(l);
        drop(place);
        wrote.map_err(why)?;
    }
    f.sync_data().map_err(why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durable::effect::{Class, Effect, Kind, Pipeline};

    #[test]
    fn appends_from_many_threads_land_whole_and_in_their_places() {
        let d = std::env::temp_dir().join(format!("kora-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        let file = d.join("log.txt");
        std::fs::write(&file, "head\n").expect("file");
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let file = file.clone();
                std::thread::spawn(move || {
                    let mut p = Pipeline::default();
                    let e = Effect {
                        kind: Kind::FsWrite,
                        class: Class::WorldChanging,
                        op: "t",
                        call: "fs.append",
                        target: "log.txt",
                    };
                    let line = format!("{i} {}\n", "x".repeat(i * 7));
                    let r: Result<Result<(), String>, _> =
                        p.run(&e, |s| append(s, "log.txt", &file, line.as_bytes(), true));
                    assert!(matches!(r, Ok(Ok(()))));
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let text = std::fs::read_to_string(&file).expect("file");
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.remove(0), "head");
        lines.sort();
        assert_eq!(lines.len(), 16);
        for l in lines {
            let (i, xs) = l.split_once(' ').expect("i xs");
            assert_eq!(xs.len(), i.parse::<usize>().expect("i") * 7);
        }
    }
}
