//! Running one effect in three calls (`begin`, `observe`, `finish`) when its performer needs the interpreter.
//!
//! A tool loop runs the program's tools between its model turns, and those tools make
//! effects of their own; a closure passed to `Pipeline::run` would hold the pipeline the
//! whole time. Split, the inner effects pass through the same observers, nested between
//! the loop's Sent and its Terminal.

use super::{decode, encode, Effect, Observation, Pipeline, Recordable, State, Stop, Verdict};

/// How `begin` left an effect whose performer cannot live in a closure.
pub enum Begun<T> {
    /// Sent: perform it, report through `observe`, then call `finish`.
    Perform,
    /// An observer answered it from a record; it has reached Terminal already.
    Done(Result<T, String>),
    Stopped(Stop),
}

impl Pipeline {
    /// The Prepared half of `run`, for an effect whose performer needs the interpreter (a tool
    /// loop runs the program's tools, whose own effects pass through this pipeline in between).
    /// Observers see those inner effects nested between this one's Sent and Terminal.
    pub fn begin<T: Recordable>(&mut self, e: &Effect) -> Begun<T> {
        self.each(|o, e| o.transition(e, State::Prepared), e);
        let mut verdict = Verdict::Proceed;
        for o in &mut self.observers {
            verdict = o.prepared(e);
            if !matches!(verdict, Verdict::Proceed) {
                break;
            }
        }
        let stop = match verdict {
            Verdict::Proceed => {
                self.each(|o, e| o.transition(e, State::Sent { attempt: 1 }), e);
                return Begun::Perform;
            }
            Verdict::Replay(j) => match decode(&j) {
                Some(r) => {
                    self.finish(e, &r);
                    return Begun::Done(r);
                }
                None => Stop::BadRecord(format!("the recorded result of {} does not fit it", e.op)),
            },
            Verdict::Refuse(why) => Stop::Refused(why),
            Verdict::Exhausted(m) => Stop::Exhausted(m),
        };
        self.each(|o, e| o.abandoned(e), e);
        Begun::Stopped(stop)
    }

    /// Reports what reached the program while a begun effect is in flight.
    pub fn observe(&mut self, e: &Effect, what: Observation) {
        self.each(
            |o, e| {
                o.transition(e, State::Observed);
                o.observed(e, &what);
            },
            e,
        );
    }

    /// Takes off an observer attached for one begun effect (found by address: the effects
    /// inside it may have attached observers of their own after it, so it need not be last).
    pub fn detach(&mut self, which: *const dyn super::Observer) -> bool {
        let before = self.observers.len();
        self.observers
            .retain(|o| !std::ptr::addr_eq(o.as_ref() as *const dyn super::Observer, which));
        self.observers.len() != before
    }

    /// The Terminal of a begun effect.
    pub fn finish<T: Recordable>(&mut self, e: &Effect, result: &Result<T, String>) {
        let record = || encode(result);
        let ok = result.is_ok();
        self.each(
            |o, e| {
                o.transition(e, State::Terminal);
                o.terminal(e, ok, &record);
            },
            e,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durable::effect::{Class, Kind, Observer};
    use serde_json::Value as Json;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Clone, Default)]
    struct Log(Rc<RefCell<Vec<String>>>);

    struct Recorder {
        log: Log,
    }

    impl Observer for Recorder {
        fn transition(&mut self, e: &Effect, s: State) {
            self.log.0.borrow_mut().push(format!("{} {s:?}", e.op));
        }
        fn observed(&mut self, _e: &Effect, what: &Observation) {
            self.log.0.borrow_mut().push(format!("saw {what:?}"));
        }
        fn terminal(&mut self, _e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
            self.log
                .0
                .borrow_mut()
                .push(format!("end {ok} {}", record()));
        }
    }

    #[test]
    fn a_begun_effect_sees_the_effects_inside_it_nested() {
        let log = Log::default();
        let mut p = Pipeline::default();
        p.attach(Box::new(Recorder { log: log.clone() }));
        let outer = Effect {
            kind: Kind::Model,
            class: Class::WorldChanging,
            op: "main.ko:<module>#1",
            call: "analyze",
            target: "m",
        };
        let read = Effect {
            kind: Kind::FsRead,
            class: Class::Read,
            op: "main.ko:<module>#0",
            call: "fs.read",
            target: "notes.txt",
        };
        assert!(matches!(p.begin::<String>(&outer), Begun::Perform));
        let inner: Result<Result<String, String>, Stop> = p.run(&read, |_| Ok("read".to_string()));
        assert!(matches!(inner, Ok(Ok(_))));
        p.observe(
            &outer,
            Observation::Usage {
                input: 1,
                output: 2,
            },
        );
        p.finish(&outer, &Ok::<_, String>("answer".to_string()));
        let log = log.0.borrow().join("\n");
        assert_eq!(
            log,
            "main.ko:<module>#1 Prepared\nmain.ko:<module>#1 Sent { attempt: 1 }\n\
             main.ko:<module>#0 Prepared\nmain.ko:<module>#0 Sent { attempt: 1 }\n\
             main.ko:<module>#0 Terminal\nend true {\"ok\":\"read\"}\n\
             main.ko:<module>#1 Observed\nsaw Usage { input: 1, output: 2 }\n\
             main.ko:<module>#1 Terminal\nend true {\"ok\":\"answer\"}"
        );
    }
}
