//! `kora repl`: read an entry, check it against everything defined before, run it, show its value.
//!
//! State is kept, not replayed: the checker's `Session` grows by each accepted
//! entry, and one interpreter adopts each grown program and runs only the new
//! entry's statements, so variables, records, functions and `use`d modules
//! persist and no effect of an earlier entry happens twice. An entry with an
//! error is shown with its code and changes nothing; a run-time error is shown
//! with its code and stack, and what the entry did before it stays done.

mod interrupt;
mod reader;

use std::io::Write;
use std::path::PathBuf;

use kora_check::session::{Refused, Session};
use kora_runtime::agents::analyze::Models;
use kora_runtime::agents::cassette::{Cassette, Mode};
use kora_runtime::config::Config;
use kora_runtime::Value;
use kora_syntax::diagnostic::{render, SourceFile};

use reader::{Read, Reader};

pub struct ReplOpts {
    /// `--replay FILE`: model calls answer from this cassette only.
    pub replay: Option<PathBuf>,
    /// `--record FILE`: model calls go to the model and are written here at the end.
    pub record: Option<PathBuf>,
    /// `--model NAME`: the session's model over `kora.toml`'s default.
    pub model: Option<String>,
}

const HELP: &str = "\
Type Kora statements; an entry that opens a block (a line ending in `:`) ends at a blank line.
The value of an entry that ends with an expression is shown (None is not). Everything an
entry defines (variables, functions, records, `use`d modules) stays for the entries after it;
an entry with an error changes nothing.

  :type EXPR   the type the checker gives EXPR (nothing is run)
  :help        this text
  :quit        leave (or Ctrl-D); Ctrl-C drops the entry being typed
";

/// Where line history is kept: `KORA_HISTORY` (empty: nowhere), else `~/.kora_history`.
fn history_file() -> Option<PathBuf> {
    match std::env::var_os("KORA_HISTORY") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kora_history")),
    }
}

pub fn repl(opts: ReplOpts) -> u8 {
    crate::run::on_big_stack(move || session(opts))
}

fn show_refused(r: &Refused) {
    let color = crate::diagnostics::use_color();
    for f in &r.files {
        let file = SourceFile {
            path: &f.display,
            text: &f.source,
        };
        for d in &f.diagnostics {
            eprint!("{}", render(d, &file, color));
        }
    }
}

fn models(opts: &ReplOpts, config: Config) -> Result<Models, String> {
    let (cassette, mode) = match (&opts.replay, &opts.record) {
        (Some(p), _) => {
            if !p.is_file() {
                return Err(format!("--replay {}: no such cassette", p.display()));
            }
            (Some(Cassette::open(p)?), Mode::Replay)
        }
        (None, Some(p)) => (Some(Cassette::open(p)?), Mode::Record),
        (None, None) => (None, Mode::Auto),
    };
    if let Some(name) = &opts.model {
        config
            .resolve(Some(name))
            .map_err(|e| format!("--model {name}: {e}"))?;
    }
    Ok(Models {
        config,
        cassette,
        mode,
        main_model: opts.model.clone(),
    })
}

fn session(opts: ReplOpts) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let config = match Config::discover(&cwd) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let models = match models(&opts, config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut reader = Reader::new(history_file());
    if reader.interactive() {
        println!(
            "Kora {} ({}). :help for help, :quit or Ctrl-D to leave.",
            env!("CARGO_PKG_VERSION"),
            cwd.display()
        );
    }
    let mut session = Session::new(&cwd);
    let stdout = std::io::stdout();
    let mut out = std::io::LineWriter::new(stdout.lock());
    let mut interp = kora_runtime::Interp::new(session.program(), &mut out);
    interp.set_models(models);
    if interrupt::install() {
        interp.interrupt_on(&interrupt::PRESSED);
    }
    loop {
        let text = match reader.entry() {
            Read::Entry(t) => t,
            Read::Interrupted => continue,
            Read::Eof => break,
        };
        let t = text.trim();
        if let Some(cmd) = t.strip_prefix(':') {
            let (name, arg) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
            match name {
                "q" | "quit" | "exit" => break,
                "help" | "h" | "?" => print!("{HELP}"),
                "type" | "t" if !arg.trim().is_empty() => match session.type_of(arg.trim()) {
                    Ok(Some(ty)) => println!("{ty}"),
                    Ok(None) => eprintln!("`:type` takes an expression, not a statement"),
                    Err(r) => show_refused(&r),
                },
                "type" | "t" => eprintln!("usage: :type EXPR"),
                other => eprintln!("unknown command `:{other}`; :help lists the commands"),
            }
            continue;
        }
        let entry = match session.check(&text) {
            Ok(e) => e,
            Err(r) => {
                show_refused(&r);
                continue;
            }
        };
        let program = entry.program.clone();
        // A Ctrl-C pressed while nothing ran is not meant for this entry.
        interrupt::PRESSED.store(false, std::sync::atomic::Ordering::Relaxed);
        if let Err(why) = interp.adopt(entry.program) {
            eprintln!("error: {why}; this is a bug in Kora");
            break;
        }
        match interp.run_entry(entry.body) {
            Ok(v) if entry.echo && !matches!(v, Value::None) => {
                let mut shown = String::new();
                kora_runtime::value::format::repr(&program, &v, &mut shown);
                println!("{shown}");
            }
            Ok(_) => {}
            Err(e) => eprint!(
                "{}",
                kora_runtime::observe::report::render_error(&program, &e)
            ),
        }
        let _ = std::io::stdout().flush();
    }
    let saved = interp.finish();
    drop(interp);
    reader.save();
    match saved {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
