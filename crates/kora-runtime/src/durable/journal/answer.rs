//! `kora answer`: gives a suspended run the answer its `ask_human` is waiting for.
//!
//! The answer is written into the question's own slot as its outcome, so the
//! next resume replays it like any finished effect; nothing else about the run
//! changes, and the lock keeps this from racing a resume.

use std::path::Path;

use super::commit::Writer;
use super::fold::{fold, SlotState};
use super::open::{open_journal, Opened};
use super::record::Record;
use super::run::RunError;

/// Answers the question run `id` waits on; returns the question.
pub fn answer(project_dir: &Path, id: &str, text: &str) -> Result<String, RunError> {
    let Opened {
        path,
        lock: _lock,
        loaded,
        ..
    } = open_journal(project_dir, id)?;
    let folded = fold(&loaded.records);
    let pending = loaded.records.iter().rev().find_map(|r| match r {
        Record::Sent {
            slot, kind, call, ..
        } if kind == "ask_human"
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
    let w = Writer::open(&path, loaded.whole, loaded.next_seq()).map_err(io)?;
    w.append_synced(&Record::Done {
        slot,
        kind: "ask_human".into(),
        result: serde_json::json!({ "ok": text }),
        digest: None,
        keyed: None,
        sealed: None,
    })
    .map_err(io)?;
    w.append_synced(&Record::Status {
        state: "answered".into(),
        detail: String::new(),
    })
    .map_err(io)?;
    Ok(question)
}
