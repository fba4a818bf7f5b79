//! The pipeline observer of a durable run: it replays finished effects and journals new ones.
//!
//! Every effect gets a slot named by its structural operation id and how many
//! times that operation has run before in this run (`main.ko:f#2/7`); a resume
//! re-runs the program from the top, so the same code reaches the same slots.
//! What the observer does with a slot is gaps.md's resume table: a finished
//! effect is replayed, never performed again; a read is performed again and its
//! digest compared; a world-changing effect writes its attempt (with how to check
//! it) before it acts. An attempt a kill left open was settled before the program
//! started (`run.rs`), so the observer never meets one. A classified value is kept
//! as a keyed digest when the effect reads it again, sealed when it is replayed.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::fold::SlotState;
use super::record::Record;
use super::run::{hex, Run};
use crate::durable::effect::{
    Class, Effect, ForBranch, Intent, Kind, Observation, Observer, State, Verdict,
};
use crate::durable::{machine_key, seal};

impl Run {
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

    /// Where a keyed digest or a sealed record of `slot` belongs: it checks or opens only there.
    fn context(&self, slot: &str) -> String {
        format!("kora journal\0{}\0{slot}", self.id)
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

/// How a classified result is kept.
#[derive(Default, PartialEq)]
enum Secret {
    #[default]
    None,
    /// Read again on resume: only its keyed digest is kept.
    Keyed(String),
    /// Replayed on resume: kept sealed.
    Sealed,
}

/// One effect in flight.
#[derive(Default)]
struct Frame {
    slot: String,
    replayed: bool,
    expect_digest: Option<String>,
    digest: Option<String>,
    /// A classified value read again: the keyed digest it must match, and whether it came.
    expect_keyed: Option<String>,
    keyed_seen: bool,
    secret: Secret,
    /// Its attempt is journaled (by `intent`, or on entering Sent).
    marked: bool,
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

/// Marked before it is sent, so a crash in between is known to be an open attempt. A tool
/// of the program's own is not: it is Kora code whose writes are marked themselves, so one
/// cut off mid-way runs again.
fn two_phase(e: &Effect) -> bool {
    e.class == Class::WorldChanging
}

impl Durable {
    fn mark(&mut self, e: &Effect, i: Option<&Intent>) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if frame.marked || frame.replayed || frame.slot.is_empty() {
            return;
        }
        frame.marked = true;
        let check = i.and_then(|i| i.check.clone());
        let target = if check.is_none() {
            e.target.chars().take(300).collect()
        } else {
            String::new()
        };
        self.run.write(
            &Record::Sent {
                slot: frame.slot.clone(),
                kind: e.kind.name().to_string(),
                call: e.call.to_string(),
                check,
                target,
                done_as: i.and_then(|i| i.done_as.clone()),
            },
            true,
        );
    }

    /// The Done record of a finished effect, its classified parts digested or sealed.
    fn done(&self, e: &Effect, frame: Frame, ok: bool, result: Json) -> Option<Record> {
        let kind = e.kind.name().to_string();
        let sealed_needed = frame.secret == Secret::Sealed
            || (crate::labels::label::any() && {
                let text = result.to_string();
                crate::labels::label::scrub(&text) != text
            });
        if let (Secret::Keyed(d), true) = (&frame.secret, ok) {
            return Some(Record::Done {
                slot: frame.slot,
                kind,
                result: serde_json::json!({ "ok": null }),
                digest: frame.digest,
                keyed: Some(d.clone()),
                sealed: None,
            });
        }
        if sealed_needed {
            let sealed = machine_key::key().and_then(|k| {
                seal::seal(
                    k,
                    &self.run.context(&frame.slot),
                    result.to_string().as_bytes(),
                )
            });
            return match sealed {
                Ok(s) => Some(Record::Done {
                    slot: frame.slot,
                    kind,
                    result: Json::Null,
                    digest: frame.digest,
                    keyed: None,
                    sealed: Some(s),
                }),
                Err(why) => {
                    self.run.fail(format!(
                        "run {} cannot journal the classified result of `{}` at {}: {why}",
                        self.run.id, e.call, frame.slot
                    ));
                    None
                }
            };
        }
        Some(Record::Done {
            slot: frame.slot,
            kind,
            result,
            digest: frame.digest,
            keyed: None,
            sealed: None,
        })
    }
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
            Some(SlotState::Done {
                keyed: Some(k), ..
            }) => {
                // A classified value: read again, and checked against its keyed digest.
                match machine_key::key() {
                    Ok(key) if seal::same_key(key, k) => {
                        frame.expect_keyed = Some(k.clone());
                        frame.replayed = true;
                        Verdict::Proceed
                    }
                    Ok(_) => Verdict::Refuse(format!(
                        "run {} cannot check `{}` at {}: the journal kept it with another machine's key than this machine's key (it was copied from another machine, or ~/.kora/key changed); resume it where it started, or restore the key",
                        self.run.id, e.call, frame.slot
                    )),
                    Err(why) => Verdict::Refuse(format!(
                        "run {} cannot check `{}` at {}: {why}",
                        self.run.id, e.call, frame.slot
                    )),
                }
            }
            Some(SlotState::Done {
                sealed: Some(s), ..
            }) => {
                let opened = machine_key::key()
                    .and_then(|k| seal::open(k, &self.run.context(&frame.slot), s))
                    .and_then(|b| serde_json::from_slice::<Json>(&b).map_err(|e| e.to_string()));
                match opened {
                    Ok(j) => {
                        frame.replayed = true;
                        Verdict::Replay(j)
                    }
                    Err(why) => Verdict::Refuse(format!(
                        "run {} cannot replay `{}` at {}: {why}",
                        self.run.id, e.call, frame.slot
                    )),
                }
            }
            Some(SlotState::Done { result, .. }) => {
                frame.replayed = true;
                Verdict::Replay(result.clone())
            }
            // Every open attempt was settled before the program started; one left here means
            // the journal changed under the run.
            Some(SlotState::Sent { call, .. }) if two_phase(e) => Verdict::Refuse(format!(
                "run {} has `{call}` at {} sent with no outcome and no decision about it; resume it again to settle it",
                self.run.id, frame.slot
            )),
            _ => Verdict::Proceed,
        }
    }

    fn transition(&mut self, e: &Effect, state: State) {
        if state == State::Prepared {
            self.frames.push(Frame::default());
        }
        if state == (State::Sent { attempt: 1 }) && two_phase(e) && !e.kind.marks_itself() {
            self.mark(e, None);
        }
    }

    fn intent(&mut self, e: &Effect, i: &Intent) -> Option<String> {
        if two_phase(e) {
            self.mark(e, Some(i));
        }
        self.frames
            .last()
            .map(|f| f.slot.clone())
            .filter(|s| !s.is_empty())
    }

    fn classified(&mut self, e: &Effect, reread: Option<&[u8]>) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        let Some(bytes) = reread else {
            frame.secret = Secret::Sealed;
            return;
        };
        let keyed = match machine_key::key() {
            Ok(k) => seal::keyed_digest(k, &self.run.context(&frame.slot), bytes),
            Err(why) => {
                self.run.fail(format!(
                    "run {} cannot journal the classified value of `{}` at {}: {why}",
                    self.run.id, e.call, frame.slot
                ));
                return;
            }
        };
        if let Some(expected) = &frame.expect_keyed {
            frame.keyed_seen = true;
            if *expected != keyed {
                self.diverged = Some(format!(
                    "`{}` at {} ({}) has a different value than when run {} read it before it stopped; the run's input changed, so resuming could repeat or skip work (restore it, or start a new run)",
                    e.call, frame.slot, e.target, self.run.id
                ));
            }
        }
        frame.secret = Secret::Keyed(keyed);
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
        if frame.expect_keyed.is_some() && !frame.keyed_seen {
            self.diverged = Some(format!(
                "`{}` at {} ({}) no longer gives the value run {} read before it stopped; the run's input changed (restore it, or start a new run)",
                e.call, frame.slot, e.target, self.run.id
            ));
        }
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
                    check: None,
                    target: String::new(),
                    done_as: None,
                },
                true,
            );
            return;
        }
        if let Some(r) = self.done(e, frame, ok, record()) {
            self.run.write(&r, !cheap(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run::RunError;
    use super::super::FORMAT;
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
        assert!(text.contains(&format!("\"format\":{FORMAT}")), "{text}");
        // What format 2 wrote: plain JSON lines, no numbers or checksums.
        std::fs::write(
            &path,
            "{\"t\":\"header\",\"format\":2,\"run\":\"old\",\"program\":\"p.ko\",\"digest\":\"d\",\"args\":[]}\n{\"t\":\"status\",\"state\":\"running\"}\n",
        )
        .expect("rewrite");
        let _ = std::fs::remove_file(super::super::store::synced_path(&path));
        match Run::resume(&dir, "old") {
            Err(e @ RunError::Load { .. }) => {
                let why = e.to_string();
                assert_eq!(e.code(), Some("E1363"));
                assert!(why.contains("format 2 by an older kora"), "{why}");
                assert!(why.contains("the kora that started it"), "{why}");
            }
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("an older journal was resumed"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
