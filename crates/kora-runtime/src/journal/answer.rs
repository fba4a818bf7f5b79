//! `kora answer`: gives a suspended run the answer its `ask_human` is waiting for.
//!
//! The answer is written into the question's own slot as its outcome, so the
//! next resume replays it like any finished effect; nothing else about the run
//! changes, and the lock keeps this from racing a resume.

use std::path::Path;

use super::commit::Writer;
use super::durable::RunError;
use super::fold::{fold, SlotState};
use super::lock::RunLock;
use super::record::Record;
use super::store::{load, LoadError};

/// Answers the question run `id` waits on; returns the question.
pub fn answer(project_dir: &Path, id: &str, text: &str) -> Result<String, RunError> {
    let path = super::journal_path(project_dir, id);
    let Some(dir) = path.parent().filter(|_| path.is_file()) else {
        return Err(RunError::NotFound(format!(
            "no run {id} under {} (`kora runs` lists the runs here)",
            super::runs_root(project_dir).display()
        )));
    };
    let _lock = RunLock::take(dir, id).map_err(RunError::Locked)?;
    let loaded = load(&path).map_err(|e| match e {
        LoadError::Io(e) => RunError::Io(format!("cannot read {}: {e}", path.display())),
        e => RunError::Load(format!("run {id}: {e}")),
    })?;
    let folded = fold(&loaded.records);
    let pending = loaded.records.iter().rev().find_map(|r| match r {
        Record::Sent { slot, kind, call }
            if kind == "ask_human"
                && matches!(folded.slots.get(slot), Some(SlotState::Sent { .. })) =>
        {
            Some((slot.clone(), call.clone()))
        }
        _ => None,
    });
    let Some((slot, question)) = pending else {
        return Err(RunError::Refused(format!(
            "run {id} is not waiting for an answer (`kora runs` shows its state)"
        )));
    };
    let io = |e: std::io::Error| RunError::Io(format!("cannot write {}: {e}", path.display()));
    let w = Writer::open(&path, loaded.whole).map_err(io)?;
    w.append_synced(&Record::Done {
        slot,
        kind: "ask_human".into(),
        result: serde_json::json!({ "ok": text }),
        digest: None,
    })
    .map_err(io)?;
    w.append_synced(&Record::Status {
        state: "answered".into(),
        detail: String::new(),
    })
    .map_err(io)?;
    Ok(question)
}
