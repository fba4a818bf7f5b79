//! The check every formatted file passes before it is written (Black's "safe" mode):
//! the output parses without errors, to the same tree up to spans, with the same
//! comments in the same order and the same names and string values, token by token.

use kora_syntax::ast::Module;
use kora_syntax::comments::comments;
use kora_syntax::lexer::{decode_bytes, decode_string, lex};
use kora_syntax::token::Tok;

use crate::trivia::normalize_comment;

/// The tree's debug rendering with every `Span { .. }` removed: equal exactly when
/// two trees differ in layout only.
pub fn shape_of(m: &Module) -> String {
    strip_spans(&format!("{m:?}"))
}

fn strip_spans(s: &str) -> String {
    const MARK: &str = "Span { start: ";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        match after.find('}') {
            Some(j) => rest = &after[j + 1..],
            None => {
                rest = after;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

fn comment_texts(src: &str) -> Vec<String> {
    comments(src)
        .iter()
        .map(|c| normalize_comment(c.text(src)))
        .collect()
}

/// Names and string values in order: what no layout change may add, drop or reorder.
fn words(src: &str) -> Vec<String> {
    lex(src, 0)
        .0
        .into_iter()
        .filter_map(|(t, _)| match t {
            Tok::Name(n) => Some(n.to_string()),
            Tok::Str(raw) => Some(format!("{:?}", decode_string(raw))),
            Tok::Bytes(raw) => Some(format!("b{:?}", decode_bytes(raw))),
            _ => None,
        })
        .collect()
}

/// Why `after` is not a faithful layout of `before` (whose tree is `tree`), if it is not.
pub fn faithful(before: &str, tree: &Module, after: &str) -> Result<(), String> {
    let parsed = kora_syntax::parse(after);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        let (line, col) = kora_syntax::LineIndex::new(after).line_col(after, d.span().start);
        return Err(format!(
            "the formatted text would not parse ({} at {line}:{col}: {})",
            d.code, d.message
        ));
    }
    if shape_of(tree) != shape_of(&parsed.module) {
        return Err("the formatted text would parse to a different program".into());
    }
    if comment_texts(before) != comment_texts(after) {
        return Err("a comment would be lost or moved out of order".into());
    }
    if words(before) != words(after) {
        return Err("a name or string would be lost or moved".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_ignored_and_nothing_else() {
        let a = kora_syntax::parse("x = (1 +\n  2)\n").module;
        let b = kora_syntax::parse("x = 1 + 2\n").module;
        let c = kora_syntax::parse("x = 1 + 3\n").module;
        assert_eq!(shape_of(&a), shape_of(&b));
        assert_ne!(shape_of(&a), shape_of(&c));
    }

    #[test]
    fn a_lost_comment_is_caught() {
        let src = "x = 1  # one\n";
        let tree = kora_syntax::parse(src).module;
        assert!(faithful(src, &tree, "x = 1\n").is_err());
        assert!(faithful(src, &tree, "x = 1  # one\n").is_ok());
    }
}
