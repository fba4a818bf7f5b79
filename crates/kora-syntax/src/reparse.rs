//! Parsing an edited file again by re-parsing only the top-level statements the edit touched.
//!
//! A top-level statement starts where the lexer is at column 0, outside any
//! bracket or string, and that state depends only on the text before it. So
//! when the text before the first touched statement and after the last one is
//! unchanged, the statements outside the edit parse exactly as before: they are
//! reused, those after the edit shifted by the change in length. The touched
//! region is parsed alone; the answer is only given when that parse is clean
//! and the old one was too, because a clean region ends at column 0 outside
//! any bracket or string (an unclosed one is an error), so the text after it
//! lexes as it did. Anything else returns `None` and the caller parses the
//! whole file: the result is always what `parse` gives for the new text.

use crate::ast::{Module, Stmt};
use crate::shift::shift_stmts;
use crate::Parsed;

/// `parse(new)`, computed from `old` (the clean parse of `old_text`) when the edit allows.
pub fn reparse(old: &Parsed, old_text: &str, new_text: &str) -> Option<Parsed> {
    if !old.diagnostics.is_empty() || old.module.stmts.is_empty() {
        return None;
    }
    if old_text.len() > u32::MAX as usize || new_text.len() > u32::MAX as usize {
        return None;
    }
    let (p, q_old, q_new) = changed_region(old_text, new_text);
    let stmts = &old.module.stmts;
    // The first statement the edit may touch: the last one starting strictly before the
    // edit, so the text just before the region is never part of the change (an edit at a
    // statement's first column may make it continue the one before).
    let first = stmts.iter().rposition(|s| (s.span.start as usize) < p)?;
    // The first statement after the region: it starts strictly after the edit's end.
    let after = stmts
        .iter()
        .position(|s| s.span.start as usize > q_old)
        .unwrap_or(stmts.len());
    if after <= first {
        return None;
    }
    let a = stmts[first].span.start as usize;
    // Both ends of the region at the start of a line (`;` puts statements side by side).
    let line_start = |t: &str, at: usize| at == 0 || t.as_bytes().get(at - 1) == Some(&b'\n');
    let delta = new_text.len() as i64 - old_text.len() as i64;
    let b_old = stmts
        .get(after)
        .map_or(old_text.len(), |s| s.span.start as usize);
    let b_new = (b_old as i64 + delta) as usize;
    if !line_start(old_text, a) || !line_start(old_text, b_old) {
        return None;
    }
    if b_new < q_new || !new_text.is_char_boundary(a) || !new_text.is_char_boundary(b_new) {
        return None;
    }
    let region = new_text.get(a..b_new)?;
    // A mark opening the region would be dropped as a byte order mark; inside a file it is not one.
    if a > 0 && region.starts_with('\u{feff}') {
        return None;
    }
    // A line continuation at the region's end is accepted alone but joins the reused text
    // in the whole file; a `\` before a line break is rare enough to always parse whole.
    if region.contains("\\\n") || region.contains("\\\r\n") {
        return None;
    }
    let part = crate::parse(region);
    if !part.diagnostics.is_empty() {
        return None;
    }
    let mut middle = part.module.stmts;
    // Every statement of the region must lie inside it, the last ending where the reused text begins.
    if middle.iter().any(|s| s.span.end as usize > region.len()) {
        return None;
    }
    shift_stmts(&mut middle, a as i64);
    let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len() + middle.len());
    out.extend_from_slice(&stmts[..first]);
    out.extend(middle);
    let start_tail = out.len();
    out.extend_from_slice(&stmts[after..]);
    shift_stmts(&mut out[start_tail..], delta);
    Some(Parsed {
        module: Module { stmts: out },
        diagnostics: Vec::new(),
    })
}

/// The changed bytes: `[p, q_old)` of the old text became `[p, q_new)` of the new one
/// (common prefix and suffix, kept on character boundaries).
fn changed_region(old: &str, new: &str) -> (usize, usize, usize) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let mut p = o.iter().zip(n).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(p) || !new.is_char_boundary(p) {
        p -= 1;
    }
    let max_suffix = o.len().min(n.len()) - p;
    let mut s = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(o.len() - s) || !new.is_char_boundary(n.len() - s) {
        s -= 1;
    }
    (p, o.len() - s, n.len() - s)
}
