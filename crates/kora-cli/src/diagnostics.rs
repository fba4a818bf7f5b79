//! Printing diagnostics to the terminal: ariadne when it is a colour terminal, the same text plain otherwise.

use std::io::IsTerminal;

use kora_check::Checked;
use std::io::Write;

use kora_syntax::diagnostic::{Renderer, SourceFile};

/// Colour only on a terminal, and never when `NO_COLOR` is set (to anything non-empty).
pub fn use_color() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

/// Prints every diagnostic of every file; returns the number of errors.
pub fn print_all(checked: &Checked) -> usize {
    let color = use_color();
    let mut errors = 0;
    for f in &checked.files {
        let file = SourceFile {
            path: &f.display,
            text: &f.source,
        };
        let renderer = Renderer::new(&file);
        // One lock for the whole report: thousands of diagnostics print in one pass.
        let mut err = std::io::stderr().lock();
        for d in &f.diagnostics {
            if d.is_error() {
                errors += 1;
            }
            let _ = err.write_all(renderer.render(d, color).as_bytes());
        }
    }
    errors
}
