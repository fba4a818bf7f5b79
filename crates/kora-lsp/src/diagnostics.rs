//! Kora diagnostics as LSP diagnostics: the primary label is the squiggle, help and notes follow the message, secondary labels are related locations.

use kora_syntax::Severity;
use tower_lsp_server::ls_types::{
    self as lsp, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use crate::analysis::{Analysis, FileAnalysis};

/// The diagnostics to show on the analysed document itself.
pub fn for_entry(uri: &Uri, a: &Analysis) -> Vec<lsp::Diagnostic> {
    let Some(entry) = a.entry() else {
        return a
            .unreadable
            .iter()
            .map(|why| lsp::Diagnostic {
                range: lsp::Range::default(),
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("kora".into()),
                message: why.clone(),
                ..lsp::Diagnostic::default()
            })
            .collect();
    };
    let mut out: Vec<lsp::Diagnostic> = entry
        .diagnostics
        .iter()
        .map(|d| convert(uri, entry, d))
        .collect();
    // A broken file this one uses would otherwise fail silently here.
    for (span, m) in &entry.uses {
        let Some(dep) = a.file_of(*m) else { continue };
        let errors: Vec<_> = dep.diagnostics.iter().filter(|d| d.is_error()).collect();
        if let Some(first) = errors.first() {
            let (line, col) = {
                let p = dep.lines.position(&dep.text, first.span().start as usize);
                (p.line + 1, p.character + 1)
            };
            out.push(lsp::Diagnostic {
                range: entry.lines.range(&entry.text, *span),
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("kora".into()),
                message: format!(
                    "`{}` has {} error{}; the first, at {line}:{col}: {}",
                    entry.slice(*span).trim_matches('"'),
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" },
                    first.message
                ),
                ..lsp::Diagnostic::default()
            });
        }
    }
    out
}

pub fn convert(uri: &Uri, f: &FileAnalysis, d: &kora_syntax::Diagnostic) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    if let Some(l) = d.labels.iter().find(|l| l.primary && !l.message.is_empty()) {
        message.push_str(&format!(" ({})", l.message));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), f.lines.range(&f.text, l.span)),
            message: l.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range: f.lines.range(&f.text, d.span()),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("kora".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    }
}
