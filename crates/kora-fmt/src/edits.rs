//! A formatting change as a unified diff (`kora fmt --diff`), as edits of the lines
//! that change (the language server's document formatting), or as edits of whole
//! top-level statements (its range formatting: the statements the range touches).

use similar::TextDiff;

/// One changed stretch: old lines `start..end` (0-based, end exclusive) become `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineEdit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// The unified diff from `old` to `new`, with `name` in both headers; empty when equal.
pub fn unified_diff(old: &str, new: &str, name: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(name, name)
        .to_string()
}

/// The stretches of lines that differ, each as the smallest edit of whole lines.
pub fn line_edits(old: &str, new: &str) -> Vec<LineEdit> {
    let diff = TextDiff::from_lines(old, new);
    let new_lines = diff.new_slices();
    let mut out = Vec::new();
    for group in diff.grouped_ops(0) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let start = first.old_range().start;
        let end = last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let text: String = new_lines[new_range].concat();
        out.push(LineEdit { start, end, text });
    }
    out
}

/// The 0-based lines `[first, last]` that each top-level statement of `src` covers, in
/// order; statements sharing a line (`a; b`) are one stretch.
fn statement_lines(src: &str) -> Vec<(usize, usize)> {
    let index = kora_syntax::LineIndex::new(src);
    let line = |offset: u32| index.line(offset) as usize - 1;
    let mut out: Vec<(usize, usize)> = Vec::new();
    for st in kora_syntax::parse(src).module.stmts {
        let (a, b) = (
            line(st.span.start),
            line(st.span.end.saturating_sub(1).max(st.span.start)),
        );
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Edits that replace, with their layout in `new`, the top-level statements of `old`
/// that touch lines `first..=last` (0-based). `new` must be `old` formatted: the same
/// statements in the same order.
pub fn statement_edits(old: &str, new: &str, first: usize, last: usize) -> Vec<LineEdit> {
    let (before, after) = (statement_lines(old), statement_lines(new));
    if before.len() != after.len() {
        return line_edits(old, new)
            .into_iter()
            .filter(|e| e.start <= last && e.end > first)
            .collect();
    }
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = Vec::new();
    for (&(a, b), &(c, d)) in before.iter().zip(&after) {
        if b < first || a > last {
            continue;
        }
        let text: String = new_lines[c..=d.min(new_lines.len() - 1)].concat();
        let was: String = old_lines[a..=b.min(old_lines.len() - 1)].concat();
        if text != was {
            out.push(LineEdit {
                start: a,
                end: b + 1,
                text,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &str, edits: &[LineEdit]) -> String {
        let lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        for e in edits {
            out.extend(lines[at..e.start].iter().copied());
            out.push_str(&e.text);
            at = e.end;
        }
        out.extend(lines[at..].iter().copied());
        out
    }

    #[test]
    fn edits_rebuild_the_new_text() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nB\nc\nd\nE\nF\n";
        let edits = line_edits(old, new);
        assert_eq!(edits.len(), 2);
        assert_eq!(apply(old, &edits), new);
    }

    #[test]
    fn statement_edits_touch_only_the_statements_in_range() {
        let old = "a=1\ndef f(x:int)->int:\n  return x\nb  =  2\n";
        let new = crate::format(old, &crate::Options::default()).expect("formats");
        let edits = statement_edits(old, &new, 0, 0);
        assert_eq!(
            apply(old, &edits),
            "a = 1\ndef f(x:int)->int:\n  return x\nb  =  2\n"
        );
        let edits = statement_edits(old, &new, 2, 2);
        assert_eq!(
            apply(old, &edits),
            "a=1\ndef f(x: int) -> int:\n    return x\nb  =  2\n"
        );
    }

    #[test]
    fn diff_names_the_file() {
        let d = unified_diff("x\n", "y\n", "a.ko");
        assert!(d.starts_with("--- a.ko\n+++ a.ko\n"), "{d}");
        assert!(d.contains("-x\n+y\n"));
        assert_eq!(unified_diff("x\n", "x\n", "a.ko"), "");
    }
}
