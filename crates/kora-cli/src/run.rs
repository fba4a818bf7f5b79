//! `kora run`: check the program, then interpret it on a thread with room for deep recursion.

use std::io::Write;
use std::path::PathBuf;

use kora_check::check_program;
use kora_runtime::agents::analyze::Models;
use kora_runtime::agents::cassette::{Cassette, Mode};
use kora_runtime::config::Config;

use crate::durable_cmd::{self, Durability};
use crate::observe::{Observe, Session};

/// The interpreter recurses on the host stack once per Kora call; 1000 nested
/// calls of a debug build need far more than the default 8 MiB. Untouched
/// pages cost nothing.
const STACK_BYTES: usize = 1 << 30;

/// What `kora run` was asked to do.
pub struct RunOpts {
    pub file: Option<PathBuf>,
    pub args: Vec<String>,
    pub mode: Mode,
    pub run_id: Option<String>,
    pub observe: Observe,
    pub durability: Durability,
    /// `--model NAME`: the run's model, over `kora.toml`'s default (blocks, agents and call sites override it).
    pub model: Option<String>,
    /// `--accept-config`: resume even though `kora.toml` changed since the run started.
    pub accept_config: bool,
    /// `--mark-done` / `--retry`: a person's decisions about effects a resume stopped on.
    pub decisions: kora_runtime::durable::journal::Decisions,
}

pub fn run(opts: RunOpts) -> u8 {
    if let Some(id) = opts
        .run_id
        .as_deref()
        .filter(|id| !kora_runtime::stdlib::valid_run_id(id))
    {
        eprintln!("error: --run-id {id:?}: a run id is letters, digits, `-`, `_` and `.`");
        return 2;
    }
    on_big_stack(move || run_on_this_thread(opts))
}

/// Whether the model a recording run calls first (the run's model) has its API key: a
/// recording without one would run the program's effects and only then fail at the call.
pub fn key_for_recording(config: &Config, model: Option<&str>) -> Result<(), String> {
    let entry = config.resolve(model)?;
    entry
        .api_key()
        .map(|_| ())
        .map_err(|e| format!("model `{}`: {e}", entry.name))
}

/// Runs `f` on a thread with room for 1000 nested Kora calls; a panic is reported as a bug.
pub fn on_big_stack(f: impl FnOnce() -> u8 + Send + 'static) -> u8 {
    let worker = std::thread::Builder::new()
        .name("kora-main".into())
        .stack_size(STACK_BYTES)
        .spawn(f);
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => {
            eprintln!("error: the interpreter crashed; this is a bug in Kora, please report it");
            101
        }
        Err(e) => {
            eprintln!("error: cannot start the interpreter thread: {e}");
            2
        }
    }
}

fn run_on_this_thread(opts: RunOpts) -> u8 {
    let RunOpts {
        file,
        mut args,
        mode,
        mut run_id,
        observe,
        durability,
        model: mut opts_model,
        accept_config,
        decisions,
    } = opts;
    let mut resumed = None;
    let file = match (&durability, file) {
        (Durability::Resume(id), _) => match durable_cmd::open_resume(id) {
            Ok((run, program, recorded)) => {
                let started = run.past().model().map(str::to_string);
                match (&opts_model, &started) {
                    (Some(asked), Some(m)) if asked != m => {
                        eprintln!("error: run {id} started with `--model {m}`; resume it without --model (or with `--model {m}`) so its remaining calls answer to the same model");
                        return 2;
                    }
                    (Some(_), None) => {
                        eprintln!("error: run {id} started without --model; resume it without --model so its remaining calls answer to the same model");
                        return 2;
                    }
                    _ => opts_model = started,
                }
                args = recorded;
                run_id = Some(id.clone());
                resumed = Some(run);
                program
            }
            Err(()) => return 2,
        },
        (_, Some(f)) => f,
        (_, None) => {
            eprintln!("error: `kora run` needs a FILE (or `--resume RUN_ID`)");
            return 2;
        }
    };
    let project = kora_pkg::Project::for_entry(&file);
    if let Some(e) = project.manifest_error() {
        eprintln!("error[E1405]: {e}");
        return 2;
    }
    let checked = match check_program(&file, &project) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {}", e.path.display(), e.error);
            return 2;
        }
    };
    let errors = crate::diagnostics::print_all(&checked);
    let Some(program) = checked.program.filter(|_| errors == 0) else {
        eprintln!(
            "kora run: {errors} error{} found; nothing was run",
            if errors == 1 { "" } else { "s" }
        );
        return 2;
    };
    let dir = durable_cmd::folder_of(&file);
    let config = match Config::discover(dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if mode == Mode::Record {
        if let Err(e) = key_for_recording(&config, opts_model.as_deref()) {
            eprintln!("error: --record calls the model, but {e}; nothing was run");
            return 2;
        }
    }
    let durable = match (durability, resumed) {
        (Durability::Plain, _) => None,
        (Durability::Resume(id), Some(run)) => {
            if run.past().program().map(|p| p.1) != Some(durable_cmd::digest(&program).as_str()) {
                eprintln!(
                    "error: run {id}: `{}` changed since the run started; a resume must run the same code (start a new run with `kora run --durable`)",
                    file.display()
                );
                return 2;
            }
            if let Some(started) = run.past().config() {
                let moved = kora_runtime::config::digest::changes(started, &config.table_digests);
                if !moved.is_empty() && !accept_config {
                    eprintln!(
                        "error: run {id}: kora.toml changed since the run started ({}); settings steer which effects a run performs, so a resume under others may not meet its journal. Restore them, or resume with `--accept-config` to continue under the new settings",
                        moved.join(", ")
                    );
                    return 2;
                }
                if !moved.is_empty() {
                    eprintln!(
                        "kora: run {id} continues under the changed kora.toml ({})",
                        moved.join(", ")
                    );
                }
            }
            if run.past().state == kora_runtime::durable::journal::RunState::Finished {
                eprintln!("run {id} has already finished; nothing to resume");
                return 0;
            }
            // Every attempt a kill left open is settled (or the resume refused) before
            // anything runs.
            let Ok(run) = durable_cmd::decide(run, &decisions) else {
                return 2;
            };
            eprintln!("kora: resuming run {id}");
            Some(run)
        }
        (Durability::Resume(_), None) => return 2,
        (Durability::Start, _) => {
            let id = run_id
                .clone()
                .unwrap_or_else(kora_runtime::stdlib::new_run_id);
            let shown = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            match kora_runtime::durable::journal::Run::start(
                &durable_cmd::project_of(dir),
                &id,
                &shown.display().to_string(),
                &durable_cmd::digest(&program),
                &args,
                opts_model.as_deref(),
                &config.table_digests,
            ) {
                Ok(run) => {
                    eprintln!("kora: durable run {id} (resume with `kora run --resume {id}`)");
                    run_id = Some(id);
                    Some(run)
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return 2;
                }
            }
        }
    };
    if let Some(name) = &opts_model {
        if let Err(e) = config.resolve(Some(name)) {
            eprintln!("error: --model {name}: {e}");
            return 2;
        }
    }
    let cassette = match Cassette::open(&Cassette::path_for(&file)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let externals = if program.externals.is_empty() {
        None
    } else {
        match crate::externals::registry(
            &config,
            &durable_cmd::project_of(dir),
            dir,
            &program.externals,
            &project.resolver.reached(),
        ) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        }
    };
    let program_name = file.display().to_string();
    let mut session = Session::start(observe, &config, dir, &program_name);
    let run_span = session.as_mut().map(|s| {
        s.open(
            kora_runtime::observe::trace::SpanKind::Run,
            &format!("run {program_name}"),
            None,
        )
    });
    let stdout = std::io::stdout();
    let mut out: Box<dyn Write> = match &durable {
        Some(run) => Box::new(kora_runtime::durable::journal::JournaledOut::new(
            run.clone(),
            stdout.lock(),
        )),
        None => Box::new(std::io::BufWriter::with_capacity(1 << 16, stdout.lock())),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut interp = kora_runtime::Interp::new(program.clone(), &mut *out);
    interp.set_input(&mut input);
    if let Some(r) = externals {
        interp.set_externals(r);
    }
    let mut observers: Vec<Box<dyn kora_runtime::durable::effect::Observer>> = Vec::new();
    let mut branches = Vec::new();
    if let Some(run) = &durable {
        observers.push(Box::new(run.observer()));
        branches.push(run.branches());
    }
    // Confinement is asked first: a refused effect reaches no journal or budget.
    if let Some(g) = project.grant_check(&file) {
        observers.insert(0, Box::new(g.clone()));
        branches.push(std::sync::Arc::new(g));
    }
    interp.set_run(kora_runtime::stdlib::RunSettings {
        run_id,
        args,
        observers,
        branches,
        prefix: String::new(),
        durable: durable.is_some(),
    });
    if let Some(s) = session.as_mut() {
        interp.attach_tracer(Box::new(&mut s.rec), run_span);
    }
    interp.set_models(Models {
        config,
        cassette: Some(cassette),
        mode,
        main_model: opts_model,
    });
    let result = interp.run_main();
    // `exit(...)` ends the run where it stands: not a failure, and its status is the process's.
    let exited = match &result {
        Err(e) => e.exit_status.map(|status| (status, e.message.clone())),
        Ok(()) => None,
    };
    let result = if exited.is_some() { Ok(()) } else { result };
    let saved = interp.finish();
    drop(interp);
    let _ = out.flush();
    if let (Some(mut s), Some(span)) = (session, run_span) {
        s.close(span, result.as_ref().err().map(|e| e.code));
        s.finish();
    }
    if let (Some(run), Err(e)) = (&durable, &result) {
        if e.code == kora_runtime::error::codes::SUSPENDED {
            run.status("suspended", &e.message);
            eprintln!(
                "kora: run {id} is waiting for an answer to: {q}\n  answer it with `kora answer {id} \"...\"`, then continue with `kora run --resume {id}`",
                id = run.id,
                q = e.message
            );
            return 3;
        }
    }
    if let Some(run) = &durable {
        if std::env::var_os("KORA_JOURNAL_STATS").is_some() {
            eprintln!("kora: journal of run {}: {} syncs", run.id, run.syncs());
        }
        match (&result, &saved) {
            // The journal's existing end state, with the status and message in its detail:
            // a resume finds the run finished, as it would after the last line.
            (Ok(()), Ok(())) if exited.is_some() => {
                let (status, message) = exited.clone().unwrap_or_default();
                run.status("finished", format!("exit({status}) {message}").trim_end())
            }
            (Ok(()), Ok(())) => run.status("finished", ""),
            (Err(e), _) => run.status("failed", &e.message),
            (_, Err(e)) => run.status("failed", e),
        }
    }
    if let Err(e) = saved {
        eprintln!("error: {e}");
        if result.is_ok() {
            return 1;
        }
    }
    if let Some((status, message)) = exited {
        if !message.is_empty() {
            eprintln!("{message}");
        }
        return status.clamp(0, 255) as u8;
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprint!(
                "{}",
                kora_runtime::observe::report::render_error(&program, &e)
            );
            1
        }
    }
}
