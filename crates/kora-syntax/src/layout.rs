//! The layout pass: physical lines to logical lines, indentation to INDENT/DEDENT, and bracket balancing.
//!
//! It works like CPython's tokenizer: newlines inside brackets are ignored,
//! blank and comment-only lines produce nothing, and indentation is compared
//! as strings so that a tab is never silently equated with some number of
//! spaces. It also balances brackets, so the parser always sees matched
//! pairs: a bracket that is never closed gets a synthetic closer (recorded in
//! `synthetic`, so the parser's own complaint about it can be dropped) and a
//! stray closer is reported and removed.
//!
//! Where an unclosed bracket ends is a guess, and a guess must never touch a
//! valid file. So the pass runs strictly first; only when brackets are still
//! open at the end does it run again, closing those brackets at the first
//! line that is indented no deeper than the line that opened them (or that
//! starts with a statement-only keyword). That confines the damage of one
//! missing `)` to its own statement instead of the rest of the file.

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::token::Tok;

/// Deeper nesting than this is refused: it is never intended, and the tree
/// would otherwise grow deep enough to strain the stack of later passes.
const MAX_BRACKET_DEPTH: usize = 200;

/// A logical line whose tree could be deeper than this is refused: it bounds
/// how deep a tree the parser can build (and drop, when it backtracks) to what
/// a 2 MiB thread stack survives. Every tree level costs at least one token of
/// its own, so the bound is counted per comma-separated part: a flat list of
/// 50,000 items is a shallow tree and passes, `a + a + ...` does not.
const MAX_LINE_DEPTH: usize = 20_000;

/// CPython's limit on nested blocks; past it, deeper lines are read at the deepest level.
const MAX_INDENT_LEVELS: usize = 100;

pub struct Layout<'a> {
    pub tokens: Vec<(Tok<'a>, Span)>,
    pub diags: Vec<Diagnostic>,
    /// Each unclosed bracket: the opener's span and the offset of its synthetic closer.
    pub synthetic: Vec<(Span, u32)>,
}

struct Level {
    key: String,
    width: usize,
}

struct Open {
    tok: Tok<'static>,
    span: Span,
    line_width: usize,
    /// The depth bound of the part of the enclosing bracket this one sits in, when it opened.
    outer_part: usize,
    /// The deepest part seen inside this bracket so far.
    deepest: usize,
}

struct State<'a, 's> {
    src: &'s str,
    out: Vec<(Tok<'a>, Span)>,
    diags: Vec<Diagnostic>,
    synthetic: Vec<(Span, u32)>,
    levels: Vec<Level>,
    open: Vec<Open>,
    /// Openers dropped for excessive depth; their closers are dropped too.
    too_deep: usize,
    /// Openers (by offset) known to be unclosed, which may be closed early.
    eager: &'s [u32],
    /// Openers still open at the end of the file.
    unclosed: Vec<u32>,
    last_end: u32,
    /// Tokens in the current comma-separated part at the innermost bracket,
    /// plus what the brackets it sits in add: a bound on the tree's depth there.
    part: usize,
    /// The largest `part` seen on the current logical line.
    line_depth: usize,
    /// Where the physical line holding `line_at` starts (a cache: tokens arrive in order).
    line_at: u32,
    line_start: u32,
    /// While lines nested past `MAX_INDENT_LEVELS` are skipped: the width they are deeper than.
    skip_above: Option<usize>,
}

fn closer_of(t: &Tok<'_>) -> Option<Tok<'static>> {
    match t {
        Tok::LParen => Some(Tok::RParen),
        Tok::LBracket => Some(Tok::RBracket),
        Tok::LBrace => Some(Tok::RBrace),
        _ => None,
    }
}

fn opener_static(t: &Tok<'_>) -> Tok<'static> {
    match t {
        Tok::LBracket => Tok::LBracket,
        Tok::LBrace => Tok::LBrace,
        _ => Tok::LParen,
    }
}

/// The leading whitespace of the line holding `at`, with its span.
fn indentation(src: &str, at: u32) -> (&str, Span) {
    let at = (at as usize).min(src.len());
    let line_start = src
        .get(..at)
        .and_then(|s| s.rfind('\n'))
        .map(|i| i + 1)
        .unwrap_or(0);
    indentation_from(src, line_start, at)
}

fn indentation_from(src: &str, line_start: usize, at: usize) -> (&str, Span) {
    let line = src.get(line_start..at).unwrap_or("");
    let n = line
        .bytes()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .count();
    let span = Span::new(line_start as u32, (line_start + n) as u32);
    (&line[..n], span)
}

fn width_of(ws: &str) -> usize {
    let mut w = 0;
    for b in ws.bytes() {
        match b {
            b'\t' => w = (w / 8 + 1) * 8,
            b'\x0c' => w = 0,
            _ => w += 1,
        }
    }
    w
}

impl<'a, 's> State<'a, 's> {
    fn push(&mut self, tok: Tok<'a>, span: Span) {
        if self.skip_above.is_none() {
            self.out.push((tok, span));
        }
    }

    /// The leading whitespace of the line holding `at`, found without rescanning the line:
    /// a line of 50,000 brackets asks once per bracket.
    fn indentation_at(&mut self, at: u32) -> (&'s str, Span) {
        let at = at.min(self.src.len() as u32);
        if at < self.line_at {
            return indentation(self.src, at);
        }
        let from = self.line_at as usize;
        if let Some(i) = self.src.get(from..at as usize).and_then(|s| s.rfind('\n')) {
            self.line_start = (from + i + 1) as u32;
        }
        self.line_at = at;
        indentation_from(self.src, self.line_start as usize, at as usize)
    }

    /// Counts one token toward the current part's depth bound.
    fn count(&mut self, tok: &Tok<'_>) {
        if *tok == Tok::Comma {
            let base = self.open.last().map(|o| o.outer_part).unwrap_or(0);
            self.part = base + 1;
        } else {
            self.part += 1;
        }
        if let Some(o) = self.open.last_mut() {
            o.deepest = o.deepest.max(self.part);
        }
        self.line_depth = self.line_depth.max(self.part);
    }

    /// Replaces an over-long logical line (tokens from `first`) with one error token.
    fn limit_line(&mut self, first: usize) {
        let depth = std::mem::take(&mut self.line_depth);
        self.part = 0;
        if depth <= MAX_LINE_DEPTH || self.skip_above.is_some() {
            return;
        }
        let start = self.out.get(first).map(|(_, s)| *s).unwrap_or_default();
        self.diags.push(
            Diagnostic::error("E0028", "statement too long", start)
                .with_label(format!(
                    "this statement could nest more than {MAX_LINE_DEPTH} levels deep"
                ))
                .with_help("split it into several statements; load large data from a file with `fs` and `json`"),
        );
        self.out.truncate(first);
        self.out
            .push((Tok::Error, Span::new(start.start, self.last_end)));
        self.synthetic.retain(|(_, at)| *at < start.start);
    }

    fn here(&self) -> Span {
        Span::new(self.last_end, self.last_end)
    }

    fn begin_line(&mut self, at: u32) {
        let (ws, span) = self.indentation_at(at);
        let key: String = ws.chars().filter(|c| *c != '\x0c').collect();
        let width = width_of(ws);
        if let Some(above) = self.skip_above {
            if width > above {
                return;
            }
            self.skip_above = None;
        }
        let mut reported = false;
        if key.contains(' ') && key.contains('\t') {
            reported = true;
            self.diags.push(
                Diagnostic::error("E0020", "mixed tabs and spaces in indentation", span)
                    .with_label("this indentation mixes tabs and spaces")
                    .with_help("indent with spaces only (4 per level is the convention)"),
            );
        }
        let Some(top) = self.levels.last() else {
            return;
        };
        let top_width = top.width;
        if key == top.key {
            return;
        }
        let consistent = key.starts_with(top.key.as_str()) || top.key.starts_with(key.as_str());
        if !consistent && !reported {
            reported = true;
            self.diags.push(
                Diagnostic::error(
                    "E0021",
                    "inconsistent use of tabs and spaces in indentation",
                    span,
                )
                .with_label("this line is indented differently from the block around it")
                .with_help("indent every line of the file with spaces only"),
            );
        }
        if width > top.width {
            if self.levels.len() > MAX_INDENT_LEVELS {
                // One error for the whole runaway: every line nested deeper is
                // skipped, and the block it opens becomes one error statement,
                // so neither this line nor its parent is reported again.
                self.diags.push(
                    Diagnostic::error("E0028", "too many levels of indentation", span)
                        .with_label(format!(
                            "more than {MAX_INDENT_LEVELS} blocks are open here"
                        ))
                        .with_help("move the innermost blocks into functions; the lines nested this deep were not read"),
                );
                let line = Span::new(span.start, span.end.max(at));
                self.push(Tok::Indent, span);
                self.push(Tok::Error, line);
                self.push(Tok::Newline, line);
                self.levels.push(Level { key, width });
                self.skip_above = Some(top_width);
                return;
            }
            self.levels.push(Level { key, width });
            self.push(Tok::Indent, span);
            return;
        }
        while self.levels.len() > 1 && self.levels.last().is_some_and(|l| l.width > width) {
            self.levels.pop();
            let here = self.here();
            self.push(Tok::Dedent, here);
        }
        let top_width = self.levels.last().map(|l| l.width).unwrap_or(0);
        if top_width != width && !reported {
            self.diags.push(
                Diagnostic::error("E0022", "unindent does not match any outer indentation level", span)
                    .with_label("this line's indentation lines up with no enclosing block")
                    .with_help("line it up exactly with the statement it continues, or with an enclosing block"),
            );
        }
    }

    fn never_closed(&mut self, o: &Open) {
        let closer = closer_of(&o.tok).unwrap_or(Tok::RParen);
        self.diags.push(
            Diagnostic::error("E0025", format!("`{}` was never closed", o.tok), o.span)
                .with_label(format!("this `{}` has no matching `{closer}`", o.tok))
                .with_help(format!("add the missing `{closer}`")),
        );
        let here = self.here();
        self.synthetic.push((o.span, here.start));
        self.push(closer, here);
    }

    fn close_all(&mut self) {
        while let Some(o) = self.open.pop() {
            self.unclosed.push(o.span.start);
            self.never_closed(&o);
        }
    }

    /// Whether a newline inside brackets, followed by `next`, ends a known-unclosed bracket.
    fn restarts(&self, next: Option<&(Tok<'_>, Span)>) -> bool {
        let Some((tok, span)) = next else {
            return false;
        };
        let Some(first) = self
            .open
            .iter()
            .find(|o| self.eager.contains(&o.span.start))
        else {
            return false;
        };
        if matches!(tok, Tok::RParen | Tok::RBracket | Tok::RBrace) {
            return false;
        }
        tok.starts_statement_only()
            || width_of(indentation(self.src, span.start).0) <= first.line_width
    }

    fn bracket(&mut self, tok: Tok<'a>, span: Span) -> bool {
        if closer_of(&tok).is_some() {
            if self.open.len() >= MAX_BRACKET_DEPTH {
                if self.too_deep == 0 {
                    self.diags.push(
                        Diagnostic::error("E0028", "brackets are nested too deeply", span)
                            .with_label(format!(
                                "more than {MAX_BRACKET_DEPTH} brackets are open here"
                            ))
                            .with_help("split the expression into named parts"),
                    );
                }
                self.too_deep += 1;
                self.push(Tok::Error, span);
                return false;
            }
            let line_width = width_of(self.indentation_at(span.start).0);
            self.open.push(Open {
                tok: opener_static(&tok),
                span,
                line_width,
                outer_part: self.part,
                deepest: self.part,
            });
            return true;
        }
        if !matches!(tok, Tok::RParen | Tok::RBracket | Tok::RBrace) {
            return true;
        }
        if self.too_deep > 0 {
            self.too_deep -= 1;
            self.push(Tok::Error, span);
            return false;
        }
        let Some(top) = self.open.last() else {
            self.diags.push(
                Diagnostic::error("E0027", format!("unmatched `{tok}`"), span)
                    .with_label("nothing was opened for this to close")
                    .with_help("remove it, or add the opening bracket it belongs to"),
            );
            // An error token, not nothing: the parser accepts it quietly
            // wherever a value may stand, so this stays the only complaint.
            self.push(Tok::Error, span);
            return false;
        };
        let want = closer_of(&top.tok).unwrap_or(Tok::RParen);
        if want != tok {
            // Like CPython, blame the closer: it most likely has a typo, and
            // closing the open bracket here keeps the rest of the file intact.
            self.diags.push(
                Diagnostic::error(
                    "E0026",
                    format!("closing `{tok}` does not match the opening `{}`", top.tok),
                    span,
                )
                .with_label(format!("expected `{want}` here"))
                .with_secondary(top.span, "the bracket this closes")
                .with_help(format!("write `{want}` to close the `{}`", top.tok)),
            );
            self.close_part();
            self.push(want, span);
            return false;
        }
        self.close_part();
        true
    }

    /// Closes the innermost bracket: the part around it continues, as deep as the deepest part inside.
    fn close_part(&mut self) {
        if let Some(o) = self.open.pop() {
            self.part = o.deepest.max(o.outer_part) + 1;
            if let Some(outer) = self.open.last_mut() {
                outer.deepest = outer.deepest.max(self.part);
            }
        }
    }
}

/// Turns raw tokens (with physical newlines) into the parser's token stream.
///
/// The result always ends with a `Newline` (when any statement was seen) and
/// one `Dedent` per open indentation level.
pub fn layout<'a>(src: &str, raw: &[(Tok<'a>, Span)]) -> Layout<'a> {
    let (strict, unclosed) = run(src, raw, &[]);
    if unclosed.is_empty() {
        return strict;
    }
    run(src, raw, &unclosed).0
}

fn run<'a>(src: &str, raw: &[(Tok<'a>, Span)], eager: &[u32]) -> (Layout<'a>, Vec<u32>) {
    // Each line adds at most one INDENT and, over the file, as many DEDENTs: reserving for
    // that up front spares a large file the copy (and page faults) of a vector that doubles.
    let lines = raw.iter().filter(|(t, _)| *t == Tok::Newline).count();
    let mut st = State {
        src,
        out: Vec::with_capacity(raw.len() + 2 * lines + 16),
        diags: Vec::new(),
        synthetic: Vec::new(),
        levels: vec![Level {
            key: String::new(),
            width: 0,
        }],
        open: Vec::new(),
        too_deep: 0,
        last_end: 0,
        eager,
        unclosed: Vec::new(),
        part: 0,
        line_depth: 0,
        line_at: 0,
        line_start: 0,
        skip_above: None,
    };
    let mut at_line_start = true;
    let mut line_first = 0;
    for (i, &(tok, span)) in raw.iter().enumerate() {
        if tok == Tok::Newline {
            if !st.open.is_empty() {
                let next = raw[i + 1..].iter().find(|(t, _)| *t != Tok::Newline);
                if !st.restarts(next) {
                    continue;
                }
                st.close_all();
            }
            if !at_line_start {
                st.limit_line(line_first);
                let here = st.here();
                st.push(Tok::Newline, here);
                at_line_start = true;
            }
            continue;
        }
        if at_line_start {
            st.begin_line(span.start);
            line_first = st.out.len();
            at_line_start = false;
        }
        st.count(&tok);
        if st.bracket(tok, span) {
            st.push(tok, span);
        }
        st.last_end = span.end;
    }
    st.close_all();
    if !at_line_start {
        st.limit_line(line_first);
        let here = st.here();
        st.push(Tok::Newline, here);
    }
    st.skip_above = None;
    while st.levels.len() > 1 {
        st.levels.pop();
        let here = st.here();
        st.push(Tok::Dedent, here);
    }
    let layout = Layout {
        tokens: st.out,
        diags: st.diags,
        synthetic: st.synthetic,
    };
    (layout, st.unclosed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn run(src: &str) -> (Vec<Tok<'_>>, Vec<Diagnostic>) {
        lay(src)
    }

    fn lay(src: &str) -> (Vec<Tok<'_>>, Vec<Diagnostic>) {
        let (raw, _) = lex(src, 0);
        let l = layout(src, &raw);
        (l.tokens.into_iter().map(|(t, _)| t).collect(), l.diags)
    }

    #[test]
    fn indent_and_dedent() {
        let (toks, diags) = run("if x:\n    y\n\n    # c\nz\n");
        assert!(diags.is_empty());
        use Tok::*;
        assert_eq!(
            toks,
            vec![
                If,
                Name("x"),
                Colon,
                Newline,
                Indent,
                Name("y"),
                Newline,
                Dedent,
                Name("z"),
                Newline
            ]
        );
    }

    #[test]
    fn brackets_join_lines_and_eof_closes_blocks() {
        let (toks, _) = run("f(1,\n  2)\nif a:\n  if b:\n    c");
        let dedents = toks.iter().filter(|t| **t == Tok::Dedent).count();
        assert_eq!(dedents, 2);
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 4);
    }

    #[test]
    fn mixed_tabs_and_spaces() {
        let src = "if x:\n \ty\n";
        let (_, diags) = run(src);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, "E0020");
        assert_eq!(diags[0].span(), Span::new(6, 8));
    }

    #[test]
    fn bad_dedent() {
        let (_, diags) = run("if x:\n    y\n  z\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, "E0022");
    }

    #[test]
    fn unclosed_bracket_before_def() {
        let (toks, diags) = run("x = f(1,\ndef g():\n    pass\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, "E0025");
        assert!(toks.contains(&Tok::RParen));
        assert_eq!(toks.iter().filter(|t| **t == Tok::Dedent).count(), 1);
    }

    #[test]
    fn unclosed_bracket_ends_at_the_next_line_indented_no_deeper() {
        let (toks, diags) = run("x = (1 +\ny = 2\nz = [\n  1,\n]\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 3);
    }

    #[test]
    fn valid_brackets_at_column_zero_are_untouched() {
        let (toks, diags) = run("d = {\n\"a\": 1,\n}\n");
        assert!(diags.is_empty());
        assert_eq!(toks.iter().filter(|t| **t == Tok::Newline).count(), 1);
    }

    #[test]
    fn a_flat_list_of_any_length_is_shallow_but_a_long_chain_is_deep() {
        let items: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
        let flat = format!("x = f([{}], {{1: [2, 3]}})\n", items.join(", "));
        let (_, diags) = run(&flat);
        assert!(diags.is_empty(), "{diags:?}");
        for deep in [
            format!("x = {}1\n", "1 + ".repeat(25_000)),
            format!("x = [{}1]\n", "1 + ".repeat(25_000)),
            format!("x = [0, f({}1)]\n", "-".repeat(25_000)),
        ] {
            let (toks, diags) = run(&deep);
            assert_eq!(diags.len(), 1, "{diags:?}");
            assert_eq!(diags[0].code, "E0028");
            assert!(toks.len() < 10, "the line became one error token");
        }
    }

    #[test]
    fn an_indentation_runaway_is_one_error_and_one_error_statement() {
        let mut src = String::from("def f():\n");
        for depth in 1..300 {
            src.push_str(&"    ".repeat(depth));
            src.push_str("if x:\n");
        }
        src.push_str("y = 1\n");
        let (toks, diags) = run(&src);
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].code, "E0028");
        assert_eq!(toks.iter().filter(|t| **t == Tok::Error).count(), 1);
        let indents = toks.iter().filter(|t| **t == Tok::Indent).count();
        let dedents = toks.iter().filter(|t| **t == Tok::Dedent).count();
        assert_eq!(indents, dedents);
        assert_eq!(indents, 101);
        assert_eq!(
            &toks[toks.len() - 4..],
            &[Tok::Name("y"), Tok::Assign, Tok::Int(Some(1)), Tok::Newline][..]
        );
    }

    #[test]
    fn stray_closer_is_dropped() {
        let (toks, diags) = run("x = 1)\n");
        assert_eq!(diags[0].code, "E0027");
        assert!(!toks.contains(&Tok::RParen));
        assert!(toks.contains(&Tok::Error));
    }
}
