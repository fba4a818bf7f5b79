//! Rendering a runtime error with its Kora stack trace: one `file:line:col` per frame, outermost first.

use kora_check::hir::Program;
use kora_syntax::LineIndex;

use crate::error::{RtError, TraceEntry};

/// The text `kora run` prints on stderr when a program fails.
pub fn render_error(p: &Program, e: &RtError) -> String {
    let mut out = format!("error[{}]: {}\n", e.code, e.message);
    if e.trace.is_empty() {
        return out;
    }
    out.push_str("Kora stack trace (most recent call last):\n");
    let frames: Vec<&TraceEntry> = e.trace.iter().rev().collect();
    let mut i = 0;
    while i < frames.len() {
        let t = frames[i];
        let m = p.module(t.module);
        let idx = LineIndex::new(&m.source);
        let (line, col) = idx.line_col(&m.source, t.span.start);
        out.push_str(&format!(
            "  at {}:{}:{} in {}\n",
            m.display, line, col, t.func
        ));
        // Deep recursion repeats one frame hundreds of times: say so once.
        let run = frames[i + 1..]
            .iter()
            .take_while(|o| o.module == t.module && o.span == t.span && o.func == t.func)
            .count();
        if run > 2 {
            out.push_str(&format!(
                "  ... the frame above repeated {run} more times\n"
            ));
            i += run;
        }
        i += 1;
    }
    if let Some(t) = frames.last() {
        let m = p.module(t.module);
        let idx = LineIndex::new(&m.source);
        let line = idx.line(t.span.start);
        let start = idx.line_start(line).unwrap_or(0) as usize;
        let text = m
            .source
            .get(start..)
            .and_then(|s| s.lines().next())
            .unwrap_or("");
        let col0 = m
            .source
            .get(start..t.span.start as usize)
            .map(|s| s.chars().count())
            .unwrap_or(0);
        let width = m
            .source
            .get(t.span.start as usize..(t.span.end as usize).min(start + text.len()))
            .map(|s| s.chars().count())
            .unwrap_or(1)
            .max(1);
        let gutter = line.to_string().len();
        out.push_str(&format!("{:gutter$} |\n", ""));
        out.push_str(&format!("{line} | {text}\n"));
        out.push_str(&format!(
            "{:gutter$} | {}{}\n",
            "",
            " ".repeat(col0),
            "^".repeat(width)
        ));
    }
    out
}
