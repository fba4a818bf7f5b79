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
    Renderer::new(file).render(diag, color)
}

/// A source line longer than this many characters is shown as a window around its labels.
const MAX_SHOWN: usize = 160;
/// How much of an elided line is kept before the first label on it.
const CONTEXT: usize = 40;

/// Renders many diagnostics of one file: the line index is built once, and
/// each diagnostic shows only the lines it labels (long ones elided), so
/// rendering stays linear in the file and the number of diagnostics.
pub struct Renderer<'a> {
    file: &'a SourceFile<'a>,
    index: LineIndex,
}

/// One shown line of an excerpt: where it is in the file, and which bytes of it are shown.
struct Shown {
    start: usize,
    end: usize,
    lo: usize,
    hi: usize,
    /// Where the shown text begins in the excerpt, in characters (after any `…`).
    at: usize,
}

impl<'a> Renderer<'a> {
    pub fn new(file: &'a SourceFile<'a>) -> Renderer<'a> {
        Renderer {
            file,
            index: LineIndex::new(file.text),
        }
    }

    pub fn render(&self, diag: &Diagnostic, color: bool) -> String {
        use ariadne::{Color, Config, Label as ALabel, Report, ReportKind, Source};

        let text = self.file.text;
        let path = self.file.path;
        let kind = match diag.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let len = text.len();
        let clamp = |s: Span| -> (usize, usize) {
            let mut a = (s.start as usize).min(len);
            while a > 0 && !text.is_char_boundary(a) {
                a -= 1;
            }
            let mut b = (s.end as usize).clamp(a, len);
            while b > a && !text.is_char_boundary(b) {
                b -= 1;
            }
            (a, b)
        };
        let spans: Vec<(usize, usize)> = diag.labels.iter().map(|l| clamp(l.span)).collect();
        let primary = clamp(diag.span());
        let line_of = |b: usize| self.index.line(b as u32) as usize;
        let first = spans.iter().map(|s| line_of(s.0)).min().unwrap_or(1).max(1);
        let last = spans
            .iter()
            .map(|s| line_of(s.1))
            .max()
            .unwrap_or(first)
            .max(first);
        // Empty lines stand in for the ones above, so ariadne numbers the shown lines as
        // the file does (it ignores a display offset in the margin).
        let mut excerpt = "\n".repeat(first - 1);
        let mut shown: Vec<Shown> = Vec::new();
        let mut chars = first - 1;
        for line in first..=last {
            let start = self.index.line_start(line as u32).unwrap_or(0) as usize;
            let end = match self.index.line_start(line as u32 + 1) {
                Some(next) => (next as usize).saturating_sub(1),
                None => len,
            }
            .max(start)
            .min(len);
            let body = &text[start..end];
            let (lo, hi) = if body.len() <= MAX_SHOWN {
                (start, end)
            } else {
                window(text, start, end, &spans)
            };
            let mut row = String::new();
            if lo > start {
                row.push('…');
            }
            let at = chars + row.chars().count();
            row.push_str(&text[lo..hi]);
            if hi < end {
                row.push('…');
            }
            row.push('\n');
            chars += row.chars().count();
            excerpt.push_str(&row);
            shown.push(Shown {
                start,
                end,
                lo,
                hi,
                at,
            });
        }
        // A byte offset of the file as a character offset into the excerpt.
        let map = |b: usize| -> usize {
            let line = line_of(b).clamp(first, last);
            let s = &shown[line - first];
            let b = b.clamp(s.start, s.end).clamp(s.lo, s.hi);
            s.at + text[s.lo..b].chars().count()
        };
        let range = |(a, b): (usize, usize)| {
            let (a, b) = (map(a), map(b));
            a..b.max(a)
        };
        let mut report = Report::build(kind, (path, range(primary)))
            .with_config(
                Config::default()
                    .with_color(color)
                    .with_compact(false)
                    .with_index_type(ariadne::IndexType::Char),
            )
            .with_code(diag.code)
            .with_message(&diag.message);
        // Labels in file order: ariadne starts a new snippet (with a header that
        // repeats the primary's position) whenever a label goes back up the file.
        let mut order: Vec<usize> = (0..diag.labels.len()).collect();
        order.sort_by_key(|i| spans[*i]);
        for (rank, i) in order.into_iter().enumerate() {
            let label = &diag.labels[i];
            let mut l = ALabel::new((path, range(spans[i]))).with_order(rank as i32);
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
        let source = Source::from(excerpt);
        let _ = report.finish().write((path, source), &mut out);
        let mut rendered = String::from_utf8_lossy(&out).into_owned();
        // The header's column counts within the excerpt; on an elided line, give the file's.
        let pline = line_of(primary.0);
        let s = &shown[pline.clamp(first, last) - first];
        if s.lo > s.start {
            let shown_col = map(primary.0) - (s.at - 1) + 1;
            let true_col = text[s.start..primary.0].chars().count() + 1;
            rendered = rendered.replacen(
                &format!("{path}:{pline}:{shown_col} "),
                &format!("{path}:{pline}:{true_col} "),
                1,
            );
        }
        rendered
    }
}

/// The bytes of a long line (`start..end`) to show: from a little before its first label point, at most `MAX_SHOWN` characters.
fn window(text: &str, start: usize, end: usize, spans: &[(usize, usize)]) -> (usize, usize) {
    let first_point = spans
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .filter(|p| (start..=end).contains(p))
        .min()
        .unwrap_or(start);
    let lo = text[start..first_point]
        .char_indices()
        .rev()
        .nth(CONTEXT.saturating_sub(1))
        .map(|(i, _)| start + i)
        .unwrap_or(start);
    let hi = text[lo..end]
        .char_indices()
        .nth(MAX_SHOWN)
        .map(|(i, _)| lo + i)
        .unwrap_or(end);
    (lo, hi)
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
