//! The syntax tree: what the parser builds, with a byte span on every node.
//!
//! The tree is faithful to the source, not resolved: names are strings here and
//! become slots in `kora-check`. Error nodes (`StmtKind::Error`, `ExprKind::Error`)
//! stand where the parser recovered, so a broken file still yields a whole tree.

use crate::span::Span;

/// An identifier with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// An indented block of statements.
pub type Block = Vec<Stmt>;

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// An expression evaluated for its effect; `handlers` are `on NAME(params):` blocks attached to it.
    Expr {
        expr: Expr,
        handlers: Vec<Handler>,
    },
    /// `a = b = value`: one or more targets, evaluated right to left like Python.
    Assign {
        targets: Vec<Expr>,
        value: Expr,
        handlers: Vec<Handler>,
    },
    /// `name: T = value`, optionally `else:` / `else (why, kind):` when `value` is an outcome.
    AnnAssign {
        target: Ident,
        ty: TypeExpr,
        value: Option<Expr>,
        handlers: Vec<Handler>,
        else_: Option<ElseClause>,
    },
    /// `target op= value`
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    If {
        /// `if` and each `elif`, in order.
        branches: Vec<(Expr, Block)>,
        orelse: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Block,
        /// `Some` for `parallel for`.
        parallel: Option<ParallelMode>,
        /// `results = parallel for ...`: where the loop's value goes (`None` discards it).
        into: Option<Box<ParallelInto>>,
    },
    /// `break` or `break value` (the value is only meaningful in a `parallel for`).
    Break(Option<Expr>),
    Continue,
    Pass,
    Return(Option<Expr>),
    Def(FuncDef),
    /// `type Name:` with a block of fields.
    Record(RecordDecl),
    /// `type Name = T` (a literal union or any type).
    TypeAlias {
        name: Ident,
        ty: TypeExpr,
    },
    Match {
        subject: Expr,
        arms: Vec<MatchArm>,
    },
    Use(UseDecl),
    Nonlocal(Vec<Ident>),
    Global(Vec<Ident>),
    Assert {
        cond: Expr,
        msg: Option<Expr>,
    },
    /// `del xs[i], d[k]`: each target, as written (the checker accepts subscripts only).
    Del(Vec<Expr>),
    /// `budget(max_tokens=N, ...):`
    Budget {
        args: Vec<Arg>,
        body: Block,
    },
    /// `with context(max_input_tokens=N, ...):`
    Context {
        args: Vec<Arg>,
        body: Block,
    },
    /// `with model("name"):`: model calls made while the block runs use this `[models]` entry.
    ModelBlock {
        args: Vec<Arg>,
        body: Block,
    },
    /// `with mock analyze -> expr:`
    Mock {
        target: Ident,
        value: Expr,
        body: Block,
    },
    /// `declassify expr for sink:`
    Declassify {
        value: Expr,
        sink: Ident,
        body: Block,
    },
    /// `test "name":`
    Test {
        name: String,
        body: Block,
    },
    /// `import x` / `from x import y, z`: parsed so the checker can accept `from typing import`
    /// and `from __future__ import annotations` and name the Kora form of the rest.
    PythonImport {
        module: String,
        /// The names after `from x import` (`*` for a star import); empty for `import x`.
        names: Vec<Ident>,
    },
    /// Where the parser recovered from a syntax error.
    Error,
}

/// The left side of `results = parallel for ...` or `results: list[T] = parallel for ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelInto {
    pub target: Expr,
    pub ty: Option<TypeExpr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParallelMode {
    /// `parallel for x in xs:` collects every branch's result.
    Collect,
    /// `parallel for x in xs first:` yields the input-order winner.
    First,
}

/// `on name(params):` attached to a statement (token, tool_call, tool_result).
///
/// Written after the expression on the same line, or indented on the lines
/// below it (several may follow one call).
#[derive(Clone, Debug, PartialEq)]
pub struct Handler {
    pub event: Ident,
    pub params: Vec<Ident>,
    pub body: Block,
    pub span: Span,
}

/// The `else` of `x: T = outcome else:`.
#[derive(Clone, Debug, PartialEq)]
pub struct ElseClause {
    /// `else (why, kind):` binds the reason and the lower-case tag.
    pub binds: Option<(Ident, Ident)>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    Def,
    Tool,
    Agent,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncDef {
    pub kind: FuncKind,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    /// `agent f() -> T: isolated`
    pub isolated: bool,
    /// `agent f() -> T: model("name")`: the `[models]` entry its model calls use.
    pub model: Option<Expr>,
    /// The first statement when it is a string literal.
    pub doc: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub default: Option<Expr>,
    /// `*args`
    pub star: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
    pub doc: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub guard: Option<Expr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UseDecl {
    pub target: UseTarget,
    pub alias: Option<Ident>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum UseTarget {
    /// `use json`: a standard-library module; or `use pkg`, `use pkg.module`: a package's
    /// module (the name is dotted), when the importing file's manifest declares `pkg`.
    Std(Ident),
    /// `use "./lib/x.ko" as x`: a file, relative to the importing file.
    File { path: String, span: Span },
    /// `use python statistics as stats`, `use mcp github as gh`: a named provider of tools.
    Provider { kind: Ident, name: Ident },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `int`, `list[str]`, `dict[str, int]`, `Expense`, `json.Value`.
    Named {
        name: String,
        args: Vec<TypeExpr>,
    },
    /// `"low"`: one member of a literal union.
    Literal(String),
    /// `None`
    None,
    /// `A | B | ...`
    Union(Vec<TypeExpr>),
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    /// An int literal past 64 bits: its digits without `_`, with any `0x`/`0o`/`0b` prefix.
    BigInt(String),
    Float(f64),
    Str(String),
    /// `b"..."`: its bytes, escapes decoded.
    Bytes(Vec<u8>),
    FString(Vec<FStringPart>),
    Bool(bool),
    None,
    Name(String),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    /// `[elt for ...]`, `{elt for ...}`, `(elt for ...)`, `{k: v for ...}`.
    Comp {
        kind: CompKind,
        elt: Box<Expr>,
        /// The value of a dict comprehension.
        value: Option<Box<Expr>>,
        clauses: Vec<CompClause>,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b`, `a or b`
    BoolOp(BoolOp, Box<Expr>, Box<Expr>),
    /// `a < b <= c`: the first operand and each (operator, operand) after it.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    Call {
        func: Box<Expr>,
        args: Vec<Arg>,
    },
    Attr(Box<Expr>, Ident),
    Index(Box<Expr>, Box<Expr>),
    /// `a[lo:hi:step]`; each part optional.
    Slice {
        value: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Lambda {
        params: Vec<Param>,
        body: Box<Expr>,
    },
    /// `a if cond else b`
    IfExp {
        cond: Box<Expr>,
        then: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// `analyze(data, "prompt", ...)`, optionally followed by `stream`.
    Analyze {
        args: Vec<Arg>,
        stream: bool,
    },
    /// `ask_human(question)`
    AskHuman(Vec<Arg>),
    /// `classified(value)`
    Classified(Box<Expr>),
    /// `*xs` inside a list or tuple display.
    Starred(Box<Expr>),
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompKind {
    List,
    Set,
    Dict,
    Generator,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CompClause {
    pub target: Expr,
    pub iter: Expr,
    pub conds: Vec<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FStringPart {
    Lit(String),
    Expr {
        expr: Box<Expr>,
        /// `!r`, `!s`, `!a`
        conv: Option<char>,
        /// The format spec after `:`; may itself contain `{...}` fields.
        spec: Vec<FStringPart>,
        /// `{x=}` self-documenting form: the source text shown before the value.
        debug_text: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub kind: ArgKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArgKind {
    Positional(Expr),
    Keyword(Ident, Expr),
    /// `*xs`
    Star(Expr),
    /// `**kw`
    DoubleStar(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Is,
    IsNot,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// `_`
    Wildcard,
    /// A bare name binds the subject.
    Capture(String),
    /// `1`, `-2.5`, `"x"`, `True`, `None`
    Literal(Expr),
    /// `Ok(x)`, `Expense(amount=a)`, `Failed(_)`: a constructor with positional and keyword sub-patterns.
    Constructor {
        name: Ident,
        args: Vec<Pattern>,
        kwargs: Vec<(Ident, Pattern)>,
    },
    /// `(a, b)` or `[a, b]`
    Sequence(Vec<Pattern>),
    /// `*rest` (or `*_`) inside a sequence pattern: the items the others leave, as a list.
    Star(Ident),
    /// `p1 | p2`
    Or(Vec<Pattern>),
    /// `p as name`
    As(Box<Pattern>, Ident),
    Error,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }
}
