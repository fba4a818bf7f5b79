//! One breakpoint as the editor set it: its condition, hit condition and log message, parsed once when set and judged at each arrival.

use kora_syntax::ast::Expr;

use crate::expression::{self, Scope};

/// When the n-th arrival (counting only those whose condition held) stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitRule {
    Eq(u64),
    Ge(u64),
    Gt(u64),
    Le(u64),
    Lt(u64),
    /// Every n-th arrival.
    Every(u64),
}

impl HitRule {
    /// `5`, `== 5`, `>= 5`, `> 5`, `<= 5`, `< 5`, `% 5` (a bare number means `==`, as in debugpy).
    pub fn parse(text: &str) -> Result<HitRule, String> {
        let t = text.trim();
        let (op, rest) = ["==", ">=", "<=", ">", "<", "%", "="]
            .iter()
            .find_map(|op| t.strip_prefix(op).map(|r| (*op, r)))
            .unwrap_or(("==", t));
        let n: u64 = rest.trim().parse().map_err(|_| {
            format!("the hit count `{t}` is not understood: write a number, or `>= N`, `> N`, `<= N`, `< N`, `== N`, `% N`")
        })?;
        Ok(match op {
            ">=" => HitRule::Ge(n),
            ">" => HitRule::Gt(n),
            "<=" => HitRule::Le(n),
            "<" => HitRule::Lt(n),
            "%" if n == 0 => return Err("`% 0` never matches: use `% N` with N > 0".into()),
            "%" => HitRule::Every(n),
            _ => HitRule::Eq(n),
        })
    }

    pub fn matches(self, hits: u64) -> bool {
        match self {
            HitRule::Eq(n) => hits == n,
            HitRule::Ge(n) => hits >= n,
            HitRule::Gt(n) => hits > n,
            HitRule::Le(n) => hits <= n,
            HitRule::Lt(n) => hits < n,
            HitRule::Every(n) => hits % n == 0,
        }
    }
}

/// A piece of a logpoint's message: text, or `{expression}`.
#[derive(Clone, Debug)]
pub enum Piece {
    Text(String),
    Field(Expr),
}

/// `"i is {i}"`: text with `{expression}` fields; `{{` and `}}` are literal braces.
pub fn parse_log(text: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                lit.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                lit.push('}');
            }
            '{' => {
                let mut field = String::new();
                let mut depth = 1;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    field.push(c);
                }
                if depth != 0 {
                    return Err(format!(
                        "the log message has an unclosed `{{` before `{field}`: close it, or write `{{{{` for a brace"
                    ));
                }
                if !lit.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut lit)));
                }
                out.push(Piece::Field(expression::parse(&field)?));
            }
            '}' => {
                return Err("the log message has a `}` with no `{`: write `}}` for a brace".into())
            }
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        out.push(Piece::Text(lit));
    }
    Ok(out)
}

/// A breakpoint's rules, shared with the interpreter's thread.
#[derive(Clone, Debug)]
pub struct Spec {
    pub id: i64,
    pub condition: Option<Expr>,
    pub hit: Option<HitRule>,
    pub log: Option<Vec<Piece>>,
}

/// What an arrival at a breakpoint does.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Pass,
    Stop,
    /// Stop and say why the condition could not be read.
    StopBroken(String),
    Log(String),
}

impl Spec {
    /// Judges one arrival; `hits` counts the arrivals whose condition held, this one included when it does.
    pub fn judge(&self, scope: &Scope<'_>, hits: &mut u64) -> Verdict {
        if let Some(c) = &self.condition {
            match scope.eval(c) {
                Ok(v) if v.truthy() => {}
                Ok(_) => return Verdict::Pass,
                // A condition that cannot be read is a question for the user, as in debugpy.
                Err(why) => return Verdict::StopBroken(why),
            }
        }
        *hits += 1;
        if self.hit.is_some_and(|h| !h.matches(*hits)) {
            return Verdict::Pass;
        }
        match &self.log {
            None => Verdict::Stop,
            Some(pieces) => {
                let mut line = String::new();
                for p in pieces {
                    match p {
                        Piece::Text(t) => line.push_str(t),
                        Piece::Field(e) => match scope.eval(e) {
                            Ok(v) => line.push_str(&display(scope, &v)),
                            Err(why) => line.push_str(&format!("<{why}>")),
                        },
                    }
                }
                line.push('\n');
                Verdict::Log(line)
            }
        }
    }
}

/// A value as `print` would show it.
fn display(scope: &Scope<'_>, v: &kora_runtime::Value) -> String {
    let mut s = String::new();
    match v {
        kora_runtime::Value::Str(t) => s.push_str(t.as_str()),
        other => kora_runtime::value::format::repr(scope.prog, other, &mut s),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hit_rules_read_as_in_other_debuggers() {
        assert_eq!(HitRule::parse("3"), Ok(HitRule::Eq(3)));
        assert_eq!(HitRule::parse(" >= 2 "), Ok(HitRule::Ge(2)));
        assert_eq!(HitRule::parse("%2"), Ok(HitRule::Every(2)));
        assert!(HitRule::parse("% 0").is_err());
        assert!(HitRule::parse("often").is_err());
        let every = HitRule::Every(2);
        assert_eq!(
            (1..=6).filter(|h| every.matches(*h)).collect::<Vec<_>>(),
            vec![2, 4, 6]
        );
    }

    #[test]
    fn log_messages_split_into_text_and_fields() {
        let p = parse_log("i={i} {{lit}} n={n + 1}").expect("parses");
        assert_eq!(p.len(), 4);
        assert!(matches!(&p[1], Piece::Field(_)));
        assert!(matches!(&p[2], Piece::Text(t) if t == " {lit} n="));
        assert!(parse_log("{i").is_err());
        assert!(parse_log("i}").is_err());
        assert!(parse_log("{save(i)}").is_err());
    }

    proptest! {
        #[test]
        fn no_message_or_hit_count_panics(s in "\\PC{0,40}") {
            let _ = parse_log(&s);
            let _ = HitRule::parse(&s);
            let _ = expression::parse(&s);
        }
    }
}
