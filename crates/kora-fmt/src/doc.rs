//! The layout document: what the formatter builds from the tree and the printer lays out.
//!
//! It is the Wadler/Prettier algebra that ruff's formatter also uses. A
//! `Group` is printed flat when it fits in what is left of the line and broken
//! otherwise; a broken group turns its `Line`s into line breaks, and the
//! groups inside it are measured again on their own. Black's layout falls out
//! of how the groups nest: the brackets of a call break first, then the
//! arguments, one per line with a trailing comma, only when they do not fit
//! on one indented line.

/// Identifies a group so an `IfBreak` elsewhere can follow its decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Nothing when flat, a line break when broken.
    Soft,
    /// A space when flat, a line break when broken.
    Space,
    /// Always a line break; the groups around it cannot be flat.
    Hard,
}

#[derive(Clone, Debug)]
pub enum Doc {
    /// Text without line breaks, except inside a multi-line string literal.
    Text(String),
    /// Punctuation and keywords.
    Str(&'static str),
    List(Vec<Doc>),
    /// The contents, with line breaks one indentation level deeper.
    Indent(Box<Doc>),
    Group {
        contents: Box<Doc>,
        id: Option<GroupId>,
        /// Broken whatever its width: a magic trailing comma, or a comment or hard line inside.
        expand: bool,
    },
    Line(LineKind),
    /// `broken` when the group (`group`, or the enclosing one) is broken, `flat` otherwise.
    IfBreak {
        broken: Box<Doc>,
        flat: Box<Doc>,
        group: Option<GroupId>,
    },
    /// Text held back until the next line break: a trailing comment.
    LineSuffix(String),
    /// Forces every enclosing group to break (a comment that must end its line).
    BreakParent,
    /// An atom that may be wrapped in parentheses on its own line, but only when that
    /// makes it fit: the right side of `x = long.name` when the line is too long.
    BestFitParens(Box<Doc>),
}

pub fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

pub fn s(t: &'static str) -> Doc {
    Doc::Str(t)
}

pub fn list(parts: Vec<Doc>) -> Doc {
    Doc::List(parts)
}

pub fn indent(d: Doc) -> Doc {
    Doc::Indent(Box::new(d))
}

pub fn group(d: Doc) -> Doc {
    Doc::Group {
        contents: Box::new(d),
        id: None,
        expand: false,
    }
}

/// A group that is broken from the start when `expand` (a magic trailing comma).
pub fn group_with(d: Doc, id: Option<GroupId>, expand: bool) -> Doc {
    Doc::Group {
        contents: Box::new(d),
        id,
        expand,
    }
}

pub fn softline() -> Doc {
    Doc::Line(LineKind::Soft)
}

pub fn line() -> Doc {
    Doc::Line(LineKind::Space)
}

pub fn hardline() -> Doc {
    Doc::Line(LineKind::Hard)
}

pub fn if_break(broken: Doc, flat: Doc, group: Option<GroupId>) -> Doc {
    Doc::IfBreak {
        broken: Box::new(broken),
        flat: Box::new(flat),
        group,
    }
}

pub fn nil() -> Doc {
    Doc::List(Vec::new())
}

impl Doc {
    pub fn is_empty(&self) -> bool {
        match self {
            Doc::List(v) => v.iter().all(Doc::is_empty),
            Doc::Text(s) => s.is_empty(),
            Doc::Str(s) => s.is_empty(),
            _ => false,
        }
    }
}

/// Marks every group that holds a hard line or a `BreakParent` as expanded; returns
/// whether `d` holds one. Run once before printing.
pub fn propagate_breaks(d: &mut Doc) -> bool {
    match d {
        Doc::Text(_) | Doc::Str(_) | Doc::LineSuffix(_) => false,
        Doc::Line(k) => *k == LineKind::Hard,
        Doc::BreakParent => true,
        Doc::List(v) => {
            let mut any = false;
            for x in v.iter_mut() {
                any |= propagate_breaks(x);
            }
            any
        }
        Doc::Indent(x) | Doc::BestFitParens(x) => propagate_breaks(x),
        Doc::Group {
            contents, expand, ..
        } => {
            let inner = propagate_breaks(contents);
            *expand |= inner;
            *expand
        }
        Doc::IfBreak { broken, flat, .. } => {
            let a = propagate_breaks(broken);
            let b = propagate_breaks(flat);
            a || b
        }
    }
}
