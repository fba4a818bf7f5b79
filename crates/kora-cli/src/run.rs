//! `kora run`: check the program, then interpret it on a thread with room for deep recursion.

use std::io::Write;
use std::path::PathBuf;

use kora_check::{check_program, Disk};
use kora_runtime::analyze::Models;
use kora_runtime::cassette::{Cassette, Mode};
use kora_runtime::config::Config;

/// The interpreter recurses on the host stack once per Kora call; 1000 nested
/// calls of a debug build need far more than the default 8 MiB. Untouched
/// pages cost nothing.
const STACK_BYTES: usize = 1 << 30;

pub fn run(file: PathBuf, args: Vec<String>, mode: Mode, run_id: Option<String>) -> u8 {
    if let Some(id) = run_id
        .as_deref()
        .filter(|id| !kora_runtime::stdlib::valid_run_id(id))
    {
        eprintln!("error: --run-id {id:?}: a run id is letters, digits, `-`, `_` and `.`");
        return 2;
    }
    let worker = std::thread::Builder::new()
        .name("kora-main".into())
        .stack_size(STACK_BYTES)
        .spawn(move || run_on_this_thread(file, args, mode, run_id));
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

fn run_on_this_thread(file: PathBuf, args: Vec<String>, mode: Mode, run_id: Option<String>) -> u8 {
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
    interp.set_models(Models {
        config,
        cassette: Some(cassette),
        mode,
    });
    let result = interp.run_main();
    let saved = interp.finish();
    drop(interp);
    let _ = out.flush();
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
