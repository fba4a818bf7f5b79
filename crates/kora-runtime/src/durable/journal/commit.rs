//! Appending to the journal with group commit: one fsync covers every record appended before it.
//!
//! Appends take a short lock and go straight to the kernel (no user-space
//! buffer, so a record is in the page cache the moment `append` returns). A
//! caller that needs its record durable asks `sync_to(seq)`. If a sync that
//! started after its append is running or done, it waits for or returns on
//! that one; otherwise it leads a sync itself. The sync runs on a second handle
//! outside the append lock, so other workers keep appending while the disk
//! works, and their records ride on the next sync. A leader that sees others
//! waiting yields once first, so records being appended at that moment join it.
//! A sequential run never waits on anyone and pays one sync per durable record,
//! as before.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::record::Record;

/// The journal open for appending, shared by every worker of a run.
pub struct Writer {
    tail: Mutex<Tail>,
    /// A second handle on the same file: `fdatasync` on it covers writes made through `tail`.
    sync_handle: File,
    sync: Mutex<SyncState>,
    synced_cv: Condvar,
    /// `KORA_JOURNAL_SOLO_SYNC=1`: every durable record takes its own sync, one at a time.
    /// For measuring what group commit saves; never the default.
    solo: bool,
    /// Tests only: runs inside a leader's sync, after it chose what the sync covers.
    #[cfg(test)]
    in_sync: Option<Box<dyn Fn() + Send + Sync>>,
}

struct Tail {
    file: File,
    appended: u64,
    crash: Option<Crash>,
}

/// Fault injection for the crash harness: `KORA_JOURNAL_CRASH=N` aborts the process at
/// this process's Nth append, before writing it; `N.half` writes half the line first.
/// Tests only: a real kill is indistinguishable from this abort to the journal.
#[derive(Clone, Copy)]
struct Crash {
    at: u64,
    half: bool,
}

fn crash_from_env() -> Option<Crash> {
    let v = std::env::var("KORA_JOURNAL_CRASH").ok()?;
    let (n, half) = match v.strip_suffix(".half") {
        Some(n) => (n, true),
        None => (v.as_str(), false),
    };
    Some(Crash {
        at: n.parse().ok()?,
        half,
    })
}

#[derive(Default)]
struct SyncState {
    synced: u64,
    leading: bool,
    waiting: u32,
    syncs: u64,
}

/// Locks a mutex whose holder may have panicked: the journal's counters stay valid either way.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Writer {
    /// Opens `path` for appending after its first `whole` bytes (a torn tail is cut off).
    pub fn open(path: &Path, whole: u64) -> std::io::Result<Writer> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() != whole {
            file.set_len(whole)?;
        }
        let sync_handle = OpenOptions::new().write(true).open(path)?;
        Ok(Writer {
            tail: Mutex::new(Tail {
                file,
                appended: 0,
                crash: crash_from_env(),
            }),
            sync_handle,
            sync: Mutex::new(SyncState::default()),
            synced_cv: Condvar::new(),
            solo: std::env::var_os("KORA_JOURNAL_SOLO_SYNC").is_some(),
            #[cfg(test)]
            in_sync: None,
        })
    }

    /// Appends one record; returns its sequence number for `sync_to`.
    pub fn append(&self, r: &Record) -> std::io::Result<u64> {
        let line = r.line();
        let mut tail = lock(&self.tail);
        if let Some(c) = tail.crash.filter(|c| c.at == tail.appended + 1) {
            if c.half {
                tail.file.write_all(&line.as_bytes()[..line.len() / 2])?;
            }
            std::process::abort();
        }
        tail.file.write_all(line.as_bytes())?;
        tail.appended += 1;
        Ok(tail.appended)
    }

    /// Returns once record `seq` (and everything appended before it) is on disk.
    pub fn sync_to(&self, seq: u64) -> std::io::Result<()> {
        if self.solo {
            let mut st = lock(&self.sync);
            self.sync_handle.sync_data()?;
            st.synced = st.synced.max(seq);
            st.syncs += 1;
            return Ok(());
        }
        let mut st = lock(&self.sync);
        loop {
            if st.synced >= seq {
                return Ok(());
            }
            if !st.leading {
                break;
            }
            st.waiting += 1;
            st = self.synced_cv.wait(st).unwrap_or_else(|p| p.into_inner());
            st.waiting -= 1;
        }
        st.leading = true;
        let others = st.waiting > 0;
        drop(st);
        if others {
            std::thread::yield_now();
        }
        let target = lock(&self.tail).appended;
        #[cfg(test)]
        if let Some(hold) = &self.in_sync {
            hold();
        }
        let result = self.sync_handle.sync_data();
        let mut st = lock(&self.sync);
        st.leading = false;
        if result.is_ok() {
            st.synced = st.synced.max(target);
            st.syncs += 1;
        }
        self.synced_cv.notify_all();
        result
    }

    /// Appends and waits until the record is durable.
    pub fn append_synced(&self, r: &Record) -> std::io::Result<()> {
        let seq = self.append(r)?;
        self.sync_to(seq)
    }

    /// How many fsyncs this writer performed (for measurements and tests).
    pub fn syncs(&self) -> u64 {
        lock(&self.sync).syncs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("kora-commit-{name}-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        dir.join("journal.jsonl")
    }

    #[test]
    fn a_sequential_writer_syncs_once_per_durable_record() {
        let path = temp("seq");
        let _ = std::fs::remove_file(&path);
        let w = Writer::open(&path, 0).expect("open");
        for n in 0..5 {
            w.append_synced(&Record::Out { bytes: n }).expect("append");
        }
        assert_eq!(w.syncs(), 5);
        let loaded = super::super::store::load(&path).expect("load");
        assert_eq!(loaded.records.len(), 5);
    }

    #[test]
    fn concurrent_writers_lose_nothing_and_share_syncs() {
        let path = temp("par");
        let _ = std::fs::remove_file(&path);
        let w = Arc::new(Writer::open(&path, 0).expect("open"));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let w = Arc::clone(&w);
                std::thread::spawn(move || {
                    for n in 0..25 {
                        w.append_synced(&Record::Out { bytes: t * 100 + n })
                            .expect("append");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("writer thread");
        }
        let loaded = super::super::store::load(&path).expect("load");
        assert_eq!(loaded.records.len(), 200);
        // Never more syncs than durable records; usually far fewer under contention.
        assert!(w.syncs() <= 200);
    }

    /// The sharing itself, with no timing in it: a leader is held inside its sync
    /// until eight other writers have appended and are waiting; when it lets go, one
    /// of them leads a single sync that covers all eight.
    #[test]
    fn records_appended_during_a_sync_share_the_next_one() {
        use std::sync::mpsc;
        let path = temp("share");
        let _ = std::fs::remove_file(&path);
        let (entered_tx, entered) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let gate = Mutex::new((Some(entered_tx), Some(release_rx)));
        let mut w = Writer::open(&path, 0).expect("open");
        // Only the first sync is held; later ones pass straight through.
        w.in_sync = Some(Box::new(move || {
            let (tx, rx) = {
                let mut g = lock(&gate);
                (g.0.take(), g.1.take())
            };
            if let (Some(tx), Some(rx)) = (tx, rx) {
                let _ = tx.send(());
                let _ = rx.recv();
            }
        }));
        let w = Arc::new(w);
        let leader = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || w.append_synced(&Record::Out { bytes: 0 }))
        };
        entered.recv().expect("the leader reaches its sync");
        let riders: Vec<_> = (1..=8)
            .map(|n| {
                let w = Arc::clone(&w);
                std::thread::spawn(move || w.append_synced(&Record::Out { bytes: n }))
            })
            .collect();
        while lock(&w.sync).waiting < 8 {
            std::thread::yield_now();
        }
        release.send(()).expect("release the leader");
        leader.join().expect("leader").expect("leader synced");
        for r in riders {
            r.join().expect("rider").expect("rider synced");
        }
        assert_eq!(
            w.syncs(),
            2,
            "one held sync, then one for all eight waiters"
        );
        let loaded = super::super::store::load(&path).expect("load");
        assert_eq!(loaded.records.len(), 9);
    }

    #[test]
    fn opening_cuts_a_torn_tail() {
        let path = temp("torn");
        let whole = Record::Out { bytes: 1 }.line();
        std::fs::write(&path, format!("{whole}{{\"t\":\"ou")).expect("write");
        let loaded = super::super::store::load(&path).expect("load");
        let w = Writer::open(&path, loaded.whole).expect("open");
        w.append_synced(&Record::Out { bytes: 2 }).expect("append");
        let again = super::super::store::load(&path).expect("load");
        assert_eq!(
            again.records,
            vec![Record::Out { bytes: 1 }, Record::Out { bytes: 2 }]
        );
    }
}
