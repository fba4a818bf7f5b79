//! Golden tests of the layout rules: each `tests/layout/NAME.input` formats to `NAME.expected`.
//!
//! One file per rule family, so a failure points at the rule. A first line
//! `# options: key=value ...` sets `Options` for that file (the keys of `kora.toml
//! [fmt]`). `KORA_BLESS=1 cargo test -p kora-fmt --test layout` rewrites the expected
//! files from what the formatter prints: read the diff before committing it.

use std::path::{Path, PathBuf};

use kora_fmt::{format, Options, QuoteStyle};

fn options_of(src: &str) -> Options {
    let mut o = Options::default();
    let Some(line) = src
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# options:"))
    else {
        return o;
    };
    for kv in line.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        match k {
            "line_length" => o.line_length = v.parse().expect("number"),
            "indent_width" => o.indent_width = v.parse().expect("number"),
            "magic_trailing_comma" => o.magic_trailing_comma = v == "true",
            "quote_style" => {
                o.quote_style = match v {
                    "single" => QuoteStyle::Single,
                    "preserve" => QuoteStyle::Preserve,
                    _ => QuoteStyle::Double,
                }
            }
            other => panic!("unknown option {other}"),
        }
    }
    o
}

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/layout");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/layout")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "input"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "the layout goldens are missing");
    v
}

#[test]
fn every_golden_matches_and_is_stable() {
    let bless = std::env::var("KORA_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for input in cases() {
        let src = std::fs::read_to_string(&input).expect("read input");
        let opts = options_of(&src);
        let got = match format(&src, &opts) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{}: {e}", input.display()));
                continue;
            }
        };
        let expected_path = input.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &got).expect("write expected");
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (KORA_BLESS=1 cargo test -p kora-fmt --test layout writes it)",
                expected_path.display()
            )
        });
        if got != expected {
            let diff = kora_fmt::edits::unified_diff(
                &expected,
                &got,
                &expected_path.display().to_string(),
            );
            failures.push(format!("{} differs:\n{diff}", input.display()));
            continue;
        }
        let again = format(&got, &opts).expect("the expected layout formats");
        if again != got {
            failures.push(format!(
                "{}: formatting the expected layout changes it",
                input.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\nIf the new layout is right, rerun with KORA_BLESS=1 and review the diff.",
        failures.join("\n")
    );
}
