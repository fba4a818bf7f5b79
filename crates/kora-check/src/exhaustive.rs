//! Whether a `match` covers every case of a closed type: the outcomes a value can be, the
//! members of a literal union, and `True`/`False`.
//!
//! An unmatched `match` stops the run (E1001). For these types the checker can see the
//! whole set, so a missing arm is reported before running, with the arms to add: a
//! `match triage(t)` without `case Exhausted(...)` would otherwise pass every test and
//! fail the day a budget runs out. Guarded arms cover nothing (the guard may be false);
//! a wildcard or a bare name covers everything. Other types are not closed and are left
//! to the run-time error.

use kora_syntax::ast::{self, PatternKind as P};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::lower::Lowerer;
use crate::types::{Tags, Ty};

/// The meters an `Exhausted` outcome names.
const METERS: [&str; 5] = ["tokens", "calls", "steps", "time", "context"];

impl Lowerer<'_> {
    /// Reports the arms a `match` on `subject` lacks, when its type is closed.
    pub(crate) fn check_exhaustive(&mut self, subject: &Ty, arms: &[ast::MatchArm], span: Span) {
        let pats: Vec<&ast::Pattern> = arms
            .iter()
            .filter(|a| a.guard.is_none())
            .map(|a| &a.pattern)
            .collect();
        let Some(missing) = missing(subject, &pats) else {
            return;
        };
        if missing.is_empty() {
            return;
        }
        let shown: Vec<String> = missing.iter().map(|m| format!("`case {m}:`")).collect();
        let guarded = arms.iter().any(|a| a.guard.is_some());
        let mut d = Diagnostic::error(
            codes::NOT_EXHAUSTIVE,
            format!("this `match` does not cover every case of `{subject}`"),
            self.header(span),
        )
        .with_label(format!("missing {}", shown.join(", ")))
        .with_help(format!(
            "add {}, or end with `case _:` to handle the rest together",
            if shown.len() == 1 {
                "that arm".to_string()
            } else {
                "those arms".to_string()
            }
        ));
        if guarded {
            d = d.with_note("an arm with an `if` guard covers nothing: its guard may be false");
        }
        if let Ty::Outcome(_, tags) = subject {
            if !tags.contains(Tags::ERR) {
                d = d.with_note(
                    "a model call answers `Ok`, `Uncertain`, `Exhausted` or `Failed`, never `Err`",
                );
            }
        }
        self.err(d);
    }
}

/// Whether a pattern matches every value.
fn irrefutable(p: &ast::Pattern) -> bool {
    match &p.kind {
        P::Wildcard | P::Capture(_) | P::Error => true,
        P::As(inner, _) => irrefutable(inner),
        P::Or(alts) => alts.iter().any(irrefutable),
        _ => false,
    }
}

/// Alternatives and `as` taken apart: the patterns that must be looked at one by one.
fn flatten<'a>(pats: &[&'a ast::Pattern], out: &mut Vec<&'a ast::Pattern>) {
    for p in pats {
        match &p.kind {
            P::Or(alts) => flatten(&alts.iter().collect::<Vec<_>>(), out),
            P::As(inner, _) => flatten(&[&**inner], out),
            _ => out.push(p),
        }
    }
}

/// The arms missing for `ty`: `None` when the type is not closed (nothing to check), an
/// empty list when the patterns cover it.
fn missing(ty: &Ty, pats: &[&ast::Pattern]) -> Option<Vec<String>> {
    if pats.iter().any(|p| irrefutable(p)) {
        return Some(Vec::new());
    }
    let mut flat = Vec::new();
    flatten(pats, &mut flat);
    match ty {
        Ty::Outcome(inner, tags) => {
            let mut out = Vec::new();
            for (tag, name) in Tags::ORDER {
                if !tags.contains(tag) {
                    continue;
                }
                let mut bare = false;
                let mut subs: Vec<&ast::Pattern> = Vec::new();
                for p in &flat {
                    if let P::Constructor { name: n, args, .. } = &p.kind {
                        if n.name == name {
                            match args.first() {
                                Some(a) => subs.push(a),
                                // `Ok()` takes any payload.
                                None => bare = true,
                            }
                        }
                    }
                }
                if bare {
                    continue;
                }
                let payload = match tag {
                    Tags::OK => (**inner).clone(),
                    Tags::EXHAUSTED => Ty::Literal(METERS.iter().map(|m| m.to_string()).collect()),
                    _ => Ty::Str,
                };
                let placeholder = match tag {
                    Tags::OK => "value",
                    Tags::EXHAUSTED => "meter",
                    _ => "why",
                };
                if subs.is_empty() {
                    out.push(format!("{name}({placeholder})"));
                    continue;
                }
                match missing(&payload, &subs) {
                    Some(inner_missing) => {
                        out.extend(inner_missing.iter().map(|m| format!("{name}({m})")))
                    }
                    None => out.push(format!("{name}({placeholder})")),
                }
            }
            Some(out)
        }
        Ty::Bool => {
            let has = |b: bool| {
                flat.iter().any(|p| {
                    matches!(&p.kind, P::Literal(e) if matches!(e.kind, ast::ExprKind::Bool(x) if x == b))
                })
            };
            Some(
                [(true, "True"), (false, "False")]
                    .into_iter()
                    .filter(|(b, _)| !has(*b))
                    .map(|(_, n)| n.to_string())
                    .collect(),
            )
        }
        Ty::Literal(members) => {
            let written: Vec<&str> = flat
                .iter()
                .filter_map(|p| match &p.kind {
                    P::Literal(e) => match &e.kind {
                        ast::ExprKind::Str(s) => Some(s.as_str()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let mut out = Vec::new();
            for m in members {
                if !written.contains(&m.as_str()) && !out.contains(&format!("{m:?}")) {
                    out.push(format!("{m:?}"));
                }
            }
            Some(out)
        }
        _ => None,
    }
}
