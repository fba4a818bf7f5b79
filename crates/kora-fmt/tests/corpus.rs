//! Over every `.ko` file of the repository, under the default options and a narrow
//! set that moves almost every line: formatting keeps the syntax tree (up to spans)
//! and is idempotent, `fmt(fmt(x)) == fmt(x)`. Files with syntax errors are refused.

mod common;

use kora_fmt::verify::shape_of;
use kora_fmt::{format, FormatError, Options, QuoteStyle};

fn option_sets() -> Vec<Options> {
    vec![
        Options::default(),
        Options {
            line_length: 40,
            indent_width: 2,
            quote_style: QuoteStyle::Single,
            magic_trailing_comma: false,
        },
    ]
}

#[test]
fn idempotent_and_the_same_tree_over_the_repository() {
    let mut formatted = 0;
    let mut refused = 0;
    let mut failures = Vec::new();
    for path in common::repository_programs() {
        let src = std::fs::read_to_string(&path).expect("read");
        for opts in option_sets() {
            let out = match format(&src, &opts) {
                Ok(o) => o,
                Err(FormatError::Syntax(_)) => {
                    refused += 1;
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{} ({opts:?}): {e}", path.display()));
                    continue;
                }
            };
            formatted += 1;
            let before = shape_of(&kora_syntax::parse(&src).module);
            let after = shape_of(&kora_syntax::parse(&out).module);
            if before != after {
                failures.push(format!("{}: the tree changed", path.display()));
            }
            match format(&out, &opts) {
                Ok(again) if again == out => {}
                Ok(again) => failures.push(format!(
                    "{} ({opts:?}) is not stable:\n{}",
                    path.display(),
                    kora_fmt::edits::unified_diff(&out, &again, "second pass")
                )),
                Err(e) => failures.push(format!("{}: second pass: {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(formatted > 500, "only {formatted} layouts checked");
    // The error snapshots with syntax errors, under each option set.
    assert!(refused < 40, "{refused} refusals");
}
