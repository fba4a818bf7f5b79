//! The debuggee: a thread that checks the program, waits for the editor's configuration, then runs it with the `Stepper` attached.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use kora_check::check_program;
use kora_runtime::agents::analyze::Models;
use kora_runtime::agents::cassette::{Cassette, Mode};
use kora_runtime::config::Config;
use kora_syntax::diagnostic::{render, SourceFile};

use crate::debugger::Stepper;
use crate::link::{Msg, Resume, Shared};
use crate::output::ProgramOutput;

/// Same reason as `kora run`: one host frame per Kora call needs room.
const STACK_BYTES: usize = 1 << 30;

pub struct Launch {
    pub program: PathBuf,
    pub stop_on_entry: bool,
    /// `false` for "Run without debugging": no debugger is attached at all.
    pub debug: bool,
    pub mode: Mode,
}

/// Starts the debuggee thread; it runs once `start` yields (after `configurationDone`).
pub fn spawn(
    launch: Launch,
    shared: Arc<Shared>,
    tx: Sender<Msg>,
    start: Receiver<()>,
    resume: Receiver<Resume>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("kora-debuggee".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let code = run(launch, shared, &tx, start, resume);
            let _ = tx.send(Msg::Exited(code));
        })
        .map(|_| ())
}

fn fail(tx: &Sender<Msg>, text: String) {
    let _ = tx.send(Msg::Output { stderr: true, text });
}

fn run(
    launch: Launch,
    shared: Arc<Shared>,
    tx: &Sender<Msg>,
    start: Receiver<()>,
    resume: Receiver<Resume>,
) -> i64 {
    let file = launch.program;
    // Packages resolve, and are confined, exactly as under `kora run`.
    let project = kora_pkg::Project::for_entry(&file);
    if let Some(e) = project.manifest_error() {
        fail(tx, format!("error[E1405]: {e}\n"));
        return 2;
    }
    let checked = match check_program(&file, &project) {
        Ok(c) => c,
        Err(e) => {
            fail(
                tx,
                format!("error: cannot read `{}`: {}\n", e.path.display(), e.error),
            );
            return 2;
        }
    };
    let mut report = String::new();
    for f in &checked.files {
        let src = SourceFile {
            path: &f.display,
            text: &f.source,
        };
        for d in &f.diagnostics {
            report.push_str(&render(d, &src, false));
        }
    }
    let errors = checked.error_count();
    let Some(program) = checked.program.filter(|_| errors == 0) else {
        fail(
            tx,
            format!("{report}kora: {errors} error(s) found; nothing was run\n"),
        );
        return 2;
    };
    if !report.is_empty() {
        fail(tx, report);
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let config = match Config::discover(dir) {
        Ok(c) => c,
        Err(e) => {
            fail(tx, format!("error: {e}\n"));
            return 2;
        }
    };
    let cassette = match Cassette::open(&Cassette::path_for(&file)) {
        Ok(c) => c,
        Err(e) => {
            fail(tx, format!("error: {e}\n"));
            return 2;
        }
    };
    // Breakpoints and other configuration arrive before the program may start.
    if start.recv().is_err() {
        return 2;
    }
    let mut out = ProgramOutput::new(tx.clone());
    let mut interp = kora_runtime::Interp::new(program.clone(), &mut out);
    if let Some(g) = project.grant_check(&file) {
        interp.set_run(kora_runtime::stdlib::RunSettings {
            observers: vec![Box::new(g.clone())],
            branches: vec![Arc::new(g)],
            ..Default::default()
        });
    }
    interp.set_models(Models {
        config,
        cassette: Some(cassette),
        mode: launch.mode,
        main_model: None,
    });
    if launch.debug {
        interp.attach(Box::new(Stepper::new(
            std::sync::Arc::clone(&program),
            shared,
            launch.stop_on_entry,
            tx.clone(),
            resume,
        )));
    }
    let result = interp.run_main();
    let saved = interp.finish();
    drop(interp);
    let _ = std::io::Write::flush(&mut out);
    if let Err(e) = saved {
        fail(tx, format!("error: {e}\n"));
        if result.is_ok() {
            return 1;
        }
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            fail(
                tx,
                kora_runtime::observe::report::render_error(&program, &e),
            );
            1
        }
    }
}
