//! What the tree does not keep but the layout needs: the tokens with their
//! spans, which brackets pair up, which parentheses the author wrote around an
//! expression, where trailing commas stand, and the blank lines between lines.

use kora_syntax::lexer::lex;
use kora_syntax::span::Span;
use kora_syntax::token::Tok;

pub struct Source<'s> {
    pub text: &'s str,
    /// Every token but physical line breaks, in order.
    toks: Vec<(Tok<'s>, Span)>,
    /// For each bracket token, the index of its partner.
    partner: Vec<Option<usize>>,
    /// For each token, whether it starts a logical line (a line break outside brackets
    /// comes before it).
    line_first: Vec<bool>,
}

impl<'s> Source<'s> {
    pub fn new(text: &'s str) -> Source<'s> {
        let (raw, _) = lex(text, 0);
        let mut toks: Vec<(Tok<'s>, Span)> = Vec::with_capacity(raw.len());
        let mut line_first = Vec::with_capacity(raw.len());
        let mut depth = 0usize;
        let mut after_break = true;
        for (t, sp) in raw {
            match t {
                Tok::Newline => after_break |= depth == 0,
                _ => {
                    match t {
                        Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                        Tok::RParen | Tok::RBracket | Tok::RBrace => {
                            depth = depth.saturating_sub(1)
                        }
                        _ => {}
                    }
                    toks.push((t, sp));
                    line_first.push(after_break);
                    after_break = false;
                }
            }
        }
        let mut partner = vec![None; toks.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, (t, _)) in toks.iter().enumerate() {
            match t {
                Tok::LParen | Tok::LBracket | Tok::LBrace => open.push(i),
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if let Some(o) = open.pop() {
                        partner[o] = Some(i);
                        partner[i] = Some(o);
                    }
                }
                _ => {}
            }
        }
        Source {
            text,
            toks,
            partner,
            line_first,
        }
    }

    pub fn slice(&self, span: Span) -> &'s str {
        self.text.get(span.range()).unwrap_or("")
    }

    /// The index of the token that starts exactly at `offset`.
    fn starting_at(&self, offset: u32) -> Option<usize> {
        self.toks
            .binary_search_by_key(&offset, |(_, s)| s.start)
            .ok()
    }

    /// The index of the token that ends exactly at `offset`.
    fn ending_at(&self, offset: u32) -> Option<usize> {
        let i = self.toks.partition_point(|(_, s)| s.end < offset);
        (i < self.toks.len() && self.toks[i].1.end == offset).then_some(i)
    }

    /// The tokens lying inside `span`.
    pub fn tokens_in(&self, span: Span) -> &[(Tok<'s>, Span)] {
        let a = self.toks.partition_point(|(_, s)| s.start < span.start);
        let b = self.toks.partition_point(|(_, s)| s.start < span.end);
        &self.toks[a..b.max(a)]
    }

    /// The first token matching `want` inside `[from, to)`.
    pub fn find(&self, from: u32, to: u32, want: impl Fn(&Tok<'_>) -> bool) -> Option<Span> {
        self.tokens_in(Span::new(from, to))
            .iter()
            .find(|(t, _)| want(t))
            .map(|(_, s)| *s)
    }

    /// Whether an opening parenthesis at token `i` groups an expression rather than
    /// opening a call's or a declaration's list: it does unless it follows something a
    /// call could be made on.
    fn groups(&self, i: usize) -> bool {
        let Some(prev) = i.checked_sub(1).map(|p| &self.toks[p].0) else {
            return true;
        };
        if self.line_first[i] {
            return true;
        }
        !matches!(
            prev,
            Tok::Name(_)
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
                | Tok::Str(_)
                | Tok::Bytes(_)
                | Tok::FStr(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::True
                | Tok::False
                | Tok::None
                | Tok::Analyze
                | Tok::AskHuman
                | Tok::Classified
        )
    }

    /// The grouping parentheses written around exactly `span`, innermost first, as
    /// (opening, closing) spans.
    pub fn parens_around(&self, span: Span) -> Vec<(Span, Span)> {
        let mut out = Vec::new();
        let mut cur = self.whole(span);
        while let Some(first) = self.starting_at(cur.start) {
            let Some(last) = self.ending_at(cur.end) else {
                break;
            };
            let (Some(o), Some(c)) = (first.checked_sub(1), last.checked_add(1)) else {
                break;
            };
            if c >= self.toks.len()
                || self.toks[o].0 != Tok::LParen
                || self.partner[o] != Some(c)
                || !self.groups(o)
            {
                break;
            }
            out.push((self.toks[o].1, self.toks[c].1));
            cur = Span::new(self.toks[o].1.start, self.toks[c].1.end);
        }
        out
    }

    /// `span` grown over closing brackets whose openers lie inside it: the parser's span
    /// of `-(a)` stops before the `)`.
    pub fn whole(&self, span: Span) -> Span {
        let mut cur = span;
        loop {
            let i = self.toks.partition_point(|(_, s)| s.start < cur.end);
            let Some((tok, sp)) = self.toks.get(i) else {
                return cur;
            };
            let closes_inside = matches!(tok, Tok::RParen | Tok::RBracket | Tok::RBrace)
                && self.partner[i].is_some_and(|o| {
                    let at = self.toks[o].1.start;
                    at >= cur.start && at < cur.end
                });
            if !closes_inside {
                return cur;
            }
            cur.end = sp.end;
        }
    }

    /// Whether `span` starts with an opening bracket whose partner ends it: `(1, 2)`, not `(a), b`.
    pub fn self_bracketed(&self, span: Span) -> bool {
        match (self.starting_at(span.start), self.ending_at(span.end)) {
            (Some(a), Some(b)) => self.partner[a] == Some(b),
            _ => false,
        }
    }

    /// Whether the token before the closing bracket that ends at `end` is a comma.
    pub fn trailing_comma_before(&self, end: u32) -> bool {
        match self.ending_at(end) {
            Some(i) if i > 0 => {
                matches!(self.toks[i].0, Tok::RParen | Tok::RBracket | Tok::RBrace)
                    && self.toks[i - 1].0 == Tok::Comma
            }
            _ => false,
        }
    }

    /// The span of the bracket that closes the one opening at `open`.
    pub fn closer_of(&self, open: u32) -> Option<Span> {
        let i = self.starting_at(open)?;
        self.partner[i].map(|c| self.toks[c].1)
    }

    /// The offset where the line holding `offset` starts.
    pub fn line_start(&self, offset: u32) -> u32 {
        let at = (offset as usize).min(self.text.len());
        self.text[..at].rfind('\n').map_or(0, |i| i as u32 + 1)
    }

    /// The offset of the line break ending the line that holds `offset` (or the end).
    pub fn line_end(&self, offset: u32) -> u32 {
        let at = (offset as usize).min(self.text.len());
        self.text[at..]
            .find('\n')
            .map_or(self.text.len() as u32, |i| (at + i) as u32)
    }

    /// The column (in bytes of indentation) of the line holding `offset`'s first character.
    pub fn column(&self, offset: u32) -> u32 {
        offset - self.line_start(offset)
    }

    /// How many blank lines come right before the line holding `offset`.
    pub fn blank_lines_before(&self, offset: u32) -> usize {
        let mut start = self.line_start(offset) as usize;
        let mut n = 0;
        while start > 0 {
            let prev_end = start - 1;
            let prev_start = self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
            if !self.text[prev_start..prev_end].trim().is_empty() {
                break;
            }
            n += 1;
            start = prev_start;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_parens_are_not_call_parens() {
        let src = "f((a)) + ((b))";
        let s = Source::new(src);
        assert_eq!(s.parens_around(Span::new(3, 4)).len(), 1);
        assert_eq!(s.parens_around(Span::new(11, 12)).len(), 2);
        assert!(s.parens_around(Span::new(2, 5)).is_empty());
    }

    #[test]
    fn trailing_commas_and_blank_lines() {
        let src = "x = [1, 2,]\n\n\ny = (1)\n";
        let s = Source::new(src);
        assert!(s.trailing_comma_before(11));
        assert_eq!(s.blank_lines_before(14), 2);
        assert!(s.self_bracketed(Span::new(4, 11)));
    }
}
