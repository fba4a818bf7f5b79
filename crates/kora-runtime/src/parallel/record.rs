//! A `parallel for` as one effect: the journal keeps which branches finished, the `first` winner and what they printed.
//!
//! Which branches finish before a `break` stops the rest, and which in-flight siblings of a
//! `first` winner get to their end, is a matter of scheduling. A resume that simply ran the
//! loop again could start a branch the first run never started (a fresh paid call) or stop
//! one at another point (different output, so the count of output already shown would no
//! longer line up). So a finished loop is recorded: the indices of the branches that
//! finished, the winner's index, and the output the loop printed. A resume runs exactly
//! those branches (their own effects replay from their slots), with no stop flag racing
//! them, rebuilds the value from them, checks the winner is the recorded one, and prints the
//! recorded output.
//!
//! A loop killed before its record is run again, but a branch that stopped it (a `break`, a
//! `first` answer) journaled that at once under its own name, so the resume starts no
//! branch after the earliest such one: it does not race past a stop the killed run saw.

use serde_json::{json, Value as Json};

use crate::durable::effect::{Begun, Class, Effect, Kind, Recordable, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;

/// What a finished `parallel for` leaves in the journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FanOutRecord {
    /// Branches that finished (answered, fell off the end, or broke), in input order.
    pub ran: Vec<usize>,
    /// `first`: the branch whose answer was taken.
    pub winner: Option<usize>,
    /// Everything the branches printed, in input order.
    pub shown: String,
}

impl Recordable for FanOutRecord {
    fn to_record(&self) -> Json {
        json!({"ran": self.ran, "winner": self.winner, "shown": self.shown})
    }

    fn from_record(j: &Json) -> Option<FanOutRecord> {
        let ran = j
            .get("ran")?
            .as_array()?
            .iter()
            .map(|i| i.as_u64().map(|i| i as usize))
            .collect::<Option<Vec<_>>>()?;
        let winner = match j.get("winner")? {
            Json::Null => None,
            w => Some(w.as_u64()? as usize),
        };
        Some(FanOutRecord {
            ran,
            winner,
            shown: j.get("shown")?.as_str()?.to_string(),
        })
    }
}

/// What a branch that stops its loop records, under its own name (`p3.7|stop/0`), so a resume
/// of a loop killed before its record starts no branch after it.
pub(crate) const STOP_OP: &str = "stop";

/// The loop's effect: named by the fan-out's number in this interpreter (`p3`), which the
/// branches' own slots (`p3.7|...`) already rely on being the same on resume.
pub(crate) fn fan_out_effect(op: &str) -> Effect<'_> {
    Effect {
        kind: Kind::FanOut,
        class: Class::Effect,
        op,
        call: "parallel for",
        target: "",
    }
}

impl Interp<'_> {
    /// Opens the loop's effect: `Some(record)` when an earlier process of this run finished it.
    pub(crate) fn begin_fan_out(&mut self, e: &Effect) -> RtResult<Option<FanOutRecord>> {
        match self.host().pipeline.begin::<FanOutRecord>(e) {
            Begun::Perform => Ok(None),
            Begun::Done(Ok(r)) => Ok(Some(r)),
            // A loop that raised is recorded as such; running it again raises again or not.
            Begun::Done(Err(_)) => Ok(None),
            Begun::Stopped(Stop::Refused(why) | Stop::BadRecord(why)) => Err(RtError::new(
                codes::EFFECT_REFUSED,
                format!("the `parallel for` ({}) was refused: {why}", e.op),
            )),
            Begun::Stopped(Stop::Exhausted(m)) => Err(RtError::new(
                codes::EFFECT_REFUSED,
                format!(
                    "the `parallel for` ({}) was refused: the budget's {} ran out",
                    e.op,
                    m.name()
                ),
            )),
        }
    }

    /// Journals (synced) that this branch stops its loop; a replayed branch finds it recorded.
    pub(crate) fn record_stop(&mut self, why: &str) -> RtResult<()> {
        let e = Effect {
            kind: Kind::FanOut,
            class: Class::Effect,
            op: STOP_OP,
            call: why,
            target: "",
        };
        let done: Result<(), String> = self.host().effect(&e, |_| Ok(()))?;
        done.map_err(|why| RtError::new(codes::EFFECT_REFUSED, why))
    }

    /// Checks a replayed loop against its record: the same branches finished, the same winner.
    pub(crate) fn check_fan_out(
        &self,
        e: &Effect,
        recorded: &FanOutRecord,
        ran: &[usize],
        winner: Option<usize>,
    ) -> RtResult<()> {
        if recorded.ran == ran && recorded.winner == winner {
            return Ok(());
        }
        Err(RtError::new(
            codes::EFFECT_REFUSED,
            format!(
                "the `parallel for` ({}) ended differently on resume (branches {:?}, winner {:?}) than before the run stopped (branches {:?}, winner {:?}); the program is not deterministic between its effects, so start a new run",
                e.op, ran, winner, recorded.ran, recorded.winner
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        for r in [
            FanOutRecord {
                ran: vec![0, 1, 3],
                winner: Some(3),
                shown: "a\nb\n".into(),
            },
            FanOutRecord {
                ran: vec![],
                winner: None,
                shown: String::new(),
            },
        ] {
            assert_eq!(FanOutRecord::from_record(&r.to_record()), Some(r));
        }
        assert_eq!(FanOutRecord::from_record(&json!({"ran": [1]})), None);
    }
}
