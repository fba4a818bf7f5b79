//! Lays a `Doc` out within the line width: Prettier's printing algorithm, iterative.
//!
//! A broken group's contents are printed in break mode; every group met is
//! first measured flat against what is left of the line plus what follows it
//! up to the next possible line break (`fits`), which is what makes the last
//! bracket of a line the first to break.

use unicode_width::UnicodeWidthStr;

use crate::doc::{Doc, GroupId, LineKind};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Flat,
    Break,
}

#[derive(Clone, Copy)]
struct Cmd<'d> {
    indent: usize,
    mode: Mode,
    doc: &'d Doc,
}

struct Printer<'d> {
    out: String,
    /// Display width of the current line so far.
    pos: usize,
    width: usize,
    indent_unit: usize,
    group_modes: Vec<Option<Mode>>,
    suffix: Vec<&'d str>,
    /// The indentation the current line started with.
    line_indent: usize,
}

fn width_of(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

static OPEN_PAREN: Doc = Doc::Str("(");
static CLOSE_PAREN: Doc = Doc::Str(")");
static HARD_LINE: Doc = Doc::Line(LineKind::Hard);

/// Prints `doc` (after `propagate_breaks`) within `width` columns, indenting by `indent_unit`.
pub fn print(doc: &Doc, width: usize, indent_unit: usize) -> String {
    let mut p = Printer {
        out: String::new(),
        pos: 0,
        width,
        indent_unit,
        group_modes: Vec::new(),
        suffix: Vec::new(),
        line_indent: 0,
    };
    let mut stack = vec![Cmd {
        indent: 0,
        mode: Mode::Break,
        doc,
    }];
    while let Some(cmd) = stack.pop() {
        p.step(cmd, &mut stack);
    }
    p.flush_suffix();
    p.out
}

impl<'d> Printer<'d> {
    fn set_mode(&mut self, id: GroupId, mode: Mode) {
        let i = id.0 as usize;
        if self.group_modes.len() <= i {
            self.group_modes.resize(i + 1, None);
        }
        self.group_modes[i] = Some(mode);
    }

    fn mode_of(&self, id: GroupId) -> Option<Mode> {
        self.group_modes.get(id.0 as usize).copied().flatten()
    }

    fn push_text(&mut self, s: &str) {
        self.out.push_str(s);
        match s.rfind('\n') {
            Some(i) => self.pos = width_of(&s[i + 1..]),
            None => self.pos += width_of(s),
        }
    }

    /// At the end of the text: trailing comments still pending.
    fn flush_suffix(&mut self) {
        if !self.suffix.is_empty() {
            self.newline(0);
        }
    }

    /// Ends the line (its trailing comments first) and indents the next one. Two
    /// comments cannot share a line's end (they would read as one): the second goes on
    /// a line of its own.
    fn newline(&mut self, indent: usize) {
        let suffixes = std::mem::take(&mut self.suffix);
        let here = self.line_indent.max(indent);
        for (i, sfx) in suffixes.into_iter().enumerate() {
            if i > 0 {
                self.break_line(here);
                self.push_text(sfx.trim_start());
            } else {
                self.push_text(sfx);
            }
        }
        self.break_line(indent);
    }

    fn break_line(&mut self, indent: usize) {
        let trimmed = self.out.trim_end_matches(' ').len();
        self.out.truncate(trimmed);
        self.out.push('\n');
        for _ in 0..indent {
            self.out.push(' ');
        }
        self.pos = indent;
        self.line_indent = indent;
    }

    fn step(&mut self, cmd: Cmd<'d>, stack: &mut Vec<Cmd<'d>>) {
        let Cmd { indent, mode, doc } = cmd;
        match doc {
            Doc::Text(s) => self.push_text(s),
            Doc::Str(s) => self.push_text(s),
            Doc::List(parts) => {
                for d in parts.iter().rev() {
                    stack.push(Cmd {
                        indent,
                        mode,
                        doc: d,
                    });
                }
            }
            Doc::Indent(d) => stack.push(Cmd {
                indent: indent + self.indent_unit,
                mode,
                doc: d,
            }),
            Doc::Group {
                contents,
                id,
                expand,
            } => {
                let flat = Cmd {
                    indent,
                    mode: Mode::Flat,
                    doc: contents,
                };
                let room = self.width as isize - self.pos as isize;
                let chosen = if *expand {
                    Mode::Break
                } else if mode == Mode::Flat || self.fits(flat, stack, room, false) {
                    Mode::Flat
                } else {
                    Mode::Break
                };
                if let Some(id) = id {
                    self.set_mode(*id, chosen);
                }
                stack.push(Cmd {
                    indent,
                    mode: chosen,
                    doc: contents,
                });
            }
            Doc::Line(kind) => match (mode, kind) {
                (Mode::Flat, LineKind::Space) => self.push_text(" "),
                (Mode::Flat, LineKind::Soft) => {}
                _ => self.newline(indent),
            },
            Doc::IfBreak {
                broken,
                flat,
                group,
            } => {
                let m = match group {
                    Some(id) => self.mode_of(*id).unwrap_or(Mode::Flat),
                    None => mode,
                };
                stack.push(Cmd {
                    indent,
                    mode,
                    doc: if m == Mode::Break { broken } else { flat },
                });
            }
            Doc::LineSuffix(s) => self.suffix.push(s),
            Doc::BreakParent => {}
            Doc::BestFitParens(inner) => {
                let flat = Cmd {
                    indent,
                    mode: Mode::Flat,
                    doc: inner,
                };
                let room = self.width as isize - self.pos as isize;
                if mode == Mode::Flat || self.fits(flat, stack, room, false) {
                    stack.push(flat);
                    return;
                }
                let inner_indent = indent + self.indent_unit;
                let alone = self.width as isize - inner_indent as isize;
                if !self.fits(flat, &[], alone, true) {
                    stack.push(flat);
                    return;
                }
                let at = |doc| Cmd {
                    indent,
                    mode: Mode::Break,
                    doc,
                };
                stack.push(at(&CLOSE_PAREN));
                stack.push(at(&HARD_LINE));
                stack.push(Cmd {
                    indent: inner_indent,
                    mode: Mode::Flat,
                    doc: inner,
                });
                stack.push(Cmd {
                    indent: inner_indent,
                    mode: Mode::Break,
                    doc: &HARD_LINE,
                });
                stack.push(at(&OPEN_PAREN));
            }
        }
    }

    /// Whether `next`, then the commands below it on `rest` up to their first line
    /// break, fit in `width` columns.
    fn fits(&self, next: Cmd<'d>, rest: &[Cmd<'d>], mut width: isize, must_be_flat: bool) -> bool {
        let mut rest_idx = rest.len();
        let mut cmds: Vec<(Mode, &Doc)> = vec![(next.mode, next.doc)];
        loop {
            if width < 0 {
                return false;
            }
            let (mode, doc) = match cmds.pop() {
                Some(c) => c,
                None => {
                    if rest_idx == 0 {
                        return true;
                    }
                    rest_idx -= 1;
                    (rest[rest_idx].mode, rest[rest_idx].doc)
                }
            };
            match doc {
                Doc::Text(s) => match s.find('\n') {
                    Some(i) => return width - width_of(&s[..i]) as isize >= 0,
                    None => width -= width_of(s) as isize,
                },
                Doc::Str(s) => width -= width_of(s) as isize,
                Doc::List(parts) => {
                    for d in parts.iter().rev() {
                        cmds.push((mode, d));
                    }
                }
                Doc::Indent(d) => cmds.push((mode, d)),
                // A value that may still take parentheses of its own can start a new line.
                Doc::BestFitParens(_) if mode == Mode::Break => return true,
                Doc::BestFitParens(d) => cmds.push((mode, d)),
                Doc::Group {
                    contents, expand, ..
                } => {
                    if must_be_flat && *expand {
                        return false;
                    }
                    let m = if *expand { Mode::Break } else { mode };
                    cmds.push((m, contents));
                }
                Doc::IfBreak {
                    broken,
                    flat,
                    group,
                } => {
                    let m = match group {
                        Some(id) => self.mode_of(*id).unwrap_or(Mode::Flat),
                        None => mode,
                    };
                    cmds.push((mode, if m == Mode::Break { broken } else { flat }));
                }
                Doc::Line(kind) => match (mode, kind) {
                    (Mode::Break, _) | (_, LineKind::Hard) => return true,
                    (Mode::Flat, LineKind::Space) => width -= 1,
                    (Mode::Flat, LineKind::Soft) => {}
                },
                Doc::LineSuffix(_) | Doc::BreakParent => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::*;

    fn call(name: &str, args: &[&str]) -> Doc {
        let mut items = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                items.push(text(","));
                items.push(line());
            }
            items.push(text(*a));
        }
        let id = GroupId(0);
        group(list(vec![
            text(format!("{name}(")),
            indent(list(vec![
                softline(),
                group_with(
                    list(vec![list(items), if_break(text(","), nil(), Some(id))]),
                    Some(id),
                    false,
                ),
            ])),
            softline(),
            text(")"),
        ]))
    }

    fn render(mut d: Doc, width: usize) -> String {
        propagate_breaks(&mut d);
        print(&d, width, 4)
    }

    #[test]
    fn flat_when_it_fits() {
        assert_eq!(render(call("f", &["a", "b"]), 20), "f(a, b)");
    }

    #[test]
    fn hugs_then_explodes() {
        assert_eq!(
            render(call("function", &["alpha", "beta"]), 16),
            "function(\n    alpha, beta\n)"
        );
        assert_eq!(
            render(call("function", &["alpha", "beta"]), 12),
            "function(\n    alpha,\n    beta,\n)"
        );
    }

    #[test]
    fn trailing_comment_goes_before_the_break() {
        let d = list(vec![
            text("x"),
            Doc::LineSuffix("  # c".into()),
            hardline(),
            text("y"),
        ]);
        assert_eq!(render(d, 80), "x  # c\ny");
    }

    #[test]
    fn best_fit_parens_only_when_they_help() {
        let d = list(vec![
            text("value = "),
            Doc::BestFitParens(Box::new(text("a_rather_long_name"))),
        ]);
        assert_eq!(render(d.clone(), 40), "value = a_rather_long_name");
        assert_eq!(
            render(d.clone(), 24),
            "value = (\n    a_rather_long_name\n)"
        );
        assert_eq!(render(d, 10), "value = a_rather_long_name");
    }
}
