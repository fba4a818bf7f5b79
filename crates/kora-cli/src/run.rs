//! `kora run`: check the program, then interpret it on a thread with room for deep recursion.

use std::io::Write;
use std::path::PathBuf;

use kora_check::{check_program, Disk};
use kora_runtime::analyze::Models;
use kora_runtime::cassette::{Cassette, Mode};
use kora_runtime::config::Config;

use crate::observe::{Observe, Session};

/// The interpreter recurses on the host stack once per Kora call; 1000 nested
/// calls of a debug build need far more than the default 8 MiB. Untouched
/// pages cost nothing.
const STACK_BYTES: usize = 1 << 30;

pub fn run(
    file: PathBuf,
    args: Vec<String>,
    mode: Mode,
    run_id: Option<String>,
    observe: Observe,
) -> u8 {
    if let Some(id) = run_id
        .as_deref()
        .filter(|id| !kora_runtime::stdlib::valid_run_id(id))
    {
        eprintln!("error: --run-id {id:?}: a run id is letters, digits, `-`, `_` and `.`");
        return 2;
    }
    on_big_stack(move || run_on_this_thread(file, args, mode, run_id, observe))
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

fn run_on_this_thread(
    file: PathBuf,
    args: Vec<String>,
    mode: Mode,
    run_id: Option<String>,
    observe: Observe,
) -> u8 {
    let checked = match check_program(&file, &Disk) {
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
    let dir = file
        .parent()
        .map(|d| {
            if d.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                d
            }
        })
        .unwrap_or(std::path::Path::new("."));
    let config = match Config::discover(dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let cassette = match Cassette::open(&Cassette::path_for(&file)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let program_name = file.display().to_string();
    let mut session = Session::start(observe, &config, dir, &program_name);
    let run_span = session.as_mut().map(|s| {
        s.open(
            kora_runtime::trace::SpanKind::Run,
            &format!("run {program_name}"),
            None,
        )
    });
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut interp = kora_runtime::Interp::new(program.clone(), &mut out);
    interp.set_input(&mut input);
    interp.set_run(kora_runtime::stdlib::RunSettings {
        run_id,
        args,
        observers: Vec::new(),
    });
    if let Some(s) = session.as_mut() {
        interp.attach_tracer(Box::new(&mut s.rec), run_span);
    }
    interp.set_models(Models {
        config,
        cassette: Some(cassette),
        mode,
    });
    let result = interp.run_main();
    let saved = interp.finish();
    drop(interp);
    let _ = out.flush();
    if let (Some(mut s), Some(span)) = (session, run_span) {
        s.close(span, result.as_ref().err().map(|e| e.code));
        s.finish();
    }
    if let Err(e) = saved {
        eprintln!("error: {e}");
        if result.is_ok() {
            return 1;
        }
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprint!("{}", kora_runtime::report::render_error(&program, &e));
            1
        }
    }
}
