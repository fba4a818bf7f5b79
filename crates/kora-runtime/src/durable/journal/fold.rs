//! Folding a journal's records into what a resume needs: each slot's last state, output shown, run state.

use std::collections::HashMap;

use serde_json::Value as Json;

use super::check::Check;
use super::record::Record;

/// Where one effect slot stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum SlotState {
    /// Marked before acting on the world; no outcome was recorded.
    Sent {
        kind: String,
        call: String,
        check: Option<Check>,
        target: String,
        done_as: Option<Json>,
    },
    /// Finished: the recorded outcome (and a read's digest, a classified value's keyed
    /// digest, or the outcome sealed).
    Done {
        result: Json,
        digest: Option<String>,
        keyed: Option<String>,
        sealed: Option<String>,
    },
}

/// The run's last recorded status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunState {
    Running,
    Suspended(String),
    /// `kora answer` gave the waiting question its answer; a resume continues.
    Answered,
    Finished,
    Failed(String),
}

impl RunState {
    pub fn name(&self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Suspended(_) => "suspended",
            RunState::Answered => "answered",
            RunState::Finished => "finished",
            RunState::Failed(_) => "failed",
        }
    }
}

/// A journal's meaning.
#[derive(Clone, Debug, PartialEq)]
pub struct Folded {
    pub header: Option<Record>,
    pub slots: HashMap<String, SlotState>,
    /// Bytes of output already shown; a resume does not show them again.
    pub out_bytes: u64,
    pub state: RunState,
}

/// Folds records in order; a later record for a slot replaces an earlier one.
pub fn fold(records: &[Record]) -> Folded {
    let mut f = Folded {
        header: None,
        slots: HashMap::new(),
        out_bytes: 0,
        state: RunState::Running,
    };
    for r in records {
        match r {
            Record::Header { .. } => {
                if f.header.is_none() {
                    f.header = Some(r.clone());
                }
            }
            Record::Sent {
                slot,
                kind,
                call,
                check,
                target,
                done_as,
            } => {
                f.slots.insert(
                    slot.clone(),
                    SlotState::Sent {
                        kind: kind.clone(),
                        call: call.clone(),
                        check: check.clone(),
                        target: target.clone(),
                        done_as: done_as.clone(),
                    },
                );
            }
            Record::Done {
                slot,
                result,
                digest,
                keyed,
                sealed,
                ..
            } => {
                f.slots.insert(
                    slot.clone(),
                    SlotState::Done {
                        result: result.clone(),
                        digest: digest.clone(),
                        keyed: keyed.clone(),
                        sealed: sealed.clone(),
                    },
                );
            }
            Record::Resolved {
                slot,
                decision,
                result,
                ..
            } => {
                if decision == "done" {
                    f.slots.insert(
                        slot.clone(),
                        SlotState::Done {
                            result: result.clone().unwrap_or(Json::Null),
                            digest: None,
                            keyed: None,
                            sealed: None,
                        },
                    );
                } else {
                    // Not run: the slot is fresh work again.
                    f.slots.remove(slot);
                }
            }
            Record::Out { bytes } => f.out_bytes += bytes,
            Record::Status { state, detail } => {
                f.state = match state.as_str() {
                    "finished" => RunState::Finished,
                    "failed" => RunState::Failed(detail.clone()),
                    "suspended" => RunState::Suspended(detail.clone()),
                    "answered" => RunState::Answered,
                    _ => RunState::Running,
                }
            }
        }
    }
    f
}

impl Folded {
    /// The header's fields, if the journal has a valid one.
    pub fn program(&self) -> Option<(&str, &str, &[String])> {
        match &self.header {
            Some(Record::Header {
                program,
                digest,
                args,
                ..
            }) => Some((program, digest, args)),
            _ => None,
        }
    }

    /// The `kora.toml` table digests the run started under (`None`: the journal predates them).
    pub fn config(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        match &self.header {
            Some(Record::Header { config, .. }) => config.as_ref(),
            _ => None,
        }
    }

    /// The `--model` the run started with, if it named one.
    pub fn model(&self) -> Option<&str> {
        match &self.header {
            Some(Record::Header { model, .. }) => model.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_outcome_replaces_its_mark_and_output_adds_up() {
        let f = fold(&[
            Record::Sent {
                slot: "a/0".into(),
                kind: "sql_write".into(),
                call: "sql.execute".into(),
                check: None,
                target: String::new(),
                done_as: None,
            },
            Record::Out { bytes: 4 },
            Record::Done {
                slot: "a/0".into(),
                kind: "sql_write".into(),
                result: json!({"ok": 1}),
                digest: None,
                keyed: None,
                sealed: None,
            },
            Record::Out { bytes: 6 },
            Record::Status {
                state: "finished".into(),
                detail: String::new(),
            },
        ]);
        assert_eq!(f.out_bytes, 10);
        assert_eq!(f.state, RunState::Finished);
        assert!(matches!(f.slots.get("a/0"), Some(SlotState::Done { .. })));
    }

    #[test]
    fn a_decision_settles_an_open_attempt() {
        let sent = |slot: &str| Record::Sent {
            slot: slot.into(),
            kind: "fs_write".into(),
            call: "fs.append".into(),
            check: None,
            target: String::new(),
            done_as: None,
        };
        let f = fold(&[
            sent("a/0"),
            sent("b/0"),
            Record::Resolved {
                slot: "a/0".into(),
                decision: "done".into(),
                by: "check".into(),
                result: Some(json!({"ok": null})),
            },
            Record::Resolved {
                slot: "b/0".into(),
                decision: "not_run".into(),
                by: "person".into(),
                result: None,
            },
        ]);
        assert!(
            matches!(f.slots.get("a/0"), Some(SlotState::Done { result, .. }) if *result == json!({"ok": null}))
        );
        assert!(!f.slots.contains_key("b/0"), "not run: fresh work again");
    }
}
