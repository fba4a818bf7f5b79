//! Code actions (quick fixes) for the checker's diagnostics: apply a "did you mean `x`?" help
//! line, add the `case` arms a `match` is missing, and add the `else:` that binds an outcome's
//! payload (`x: T = outcome else (why, kind): return ...`).

use std::collections::HashMap;

use kora_syntax::ast::{FuncDef, MatchArm, Stmt, StmtKind};
use kora_syntax::visit::children::each_stmt;
use kora_syntax::{Diagnostic, Span};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Position, Range, TextEdit, Uri, WorkspaceEdit,
};

use crate::analysis::{Analysis, FileAnalysis};
use crate::diagnostics::convert;

fn action(
    f: &FileAnalysis,
    uri: &Uri,
    title: String,
    d: Option<&Diagnostic>,
    edits: Vec<TextEdit>,
) -> CodeActionOrCommand {
    let changes = HashMap::from([(uri.clone(), edits)]);
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: d.map(|d| vec![convert(uri, f, d)]),
        edit: Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }),
        is_preferred: Some(true),
        ..CodeAction::default()
    })
}

/// The name in "did you mean `x`?", when it is a name or a dotted path.
fn suggestion(help: &str) -> Option<&str> {
    let rest = help.strip_prefix("did you mean `")?;
    let s = &rest[..rest.find('`')?];
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c == '_' || c == '.' || c.is_alphanumeric());
    ok.then_some(s)
}

/// The span to replace with a suggestion: the last name inside the diagnostic's span (the
/// whole span for a dotted suggestion).
fn replaced(f: &FileAnalysis, span: Span, with: &str) -> Option<Span> {
    let text = f.slice(span);
    if with.contains('.') {
        return Some(span);
    }
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    let end = text.rfind(is_ident)? + text[text.rfind(is_ident)?..].chars().next()?.len_utf8();
    let start = text[..end]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map(|(i, _)| i)?;
    Some(Span::new(
        span.start + start as u32,
        span.start + end as u32,
    ))
}

fn indent_of(f: &FileAnalysis, offset: u32) -> String {
    let line_start = f.text[..offset as usize].rfind('\n').map_or(0, |i| i + 1);
    f.text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The end of the line holding `offset` (before its line break).
fn line_end(f: &FileAnalysis, offset: u32) -> u32 {
    let o = offset.saturating_sub(1) as usize;
    f.text[o..].find('\n').map_or(f.text.len(), |i| o + i) as u32
}

fn insert_at(f: &FileAnalysis, at: u32, text: String) -> TextEdit {
    let p: Position = f.lines.position(&f.text, at as usize);
    TextEdit {
        range: Range::new(p, p),
        new_text: text,
    }
}

/// The one level of indentation this file uses inside a block (four spaces when unknown).
fn step(f: &FileAnalysis, outer: u32, body: Option<&Stmt>) -> String {
    let outer = indent_of(f, outer);
    body.map(|s| indent_of(f, s.span.start))
        .and_then(|i| i.strip_prefix(outer.as_str()).map(str::to_string))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "    ".into())
}

fn missing_arms(f: &FileAnalysis, uri: &Uri, d: &Diagnostic) -> Option<CodeActionOrCommand> {
    let label = d.labels.iter().find(|l| l.primary)?;
    let arms: Vec<&str> = label
        .message
        .strip_prefix("missing ")?
        .split("`, `")
        .map(|s| s.trim_matches('`'))
        .collect();
    let mut found: Option<&[MatchArm]> = None;
    each_stmt(&f.ast.stmts, &mut |s| {
        if let StmtKind::Match { arms, .. } = &s.kind {
            if s.span.contains(d.span().start) && !arms.is_empty() {
                found = Some(arms);
            }
        }
    });
    let existing = found?;
    let last = existing.last()?;
    let indent = indent_of(f, existing[0].span.start);
    let step = step(f, existing[0].span.start, existing[0].body.first());
    let mut text = String::new();
    for a in &arms {
        text.push_str(&format!("\n{indent}{a}\n{indent}{step}pass"));
    }
    let at = line_end(f, last.span.end);
    let title = match arms.len() {
        1 => format!("Add `{}`", arms[0]),
        n => format!("Add the {n} missing arms"),
    };
    Some(action(f, uri, title, Some(d), vec![insert_at(f, at, text)]))
}

/// The innermost `def` around `span`.
fn enclosing_def(stmts: &[Stmt], span: Span) -> Option<&FuncDef> {
    let mut found = None;
    each_stmt(stmts, &mut |s| {
        if let StmtKind::Def(d) = &s.kind {
            if d.span.start <= span.start && span.end <= d.span.end {
                found = Some(d);
            }
        }
    });
    found
}

/// `x: T = outcome` without `else`: bind the payload and leave on failure.
fn missing_else(
    f: &FileAnalysis,
    uri: &Uri,
    d: Option<&Diagnostic>,
    at: Span,
) -> Option<CodeActionOrCommand> {
    let mut found = None;
    each_stmt(&f.ast.stmts, &mut |s| {
        if let StmtKind::AnnAssign {
            value: Some(v),
            else_: None,
            handlers,
            ..
        } = &s.kind
        {
            if handlers.is_empty() && s.span.start <= at.start && at.start <= s.span.end {
                found = Some((s, v));
            }
        }
    });
    let (stmt, value) = found?;
    let outcome = f
        .exprs
        .iter()
        .filter(|(s, _)| *s == value.span)
        .any(|(_, t)| matches!(t, kora_check::types::Ty::Outcome(..)));
    if !outcome {
        return None;
    }
    let indent = indent_of(f, stmt.span.start);
    let leave = match enclosing_def(&f.ast.stmts, stmt.span) {
        Some(def) => match &def.ret {
            Some(r) if f.slice(r.span).starts_with("Result") => "return Err(why)".to_string(),
            Some(_) => "return".to_string(),
            None => "return".to_string(),
        },
        None => "exit(1)".to_string(),
    };
    let text = format!(" else (why, kind):\n{indent}    {leave}");
    let at = line_end(f, value.span.end);
    Some(action(
        f,
        uri,
        "Add `else:` to leave when it fails".into(),
        d,
        vec![insert_at(f, at, text)],
    ))
}

/// The quick fixes for the diagnostics that touch the byte range `range`.
pub fn code_actions(a: &Analysis, uri: &Uri, range: Span) -> Vec<CodeActionOrCommand> {
    let Some(f) = a.entry() else {
        return Vec::new();
    };
    let touches = |s: Span| s.start <= range.end && range.start <= s.end;
    let mut out = Vec::new();
    let mut else_offered = false;
    for d in f.diagnostics.iter().filter(|d| touches(d.span())) {
        if let Some(s) = d.help.as_deref().and_then(suggestion) {
            if let Some(span) = replaced(f, d.span(), s) {
                let edit = TextEdit {
                    range: f.lines.range(&f.text, span),
                    new_text: s.to_string(),
                };
                out.push(action(
                    f,
                    uri,
                    format!("Change to `{s}`"),
                    Some(d),
                    vec![edit],
                ));
            }
        }
        if d.code == kora_check::codes::NOT_EXHAUSTIVE {
            out.extend(missing_arms(f, uri, d));
        }
        if d.code == kora_check::codes::TYPE_MISMATCH && !else_offered {
            if let Some(x) = missing_else(f, uri, Some(d), d.span()) {
                else_offered = true;
                out.push(x);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::suggestion;

    #[test]
    fn only_names_are_suggested() {
        assert_eq!(suggestion("did you mean `total`?"), Some("total"));
        assert_eq!(suggestion("did you mean `eval.score`?"), Some("eval.score"));
        assert_eq!(suggestion("did you mean `use x as ...`?"), None);
        assert_eq!(suggestion("add that arm"), None);
    }
}
