//! What a resume decides before it runs anything: every attempt a kill left without an outcome, settled or named.
//!
//! An attempt with a check (a local write) is settled by looking at the world: it
//! happened (its outcome is journaled and replayed) or it did not (it is performed
//! when the run gets there; an append cut off part-way is cut back first). An
//! attempt without one (an HTTP POST) is settled by a person, whose decision is
//! journaled. If anything is left unsettled, the resume is refused naming all of
//! it and the commands that settle it, before any effect is performed.

use serde_json::{json, Value as Json};

use super::check::{cut_back, Check, Found};
use super::fold::{Folded, SlotState};
use super::record::Record;

/// An attempt with no outcome in the journal.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    pub slot: String,
    pub kind: String,
    pub call: String,
    pub check: Option<Check>,
    pub target: String,
    pub done_as: Option<Json>,
}

/// A person's decisions, from `kora run --resume ID --mark-done EFFECT --retry EFFECT`.
#[derive(Clone, Debug, Default)]
pub struct Decisions {
    pub mark_done: Vec<String>,
    pub retry: Vec<String>,
}

/// An attempt nobody settled: the resume stops on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsettled {
    pub slot: String,
    pub call: String,
    /// Why it cannot be settled without a person.
    pub why: String,
}

/// How an attempt was settled.
#[derive(Clone, Debug, PartialEq)]
enum Settled {
    Done { result: Json, by: &'static str },
    NotRun { by: &'static str },
}

/// The decision over every pending attempt: settled ones, and those that stop the resume.
#[derive(Debug, Default)]
pub struct Plan {
    settled: Vec<(String, Settled)>,
    /// Partial appends to cut back before the run goes on: (path, offset).
    cuts: Vec<(String, u64)>,
    pub stops: Vec<Unsettled>,
}

/// The attempts of a journal that have no outcome, in the order they were made (questions
/// waiting for `kora answer` are not attempts: they wait for an answer, not a decision).
pub fn pending(records: &[Record], folded: &Folded) -> Vec<Pending> {
    let mut out: Vec<Pending> = Vec::new();
    for r in records {
        let Record::Sent { slot, .. } = r else {
            continue;
        };
        let Some(SlotState::Sent {
            kind,
            call,
            check,
            target,
            done_as,
        }) = folded.slots.get(slot)
        else {
            continue;
        };
        if kind == "ask_human" || out.iter().any(|p| p.slot == *slot) {
            continue;
        }
        out.push(Pending {
            slot: slot.clone(),
            kind: kind.clone(),
            call: call.clone(),
            check: check.clone(),
            target: target.clone(),
            done_as: done_as.clone(),
        });
    }
    out
}

/// What "it happened" replays for an attempt a person marks done.
fn done_result(p: &Pending) -> Json {
    match &p.done_as {
        Some(j) => j.clone(),
        // A SQL write's outcome is a row count, a file write's nothing.
        None if p.kind == "sql_write" => json!({ "ok": 0 }),
        None => json!({ "ok": null }),
    }
}

/// Decides every pending attempt, looking at the world but changing nothing. A decision
/// that names no pending attempt is an error listing the ones there are.
pub fn plan(run: &str, pending: &[Pending], person: &Decisions) -> Result<Plan, String> {
    for name in person.mark_done.iter().chain(&person.retry) {
        if !pending.iter().any(|p| p.slot == *name) {
            let waiting: Vec<String> = pending.iter().map(|p| quote(&p.slot)).collect();
            return Err(if waiting.is_empty() {
                format!(
                    "run {run} has no effect waiting for a decision, so `{name}` cannot be settled"
                )
            } else {
                format!(
                    "run {run} has no effect `{name}` waiting for a decision; the ones waiting are {}",
                    waiting.join(", ")
                )
            });
        }
        if person.mark_done.contains(name) && person.retry.contains(name) {
            return Err(format!(
                "`{name}` is given both --mark-done and --retry; say one"
            ));
        }
    }
    let mut plan = Plan::default();
    // Appends to one file land in order, so they are looked at in that order: cutting a
    // partial one back settles the ones after it as not run.
    let mut order: Vec<&Pending> = pending.iter().collect();
    order.sort_by_key(|p| match &p.check {
        Some(Check::Append { path, at, .. }) => (0, path.clone(), *at),
        _ => (1, String::new(), 0),
    });
    let mut cut_to: Vec<(String, u64)> = Vec::new();
    for p in order {
        let settled = if person.mark_done.contains(&p.slot) {
            Settled::Done {
                result: done_result(p),
                by: "person",
            }
        } else if person.retry.contains(&p.slot) {
            Settled::NotRun { by: "person" }
        } else {
            let Some(check) = &p.check else {
                plan.stops.push(Unsettled {
                    slot: p.slot.clone(),
                    call: describe(p),
                    why: "sent, and no outcome was recorded".into(),
                });
                continue;
            };
            // An append past a cut made in this decision finds nothing there.
            let cut_before = match check {
                Check::Append { path, at, .. } => {
                    cut_to.iter().any(|(c, to)| c == path && *to <= *at)
                }
                _ => false,
            };
            match (cut_before, check.look(run, &p.slot)) {
                (true, _) | (false, Found::NotRun) => Settled::NotRun { by: "check" },
                (false, Found::Done(result)) => Settled::Done {
                    result,
                    by: "check",
                },
                (false, Found::Partial { path, at }) => {
                    cut_to.push((path.clone(), at));
                    plan.cuts.push((path, at));
                    Settled::NotRun { by: "check" }
                }
                (false, Found::Unknown(why)) => {
                    plan.stops.push(Unsettled {
                        slot: p.slot.clone(),
                        call: describe(p),
                        why,
                    });
                    continue;
                }
            }
        };
        plan.settled.push((p.slot.clone(), settled));
    }
    // Report stops in the order the attempts were made.
    plan.stops
        .sort_by_key(|s| pending.iter().position(|p| p.slot == s.slot));
    Ok(plan)
}

impl Plan {
    /// Cuts partial appends back and returns the records that journal every decision made.
    pub fn apply(&self) -> Result<Vec<Record>, String> {
        for (path, at) in &self.cuts {
            cut_back(path, *at).map_err(|e| {
                format!("cannot cut the partial append to `{path}` back to byte {at}: {e}")
            })?;
        }
        Ok(self
            .settled
            .iter()
            .map(|(slot, s)| match s {
                Settled::Done { result, by } => Record::Resolved {
                    slot: slot.clone(),
                    decision: "done".into(),
                    by: (*by).into(),
                    result: Some(result.clone()),
                },
                Settled::NotRun { by } => Record::Resolved {
                    slot: slot.clone(),
                    decision: "not_run".into(),
                    by: (*by).into(),
                    result: None,
                },
            })
            .collect())
    }
}

/// `` `http.post` to URL `` or `` `fs.append` ``: the call as a stop message names it.
fn describe(p: &Pending) -> String {
    if p.target.is_empty() {
        format!("`{}`", p.call)
    } else {
        format!("`{}` to {}", p.call, p.target)
    }
}

/// A slot as a shell argument: slots hold `|`, `#`, `<` and `>`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The refusal naming every unsettled attempt and the commands that settle each.
pub fn stops_message(run: &str, stops: &[Unsettled]) -> String {
    let mut m = if stops.len() == 1 {
        format!("run {run} cannot resume yet: an effect was cut off when it stopped, and kora cannot tell whether it happened\n")
    } else {
        format!("run {run} cannot resume yet: {} effects were cut off when it stopped, and kora cannot tell whether they happened\n", stops.len())
    };
    for s in stops {
        m.push_str(&format!("  {} at {}: {}\n", s.call, s.slot, s.why));
    }
    m.push_str("check each by hand, then settle it (nothing has run yet):\n");
    for s in stops {
        let q = quote(&s.slot);
        let done = format!("kora run --resume {run} --mark-done {q}");
        let retry = format!("kora run --resume {run} --retry {q}");
        let w = done.len().max(retry.len());
        m.push_str(&format!(
            "  {done:<w$}   # it happened: go on as if it succeeded\n  {retry:<w$}   # it did not: perform it again\n"
        ));
    }
    m.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(slot: &str, call: &str, check: Option<Check>) -> Record {
        Record::Sent {
            slot: slot.into(),
            kind: "x".into(),
            call: call.into(),
            check,
            target: if call == "http.post" {
                "http://h/x".into()
            } else {
                String::new()
            },
            done_as: None,
        }
    }

    #[test]
    fn every_unsettled_attempt_is_named_with_its_commands() {
        let recs = vec![
            sent("a/0", "http.post", None),
            sent("b/0", "http.post", None),
            Record::Done {
                slot: "b/0".into(),
                kind: "x".into(),
                result: json!({"ok": 1}),
                digest: None,
                keyed: None,
                sealed: None,
            },
            sent("p0.1|c/0", "http.post", None),
        ];
        let folded = super::super::fold::fold(&recs);
        let p = pending(&recs, &folded);
        assert_eq!(
            p.iter().map(|p| p.slot.as_str()).collect::<Vec<_>>(),
            ["a/0", "p0.1|c/0"]
        );
        let first = plan("r", &p, &Decisions::default()).expect("planned");
        assert_eq!(first.stops.len(), 2);
        let m = stops_message("r", &first.stops);
        assert!(m.contains("`http.post` to http://h/x at a/0"), "{m}");
        assert!(
            m.contains("kora run --resume r --mark-done 'p0.1|c/0'"),
            "{m}"
        );
        assert!(m.contains("kora run --resume r --retry 'a/0'"), "{m}");

        let person = Decisions {
            mark_done: vec!["a/0".into()],
            retry: vec!["p0.1|c/0".into()],
        };
        let decided = plan("r", &p, &person).expect("planned");
        assert!(decided.stops.is_empty());
        let recs = decided.apply().expect("applied");
        assert!(recs.iter().any(|r| matches!(r, Record::Resolved { slot, decision, by, .. } if slot == "a/0" && decision == "done" && by == "person")));
        let bad = Decisions {
            retry: vec!["zz/0".into()],
            ..Decisions::default()
        };
        let e = super::plan("r", &p, &bad).expect_err("unknown");
        assert!(e.contains("'a/0'"), "{e}");
    }
}
