//! The standard library's registry: the run state it needs, argument access, and dispatch of each `StdFn` to its module.
//!
//! One file per module (`json.rs`, `fs.rs`, ...). The checker bound every
//! argument to its parameter, so a call arrives here as a `StdFn` plus one
//! optional value per parameter: no name is looked up at run time. Effectful
//! members go through `durable/effect.rs`; pure ones (json, csv, yaml, xml, re) never
//! touch it.
//!
//! May use: `config`, `value`, `labels`, `durable`, `observe`, `eval` (a call arrives with the
//! interpreter, for the run's host state and `Caller`). Must not know: agents or `parallel
//! for`; the values it makes reach `Value` through `value::native`.

mod bytes;
mod csv;
mod env;
mod fs;
mod fs_write;
mod helper;
mod http;
pub(crate) mod image;
mod json;
mod json_build;
mod labels;
mod notes;
#[cfg(test)]
pub(crate) mod parse_fuzz;
mod pdf;
#[cfg(test)]
mod pipeline_tests;
mod random;
mod re;
mod sql;
mod time;
pub(crate) mod typed;
mod xml;
mod yaml;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use kora_check::hir::{self, StdCall, Sym};
use kora_check::std_api::{self, Owner, StdFn};
use kora_check::types::Ty;

use crate::durable::effect::{self, Effect, Kind, Pipeline, Recordable, Sending, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{OutcomeTag, Record, Value};

pub use notes::{list_runs, notes_root, read_notes, valid_run_id, NotesError};

pub use crate::value::native::Native;

/// What the standard library needs to know about the run, made at its first call.
pub struct Host {
    /// Relative paths resolve here: the entry file's folder.
    pub base_dir: PathBuf,
    /// Where `.kora/` lives: the folder holding `kora.toml`, else `base_dir`.
    pub project_dir: PathBuf,
    pub run_id: String,
    pub args: Vec<String>,
    pub pipeline: Pipeline,
    /// Observers that follow the run into branches and isolated agents.
    pub branches: Vec<std::sync::Arc<dyn effect::ForBranch>>,
    /// This interpreter's branch name (empty in the main interpreter).
    pub prefix: String,
    /// A durable run: `ask_human` with nobody to answer suspends instead of failing, and a
    /// write syncs what it wrote before its outcome is journaled.
    pub durable: bool,
    /// How many fan-outs (and isolated calls) this interpreter has started: names the next.
    pub fanouts: u32,
    pub rng: fastrand::Rng,
    /// The label of the seed `rng` was last seeded with: every draw carries it, since a
    /// seeded generator's draws are a function of the seed.
    pub rng_label: Option<crate::labels::label::Tag>,
    /// The call being made was given a classified value: its effect's result is sealed.
    pub sealing: bool,
    pub regexes: re::Cache,
    pub types: typed::StdTypes,
}

/// Settings the embedder (the CLI) gives a run before it starts.
#[derive(Default)]
pub struct RunSettings {
    pub run_id: Option<String>,
    pub args: Vec<String>,
    pub observers: Vec<Box<dyn effect::Observer>>,
    /// Observers to recreate in every branch (a durable run's journal).
    pub branches: Vec<std::sync::Arc<dyn effect::ForBranch>>,
    /// The branch this interpreter runs (empty for the main one).
    pub prefix: String,
    /// Whether the run is journaled (so it can wait for `kora answer`).
    pub durable: bool,
}

impl Host {
    fn new(prog: &hir::Program, settings: RunSettings) -> Host {
        let entry = &prog.module(prog.entry).path;
        let base_dir = entry
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let base_dir = std::fs::canonicalize(&base_dir).unwrap_or(base_dir);
        let project_dir = base_dir
            .ancestors()
            .find(|d| d.join("kora.toml").is_file())
            .unwrap_or(&base_dir)
            .to_path_buf();
        let mut pipeline = Pipeline::default();
        for o in settings.observers {
            pipeline.attach(o);
        }
        Host {
            base_dir,
            project_dir,
            run_id: settings.run_id.unwrap_or_else(new_run_id),
            args: settings.args,
            pipeline,
            branches: settings.branches,
            prefix: settings.prefix,
            durable: settings.durable,
            fanouts: 0,
            rng: fastrand::Rng::new(),
            rng_label: None,
            sealing: false,
            regexes: re::Cache::default(),
            types: typed::StdTypes::find(prog),
        }
    }

    /// A path as the program wrote it, resolved against the program's folder.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// Runs one effect through the pipeline; a refusal stops the program.
    pub fn effect<T: Recordable>(
        &mut self,
        e: &Effect,
        perform: impl FnOnce(&mut Sending) -> Result<T, String>,
    ) -> RtResult<Result<T, String>> {
        let sealing = self.sealing;
        let perform = |s: &mut Sending| {
            if sealing {
                s.classified(None);
            }
            perform(s)
        };
        self.pipeline.run(e, perform).map_err(|s| match s {
            Stop::Refused(why) => RtError::new(
                codes::EFFECT_REFUSED,
                format!("`{}` at {} was refused: {why}", e.call, e.op),
            ),
            Stop::Exhausted(m) => RtError::new(
                codes::EFFECT_REFUSED,
                format!(
                    "`{}` at {} was refused: the budget's {} ran out",
                    e.call,
                    e.op,
                    m.name()
                ),
            ),
            Stop::BadRecord(why) => RtError::new(codes::EFFECT_REFUSED, why),
        })
    }
}

/// A run id that sorts by start time: `YYYYMMDD-HHMMSS-xxxxxx`.
pub fn new_run_id() -> String {
    let now = jiff::ZonedDateTime::now().with_time_zone(jiff::tz::TimeZone::UTC);
    format!(
        "{}-{:06x}",
        now.strftime("%Y%m%d-%H%M%S"),
        fastrand::u32(..0x0100_0000)
    )
}

/// The evaluated arguments of one call, one slot per parameter.
pub(crate) struct Args {
    pub func: StdFn,
    pub recv: Option<Value>,
    pub vals: Vec<Option<Value>>,
    pub site: String,
    pub expect: Ty,
}

impl Args {
    pub fn name(&self) -> String {
        let m = std_api::member(self.func);
        match m.owner {
            Owner::Module(md) => format!("{}.{}", md.name(), m.name),
            Owner::Value(t) => format!("{}.{}", t.name(), m.name),
        }
    }

    fn param(&self, i: usize) -> &'static str {
        std_api::member(self.func)
            .params
            .get(i)
            .map(|p| p.0)
            .unwrap_or("?")
    }

    pub fn get(&self, i: usize) -> Option<&Value> {
        match self.vals.get(i) {
            Some(Some(Value::None)) | Some(None) | None => None,
            Some(Some(v)) => Some(v),
        }
    }

    pub fn value(&self, i: usize) -> RtResult<&Value> {
        match self.vals.get(i).and_then(Option::as_ref) {
            Some(v) => Ok(v),
            None => self.bad(i, "a value"),
        }
    }

    fn bad<T>(&self, i: usize, want: &str) -> RtResult<T> {
        let got = self
            .vals
            .get(i)
            .and_then(Option::as_ref)
            .map(|v| v.type_name())
            .unwrap_or("nothing");
        Err(RtError::new(
            codes::TYPE,
            format!(
                "`{}` needs {want} for `{}`, got {got}",
                self.name(),
                self.param(i)
            ),
        ))
    }

    pub fn str(&self, i: usize) -> RtResult<&str> {
        match self.get(i) {
            Some(Value::Str(s)) => Ok(s.as_str()),
            _ => self.bad(i, "a `str`"),
        }
    }

    pub fn opt_str(&self, i: usize) -> RtResult<Option<&str>> {
        match self.get(i) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.as_str())),
            Some(_) => self.bad(i, "a `str`"),
        }
    }

    pub fn int(&self, i: usize, default: i64) -> RtResult<i64> {
        match self.get(i) {
            None => Ok(default),
            Some(Value::Int(n)) => Ok(*n),
            Some(Value::Bool(b)) => Ok(*b as i64),
            Some(_) => self.bad(i, "an `int`"),
        }
    }

    pub fn float(&self, i: usize, default: f64) -> RtResult<f64> {
        match self.get(i) {
            None => Ok(default),
            Some(Value::Int(n)) => Ok(*n as f64),
            Some(Value::Float(f)) => Ok(*f),
            Some(Value::Bool(b)) => Ok(*b as i64 as f64),
            Some(_) => self.bad(i, "a number"),
        }
    }

    pub fn bool(&self, i: usize, default: bool) -> RtResult<bool> {
        match self.get(i) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => self.bad(i, "a `bool`"),
        }
    }

    pub fn list(&self, i: usize) -> RtResult<Vec<Value>> {
        match self.get(i) {
            Some(Value::List(l)) => Ok(l.borrow().clone()),
            Some(Value::Tuple(t)) => Ok(t.as_ref().clone()),
            _ => self.bad(i, "a `list`"),
        }
    }

    /// `dict[str, str]` arguments such as HTTP headers.
    pub fn str_dict(&self, i: usize) -> RtResult<Vec<(String, String)>> {
        match self.get(i) {
            None => Ok(Vec::new()),
            Some(Value::Dict(d)) => {
                let mut out = Vec::new();
                for (k, v) in d.borrow().iter() {
                    match (&k.0, v) {
                        (Value::Str(k), Value::Str(v)) => {
                            out.push((k.as_str().to_string(), v.as_str().to_string()))
                        }
                        _ => return self.bad(i, "a `dict[str, str]`"),
                    }
                }
                Ok(out)
            }
            Some(_) => self.bad(i, "a `dict[str, str]`"),
        }
    }

    pub fn effect<'a>(&'a self, kind: Kind, target: &'a str, call: &'a str) -> Effect<'a> {
        Effect {
            kind,
            class: std_api::member(self.func).class,
            op: &self.site,
            call,
            target,
        }
    }
}

pub(crate) fn ok(v: Value) -> Value {
    Value::outcome(OutcomeTag::Ok, v)
}

pub(crate) fn err(why: impl Into<String>) -> Value {
    Value::outcome(OutcomeTag::Err, Value::str(why.into()))
}

/// `Ok(v)` / `Err(why)` from a Rust result.
pub(crate) fn outcome<T>(r: Result<T, String>, f: impl FnOnce(T) -> Value) -> Value {
    match r {
        Ok(v) => ok(f(v)),
        Err(why) => err(why),
    }
}

pub(crate) fn str_list(items: Vec<String>) -> Value {
    Value::list(items.into_iter().map(Value::str).collect())
}

impl Interp<'_> {
    /// Configures the standard library for this run; without it a run id is made up.
    pub fn set_run(&mut self, settings: RunSettings) {
        self.host = Some(Box::new(Host::new(&self.prog, settings)));
        // A budget scope already in force keeps its observer on the new pipeline.
        if let Some(cur) = self.budget.clone() {
            self.attach_budget_observer(&cur);
        }
    }

    /// This run's id (made now if nothing set one).
    pub fn run_id(&mut self) -> String {
        self.host().run_id.clone()
    }

    pub(crate) fn host(&mut self) -> &mut Host {
        if self.host.is_none() {
            let settings = self.pending_run.take().unwrap_or_default();
            self.host = Some(Box::new(Host::new(&self.prog, settings)));
        }
        self.host.as_mut().expect("made above")
    }

    pub(crate) fn std_call(&mut self, c: &StdCall) -> RtResult<Value> {
        let recv = match &c.recv {
            Some(r) => Some(self.eval(r)?),
            None => None,
        };
        let mut vals = Vec::with_capacity(c.args.len());
        for a in &c.args {
            vals.push(match a {
                Some(e) => Some(self.eval(e)?),
                None => None,
            });
        }
        let args = Args {
            func: c.func,
            recv,
            vals,
            site: c.site.clone(),
            expect: c.expect.clone(),
        };
        self.dispatch(args)
    }

    /// `x.member(...)` on a standard value whose type the checker did not know.
    pub(crate) fn native_method(
        &mut self,
        recv: &Value,
        name: Sym,
        pos: Vec<Value>,
        kw: Vec<(Sym, Value)>,
        call: bool,
    ) -> RtResult<Value> {
        let Value::Native(n) = recv else {
            return Err(RtError::new(codes::ATTRIBUTE, "not a standard value"));
        };
        let owner = Owner::Value(n.std_type());
        let text = self.prog.name(name).to_string();
        let Some(m) = std_api::lookup(owner, &text) else {
            return Err(RtError::new(
                codes::ATTRIBUTE,
                format!("'{}' has no member '{text}'", n.type_name()),
            ));
        };
        if m.property == call {
            let hint = if m.property {
                "is a field: drop the parentheses"
            } else {
                "is a method: call it"
            };
            return Err(RtError::new(
                codes::ATTRIBUTE,
                format!("`{}.{text}` {hint}", n.type_name()),
            ));
        }
        let mut vals: Vec<Option<Value>> = vec![None; m.params.len()];
        if pos.len() > m.params.len() {
            return Err(RtError::new(
                codes::ARGUMENTS,
                format!("`{text}` takes {} arguments", m.params.len()),
            ));
        }
        for (i, v) in pos.into_iter().enumerate() {
            vals[i] = Some(v);
        }
        for (k, v) in kw {
            let kn = self.prog.name(k);
            match m.params.iter().position(|p| p.0 == kn) {
                Some(i) => vals[i] = Some(v),
                None => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!("`{text}` has no parameter named `{kn}`"),
                    ))
                }
            }
        }
        let expect = m
            .typed
            .map(|t| std_api::parse_sig_type(t, &Ty::Any, &|_| Ty::Any))
            .unwrap_or(Ty::Any);
        self.dispatch(Args {
            func: m.func,
            recv: Some(recv.clone()),
            vals,
            site: String::from("<dynamic>"),
            expect,
        })
    }

    fn dispatch(&mut self, a: Args) -> RtResult<Value> {
        // Sources label their results even before any label exists.
        let source = matches!(
            a.func,
            StdFn::EnvGet
                | StdFn::FsRead
                | StdFn::FsLines
                | StdFn::FsBytes
                | StdFn::HttpGet
                | StdFn::HttpPost
                | StdFn::NotesRead
        );
        if source || crate::labels::label::any() {
            return self.dispatch_labeled(a);
        }
        self.dispatch_plain(a)
    }

    fn dispatch_plain(&mut self, a: Args) -> RtResult<Value> {
        use StdFn::*;
        match a.func {
            JsonParse | JsonEncode => json::call(self, a),
            FsRead | FsLines | FsBytes | FsWrite | FsAppend | FsList | FsGlob | FsExists
            | FsRemove | FsMkdir | FsImage | ImageFormat | ImageSize | ImageWidth | ImageHeight => {
                fs::call(self, a)
            }
            HttpGet | HttpPost => http::call(self, a),
            SqlOpen | DbQuery | DbExecute | DbExecuteMany | DbClose => sql::call(self, a),
            TimeNow | TimeParse | TimeDatetime | TimeFromTimestamp | TimeSleep | TimeSeconds
            | TimeMinutes | TimeHours | TimeDays | DtFormat | DtIso | DtTimestamp | DtToZone
            | DtAdd | DtSince | DtYear | DtMonth | DtDay | DtHour | DtMinute | DtSecond
            | DtWeekday | DtZone => time::call(self, a),
            ReSearch | ReMatch | ReFullmatch | ReFindall | ReFinditer | ReSub | ReSplit
            | ReEscape | ReCheck => re::call(self, a),
            CsvParse | CsvEncode => csv::call(self, a),
            YamlParse => yaml::call(self, a),
            XmlParse => xml::call(self, a),
            EnvGet | EnvArgs => env::call(self, a),
            RandomRandom | RandomRandint | RandomUniform | RandomChoice | RandomShuffle
            | RandomSample | RandomSeed => random::call(self, a),
            NotesWrite | NotesRead | NotesKeys | NotesRunId => notes::call(self, a),
            PdfPages | PdfText | PdfRender => pdf::call(self, a),
            HelperCall => helper::call(self, a),
            BytesDecode => bytes::call(a),
        }
    }

    /// Builds a standard record (`http.Response`, `re.Match`, `xml.Element`) from its fields.
    pub(crate) fn std_record(&self, ty: hir::TypeId, fields: Vec<Value>) -> Value {
        Value::Record(Rc::new(Record {
            ty,
            fields: std::cell::RefCell::new(fields),
        }))
    }
}
