//! The protocol loop: one thread answering the editor's requests and forwarding the debuggee's stops and output, in the order they happened.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use dap::events::{Event, ExitedEventBody, OutputEventBody, StoppedEventBody};
use dap::prelude::{Command, Request, ResponseBody, Server};
use dap::responses::{
    ContinueResponse, EvaluateResponse, ScopesResponse, SetBreakpointsResponse,
    SetExceptionBreakpointsResponse, SetVariableResponse, StackTraceResponse, ThreadsResponse,
    VariablesResponse,
};
use dap::server::ServerOutput;
use dap::types::{
    Breakpoint, Capabilities, OutputEventCategory, Scope, Source, SourceBreakpoint, StackFrame,
    StoppedEventReason, Thread, Variable,
};
use kora_runtime::agents::cassette::Mode;

use crate::breakpoint::{parse_log, HitRule, Spec};
use crate::framing::{self, Incoming};
use crate::launch::{self, Launch};
use crate::lines::{file_lines, Landing};
use crate::link::{Msg, Place, Reason, Resume, SetVariable, Shared};
use crate::variables::StoppedView;

/// The one thread a Kora program runs on.
const THREAD_ID: i64 = 1;

/// Serves one debug session on `input`/`output` until the editor disconnects.
pub fn serve<R, W>(input: R, output: W) -> std::io::Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    // The `dap` server is used for writing only; requests are read by `framing`.
    let server = Server::new(BufReader::new(std::io::empty()), BufWriter::new(output));
    let out = server.output.clone();
    let (tx, rx) = channel();
    let reader_tx = tx.clone();
    std::thread::Builder::new()
        .name("kora-dap-read".into())
        .spawn(move || {
            let mut input = BufReader::new(input);
            loop {
                let msg = match framing::read(&mut input) {
                    Incoming::Request(r) => Msg::Request(r),
                    Incoming::Unknown { seq, why } => Msg::Unreadable { seq, why },
                    Incoming::Closed => Msg::Closed,
                };
                let closed = matches!(msg, Msg::Closed);
                if reader_tx.send(msg).is_err() || closed {
                    break;
                }
            }
        })?;
    let mut a = Adapter {
        out,
        shared: Arc::new(Shared::default()),
        tx,
        start: None,
        resume: None,
        stopped: None,
        terminating: false,
        exited: false,
        next_breakpoint: 1,
        raised: None,
        program: None,
    };
    a.run(rx)
}

struct Adapter<W: Write> {
    out: Arc<Mutex<ServerOutput<W>>>,
    shared: Arc<Shared>,
    /// Given to the debuggee, which reports on it.
    tx: Sender<Msg>,
    /// Lets the debuggee start (sent at `configurationDone`).
    start: Option<Sender<()>>,
    resume: Option<Sender<Resume>>,
    stopped: Option<StoppedView>,
    /// `terminate` was asked: the program is held at its next statement and nothing more is shown.
    terminating: bool,
    exited: bool,
    next_breakpoint: i64,
    /// The error the program is stopped on, for `exceptionInfo`.
    raised: Option<crate::exceptions::Raised>,
    /// The launched file: its `parallel for` branches decide where breakpoints cannot stop.
    program: Option<PathBuf>,
}

impl<W: Write> Adapter<W> {
    fn run(&mut self, rx: Receiver<Msg>) -> std::io::Result<()> {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Request(req) => {
                    if matches!(req.command, Command::Disconnect(_)) {
                        self.respond(req.success(ResponseBody::Disconnect));
                        return Ok(());
                    }
                    self.request(*req);
                }
                Msg::Unreadable { seq, why } => {
                    eprintln!("kora dap: cannot take a message: {why}");
                    if let Some(seq) = seq {
                        self.respond(dap::responses::Response {
                            request_seq: seq,
                            success: false,
                            message: Some(dap::responses::ResponseMessage::Error(format!(
                                "kora dap cannot take this request: {why}"
                            ))),
                            body: None,
                            error: None,
                        });
                    }
                }
                Msg::Closed => return Ok(()),
                Msg::Stopped(stop) if !self.terminating => {
                    let (mut description, mut text) = (None, None);
                    let (reason, ids) = match stop.reason {
                        Reason::Entry => (StoppedEventReason::Entry, None),
                        Reason::Step => (StoppedEventReason::Step, None),
                        Reason::Pause => (StoppedEventReason::Pause, None),
                        Reason::Breakpoint(id, note) => {
                            if let Some(why) = note {
                                description = Some("Breakpoint condition failed".into());
                                self.event(Event::Output(OutputEventBody {
                                    category: Some(OutputEventCategory::Console),
                                    output: format!("kora dap: {why}\n"),
                                    ..OutputEventBody::default()
                                }));
                                text = Some(why);
                            }
                            (StoppedEventReason::Breakpoint, Some(vec![id]))
                        }
                        Reason::Error(raised) => {
                            description = Some(format!("Error {}", raised.code));
                            text = Some(raised.message.clone());
                            self.raised = Some(raised);
                            (StoppedEventReason::Exception, None)
                        }
                    };
                    self.stopped = Some(StoppedView::new(stop.snapshot));
                    self.event(Event::Stopped(StoppedEventBody {
                        reason,
                        description,
                        thread_id: Some(THREAD_ID),
                        preserve_focus_hint: None,
                        text,
                        all_threads_stopped: Some(true),
                        hit_breakpoint_ids: ids,
                    }));
                }
                // Held for good: after `terminate` the program must not go on.
                Msg::Stopped(_) => {}
                Msg::Output { stderr, text } if !self.terminating => {
                    self.event(Event::Output(OutputEventBody {
                        category: Some(if stderr {
                            OutputEventCategory::Stderr
                        } else {
                            OutputEventCategory::Stdout
                        }),
                        output: text,
                        ..OutputEventBody::default()
                    }));
                }
                Msg::Output { .. } => {}
                Msg::Log(text) if !self.terminating => {
                    self.event(Event::Output(OutputEventBody {
                        category: Some(OutputEventCategory::Console),
                        output: text,
                        ..OutputEventBody::default()
                    }));
                }
                Msg::Log(_) => {}
                Msg::Exited(code) => {
                    if !self.exited && !self.terminating {
                        self.event(Event::Exited(ExitedEventBody { exit_code: code }));
                        self.event(Event::Terminated(None));
                    }
                    self.exited = true;
                }
            }
        }
        Ok(())
    }

    fn send(&self, body: dap::base_message::Sendable) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = out.send(body) {
            eprintln!("kora dap: cannot write to the editor: {e}");
        }
    }

    fn respond(&self, r: dap::responses::Response) {
        self.send(dap::base_message::Sendable::Response(r));
    }

    fn event(&self, e: Event) {
        self.send(dap::base_message::Sendable::Event(e));
    }

    fn request(&mut self, req: Request) {
        let response = match &req.command {
            Command::Initialize(_) => {
                let caps = Capabilities {
                    supports_configuration_done_request: Some(true),
                    supports_terminate_request: Some(true),
                    supports_evaluate_for_hovers: Some(true),
                    supports_exception_info_request: Some(true),
                    supports_conditional_breakpoints: Some(true),
                    supports_hit_conditional_breakpoints: Some(true),
                    supports_log_points: Some(true),
                    supports_set_variable: Some(true),
                    exception_breakpoint_filters: Some(crate::exceptions::filters()),
                    ..Capabilities::default()
                };
                self.respond(req.success(ResponseBody::Initialize(caps)));
                self.event(Event::Initialized);
                return;
            }
            Command::Launch(args) => match self.launch(
                args.additional_data.as_ref(),
                args.no_debug.unwrap_or(false),
            ) {
                Ok(()) => req.success(ResponseBody::Launch),
                Err(why) => req.error(&why),
            },
            Command::SetBreakpoints(args) => {
                let bps = self.set_breakpoints(args);
                req.success(ResponseBody::SetBreakpoints(SetBreakpointsResponse {
                    breakpoints: bps,
                }))
            }
            Command::SetExceptionBreakpoints(args) => {
                crate::exceptions::set(&self.shared, &args.filters);
                req.success(ResponseBody::SetExceptionBreakpoints(
                    SetExceptionBreakpointsResponse { breakpoints: None },
                ))
            }
            Command::ConfigurationDone => {
                if let Some(start) = self.start.take() {
                    // The debuggee may already have failed its check; it reports that itself.
                    let _ = start.send(());
                }
                req.success(ResponseBody::ConfigurationDone)
            }
            Command::ExceptionInfo(_) => match (&self.stopped, &self.raised) {
                (Some(_), Some(r)) => {
                    req.success(ResponseBody::ExceptionInfo(crate::exceptions::info(r)))
                }
                _ => req.error("the program is not stopped on an error"),
            },
            Command::Threads => req.success(ResponseBody::Threads(ThreadsResponse {
                threads: vec![Thread {
                    id: THREAD_ID,
                    name: "main".into(),
                }],
            })),
            Command::StackTrace(args) => {
                let frames = self.stack_trace(args.start_frame, args.levels);
                let total = self.stopped.as_ref().map(|s| s.frames.len() as i64);
                req.success(ResponseBody::StackTrace(StackTraceResponse {
                    stack_frames: frames,
                    total_frames: total,
                }))
            }
            Command::Scopes(args) => {
                let scopes = self.scopes(args.frame_id);
                req.success(ResponseBody::Scopes(ScopesResponse { scopes }))
            }
            Command::Variables(args) => {
                let variables = self.variables(args.variables_reference);
                req.success(ResponseBody::Variables(VariablesResponse { variables }))
            }
            Command::Evaluate(args) => {
                let frame = args.frame_id.unwrap_or(0).max(0) as usize;
                let found = match &self.stopped {
                    Some(s) => s.lookup(frame, &args.expression).cloned(),
                    None => Err(
                        "the program is running: watch expressions are read when it is paused"
                            .into(),
                    ),
                };
                match found {
                    Ok(e) => req.success(ResponseBody::Evaluate(EvaluateResponse {
                        result: e.value,
                        type_field: Some(e.ty),
                        presentation_hint: None,
                        variables_reference: e.reference,
                        named_variables: None,
                        indexed_variables: None,
                        memory_reference: None,
                    })),
                    Err(why) => req.error(&why),
                }
            }
            Command::SetVariable(args) => match self.set_variable(args) {
                Ok(v) => req.success(ResponseBody::SetVariable(SetVariableResponse {
                    value: v.value,
                    type_field: Some(v.ty),
                    variables_reference: Some(v.reference),
                    named_variables: None,
                    indexed_variables: None,
                })),
                Err(why) => req.error(&why),
            },
            Command::Continue(_) => match self.resume(Resume::Continue) {
                // Left out: this version of the `dap` crate spells the field in snake case.
                Ok(()) => req.success(ResponseBody::Continue(ContinueResponse {
                    all_threads_continued: None,
                })),
                Err(why) => req.error(why),
            },
            Command::Next(_) => self.step(req, Resume::Next, ResponseBody::Next),
            Command::StepIn(_) => self.step(req, Resume::StepIn, ResponseBody::StepIn),
            Command::StepOut(_) => self.step(req, Resume::StepOut, ResponseBody::StepOut),
            Command::Pause(_) => {
                self.shared.pause.store(true, Ordering::Release);
                req.success(ResponseBody::Pause)
            }
            Command::Terminate(_) => {
                self.terminating = true;
                self.shared.pause.store(true, Ordering::Release);
                self.respond(req.success(ResponseBody::Terminate));
                if !self.exited {
                    self.event(Event::Terminated(None));
                }
                return;
            }
            _ => req.error("kora dap does not support this request"),
        };
        self.respond(response);
    }

    fn step(&mut self, req: Request, how: Resume, body: ResponseBody) -> dap::responses::Response {
        match self.resume(how) {
            Ok(()) => req.success(body),
            Err(why) => req.error(why),
        }
    }

    fn resume(&mut self, how: Resume) -> Result<(), &'static str> {
        self.raised = None;
        if self.stopped.take().is_none() {
            return Err("the program is not paused");
        }
        match &self.resume {
            Some(r) if r.send(how).is_ok() => Ok(()),
            _ => Err("the program has ended"),
        }
    }

    fn launch(&mut self, args: Option<&serde_json::Value>, no_debug: bool) -> Result<(), String> {
        if self.start.is_some() || self.resume.is_some() {
            return Err("this session already launched a program".into());
        }
        let args = args.cloned().unwrap_or_default();
        let flag = |k: &str| args.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
        let program = args
            .get("program")
            .and_then(|v| v.as_str())
            .ok_or("the launch configuration needs `program`: the `.ko` file to debug")?;
        let path = PathBuf::from(program);
        if !path.is_file() {
            return Err(format!("cannot find the program `{program}`"));
        }
        self.program = Some(path.clone());
        let mode = if flag("record") {
            Mode::Record
        } else if flag("replay") {
            Mode::Replay
        } else {
            Mode::Auto
        };
        let (start_tx, start_rx) = channel();
        let (resume_tx, resume_rx) = channel();
        let launch = Launch {
            program: path,
            stop_on_entry: flag("stopOnEntry"),
            debug: !no_debug,
            mode,
        };
        launch::spawn(
            launch,
            self.shared.clone(),
            self.tx.clone(),
            start_rx,
            resume_rx,
        )
        .map_err(|e| format!("cannot start the program's thread: {e}"))?;
        self.start = Some(start_tx);
        self.resume = Some(resume_tx);
        Ok(())
    }

    fn set_breakpoints(
        &mut self,
        args: &dap::requests::SetBreakpointsArguments,
    ) -> Vec<Breakpoint> {
        let requested: Vec<&SourceBreakpoint> = args.breakpoints.iter().flatten().collect();
        let Some(path) = args.source.path.as_ref().map(PathBuf::from) else {
            return requested
                .iter()
                .map(|_| refused("the source has no file path", None))
                .collect();
        };
        let canonical = std::fs::canonicalize(&path).unwrap_or(path.clone());
        let lines = file_lines(&path, self.program.as_deref());
        let mut table: HashMap<u32, Arc<Spec>> = HashMap::new();
        let mut out = Vec::new();
        for bp in requested {
            let line = bp.line;
            let landing = match u32::try_from(line) {
                Ok(l) if l > 0 => lines.land(l),
                _ => Landing::Refused(format!("line {line} does not exist")),
            };
            let (l, caveat) = match landing {
                Landing::At(l, caveat) => (l, caveat),
                Landing::Refused(why) => {
                    out.push(refused(&why, Some(args.source.clone())));
                    continue;
                }
            };
            let spec = match self.spec(bp) {
                Ok(spec) => spec,
                Err(why) => {
                    out.push(refused(&why, Some(args.source.clone())));
                    continue;
                }
            };
            // Two requests landing on one line share the first one's rules.
            let id = table.entry(l).or_insert_with(|| Arc::new(spec)).id;
            let moved = (i64::from(l) != line)
                .then(|| format!("moved from line {line} to the next statement, on line {l}"));
            let message = match (moved, caveat) {
                (Some(m), Some(c)) => Some(format!("{m}; {c}")),
                (m, c) => m.or(c),
            };
            out.push(Breakpoint {
                id: Some(id),
                verified: true,
                message,
                source: Some(args.source.clone()),
                line: Some(i64::from(l)),
                ..Breakpoint::default()
            });
        }
        let mut shared = self
            .shared
            .breakpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        shared.insert(canonical, table);
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
        out
    }

    /// A requested breakpoint's condition, hit count and log message, refused when unreadable.
    fn spec(&mut self, bp: &SourceBreakpoint) -> Result<Spec, String> {
        let text = |o: &Option<String>| {
            o.as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let condition = text(&bp.condition)
            .map(|c| crate::expression::parse(&c).map_err(|e| format!("condition: {e}")))
            .transpose()?;
        let hit = text(&bp.hit_condition)
            .map(|h| HitRule::parse(&h))
            .transpose()?;
        let log = bp
            .log_message
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(|m| parse_log(m).map_err(|e| format!("log message: {e}")))
            .transpose()?;
        self.next_breakpoint += 1;
        Ok(Spec {
            id: self.next_breakpoint - 1,
            condition,
            hit,
            log,
        })
    }

    /// Changes a local or a global of the stopped program; the view is taken afresh after it.
    fn set_variable(
        &mut self,
        args: &dap::requests::SetVariableArguments,
    ) -> Result<crate::variables::Entry, String> {
        let view = self
            .stopped
            .as_ref()
            .ok_or("the program is running: variables are changed when it is paused")?;
        let (frame, place) = view
            .scopes
            .iter()
            .enumerate()
            .find_map(|(i, (locals, globals))| {
                if *locals == Some(args.variables_reference) {
                    Some((i, Place::Local(i)))
                } else if *globals == args.variables_reference {
                    Some((i, Place::Global(view.frames[i].module)))
                } else {
                    None
                }
            })
            .ok_or("only a frame's Locals and Globals can be changed; to change an element or a field, assign it in the program")?;
        let resume = self.resume.as_ref().ok_or("the program has ended")?;
        let (reply, answer) = channel();
        let req = SetVariable {
            place,
            name: args.name.clone(),
            value: args.value.clone(),
            frame,
            reply,
        };
        resume
            .send(Resume::Set(Box::new(req)))
            .map_err(|_| "the program has ended".to_string())?;
        let snapshot = answer
            .recv()
            .map_err(|_| "the program has ended".to_string())??;
        let view = StoppedView::new(snapshot);
        let (locals, globals) = view.scopes.get(frame).copied().ok_or("the frame is gone")?;
        let reference = match place {
            Place::Local(_) => locals.unwrap_or(globals),
            Place::Global(_) => globals,
        };
        let entry = view
            .variables(reference)
            .and_then(|vs| vs.iter().find(|e| e.name == args.name))
            .cloned()
            .ok_or_else(|| format!("`{}` is gone after the change", args.name))?;
        self.stopped = Some(view);
        Ok(entry)
    }

    fn stack_trace(&self, start: Option<i64>, levels: Option<i64>) -> Vec<StackFrame> {
        let Some(s) = &self.stopped else {
            return Vec::new();
        };
        let start = start.unwrap_or(0).max(0) as usize;
        let levels = match levels {
            Some(n) if n > 0 => n as usize,
            _ => usize::MAX,
        };
        s.frames
            .iter()
            .enumerate()
            .skip(start)
            .take(levels)
            .map(|(i, f)| StackFrame {
                id: i as i64,
                name: f.name.clone(),
                source: Some(source_of(&f.path)),
                line: i64::from(f.line),
                column: i64::from(f.column),
                end_line: Some(i64::from(f.end_line)),
                end_column: Some(i64::from(f.end_column)),
                ..StackFrame::default()
            })
            .collect()
    }

    fn scopes(&self, frame: i64) -> Vec<Scope> {
        let Some((locals, globals)) = self
            .stopped
            .as_ref()
            .and_then(|s| s.scopes.get(usize::try_from(frame).ok()?))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(r) = locals {
            out.push(Scope {
                name: "Locals".into(),
                variables_reference: *r,
                ..Scope::default()
            });
        }
        out.push(Scope {
            name: "Globals".into(),
            variables_reference: *globals,
            ..Scope::default()
        });
        out
    }

    fn variables(&self, reference: i64) -> Vec<Variable> {
        let Some(entries) = self.stopped.as_ref().and_then(|s| s.variables(reference)) else {
            return Vec::new();
        };
        entries
            .iter()
            .map(|e| Variable {
                name: e.name.clone(),
                value: e.value.clone(),
                type_field: Some(e.ty.clone()),
                variables_reference: e.reference,
                ..Variable::default()
            })
            .collect()
    }
}

fn refused(why: &str, source: Option<Source>) -> Breakpoint {
    Breakpoint {
        verified: false,
        message: Some(why.to_string()),
        source,
        ..Breakpoint::default()
    }
}

fn source_of(path: &std::path::Path) -> Source {
    Source {
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        path: Some(path.display().to_string()),
        ..Source::default()
    }
}
