//! A formatting change as a unified diff (`kora fmt --diff`) or as line-range edits
//! (the language server's range formatting).

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
    fn diff_names_the_file() {
        let d = unified_diff("x\n", "y\n", "a.ko");
        assert!(d.starts_with("--- a.ko\n+++ a.ko\n"), "{d}");
        assert!(d.contains("-x\n+y\n"));
        assert_eq!(unified_diff("x\n", "x\n", "a.ko"), "");
    }
}
