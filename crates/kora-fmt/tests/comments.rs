//! Comments stay in place. Every formatted program of the repository gets a comment at
//! the end of every line of code and one on a line of its own before every line of
//! code; formatting that must keep each one between the same two words (names and
//! string literals), keep end-of-line comments at the end of a line of code and the
//! others on lines of their own, and be stable.

mod common;

use kora_fmt::{format, Options};
use kora_syntax::comments::{comments, Comment};
use kora_syntax::lexer::lex;
use kora_syntax::span::Span;
use kora_syntax::token::Tok;

/// Offsets where each word (name or string) starts.
fn word_starts(src: &str) -> Vec<u32> {
    lex(src, 0)
        .0
        .into_iter()
        .filter(|(t, _)| matches!(t, Tok::Name(_) | Tok::Str(_)))
        .map(|(_, s)| s.start)
        .collect()
}

/// String tokens, whose insides take no comment.
fn string_spans(src: &str) -> Vec<Span> {
    lex(src, 0)
        .0
        .into_iter()
        .filter(|(t, _)| matches!(t, Tok::Str(_) | Tok::FStr(_)))
        .map(|(_, s)| s)
        .collect()
}

/// `src` with `# eN` after each line of code and `# oN` on its own line before it.
fn sprinkle(src: &str) -> String {
    let strings = string_spans(src);
    let inside = |at: usize| {
        strings
            .iter()
            .any(|s| (s.start as usize) < at && at < s.end as usize)
    };
    let mut out = String::new();
    let mut offset = 0;
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches('\n');
        let code = !body.trim().is_empty() && !body.trim_start().starts_with('#');
        let start_free = !inside(offset);
        let end_free = !inside(offset + body.len());
        if code && start_free {
            let indent = &body[..body.len() - body.trim_start().len()];
            out.push_str(&format!("{indent}# o{i}\n"));
        }
        out.push_str(body);
        if code && end_free && !body.contains('#') {
            out.push_str(&format!("  # e{i}"));
        }
        if line.ends_with('\n') {
            out.push('\n');
        }
        offset += line.len();
    }
    out
}

fn place(src: &str, c: &Comment, words: &[u32]) -> (usize, bool) {
    let _ = src;
    (words.partition_point(|w| *w < c.span.start), c.own_line)
}

#[test]
fn every_comment_keeps_its_place() {
    let opts = Options::default();
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in common::repository_programs() {
        let src = std::fs::read_to_string(&path).expect("read");
        let Ok(base) = format(&src, &opts) else {
            continue;
        };
        let input = sprinkle(&base);
        let out = match format(&input, &opts) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let (ci, co) = (comments(&input), comments(&out));
        let (wi, wo) = (word_starts(&input), word_starts(&out));
        assert_eq!(ci.len(), co.len(), "{}", path.display());
        for (a, b) in ci.iter().zip(&co) {
            checked += 1;
            if place(&input, a, &wi) != place(&out, b, &wo) {
                let line = out[..b.span.start as usize].matches('\n').count() + 1;
                failures.push(format!(
                    "{}: `{}` moved (now line {line} of the output)",
                    path.display(),
                    a.text(&input)
                ));
                break;
            }
        }
        if format(&out, &opts).ok().as_deref() != Some(out.as_str()) {
            failures.push(format!("{}: not stable with comments", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 10_000, "only {checked} comments checked");
}
