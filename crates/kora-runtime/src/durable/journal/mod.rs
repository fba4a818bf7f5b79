//! The durable run's journal: an append-only file of JSON lines that a killed run resumes from.
//!
//! `record` is the line format (numbered, checksummed), `store` reads the file (a torn
//! last line is dropped; a bad checksum, a gap in sequence or a file shorter than what was
//! synced is damage), `commit` is group commit (one fsync covers every record appended
//! beside it), `lock` keeps one process per run, `fold` turns the records into what a
//! resume needs, `check` and `resolve` settle the attempts a kill left open before a
//! resume runs anything, `run` opens a run for writing, and `durable` is the
//! effect-pipeline observer that replays finished effects and writes new ones.

pub mod answer;
pub mod check;
pub mod commit;
pub mod durable;
pub mod fold;
pub mod lock;
mod open;
pub mod output;
pub mod record;
pub mod resolve;
pub mod run;
pub mod store;

pub use answer::answer;
pub use commit::Writer;
pub use durable::Durable;
pub use fold::{Folded, RunState, SlotState};
pub use lock::RunLock;
pub use output::JournaledOut;
pub use record::{Record, FORMAT};
pub use resolve::Decisions;
pub use run::{program_digest, stops_of, Resuming, Run, RunError};
pub use store::{load, LoadError};

/// The slot a `parallel for` branch that stops its loop records under (`p3.7|stop/0`): the
/// journal's own naming, so a resume can find it without knowing the loop.
pub(crate) const STOP_SLOT: &str = "stop/0";

use std::path::{Path, PathBuf};

/// Where a project's durable runs live: `.kora/runs/RUN_ID/`.
pub fn runs_root(project_dir: &Path) -> PathBuf {
    project_dir.join(".kora").join("runs")
}

/// The journal file of one run.
pub fn journal_path(project_dir: &Path, run_id: &str) -> PathBuf {
    runs_root(project_dir).join(run_id).join("journal.jsonl")
}

/// One run as `kora runs` shows it.
#[derive(Debug)]
pub struct RunSummary {
    pub id: String,
    /// `running`, `interrupted` (nobody holds its lock), `stopped` (its resume waits for a
    /// person's decision), `suspended`, `finished`, `failed`.
    pub state: String,
    pub detail: String,
    pub program: String,
}

/// The durable runs of a project, oldest first (run ids sort by start time).
pub fn list(project_dir: &Path) -> std::io::Result<Vec<RunSummary>> {
    let root = runs_root(project_dir);
    let rd = match std::fs::read_dir(&root) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in rd.filter_map(Result::ok) {
        let id = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path().join("journal.jsonl");
        if !path.is_file() {
            continue;
        }
        let (state, detail, program) = match load(&path) {
            Ok(l) => {
                let f = fold::fold(&l.records);
                let program = f.program().map(|p| p.0.to_string()).unwrap_or_default();
                let mut state = f.state.name().to_string();
                let detail = match &f.state {
                    RunState::Suspended(d) | RunState::Failed(d) => d.clone(),
                    _ => String::new(),
                };
                // A run marked running whose lock is free was killed: it waits for a resume,
                // unless the resume would stop on an attempt only a person can settle.
                let mut detail = detail;
                let free = matches!(f.state, RunState::Running | RunState::Failed(_))
                    && RunLock::take(&entry.path(), &id).is_ok();
                if free {
                    if let Some(stops) = stops_of(project_dir, &id) {
                        state = "stopped".to_string();
                        detail = stops;
                    } else if f.state == RunState::Running {
                        state = "interrupted".to_string();
                    }
                }
                (state, detail, program)
            }
            Err(e) => ("unreadable".to_string(), e.to_string(), String::new()),
        };
        out.push(RunSummary {
            id,
            state,
            detail,
            program,
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}
