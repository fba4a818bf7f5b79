//! Comma-separated items between brackets, Black's way.
//!
//! When the whole does not fit, the brackets break first. A call's arguments,
//! a signature's parameters and a subscript then stay on one indented line if
//! they fit there ("hug"); a display (list, dict, set, tuple) always goes one
//! item per line. Broken one per line, the last item gets a trailing comma; a
//! trailing comma the author wrote keeps the brackets broken (the magic
//! trailing comma). Comments between items stay beside the item they followed.

use kora_syntax::span::Span;

use crate::doc::{group_with, if_break, indent, line, list, nil, s, softline, Doc};
use crate::formatter::Fmt;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Items share one indented line when they fit there.
    Hug,
    /// Broken means one item per line.
    OnePerLine,
}

#[derive(Clone, Copy)]
pub(crate) struct Delim {
    pub open: &'static str,
    pub close: &'static str,
    /// The closing bracket in the source (its start bounds the dangling comments; a
    /// comma right before it is a magic trailing comma).
    pub close_at: Span,
    pub fill: Fill,
    /// A single item keeps its comma: `(x,)`.
    pub comma_single: bool,
    /// Broken one per line, the last item gets a comma. Not in a subscript: the parser
    /// reads `xs[a, b,]` as a slice (E0044), though Python accepts it.
    pub trailing_comma: bool,
}

impl Fmt<'_> {
    /// `open item, item close`, with `item(self, i)` laying out item `i` whose code
    /// starts at `starts[i]`.
    pub(crate) fn delimited(
        &mut self,
        d: Delim,
        starts: &[u32],
        item: impl FnMut(&mut Self, usize) -> Doc,
    ) -> Doc {
        let saved = std::mem::replace(&mut self.no_breaks, false);
        let doc = self.delimited_items(d, starts, item);
        self.no_breaks = saved;
        doc
    }

    fn delimited_items(
        &mut self,
        d: Delim,
        starts: &[u32],
        mut item: impl FnMut(&mut Self, usize) -> Doc,
    ) -> Doc {
        let magic = self.magic_comma(d.close_at.end) && !(starts.len() == 1 && d.comma_single);
        if starts.is_empty() {
            let dangling = self.dangling(d.close_at.start);
            if dangling.is_empty() {
                return list(vec![s(d.open), s(d.close)]);
            }
            return group_with(
                list(vec![s(d.open), indent(dangling), softline(), s(d.close)]),
                None,
                false,
            );
        }
        let (lead_eol, lead_own) = self.around_break(starts[0]);
        let mut seq = vec![lead_own, item(self, 0)];
        for (i, &start) in starts.iter().enumerate().skip(1) {
            seq.push(s(","));
            let (eol, own) = self.around_break(start);
            seq.push(eol);
            seq.push(line());
            seq.push(own);
            seq.push(item(self, i));
        }
        let inner_id = (d.fill == Fill::Hug).then(|| self.group_id());
        let comma = if starts.len() == 1 {
            if d.comma_single || magic {
                s(",")
            } else {
                nil()
            }
        } else if d.trailing_comma {
            if_break(s(","), nil(), inner_id)
        } else {
            nil()
        };
        seq.push(comma);
        let dangling = self.dangling(d.close_at.start);
        let body = match inner_id {
            Some(id) => list(vec![
                lead_eol,
                softline(),
                group_with(list(seq), Some(id), magic),
                dangling,
            ]),
            None => {
                let mut v = vec![lead_eol, softline()];
                v.extend(seq);
                v.push(dangling);
                list(v)
            }
        };
        group_with(
            list(vec![s(d.open), indent(body), softline(), s(d.close)]),
            None,
            magic,
        )
    }
}
