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
//!
//! Each record is numbered as it is appended (the line's `n`), and after each sync
//! the length it covered goes into `synced` beside the journal (written, not synced:
//! it only has to outlive a kill), so a loader can tell a journal cut short of what
//! was synced from one whose run simply stopped there.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::record::{numbered, Record};

/// The journal open for appending, shared by every worker of a run.
pub struct Writer {
    tail: Mutex<Tail>,
    /// A second handle on the same file: `fdatasync` on it covers writes made through `tail`.
    sync_handle: File,
    /// `synced` beside the journal: the bytes (and records) the last sync covered.
    mark: Option<File>,
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
    /// The next record's sequence number.
    next_seq: u64,
    /// The journal's length.
    bytes: u64,
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
    /// The journal length the last sync covered, as written to `synced`.
    marked: u64,
    leading: bool,
    waiting: u32,
    syncs: u64,
}

/// Locks a mutex whose holder may have panicked: the journal's counters stay valid either way.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Writer {
    /// Opens `path` for appending after its first `whole` bytes (a torn tail is cut off); the
    /// next record appended is number `next_seq`.
    pub fn open(path: &Path, whole: u64, next_seq: u64) -> std::io::Result<Writer> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() != whole {
            file.set_len(whole)?;
        }
        let sync_handle = OpenOptions::new().write(true).open(path)?;
        let mark = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(super::store::synced_path(path))
            .ok();
        Ok(Writer {
            tail: Mutex::new(Tail {
                file,
                appended: 0,
                next_seq,
                bytes: whole,
                crash: crash_from_env(),
            }),
            sync_handle,
            mark,
            sync: Mutex::new(SyncState::default()),
            synced_cv: Condvar::new(),
            solo: std::env::var_os("KORA_JOURNAL_SOLO_SYNC").is_some(),
            #[cfg(test)]
            in_sync: None,
        })
    }

    /// Appends one record; returns its place for `sync_to`.
    pub fn append(&self, r: &Record) -> std::io::Result<u64> {
        // Serialized outside the lock; only the number and its checksum are added under it.
        let body = r.body();
        let mut tail = lock(&self.tail);
        let line = numbered(&body, tail.next_seq);
        if let Some(c) = tail.crash.filter(|c| c.at == tail.appended + 1) {
            if c.half {
                tail.file.write_all(&line.as_bytes()[..line.len() / 2])?;
            }
            std::process::abort();
        }
        tail.file.write_all(line.as_bytes())?;
        tail.appended += 1;
        tail.next_seq += 1;
        tail.bytes += line.len() as u64;
        Ok(tail.appended)
    }

    /// Returns once record `seq` (and everything appended before it) is on disk.
    pub fn sync_to(&self, seq: u64) -> std::io::Result<()> {
        if self.solo {
            let mut st = lock(&self.sync);
            let (target, bytes, records) = self.covered();
            self.sync_handle.sync_data()?;
            st.synced = st.synced.max(seq).max(target);
            st.syncs += 1;
            self.mark(&mut st, bytes, records);
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
        let (target, bytes, records) = self.covered();
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
            self.mark(&mut st, bytes, records);
        }
        self.synced_cv.notify_all();
        result
    }

    /// What a sync starting now covers: this writer's appends, the journal's bytes and records.
    fn covered(&self) -> (u64, u64, u64) {
        let t = lock(&self.tail);
        (t.appended, t.bytes, t.next_seq)
    }

    /// Records how much of the journal the last sync covered (called with the sync state
    /// held, so marks go out in order). A failed write only weakens the loader's check.
    fn mark(&self, st: &mut SyncState, bytes: u64, records: u64) {
        if bytes <= st.marked {
            return;
        }
        if let Some(f) = &self.mark {
            let text = format!("{bytes:020} {records:020}\n");
            if write_at(f, text.as_bytes()).is_ok() {
                st.marked = bytes;
            }
        }
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

/// Overwrites the start of `f` in one call (the mark is fixed-width, so it never shrinks).
fn write_at(f: &File, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(f, bytes, 0)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_write(f, bytes, 0).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("kora-commit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        dir.join("journal.jsonl")
    }

    /// A journal holding only its header; the writer goes on after it.
    fn fresh(path: &Path) -> Writer {
        let header = Record::Header {
            format: super::super::FORMAT,
            run: "r".into(),
            program: "p.ko".into(),
            digest: "d".into(),
            args: Vec::new(),
            model: None,
            config: None,
        }
        .line(0);
        std::fs::write(path, &header).expect("header");
        Writer::open(path, header.len() as u64, 1).expect("open")
    }

    #[test]
    fn a_sequential_writer_syncs_once_per_durable_record() {
        let path = temp("seq");
        let w = fresh(&path);
        for n in 0..5 {
            w.append_synced(&Record::Out { bytes: n }).expect("append");
        }
        assert_eq!(w.syncs(), 5);
        let loaded = super::super::store::load(&path).expect("load");
        assert_eq!(loaded.records.len(), 6);
        assert_eq!(
            super::super::store::read_synced(&path),
            std::fs::metadata(&path).expect("journal").len(),
            "the last sync's length is marked beside the journal"
        );
    }

    #[test]
    fn concurrent_writers_lose_nothing_and_share_syncs() {
        let path = temp("par");
        let w = Arc::new(fresh(&path));
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
        assert_eq!(loaded.records.len(), 201);
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
        let (entered_tx, entered) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let gate = Mutex::new((Some(entered_tx), Some(release_rx)));
        let mut w = fresh(&path);
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
        assert_eq!(loaded.records.len(), 10);
    }

    #[test]
    fn opening_cuts_a_torn_tail() {
        let path = temp("torn");
        drop(fresh(&path));
        let whole = Record::Out { bytes: 1 }.line(1);
        let mut text = std::fs::read_to_string(&path).expect("journal");
        text.push_str(&whole);
        text.push_str("{\"n\":2,\"t\":\"ou");
        std::fs::write(&path, text).expect("write");
        let loaded = super::super::store::load(&path).expect("load");
        let w = Writer::open(&path, loaded.whole, loaded.next_seq()).expect("open");
        w.append_synced(&Record::Out { bytes: 2 }).expect("append");
        let again = super::super::store::load(&path).expect("load");
        assert_eq!(
            again.records[1..],
            [Record::Out { bytes: 1 }, Record::Out { bytes: 2 }]
        );
    }
}
