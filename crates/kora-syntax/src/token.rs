//! The token vocabulary shared by the lexer, the layout pass and the parser.
//!
//! One enum serves all three stages: logos produces most variants straight
//! from the text, the layout pass adds `Indent`/`Dedent` and decides which
//! `Newline`s survive, and the parser matches on the result. Soft keywords
//! (`type`, `match`, `case`, `budget`, ...) stay `Name`s here; the parser
//! gives them meaning only where the grammar allows it.

use crate::lexer::{
    bad_number, lex_decimal, lex_float, lex_fstring, lex_ident, lex_radix, lex_string, Extras,
    LexError,
};
use logos::Logos;
use std::fmt;

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(extras = Extras)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\x0c\r]+")]
#[logos(skip(r"#[^\r\n]*", allow_greedy = true))]
#[logos(skip r"\\\r?\n")]
pub enum Tok<'a> {
    // A non-ASCII byte is accepted here and checked in the callback, which
    // keeps the automaton small while still allowing Unicode identifiers.
    #[regex(r"[A-Za-z_\u{80}-\u{10FFFF}][A-Za-z0-9_\u{80}-\u{10FFFF}]*", lex_ident)]
    Name(&'a str),
    /// `None` when the literal does not fit in 64 bits; the parser reports it.
    #[regex(r"[0-9](_?[0-9])*", lex_decimal)]
    #[regex(r"0[xX](_?[0-9a-fA-F])+", lex_radix)]
    #[regex(r"0[oO](_?[0-7])+", lex_radix)]
    #[regex(r"0[bB](_?[01])+", lex_radix)]
    Int(Option<u64>),
    /// An int literal too large for 64 bits, as written (the lexer turns `Int(None)` into this).
    BigInt(&'a str),
    #[regex(
        r"[0-9](_?[0-9])*\.([0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?",
        lex_float
    )]
    #[regex(r"\.[0-9](_?[0-9])*([eE][+-]?[0-9](_?[0-9])*)?", lex_float)]
    #[regex(r"[0-9](_?[0-9])*[eE][+-]?[0-9](_?[0-9])*", lex_float)]
    Float(f64),
    /// The raw literal, prefix and quotes included; decoded by `lexer::decode_string`.
    #[regex(r#"([rRuUbB]|[rR][bB]|[bB][rR])?['"]"#, lex_string)]
    Str(&'a str),
    /// A `b"..."` literal, prefix and quotes included (the lexer turns a `Str` with a `b` prefix
    /// into this); decoded by `lexer::decode_bytes`.
    Bytes(&'a str),
    /// The raw f-string literal; `parser::fstring` splits it into parts.
    #[regex(r#"([fF]|[rR][fF]|[fF][rR])['"]"#, lex_fstring)]
    FStr(&'a str),

    #[token("def")]
    Def,
    #[token("return")]
    Return,
    #[token("if")]
    If,
    #[token("elif")]
    Elif,
    #[token("else")]
    Else,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("not")]
    Not,
    #[token("and")]
    And,
    #[token("or")]
    Or,
    #[token("is")]
    Is,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("pass")]
    Pass,
    #[token("True")]
    True,
    #[token("False")]
    False,
    #[token("None")]
    None,
    #[token("lambda")]
    Lambda,
    #[token("use")]
    Use,
    #[token("as")]
    As,
    #[token("nonlocal")]
    Nonlocal,
    #[token("global")]
    Global,
    #[token("assert")]
    Assert,
    #[token("with")]
    With,
    #[token("import")]
    Import,
    #[token("from")]
    From,
    #[token("tool")]
    Tool,
    #[token("agent")]
    Agent,
    #[token("analyze")]
    Analyze,
    #[token("parallel")]
    Parallel,
    #[token("classified")]
    Classified,
    #[token("declassify")]
    Declassify,
    #[token("ask_human")]
    AskHuman,

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    /// Python's assignment expression; recognised only to explain that Kora has none.
    #[token(":=")]
    Walrus,
    #[token(";")]
    Semi,
    #[token(".")]
    Dot,
    #[token("->")]
    Arrow,
    #[token("=")]
    Assign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("**")]
    DoubleStar,
    #[token("/")]
    Slash,
    #[token("//")]
    DoubleSlash,
    #[token("%")]
    Percent,
    #[token("@")]
    At,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("//=")]
    DoubleSlashEq,
    #[token("%=")]
    PercentEq,
    #[token("**=")]
    DoubleStarEq,
    #[token("&=")]
    AmpEq,
    #[token("|=")]
    PipeEq,
    #[token("^=")]
    CaretEq,
    #[token("<<=")]
    ShlEq,
    #[token(">>=")]
    ShrEq,

    #[regex(r"\r?\n")]
    Newline,
    /// Produced by the layout pass only.
    Indent,
    /// Produced by the layout pass only.
    Dedent,
    /// Text the lexer could not read; the lexer has already reported it.
    #[regex(r"[0-9][0-9A-Za-z_]*", bad_number, priority = 1)]
    Error,
}

impl Tok<'_> {
    /// How a diagnostic names this token: "`def`", "name `x`", "end of line".
    pub fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("name `{n}`"),
            Tok::Int(Some(v)) => format!("number `{v}`"),
            Tok::Int(None) | Tok::BigInt(_) => "number".to_string(),
            Tok::Float(_) => "number".to_string(),
            Tok::Str(_) => "string".to_string(),
            Tok::Bytes(_) => "bytes literal".to_string(),
            Tok::FStr(_) => "f-string".to_string(),
            Tok::Newline => "end of line".to_string(),
            Tok::Indent => "indented block".to_string(),
            Tok::Dedent => "end of the indented block".to_string(),
            Tok::Error => "invalid text".to_string(),
            other => format!("`{other}`"),
        }
    }

    /// Keywords that can only begin a statement; used to notice an unclosed
    /// bracket that has swallowed the following lines.
    pub fn starts_statement_only(&self) -> bool {
        matches!(
            self,
            Tok::Def
                | Tok::Return
                | Tok::While
                | Tok::Pass
                | Tok::Break
                | Tok::Continue
                | Tok::Use
                | Tok::Import
                | Tok::Tool
                | Tok::Agent
                | Tok::Assert
                | Tok::Nonlocal
                | Tok::Global
                | Tok::With
                | Tok::Elif
                | Tok::Declassify
                | Tok::Parallel
                | Tok::From
        )
    }
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::Name(n) => n,
            Tok::Int(Some(v)) => return write!(f, "{v}"),
            Tok::Int(None) => "<int>",
            Tok::BigInt(s) => s,
            Tok::Float(v) => return write!(f, "{v}"),
            Tok::Str(s) | Tok::Bytes(s) | Tok::FStr(s) => s,
            Tok::Def => "def",
            Tok::Return => "return",
            Tok::If => "if",
            Tok::Elif => "elif",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Not => "not",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Is => "is",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Pass => "pass",
            Tok::True => "True",
            Tok::False => "False",
            Tok::None => "None",
            Tok::Lambda => "lambda",
            Tok::Use => "use",
            Tok::As => "as",
            Tok::Nonlocal => "nonlocal",
            Tok::Global => "global",
            Tok::Assert => "assert",
            Tok::With => "with",
            Tok::Import => "import",
            Tok::From => "from",
            Tok::Tool => "tool",
            Tok::Agent => "agent",
            Tok::Analyze => "analyze",
            Tok::Parallel => "parallel",
            Tok::Classified => "classified",
            Tok::Declassify => "declassify",
            Tok::AskHuman => "ask_human",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Walrus => ":=",
            Tok::Semi => ";",
            Tok::Dot => ".",
            Tok::Arrow => "->",
            Tok::Assign => "=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::DoubleStar => "**",
            Tok::Slash => "/",
            Tok::DoubleSlash => "//",
            Tok::Percent => "%",
            Tok::At => "@",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Tilde => "~",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::Lt => "<",
            Tok::Gt => ">",
            Tok::Le => "<=",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::PlusEq => "+=",
            Tok::MinusEq => "-=",
            Tok::StarEq => "*=",
            Tok::SlashEq => "/=",
            Tok::DoubleSlashEq => "//=",
            Tok::PercentEq => "%=",
            Tok::DoubleStarEq => "**=",
            Tok::AmpEq => "&=",
            Tok::PipeEq => "|=",
            Tok::CaretEq => "^=",
            Tok::ShlEq => "<<=",
            Tok::ShrEq => ">>=",
            Tok::Newline => "newline",
            Tok::Indent => "indent",
            Tok::Dedent => "dedent",
            Tok::Error => "<error>",
        };
        f.write_str(s)
    }
}
