//! Reading one REPL entry: line editing and history on a terminal (rustyline), plain
//! lines otherwise, and Python's rule for when an entry is complete.
//!
//! An entry goes on while a bracket or a triple-quoted string is open or a line
//! ends with `\`; an entry that opens a block (a line ending in `:`) goes on until
//! a blank line, so a function can be typed over several lines.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use kora_syntax::lexer::lex;
use kora_syntax::token::Tok;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Config, Editor};

pub const PROMPT: &str = ">>> ";
pub const MORE: &str = "... ";

pub enum Read {
    Entry(String),
    /// Ctrl-C: the entry being typed is dropped.
    Interrupted,
    /// Ctrl-D, or the end of piped input.
    Eof,
}

enum Source {
    Terminal(Box<Editor<(), DefaultHistory>>),
    Lines(std::io::StdinLock<'static>),
}

pub struct Reader {
    source: Source,
    history: Option<PathBuf>,
}

/// Whether `text` (whole lines) needs another line before it can be checked.
pub fn needs_more(text: &str) -> bool {
    let (toks, diags) = lex(text, 0);
    let mut depth = 0i32;
    let mut block = false;
    let mut last: Option<Tok<'_>> = None;
    for (t, _) in &toks {
        match t {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace => depth -= 1,
            Tok::Newline if depth <= 0 => block |= last == Some(Tok::Colon),
            _ => {}
        }
        if *t != Tok::Newline {
            last = Some(*t);
        }
    }
    if depth > 0 || diags.iter().any(|d| d.message.contains("triple-quoted")) {
        return true;
    }
    if text.trim_end_matches('\n').ends_with('\\') {
        return true;
    }
    // A block ends at a blank line.
    block && !text.ends_with("\n\n")
}

impl Reader {
    /// A reader of stdin; on a terminal, with line editing and the history in `history`.
    pub fn new(history: Option<PathBuf>) -> Reader {
        let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        let source = if terminal {
            let config = Config::builder().auto_add_history(false).build();
            match Editor::with_config(config) {
                Ok(mut ed) => {
                    if let Some(h) = &history {
                        // A first session has no history yet.
                        let _ = ed.load_history(h);
                    }
                    Source::Terminal(Box::new(ed))
                }
                Err(_) => Source::Lines(std::io::stdin().lock()),
            }
        } else {
            Source::Lines(std::io::stdin().lock())
        };
        Reader { source, history }
    }

    pub fn interactive(&self) -> bool {
        matches!(self.source, Source::Terminal(_))
    }

    fn line(&mut self, prompt: &str) -> Result<Option<String>, ()> {
        match &mut self.source {
            Source::Terminal(ed) => match ed.readline(prompt) {
                Ok(l) => Ok(Some(l)),
                Err(ReadlineError::Interrupted) => Err(()),
                Err(_) => Ok(None),
            },
            Source::Lines(input) => {
                let mut l = String::new();
                match input.read_line(&mut l) {
                    Ok(0) | Err(_) => Ok(None),
                    Ok(_) => {
                        while l.ends_with('\n') || l.ends_with('\r') {
                            l.pop();
                        }
                        Ok(Some(l))
                    }
                }
            }
        }
    }

    /// The next entry: one line, or several while `needs_more` says so.
    pub fn entry(&mut self) -> Read {
        let mut text = String::new();
        loop {
            let prompt = if text.is_empty() { PROMPT } else { MORE };
            match self.line(prompt) {
                Err(()) => return Read::Interrupted,
                Ok(None) if text.is_empty() => return Read::Eof,
                Ok(None) => break,
                Ok(Some(l)) => {
                    text.push_str(&l);
                    text.push('\n');
                }
            }
            if text.trim().is_empty() {
                text.clear();
                continue;
            }
            if text.trim_start().starts_with(':') || !needs_more(&text) {
                break;
            }
        }
        if let Source::Terminal(ed) = &mut self.source {
            let _ = ed.add_history_entry(text.trim_end());
        }
        Read::Entry(text)
    }

    /// Writes the history file, if there is one.
    pub fn save(&mut self) {
        if let (Source::Terminal(ed), Some(h)) = (&mut self.source, &self.history) {
            let _ = ed.save_history(h);
        }
        let _ = std::io::stdout().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::needs_more;

    #[test]
    fn entries_end_like_pythons() {
        assert!(!needs_more("x = 1\n"));
        assert!(needs_more("def f(x: int) -> int:\n"));
        assert!(needs_more("def f(x: int) -> int:\n    return x\n"));
        assert!(!needs_more("def f(x: int) -> int:\n    return x\n\n"));
        assert!(needs_more("xs = [1,\n"));
        assert!(!needs_more("xs = [1,\n2]\n"));
        assert!(needs_more("s = \"\"\"a\n"));
        assert!(needs_more("x = 1 + \\\n"));
        assert!(!needs_more("d = {'a': 1}  # a comment: not a block\n"));
    }
}
