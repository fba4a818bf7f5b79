//! The one diagnostic type every stage reports with, and its ariadne rendering.
//!
//! A `Diagnostic` is plain data: a code (documented in `docs/errors.md`), a
//! message, labelled spans and a help line saying what to do next. The CLI
//! renders it with ariadne; the language server converts it to LSP ranges.

use crate::span::{LineIndex, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    /// The primary label is where the error is; secondary labels give context.
    pub primary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
                primary: true,
            }],
            help: None,
            notes: Vec::new(),
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        let mut d = Diagnostic::error(code, message, span);
        d.severity = Severity::Warning;
        d
    }

    /// Sets the primary label's text.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The primary span (the first label's when none is marked primary).
    pub fn span(&self) -> Span {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
            .unwrap_or_default()
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// One source file as the diagnostics renderer needs it.
pub struct SourceFile<'a> {
    /// The path as the user should see it.
    pub path: &'a str,
    pub text: &'a str,
}

/// Renders diagnostics the way `kora check` prints them.
///
/// `color` is false under `NO_COLOR` or when the output is not a terminal; the
/// plain form is also what the golden tests compare.
pub fn render(diag: &Diagnostic, file: &SourceFile<'_>, color: bool) -> String {
    use ariadne::{Color, Config, Label as ALabel, Report, ReportKind, Source};

    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let len = file.text.len();
    let clamp = |s: Span| -> std::ops::Range<usize> {
        let start = (s.start as usize).min(len);
        let end = (s.end as usize).clamp(start, len);
        // Ariadne counts characters, not bytes: convert the range.
        let cs = char_offset(file.text, start);
        let ce = char_offset(file.text, end);
        cs..ce.max(cs)
    };
    let primary = clamp(diag.span());
    let mut report = Report::build(kind, (file.path, primary.clone()))
        .with_config(
            Config::default()
                .with_color(color)
                .with_compact(false)
                .with_index_type(ariadne::IndexType::Char),
        )
        .with_code(diag.code)
        .with_message(&diag.message);
    for label in &diag.labels {
        let mut l = ALabel::new((file.path, clamp(label.span)));
        if !label.message.is_empty() {
            l = l.with_message(&label.message);
        }
        if color {
            l = l.with_color(if label.primary {
                Color::Red
            } else {
                Color::Blue
            });
        }
        report = report.with_label(l);
    }
    if let Some(help) = &diag.help {
        report = report.with_help(help);
    }
    for note in &diag.notes {
        report = report.with_note(note);
    }
    let mut out = Vec::new();
    let _ = report
        .finish()
        .write((file.path, Source::from(file.text)), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn char_offset(text: &str, byte: usize) -> usize {
    let mut b = byte.min(text.len());
    while b > 0 && !text.is_char_boundary(b) {
        b -= 1;
    }
    text[..b].chars().count()
}

/// `path:line:col: error[E0102]: message` — the one-line form used in summaries and tests.
pub fn one_line(diag: &Diagnostic, file: &SourceFile<'_>) -> String {
    let idx = LineIndex::new(file.text);
    let (line, col) = idx.line_col(file.text, diag.span().start);
    let sev = match diag.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    format!(
        "{}:{}:{}: {}[{}]: {}",
        file.path, line, col, sev, diag.code, diag.message
    )
}
