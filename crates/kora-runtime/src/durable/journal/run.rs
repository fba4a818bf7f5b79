//! A durable run's journal opened for writing: started fresh, or resumed after a decision about every attempt a kill left open.
//!
//! A resume opens in two steps. `Run::resume` reads and checks the journal and
//! holds the run's lock, writing nothing, so the caller can refuse a changed
//! program or changed settings first. `Resuming::decide` then settles every
//! attempt without an outcome (`resolve.rs`) or refuses naming all that a person
//! must settle; only then is the run marked running and its program started.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::commit::Writer;
use super::fold::{fold, Folded};
use super::lock::RunLock;
use super::open::{open_journal, Opened};
use super::record::{Record, FORMAT};
use super::resolve::{pending, plan, stops_message, Decisions};
use super::store::Loaded;

/// Why a durable run could not start or resume.
#[derive(Debug)]
pub enum RunError {
    NotFound(String),
    Locked(String),
    /// The journal is damaged (E1362) or of another format (E1363).
    Load {
        code: &'static str,
        text: String,
    },
    /// The journal belongs to another program, or a person's decision names nothing pending.
    Refused(String),
    /// Attempts nobody can settle without a person (E1361).
    Stopped(String),
    Io(String),
}

impl RunError {
    /// The error's code in `docs/errors.md`, when it has one.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            RunError::Load { code, .. } => Some(code),
            RunError::Stopped(_) => Some(STOPPED),
            _ => None,
        }
    }
}

/// A resume refused until a person settles attempts whose outcome is unknown.
pub const STOPPED: &str = "E1361";
/// A journal damaged by something other than kora.
pub const DAMAGED: &str = "E1362";
/// A journal of another format.
pub const OTHER_FORMAT: &str = "E1363";

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            RunError::NotFound(s)
            | RunError::Locked(s)
            | RunError::Load { text: s, .. }
            | RunError::Refused(s)
            | RunError::Stopped(s)
            | RunError::Io(s) => f.write_str(s),
        }
    }
}

/// One durable run, shared by its interpreter, its output and its workers.
pub struct Run {
    pub id: String,
    pub dir: PathBuf,
    /// What the journal held when this process started (with the decisions of this
    /// resume): the slots a resume replays.
    pub past: Folded,
    pub(super) writer: Writer,
    /// The newest effect record appended without a sync (0: none).
    unsynced: AtomicU64,
    /// The first journal write that failed: the run stops at its next effect.
    broken: Mutex<Option<String>>,
    _lock: RunLock,
}

/// A run opened to resume, holding its lock, not yet running and not yet written to.
pub struct Resuming {
    id: String,
    dir: PathBuf,
    path: PathBuf,
    lock: RunLock,
    loaded: Loaded,
    past: Folded,
}

/// A program's identity for the journal: SHA-256 over each module's path and source.
pub fn program_digest<'a>(modules: impl Iterator<Item = (&'a Path, &'a str)>) -> String {
    let mut h = Sha256::new();
    for (path, source) in modules {
        let p = path.to_string_lossy();
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
        h.update((source.len() as u64).to_le_bytes());
        h.update(source.as_bytes());
    }
    hex(&h.finalize())
}

/// Lower-case hex of a digest: how journals, cassettes and config digests spell SHA-256.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Run {
    /// Starts a new run: its folder, its lock, and a header synced before anything happens.
    pub fn start(
        project_dir: &Path,
        id: &str,
        program: &str,
        digest: &str,
        args: &[String],
        model: Option<&str>,
        config: &std::collections::BTreeMap<String, String>,
    ) -> Result<Arc<Run>, RunError> {
        let path = super::journal_path(project_dir, id);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if path.exists() {
            return Err(RunError::Refused(format!(
                "run {id} already exists; resume it with `kora run --resume {id}` or pick another --run-id"
            )));
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| RunError::Io(format!("cannot create {}: {e}", dir.display())))?;
        let lock = RunLock::take(&dir, id).map_err(RunError::Locked)?;
        // The header goes in by rename, so a journal either names its program or does not exist.
        let header = Record::Header {
            format: FORMAT,
            run: id.to_string(),
            program: program.to_string(),
            digest: digest.to_string(),
            args: args.to_vec(),
            model: model.map(str::to_string),
            config: Some(config.clone()),
        }
        .line(0);
        let io = |e: std::io::Error| RunError::Io(format!("cannot write {}: {e}", path.display()));
        let tmp = dir.join("journal.jsonl.new");
        {
            let mut f = std::fs::File::create(&tmp).map_err(io)?;
            std::io::Write::write_all(&mut f, header.as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &path).map_err(io)?;
        let writer = Writer::open(&path, header.len() as u64, 1).map_err(io)?;
        Run::open(id, dir, fold(&[]), writer, lock, "")
    }

    /// Opens an existing run to continue it: read, checked and locked, nothing written yet.
    /// The caller checks the program's digest against the header, then calls `decide`.
    pub fn resume(project_dir: &Path, id: &str) -> Result<Resuming, RunError> {
        let Opened {
            path,
            dir,
            lock,
            loaded,
        } = open_journal(project_dir, id)?;
        match loaded.records.first() {
            Some(Record::Header { .. }) => {}
            _ => {
                return Err(RunError::Load {
                    code: DAMAGED,
                    text: format!(
                        "run {id}: the journal has no header, so it was never started properly; start a new run"
                    ),
                })
            }
        }
        let past = fold(&loaded.records);
        Ok(Resuming {
            id: id.to_string(),
            dir,
            path,
            lock,
            loaded,
            past,
        })
    }

    /// The run, marked running (synced) before any effect of this process.
    fn open(
        id: &str,
        dir: PathBuf,
        past: Folded,
        writer: Writer,
        lock: RunLock,
        how: &str,
    ) -> Result<Arc<Run>, RunError> {
        let run = Run {
            id: id.to_string(),
            dir,
            past,
            writer,
            unsynced: AtomicU64::new(0),
            broken: Mutex::new(None),
            _lock: lock,
        };
        run.status("running", how);
        run.check()?;
        Ok(Arc::new(run))
    }

    pub(super) fn write(&self, r: &Record, durable: bool) {
        let result = if durable {
            self.writer.append_synced(r)
        } else {
            self.writer.append(r).map(|seq| {
                if !matches!(r, Record::Out { .. }) {
                    self.unsynced.fetch_max(seq, Ordering::Relaxed);
                }
            })
        };
        if let Err(e) = result {
            self.fail(format!(
                "the journal of run {} cannot be written: {e}",
                self.id
            ));
        }
    }

    /// Stops the run at its next effect, for this reason (the first one given wins).
    pub(super) fn fail(&self, why: String) {
        let mut broken = self.broken.lock().unwrap_or_else(|p| p.into_inner());
        broken.get_or_insert(why);
    }

    fn check(&self) -> Result<(), RunError> {
        match self.broken_reason() {
            Some(why) => Err(RunError::Io(why)),
            None => Ok(()),
        }
    }

    pub(super) fn broken_reason(&self) -> Option<String> {
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records a change of the run's state (synced: `kora runs` reads it).
    pub fn status(&self, state: &str, detail: &str) {
        self.write(
            &Record::Status {
                state: state.to_string(),
                detail: detail.to_string(),
            },
            true,
        );
    }

    /// Makes the unsynced effect records durable (one sync, or none if nothing is pending).
    pub fn settle(&self) {
        let seq = self.unsynced.load(Ordering::Relaxed);
        if seq == 0 {
            return;
        }
        if let Err(e) = self.writer.sync_to(seq) {
            self.fail(format!(
                "the journal of run {} cannot be synced: {e}",
                self.id
            ));
        }
    }

    /// Records output that reached the terminal.
    pub fn shown(&self, bytes: u64) {
        self.write(&Record::Out { bytes }, false);
    }

    /// How many fsyncs the journal took in this process.
    pub fn syncs(&self) -> u64 {
        self.writer.syncs()
    }
}

impl Resuming {
    /// What the journal holds.
    pub fn past(&self) -> &Folded {
        &self.past
    }

    /// Settles every attempt a kill left without an outcome, by looking at the world or by
    /// `person`'s decisions, and journals how; refuses (E1361), naming every attempt left
    /// for a person and the commands that settle it, before anything is performed. What was
    /// settled stays settled (journaled) even when the resume is refused.
    pub fn decide(self, person: &Decisions) -> Result<Arc<Run>, RunError> {
        let id = self.id.clone();
        let waiting = pending(&self.loaded.records, &self.past);
        let plan = plan(&id, &waiting, person).map_err(RunError::Refused)?;
        let decided = plan.apply().map_err(RunError::Io)?;
        let io =
            |e: std::io::Error| RunError::Io(format!("cannot write {}: {e}", self.path.display()));
        let writer =
            Writer::open(&self.path, self.loaded.whole, self.loaded.next_seq()).map_err(io)?;
        // Journaled before the program runs: a resume killed now finds them decided.
        let mut last = 0;
        for r in &decided {
            last = writer.append(r).map_err(io)?;
        }
        if last > 0 {
            writer.sync_to(last).map_err(io)?;
        }
        if !plan.stops.is_empty() {
            return Err(RunError::Stopped(stops_message(&id, &plan.stops)));
        }
        let mut records = self.loaded.records;
        records.extend(decided);
        Run::open(&id, self.dir, fold(&records), writer, self.lock, "resumed")
    }
}

/// The attempts of run `id` that would stop its resume now (a look at the world; nothing
/// is written), with the refusal a resume would give; empty when it would go on.
pub fn stops_of(project_dir: &Path, id: &str) -> Option<String> {
    let loaded = super::store::load(&super::journal_path(project_dir, id)).ok()?;
    let folded = fold(&loaded.records);
    let plan = plan(
        id,
        &pending(&loaded.records, &folded),
        &Decisions::default(),
    )
    .ok()?;
    (!plan.stops.is_empty()).then(|| stops_message(id, &plan.stops))
}
