//! `kora check`: every diagnostic of every file named, nothing run.

use std::path::PathBuf;

use kora_check::{check_program, Disk};

pub fn check(files: &[PathBuf]) -> u8 {
    let mut errors = 0;
    for path in files {
        match check_program(path, &Disk) {
            Ok(checked) => errors += crate::diagnostics::print_all(&checked),
            Err(e) => {
                eprintln!("error: cannot read `{}`: {}", e.path.display(), e.error);
                errors += 1;
            }
        }
    }
    if errors > 0 {
        eprintln!(
            "kora check: {errors} error{} found",
            if errors == 1 { "" } else { "s" }
        );
        2
    } else {
        0
    }
}
