//! Semantic tokens (full and delta): keywords, strings, numbers and comments from the lexer;
//! names coloured by what the checker resolved them to (function, parameter, variable, record
//! type, module, built-in); fields, methods and annotation types from the syntax tree.
//!
//! A delta is the one edit between the previous answer and this one (their common prefix and
//! suffix kept), which is what a typing user produces.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use kora_check::facts::Binding;
use kora_syntax::ast::{FuncDef, Param, StmtKind};
use kora_syntax::comments::comments;
use kora_syntax::lexer::lex;
use kora_syntax::token::Tok;
use kora_syntax::visit::children::each_stmt;
use kora_syntax::visit::{walk_func_def, walk_param, Visitor};
use kora_syntax::Span;
use tower_lsp_server::ls_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensDelta,
    SemanticTokensEdit, SemanticTokensLegend, Uri,
};

use crate::analysis::{Analysis, FileAnalysis};
use crate::completion::KEYWORDS;
use crate::refs::collect;
use crate::symbol::record_of;

const NAMESPACE: u32 = 0;
const TYPE: u32 = 1;
const PARAMETER: u32 = 2;
const VARIABLE: u32 = 3;
const PROPERTY: u32 = 4;
const FUNCTION: u32 = 5;
const METHOD: u32 = 6;
const KEYWORD: u32 = 7;
const STRING: u32 = 8;
const NUMBER: u32 = 9;
const COMMENT: u32 = 10;

const DECLARATION: u32 = 1;
const DEFAULT_LIBRARY: u32 = 2;

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![
            SemanticTokenType::NAMESPACE,
            SemanticTokenType::TYPE,
            SemanticTokenType::PARAMETER,
            SemanticTokenType::VARIABLE,
            SemanticTokenType::PROPERTY,
            SemanticTokenType::FUNCTION,
            SemanticTokenType::METHOD,
            SemanticTokenType::KEYWORD,
            SemanticTokenType::STRING,
            SemanticTokenType::NUMBER,
            SemanticTokenType::COMMENT,
        ],
        token_modifiers: vec![
            SemanticTokenModifier::DECLARATION,
            SemanticTokenModifier::DEFAULT_LIBRARY,
        ],
    }
}

/// Where functions and parameters are declared, to tell their names from variables.
#[derive(Default)]
struct Decls {
    defs: HashSet<Span>,
    params: HashSet<Span>,
}

impl<'a> Visitor<'a> for Decls {
    fn visit_func_def(&mut self, f: &'a FuncDef) {
        self.defs.insert(f.name.span);
        walk_func_def(self, f)
    }
    fn visit_param(&mut self, p: &'a Param) {
        self.params.insert(p.name.span);
        walk_param(self, p)
    }
}

/// What each binding of `f` is, from where it is first written.
fn binding_kinds(f: &FileAnalysis) -> HashMap<&Binding, u32> {
    let mut decls = Decls::default();
    decls.visit_block(&f.ast.stmts);
    let mut out = HashMap::new();
    for n in f.names.iter().filter(|n| n.write) {
        out.entry(&n.binding).or_insert_with(|| {
            if decls.defs.contains(&n.span) {
                FUNCTION
            } else if decls.params.contains(&n.span) {
                PARAMETER
            } else {
                VARIABLE
            }
        });
    }
    out
}

/// Each token as (span, type, modifiers), before encoding.
fn classify(a: &Analysis, f: &FileAnalysis) -> Vec<(Span, u32, u32)> {
    let mut out: Vec<(Span, u32, u32)> = Vec::new();
    let named: HashSet<u32> = f.names.iter().map(|n| n.span.start).collect();
    let (tokens, _) = lex(&f.text, 0);
    for (t, span) in tokens {
        let ty = match t {
            Tok::Int(_) | Tok::BigInt(_) | Tok::Float(_) => NUMBER,
            Tok::Str(_) | Tok::Bytes(_) | Tok::FStr(_) => STRING,
            Tok::Name(n) if KEYWORDS.contains(&n) && !named.contains(&span.start) => KEYWORD,
            Tok::Def
            | Tok::Return
            | Tok::If
            | Tok::Elif
            | Tok::Else
            | Tok::While
            | Tok::For
            | Tok::In
            | Tok::Not
            | Tok::And
            | Tok::Or
            | Tok::Is
            | Tok::Break
            | Tok::Continue
            | Tok::Pass
            | Tok::True
            | Tok::False
            | Tok::None
            | Tok::Lambda
            | Tok::Use
            | Tok::As
            | Tok::Nonlocal
            | Tok::Global
            | Tok::Assert
            | Tok::With
            | Tok::Import
            | Tok::From
            | Tok::Tool
            | Tok::Agent
            | Tok::Analyze
            | Tok::Parallel
            | Tok::Classified
            | Tok::Declassify
            | Tok::AskHuman => KEYWORD,
            _ => continue,
        };
        out.push((span, ty, 0));
    }
    for c in comments(&f.text) {
        let end = c.span.start + c.text(&f.text).len() as u32;
        out.push((Span::new(c.span.start, end), COMMENT, 0));
    }
    // Names inside f-strings are coloured by the string around them.
    let strings: Vec<Span> = out.iter().filter(|t| t.1 == STRING).map(|t| t.0).collect();
    let in_string = |s: Span| {
        let i = strings.partition_point(|x| x.end <= s.start);
        strings.get(i).is_some_and(|x| x.start <= s.start)
    };
    let mut kinds = binding_kinds(f);
    for n in &f.names {
        if in_string(n.span) {
            continue;
        }
        let (ty, mods) = match &n.binding {
            Binding::Type(_) => (TYPE, 0),
            Binding::Module(_) => (NAMESPACE, 0),
            Binding::Builtin(_) => (FUNCTION, DEFAULT_LIBRARY),
            b @ Binding::Global(m, _) if *m != f.module => {
                let owner = a.file_of(*m);
                let k = owner
                    .and_then(|o| binding_kinds(o).get(b).copied())
                    .unwrap_or(VARIABLE);
                (k, 0)
            }
            b => (*kinds.entry(b).or_insert(VARIABLE), 0),
        };
        out.push((n.span, ty, mods | if n.write { DECLARATION } else { 0 }));
    }
    each_stmt(&f.ast.stmts, &mut |s| match &s.kind {
        StmtKind::Record(r) => {
            out.push((r.name.span, TYPE, DECLARATION));
            for fd in &r.fields {
                out.push((fd.name.span, PROPERTY, DECLARATION));
            }
        }
        StmtKind::TypeAlias { name, .. } => out.push((name.span, TYPE, DECLARATION)),
        _ => {}
    });
    let refs = collect(&f.text, &f.ast.stmts);
    for t in &refs.types {
        out.push((t.span, TYPE, 0));
    }
    let calls: HashSet<Span> = refs.calls.iter().map(|c| c.callee).collect();
    for m in &refs.members {
        if named.contains(&m.span.start) || in_string(m.span) {
            continue;
        }
        let ty = if record_of(f, m.receiver).is_some() {
            PROPERTY
        } else if calls.contains(&m.span) {
            METHOD
        } else {
            PROPERTY
        };
        out.push((m.span, ty, 0));
    }
    out.sort_by_key(|(s, ..)| (s.start, std::cmp::Reverse(s.end)));
    out
}

/// The document's tokens, encoded relative to each other as the protocol wants.
pub fn tokens(a: &Analysis) -> Vec<SemanticToken> {
    let Some(f) = a.entry() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    let mut covered = 0u32;
    for (span, ty, mods) in classify(a, f) {
        if span.start < covered || span.is_empty() {
            continue;
        }
        covered = span.end;
        // A token may not span lines: a triple-quoted string is sent line by line.
        let mut start = span.start as usize;
        let end = span.end as usize;
        while start < end {
            let line_end = f.text[start..end].find('\n').map_or(end, |i| start + i);
            if line_end > start {
                let a = f.lines.position(&f.text, start);
                let b = f.lines.position(&f.text, line_end);
                let delta_line = a.line - line;
                let delta_start = if delta_line == 0 {
                    a.character - col
                } else {
                    a.character
                };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length: b.character - a.character,
                    token_type: ty,
                    token_modifiers_bitset: mods,
                });
                (line, col) = (a.line, a.character);
            }
            start = line_end + 1;
        }
    }
    out
}

/// Per document: the result id of the last answer, and its tokens.
type SentByUri = HashMap<Uri, (String, Vec<SemanticToken>)>;

/// The last tokens sent for each document, so the next request may be answered with a delta.
#[derive(Default)]
pub struct Sent {
    inner: Mutex<(u64, SentByUri)>,
}

impl Sent {
    fn remember(&self, uri: &Uri, data: Vec<SemanticToken>) -> String {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        let id = g.0.to_string();
        g.1.insert(uri.clone(), (id.clone(), data));
        id
    }

    pub fn forget(&self, uri: &Uri) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.remove(uri);
    }

    pub fn full(&self, uri: &Uri, data: Vec<SemanticToken>) -> SemanticTokens {
        let id = self.remember(uri, data.clone());
        SemanticTokens {
            result_id: Some(id),
            data,
        }
    }

    /// The edit from the tokens sent as `previous` to `data`; `None` when `previous` is not the
    /// last answer for `uri` (the client then gets all tokens).
    pub fn delta(
        &self,
        uri: &Uri,
        previous: &str,
        data: Vec<SemanticToken>,
    ) -> Option<SemanticTokensDelta> {
        let old = {
            let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match g.1.get(uri) {
                Some((id, old)) if id == previous => old.clone(),
                _ => return None,
            }
        };
        let prefix = old.iter().zip(&data).take_while(|(a, b)| a == b).count();
        let max_suffix = old.len().min(data.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(data.iter().rev())
            .take(max_suffix)
            .take_while(|(a, b)| a == b)
            .count();
        let edits = if prefix == old.len() && prefix == data.len() {
            Vec::new()
        } else {
            vec![SemanticTokensEdit {
                // Counted in integers, five to a token.
                start: (prefix * 5) as u32,
                delete_count: ((old.len() - prefix - suffix) * 5) as u32,
                data: Some(data[prefix..data.len() - suffix].to_vec()),
            }]
        };
        let id = self.remember(uri, data);
        Some(SemanticTokensDelta {
            result_id: Some(id),
            edits,
        })
    }
}
