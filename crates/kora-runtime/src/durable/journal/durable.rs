//! A durable run: its journal opened for writing, and the pipeline observer that replays and records effects.
//!
//! Every effect gets a slot named by its structural operation id and how many
//! times that operation has run before in this run (`main.ko:f#2/7`); a resume
//! re-runs the program from the top, so the same code reaches the same slots.
//! What the observer does with a slot is gaps.md's resume table: a finished
//! effect is replayed, never performed again; a read is performed again and its
//! digest compared; a world-changing write left between its mark and its outcome
//! stops the run, because whether it happened is unknown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::commit::Writer;
use super::fold::{fold, Folded, SlotState};
use super::lock::RunLock;
use super::open::{open_journal, Opened};
use super::record::{Record, FORMAT};
use crate::durable::effect::{
    Class, Effect, ForBranch, Kind, Observation, Observer, State, Verdict,
};

/// Why a durable run could not start or resume.
#[derive(Debug)]
pub enum RunError {
    NotFound(String),
    Locked(String),
    Load(String),
    /// The journal belongs to another format or another program.
    Refused(String),
    Io(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            RunError::NotFound(s)
            | RunError::Locked(s)
            | RunError::Load(s)
            | RunError::Refused(s)
            | RunError::Io(s) => f.write_str(s),
        }
    }
}

/// One durable run, shared by its interpreter, its output and (later) its workers.
pub struct Run {
    pub id: String,
    pub dir: PathBuf,
    /// What the journal held when this process started: the slots a resume replays.
    pub past: Folded,
    writer: Writer,
    /// The newest effect record appended without a sync (0: none).
    unsynced: AtomicU64,
    /// The first journal write that failed: the run stops at its next effect.
    broken: Mutex<Option<String>>,
    _lock: RunLock,
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
        };
        let io = |e: std::io::Error| RunError::Io(format!("cannot write {}: {e}", path.display()));
        let tmp = dir.join("journal.jsonl.new");
        {
            let mut f = std::fs::File::create(&tmp).map_err(io)?;
            std::io::Write::write_all(&mut f, header.line().as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &path).map_err(io)?;
        let whole = header.line().len() as u64;
        let writer = Writer::open(&path, whole).map_err(io)?;
        Run::open(id, dir, fold(&[]), writer, lock, "")
    }

    /// Opens an existing run to continue it; `digest` is checked by the caller against the header.
    pub fn resume(project_dir: &Path, id: &str) -> Result<Arc<Run>, RunError> {
        let Opened {
            path,
            dir,
            lock,
            loaded,
        } = open_journal(project_dir, id)?;
        match loaded.records.first() {
            Some(Record::Header { format, .. }) if *format == FORMAT => {}
            Some(Record::Header { format, .. }) => {
                return Err(RunError::Refused(format!(
                    "run {id} was written in journal format {format}, and this kora reads format {FORMAT} only; finish it with the kora that started it"
                )))
            }
            _ => {
                return Err(RunError::Load(format!(
                    "run {id}: the journal has no header, so it was never started properly; start a new run"
                )))
            }
        }
        let writer = Writer::open(&path, loaded.whole)
            .map_err(|e| RunError::Io(format!("cannot write {}: {e}", path.display())))?;
        Run::open(id, dir, fold(&loaded.records), writer, lock, "resumed")
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

    fn write(&self, r: &Record, durable: bool) {
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
            let mut broken = self.broken.lock().unwrap_or_else(|p| p.into_inner());
            broken.get_or_insert_with(|| {
                format!("the journal of run {} cannot be written: {e}", self.id)
            });
        }
    }

    fn check(&self) -> Result<(), RunError> {
        match self.broken_reason() {
            Some(why) => Err(RunError::Io(why)),
            None => Ok(()),
        }
    }

    fn broken_reason(&self) -> Option<String> {
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
            let mut broken = self.broken.lock().unwrap_or_else(|p| p.into_inner());
            broken.get_or_insert_with(|| {
                format!("the journal of run {} cannot be synced: {e}", self.id)
            });
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

    /// The observer a run's pipeline attaches.
    pub fn observer(self: &Arc<Self>) -> Durable {
        self.observer_in("")
    }

    /// What follows the run into `parallel for` branches and isolated agents.
    pub fn branches(self: &Arc<Self>) -> Arc<dyn ForBranch> {
        Arc::new(Branches(Arc::clone(self)))
    }

    fn observer_in(self: &Arc<Self>, prefix: &str) -> Durable {
        Durable {
            run: Arc::clone(self),
            prefix: prefix.to_string(),
            seen: HashMap::new(),
            frames: Vec::new(),
            diverged: None,
        }
    }
}

/// Makes the journal's observer for each branch, its slots named under the branch's prefix.
struct Branches(Arc<Run>);

impl ForBranch for Branches {
    fn for_branch(&self, prefix: &str) -> Box<dyn Observer> {
        Box::new(self.0.observer_in(prefix))
    }

    fn stopped_at(&self, loop_prefix: &str) -> Option<usize> {
        // A stopping branch journals `p3.7|stop/0` (see `parallel/record.rs`).
        self.0
            .past
            .slots
            .keys()
            .filter_map(|k| {
                let (i, rest) = k.strip_prefix(loop_prefix)?.split_once('|')?;
                (rest == crate::durable::journal::STOP_SLOT).then(|| i.parse().ok())?
            })
            .min()
    }
}

/// The journal's observer on one interpreter's pipeline.
pub struct Durable {
    run: Arc<Run>,
    /// The branch this interpreter runs (`p0.3|`), empty in the main one.
    prefix: String,
    /// How many times each operation has run, which names its next slot.
    seen: HashMap<String, u32>,
    /// The effects between Prepared and Terminal, innermost last: a tool loop's tools run
    /// their own effects while the loop's model call is in flight.
    frames: Vec<Frame>,
    /// A read that saw a different world: the run stops at its next effect.
    diverged: Option<String>,
}

/// One effect in flight.
#[derive(Default)]
struct Frame {
    slot: String,
    replayed: bool,
    expect_digest: Option<String>,
    digest: Option<String>,
}

/// Effects whose outcome is not synced on its own. Losing such a record to a crash
/// only means the effect runs again on resume, and nothing outside the process saw
/// the first result: anything that could show it (output, a write, a model call)
/// syncs first, and a sync covers every line appended before it.
fn cheap(e: &Effect) -> bool {
    e.class == Class::Read
        || matches!(
            e.kind,
            Kind::Clock | Kind::Random | Kind::Output | Kind::Sleep | Kind::Env
        )
}

/// Marked before it is sent, so a crash in between is known to be ambiguous. A tool of the
/// program's own is not: it is Kora code whose writes are marked themselves, so one cut off
/// mid-way runs again (an MCP tool, acting outside, will be world-changing).
fn two_phase(e: &Effect) -> bool {
    e.class == Class::WorldChanging
}

impl Observer for Durable {
    fn prepared(&mut self, e: &Effect) -> Verdict {
        if let Some(why) = self.diverged.take().or_else(|| self.run.broken_reason()) {
            return Verdict::Refuse(why);
        }
        // An effect inside another one (a tool's write inside a tool loop) is named under it, so
        // a resume that replays the outer effect whole leaves the numbering of the rest intact.
        let parent = match self.frames.len() {
            n if n >= 2 => format!("{}>", self.frames[n - 2].slot),
            _ => String::new(),
        };
        let op = format!("{}{parent}{}", self.prefix, e.op);
        let n = self.seen.entry(op.clone()).or_insert(0);
        let slot = format!("{op}/{n}");
        *n += 1;
        let Some(frame) = self.frames.last_mut() else {
            return Verdict::Proceed;
        };
        *frame = Frame {
            slot,
            ..Frame::default()
        };
        match self.run.past.slots.get(&frame.slot) {
            Some(SlotState::Done { digest, .. }) if e.class == Class::Read => {
                frame.expect_digest = digest.clone();
                frame.replayed = true;
                Verdict::Proceed
            }
            Some(SlotState::Done { result, .. }) => {
                frame.replayed = true;
                Verdict::Replay(result.clone())
            }
            Some(SlotState::Sent { call, .. }) if two_phase(e) => Verdict::Refuse(format!(
                "run {} stopped after `{call}` at {} was sent and before its outcome was recorded, so whether it happened is unknown; check by hand, then start a new run",
                self.run.id, frame.slot
            )),
            _ => Verdict::Proceed,
        }
    }

    fn transition(&mut self, e: &Effect, state: State) {
        if state == State::Prepared {
            self.frames.push(Frame::default());
        }
        let Some(frame) = self.frames.last() else {
            return;
        };
        if state == (State::Sent { attempt: 1 }) && two_phase(e) {
            self.run.write(
                &Record::Sent {
                    slot: frame.slot.clone(),
                    kind: e.kind.name().to_string(),
                    call: e.call.to_string(),
                },
                true,
            );
        }
    }

    fn observed(&mut self, e: &Effect, what: &Observation) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if let (Observation::Read(bytes), Class::Read) = (what, e.class) {
            let d = hex(&Sha256::digest(bytes));
            if let Some(expected) = &frame.expect_digest {
                if *expected != d {
                    self.diverged = Some(format!(
                        "`{}` at {} read something different from what run {} read before it stopped ({}); the world changed under the run, so resuming could repeat or skip work",
                        e.call, frame.slot, self.run.id, e.target
                    ));
                }
            }
            frame.digest = Some(d);
        }
    }

    fn abandoned(&mut self, _e: &Effect) {
        self.frames.pop();
    }

    fn terminal(&mut self, e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        // An empty slot: an earlier observer stopped the effect before this one named it.
        if frame.replayed || frame.slot.is_empty() {
            return;
        }
        if e.kind == Kind::AskHuman && !ok {
            // Nobody answered: the question waits in its slot for `kora answer`.
            self.run.write(
                &Record::Sent {
                    slot: frame.slot.clone(),
                    kind: e.kind.name().to_string(),
                    call: e.target.to_string(),
                },
                true,
            );
            return;
        }
        self.run.write(
            &Record::Done {
                slot: frame.slot,
                kind: e.kind.name().to_string(),
                result: record(),
                digest: frame.digest,
            },
            !cheap(e),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_of_an_older_format_is_refused_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("kora-durable-format-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run =
            Run::start(&dir, "old", "p.ko", "d", &[], None, &Default::default()).expect("started");
        drop(run);
        let path = super::super::journal_path(&dir, "old");
        let text = std::fs::read_to_string(&path).expect("journal");
        let older = text.replacen(&format!("\"format\":{FORMAT}"), "\"format\":1", 1);
        assert_ne!(older, text, "the header names its format");
        std::fs::write(&path, older).expect("rewrite");
        match Run::resume(&dir, "old") {
            Err(RunError::Refused(why)) => {
                assert!(why.contains("journal format 1"), "{why}");
                assert!(why.contains("the kora that started it"), "{why}");
            }
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("an older journal was resumed"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
