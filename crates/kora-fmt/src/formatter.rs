//! The formatter's state while it walks one file: the source side tables, the
//! comment cursor and the options; and the walk's entry point.

use kora_syntax::ast::Module;
use kora_syntax::comments::{comments, Comment};

use crate::doc::{line, nil, propagate_breaks, s, softline, Doc, GroupId};
use crate::options::Options;
use crate::printer::print;
use crate::source::Source;

pub(crate) struct Fmt<'s> {
    pub src: Source<'s>,
    pub opts: &'s Options,
    pub comments: Vec<Comment>,
    /// The first comment not yet placed.
    pub next_comment: usize,
    next_group: u32,
    /// Outside any bracket a line break would end the statement: layouts there must
    /// not break, except in parentheses they add themselves.
    pub no_breaks: bool,
}

impl<'s> Fmt<'s> {
    pub fn new(text: &'s str, opts: &'s Options) -> Fmt<'s> {
        Fmt {
            src: Source::new(text),
            opts,
            comments: comments(text),
            next_comment: 0,
            next_group: 0,
            no_breaks: true,
        }
    }

    pub fn group_id(&mut self) -> GroupId {
        self.next_group += 1;
        GroupId(self.next_group)
    }

    /// Runs `f` where line breaks are (`true`) or are not allowed.
    pub fn breaks<T>(&mut self, allowed: bool, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.no_breaks;
        self.no_breaks = !allowed;
        let r = f(self);
        self.no_breaks = saved;
        r
    }

    /// A space that may become a line break, where one is allowed.
    pub fn line_here(&self) -> Doc {
        if self.no_breaks {
            s(" ")
        } else {
            line()
        }
    }

    /// Nothing, or a line break where one is allowed and needed.
    pub fn softline_here(&self) -> Doc {
        if self.no_breaks {
            nil()
        } else {
            softline()
        }
    }

    /// A magic trailing comma before the bracket that ends at `end`, if the options heed them.
    pub fn magic_comma(&self, end: u32) -> bool {
        self.opts.magic_trailing_comma && self.src.trailing_comma_before(end)
    }
}

/// Lays out a parsed, error-free module. The text ends with one line break unless it is empty.
pub(crate) fn layout(text: &str, module: &Module, opts: &Options) -> String {
    let mut f = Fmt::new(text, opts);
    let mut doc = f.module(module);
    propagate_breaks(&mut doc);
    let mut out = print(&doc, opts.line_length, opts.indent_width);
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    let lead = out.len() - out.trim_start_matches('\n').len();
    out.drain(..lead);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}
