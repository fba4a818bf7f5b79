//! The one effect pipeline: every effectful call is described, then passes Prepared → Sent → Observed → Terminal.
//!
//! Observers (the journal, budgets, telemetry, cassettes) attach here and are
//! consulted nowhere else (architecture invariants 2 and 3). An effect is
//! named by its structural operation id (`file:function#index`), never by a
//! line. Pure code never reaches this file: only a call that acts on the
//! world builds an `Effect`, and with no observer attached each transition
//! costs one emptiness check.
//!
//! The shape fits a model call as well as a file read: a recorded answer is
//! looked up at Prepared (`Verdict::Replay`) before anything is sent, the
//! transport's retries are attempts inside Sent, token usage is reported at
//! Observed, and Terminal carries the outcome to be recorded.

use serde_json::Value as Json;

pub use kora_check::std_api::Class;

mod begun;
pub use begun::Begun;

/// What an effect does, for observers that treat kinds differently (a journal's resume table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Model,
    Tool,
    AskHuman,
    Output,
    Clock,
    Sleep,
    Random,
    Http,
    FsRead,
    FsWrite,
    SqlRead,
    SqlWrite,
    Env,
    Notes,
    /// A `parallel for`: which branches finished, so a resume takes the same ones.
    FanOut,
    /// One model request inside a tool loop (the loop itself is the `Model` effect a budget meters).
    ModelTurn,
    /// A call of an MCP server's tool, or the listing of its tools (`use mcp`).
    Mcp,
    /// A call of a Python function in a sidecar worker (`use python`).
    Python,
    /// A request to a package helper's process (`pdf.text`).
    Helper,
}

impl Kind {
    /// World-changing effects of these kinds write their own attempt record, through
    /// `Sending::intent`, just before they act: what they say there (where a file's bytes
    /// go, which database) is only known once they run. Others are marked on entering Sent.
    pub fn marks_itself(self) -> bool {
        matches!(self, Kind::FsWrite | Kind::SqlWrite | Kind::Http)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Model => "model",
            Kind::Tool => "tool",
            Kind::AskHuman => "ask_human",
            Kind::Output => "output",
            Kind::Clock => "clock",
            Kind::Sleep => "sleep",
            Kind::Random => "random",
            Kind::Http => "http",
            Kind::FsRead => "fs_read",
            Kind::FsWrite => "fs_write",
            Kind::SqlRead => "sql_read",
            Kind::SqlWrite => "sql_write",
            Kind::Env => "env",
            Kind::Notes => "notes",
            Kind::FanOut => "fan_out",
            Kind::ModelTurn => "model_turn",
            Kind::Mcp => "mcp",
            Kind::Python => "python",
            Kind::Helper => "helper",
        }
    }
}

/// One effectful call, described before anything happens.
#[derive(Clone, Debug)]
pub struct Effect<'a> {
    pub kind: Kind,
    pub class: Class,
    /// Structural operation id: `file:function#index`.
    pub op: &'a str,
    /// The standard-library member (`fs.write`) or `analyze`.
    pub call: &'a str,
    /// What it acts on: a path, a URL, a query's text, a note's key. Never a secret value:
    /// when labels arrive, a `classified` target is replaced here before observers see it.
    pub target: &'a str,
}

/// The four states; `Sent` is entered once per attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Prepared,
    Sent { attempt: u32 },
    Observed,
    Terminal,
}

/// What reached the program at Observed.
#[derive(Debug)]
pub enum Observation<'a> {
    /// Content read from the world; a journal digests it to detect a changed world on resume.
    Read(&'a [u8]),
    /// Rows returned or changed.
    Rows(u64),
    /// A response's status and body size.
    Response { status: u16, bytes: u64 },
    /// A model's token usage.
    Usage { input: u64, output: u64 },
    /// A value with nothing further to report (a clock reading, a random draw).
    Value,
}

/// What a world-changing effect says just before it acts (`Sending::intent`).
#[derive(Clone, Debug, Default)]
pub struct Intent {
    /// How a later process tells whether it happened; `None`: it cannot (a person decides).
    pub check: Option<crate::durable::journal::check::Check>,
    /// What a person's "it happened" replays (`{"ok": ...}`), for an effect without a check.
    pub done_as: Option<Json>,
}

/// What an observer decides at Prepared.
#[derive(Debug)]
pub enum Verdict {
    Proceed,
    /// A recorded result (`{"ok": ...}` or `{"err": "..."}`): the effect is not performed again.
    Replay(Json),
    /// Not allowed: the effect does not happen.
    Refuse(String),
    /// A budget meter has nothing left: the effect does not happen, and a model call
    /// answers `Exhausted(meter)`.
    Exhausted(crate::durable::meter::Meter),
}

/// A result an observer may record and replay: `{"ok": ...}` or `{"err": "..."}`.
pub trait Recordable: Sized {
    fn to_record(&self) -> Json;
    fn from_record(j: &Json) -> Option<Self>;
}

/// Sees every transition. Only the pipeline calls these methods.
pub trait Observer {
    fn prepared(&mut self, _e: &Effect) -> Verdict {
        Verdict::Proceed
    }
    fn transition(&mut self, _e: &Effect, _state: State) {}
    fn observed(&mut self, _e: &Effect, _what: &Observation) {}
    /// The outcome; `record` builds its recordable form only if the observer asks.
    fn terminal(&mut self, _e: &Effect, _ok: bool, _record: &dyn Fn() -> Json) {}
    /// An observer refused the effect at Prepared: it will not be sent and reaches no Terminal.
    fn abandoned(&mut self, _e: &Effect) {}
    /// The performer is about to act (`Sending::intent`). An observer that keeps attempt
    /// records writes one now; the answer is the name it keeps the effect under, which the
    /// performer may record beside the effect itself (a SQLite row, a request header).
    fn intent(&mut self, _e: &Effect, _i: &Intent) -> Option<String> {
        None
    }
    /// What reached the program is classified (`Sending::classified`): a record of it must
    /// not hold its text. `reread` is the value when the effect can read it again on resume.
    fn classified(&mut self, _e: &Effect, _reread: Option<&[u8]>) {}
}

/// Makes an observer for a `parallel for` branch or an isolated agent, which runs on its own
/// interpreter (and pipeline). `prefix` names the branch deterministically
/// (`p3.7|` = the run's fourth fan-out, item 7), so a journal can give its effects slots
/// that a resume finds again.
pub trait ForBranch: Send + Sync {
    fn for_branch(&self, prefix: &str) -> Box<dyn Observer>;
    /// The earliest branch of fan-out `loop_prefix` (`p3.`) that an earlier process of this
    /// run saw stop the loop (a `break`, or a `first` answer): a resume starts no later branch.
    fn stopped_at(&self, _loop_prefix: &str) -> Option<usize> {
        None
    }
}

/// Why an effect did not produce a result.
#[derive(Debug)]
pub enum Stop {
    Refused(String),
    /// A budget meter ran out before the effect was sent.
    Exhausted(crate::durable::meter::Meter),
    /// A replayed record that does not decode as this effect's result.
    BadRecord(String),
}

/// The observers of one run.
#[derive(Default)]
pub struct Pipeline {
    observers: Vec<Box<dyn Observer>>,
}

/// The Sent state of one effect: the performer reports attempts and observations through it.
pub struct Sending<'p, 'e> {
    pipeline: &'p mut Pipeline,
    /// An observer of this one effect (a cassette slot), consulted after the attached ones.
    local: Option<&'p mut dyn Observer>,
    effect: &'p Effect<'e>,
    attempt: u32,
}

impl Sending<'_, '_> {
    /// Starts another attempt (a retry stays inside Sent).
    pub fn retry(&mut self) {
        self.attempt += 1;
        let attempt = self.attempt;
        self.each(|o, e| o.transition(e, State::Sent { attempt }));
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Observer, &Effect)) {
        self.pipeline.each(&mut f, self.effect);
        if let Some(l) = self.local.as_deref_mut() {
            f(l, self.effect);
        }
    }

    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Something reached the program: retries end here.
    pub fn observe(&mut self, what: Observation) {
        self.each(|o, e| {
            o.transition(e, State::Observed);
            o.observed(e, &what);
        });
    }

    pub fn is_observed(&self) -> bool {
        !self.pipeline.observers.is_empty() || self.local.is_some()
    }

    /// Says what the effect is about to do, just before it touches the world; returns the
    /// name a journal keeps it under (`None` when nothing journals it).
    pub fn intent(&mut self, i: &Intent) -> Option<String> {
        let mut name = None;
        self.each(|o, e| {
            if let Some(n) = o.intent(e, i) {
                name.get_or_insert(n);
            }
        });
        name
    }

    /// Says that what reaches the program is classified: `reread` is the value itself when
    /// the effect reads it again on resume (a record keeps only a keyed digest), `None` when
    /// it must be replayed (a record keeps it sealed).
    pub fn classified(&mut self, reread: Option<&[u8]>) {
        self.each(|o, e| o.classified(e, reread));
    }
}

impl Pipeline {
    pub fn attach(&mut self, o: Box<dyn Observer>) {
        self.observers.push(o);
    }

    pub fn is_empty(&self) -> bool {
        self.observers.is_empty()
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Observer, &Effect), e: &Effect) {
        for o in &mut self.observers {
            f(o.as_mut(), e);
        }
    }

    /// Runs one effect through the four states. `perform` is called at most once, only if
    /// no observer replays or refuses it; its `Err` is a failure the program sees as `Err`.
    pub fn run<T: Recordable>(
        &mut self,
        e: &Effect,
        perform: impl FnOnce(&mut Sending) -> Result<T, String>,
    ) -> Result<Result<T, String>, Stop> {
        match self.run_with(e, None, |s| Ok::<_, std::convert::Infallible>(perform(s))) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// As `run`, with an observer of this one effect (consulted after the attached ones, so a
    /// budget admits a call before a cassette answers it), and a performer that may raise:
    /// a raise still reaches Terminal (as a failure) before it propagates, so a budget charges
    /// what the call spent up to the raise.
    pub fn run_with<T: Recordable, R>(
        &mut self,
        e: &Effect,
        mut local: Option<&mut dyn Observer>,
        perform: impl FnOnce(&mut Sending) -> Result<Result<T, String>, R>,
    ) -> Result<Result<Result<T, String>, Stop>, R> {
        if self.observers.is_empty() && local.is_none() {
            let mut sending = Sending {
                pipeline: self,
                local: None,
                effect: e,
                attempt: 1,
            };
            return perform(&mut sending).map(Ok);
        }
        // Every observer learns of the effect first, so each sees its Terminal (or its
        // abandonment) even when an earlier one answers it from a record.
        self.each(|o, e| o.transition(e, State::Prepared), e);
        if let Some(l) = local.as_deref_mut() {
            l.transition(e, State::Prepared);
        }
        let mut replay = None;
        let mut stop = None;
        for o in self
            .observers
            .iter_mut()
            .map(|o| o.as_mut() as &mut dyn Observer)
            .chain(local.as_deref_mut())
        {
            match o.prepared(e) {
                Verdict::Proceed => {}
                Verdict::Replay(j) => {
                    replay = Some(j);
                    break;
                }
                Verdict::Refuse(why) => {
                    stop = Some(Stop::Refused(why));
                    break;
                }
                Verdict::Exhausted(m) => {
                    stop = Some(Stop::Exhausted(m));
                    break;
                }
            }
        }
        if let Some(stop) = stop {
            self.each(|o, e| o.abandoned(e), e);
            if let Some(l) = local.as_deref_mut() {
                l.abandoned(e);
            }
            return Ok(Err(stop));
        }
        let (result, raised) = match replay {
            Some(j) => match decode(&j) {
                Some(r) => (r, None),
                None => {
                    self.each(|o, e| o.abandoned(e), e);
                    if let Some(l) = local.as_deref_mut() {
                        l.abandoned(e);
                    }
                    return Ok(Err(Stop::BadRecord(format!(
                        "the recorded result of {} does not fit it",
                        e.op
                    ))));
                }
            },
            None => {
                self.each(|o, e| o.transition(e, State::Sent { attempt: 1 }), e);
                if let Some(l) = local.as_deref_mut() {
                    l.transition(e, State::Sent { attempt: 1 });
                }
                let local_ref: Option<&mut dyn Observer> = match local.as_mut() {
                    Some(l) => Some(&mut **l),
                    None => None,
                };
                let mut sending = Sending {
                    pipeline: self,
                    local: local_ref,
                    effect: e,
                    attempt: 1,
                };
                match perform(&mut sending) {
                    Ok(r) => (r, None),
                    Err(raised) => (Err("raised".to_string()), Some(raised)),
                }
            }
        };
        let record = || encode(&result);
        let ok = result.is_ok();
        self.each(
            |o, e| {
                o.transition(e, State::Terminal);
                o.terminal(e, ok, &record);
            },
            e,
        );
        if let Some(l) = local {
            l.transition(e, State::Terminal);
            l.terminal(e, ok, &record);
        }
        match raised {
            Some(r) => Err(r),
            None => Ok(Ok(result)),
        }
    }
}

fn encode<T: Recordable>(r: &Result<T, String>) -> Json {
    match r {
        Ok(v) => serde_json::json!({ "ok": v.to_record() }),
        Err(why) => serde_json::json!({ "err": why }),
    }
}

fn decode<T: Recordable>(j: &Json) -> Option<Result<T, String>> {
    if let Some(why) = j.get("err").and_then(Json::as_str) {
        return Some(Err(why.to_string()));
    }
    T::from_record(j.get("ok")?).map(Ok)
}

impl Recordable for () {
    fn to_record(&self) -> Json {
        Json::Null
    }
    fn from_record(_: &Json) -> Option<()> {
        Some(())
    }
}

impl Recordable for String {
    fn to_record(&self) -> Json {
        Json::String(self.clone())
    }
    fn from_record(j: &Json) -> Option<String> {
        j.as_str().map(str::to_string)
    }
}

impl Recordable for bool {
    fn to_record(&self) -> Json {
        Json::Bool(*self)
    }
    fn from_record(j: &Json) -> Option<bool> {
        j.as_bool()
    }
}

impl Recordable for i64 {
    fn to_record(&self) -> Json {
        Json::from(*self)
    }
    fn from_record(j: &Json) -> Option<i64> {
        j.as_i64()
    }
}

/// A byte of `fs.bytes`: a read's answer is re-read on resume (only its digest is kept), so
/// this form is for tests and mocks rather than the journal.
impl Recordable for u8 {
    fn to_record(&self) -> Json {
        Json::from(*self)
    }
    fn from_record(j: &Json) -> Option<u8> {
        j.as_u64().and_then(|n| u8::try_from(n).ok())
    }
}

impl Recordable for u64 {
    fn to_record(&self) -> Json {
        Json::from(*self)
    }
    fn from_record(j: &Json) -> Option<u64> {
        j.as_u64()
    }
}

impl Recordable for f64 {
    fn to_record(&self) -> Json {
        serde_json::Number::from_f64(*self)
            .map(Json::Number)
            .unwrap_or(Json::Null)
    }
    fn from_record(j: &Json) -> Option<f64> {
        j.as_f64()
    }
}

impl<T: Recordable> Recordable for Vec<T> {
    fn to_record(&self) -> Json {
        Json::Array(self.iter().map(Recordable::to_record).collect())
    }
    fn from_record(j: &Json) -> Option<Vec<T>> {
        j.as_array()?.iter().map(T::from_record).collect()
    }
}

impl<T: Recordable> Recordable for Option<T> {
    fn to_record(&self) -> Json {
        match self {
            Some(v) => v.to_record(),
            None => Json::Null,
        }
    }
    fn from_record(j: &Json) -> Option<Option<T>> {
        if j.is_null() {
            Some(None)
        } else {
            T::from_record(j).map(Some)
        }
    }
}

impl Recordable for Json {
    fn to_record(&self) -> Json {
        self.clone()
    }
    fn from_record(j: &Json) -> Option<Json> {
        Some(j.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Clone, Default)]
    struct Log(Rc<RefCell<Vec<String>>>);

    struct Recorder {
        log: Log,
        replay: Option<Json>,
        refuse: bool,
    }

    impl Observer for Recorder {
        fn prepared(&mut self, _e: &Effect) -> Verdict {
            if self.refuse {
                return Verdict::Refuse("no room".into());
            }
            match self.replay.take() {
                Some(j) => Verdict::Replay(j),
                None => Verdict::Proceed,
            }
        }
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

    fn effect() -> Effect<'static> {
        Effect {
            kind: Kind::FsRead,
            class: Class::Read,
            op: "main.ko:<module>#0",
            call: "fs.read",
            target: "notes.txt",
        }
    }

    fn pipeline(replay: Option<Json>, refuse: bool) -> (Pipeline, Log) {
        let log = Log::default();
        let mut p = Pipeline::default();
        p.attach(Box::new(Recorder {
            log: log.clone(),
            replay,
            refuse,
        }));
        (p, log)
    }

    #[test]
    fn states_come_in_order_with_retries_inside_sent() {
        let (mut p, log) = pipeline(None, false);
        let r = p
            .run(&effect(), |s| {
                s.retry();
                s.observe(Observation::Read(b"hi"));
                Ok("hi".to_string())
            })
            .expect("not stopped");
        assert_eq!(r, Ok("hi".to_string()));
        let log = log.0.borrow().join("\n");
        assert_eq!(
            log,
            "main.ko:<module>#0 Prepared\nmain.ko:<module>#0 Sent { attempt: 1 }\n\
             main.ko:<module>#0 Sent { attempt: 2 }\nmain.ko:<module>#0 Observed\n\
             saw Read([104, 105])\nmain.ko:<module>#0 Terminal\nend true {\"ok\":\"hi\"}"
        );
    }

    #[test]
    fn a_replayed_result_is_never_performed() {
        let (mut p, log) = pipeline(Some(serde_json::json!({"err": "gone"})), false);
        let r: Result<String, String> = p
            .run(&effect(), |_| panic!("performed despite a recorded result"))
            .expect("not stopped");
        assert_eq!(r, Err("gone".to_string()));
        assert!(!log.0.borrow().iter().any(|l| l.contains("Sent")));
    }

    #[test]
    fn a_refusal_stops_before_sending() {
        let (mut p, _) = pipeline(None, true);
        let r: Result<Result<String, String>, Stop> =
            p.run(&effect(), |_| panic!("performed despite a refusal"));
        assert!(matches!(r, Err(Stop::Refused(_))));
    }

    #[test]
    fn an_observer_after_a_replay_still_sees_prepared_and_terminal() {
        let (mut p, log) = pipeline(Some(serde_json::json!({"ok": "recorded"})), false);
        let late = Log::default();
        p.attach(Box::new(Recorder {
            log: late.clone(),
            replay: None,
            refuse: false,
        }));
        let r: Result<String, String> = p
            .run(&effect(), |_| panic!("performed despite a recorded result"))
            .expect("not stopped");
        assert_eq!(r, Ok("recorded".to_string()));
        assert_eq!(log.0.borrow().len(), 3);
        let late = late.0.borrow().join("\n");
        assert_eq!(
            late,
            "main.ko:<module>#0 Prepared\nmain.ko:<module>#0 Terminal\nend true {\"ok\":\"recorded\"}"
        );
    }

    #[test]
    fn without_observers_the_effect_just_runs() {
        let mut p = Pipeline::default();
        let r = p.run(&effect(), |s| {
            assert!(!s.is_observed());
            Ok(7i64)
        });
        assert!(matches!(r, Ok(Ok(7))));
    }
}
