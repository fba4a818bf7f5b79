//! The resolved tree: the program after every name became a slot, which is what the runtime walks.
//!
//! Architecture invariant: nothing in here is looked up by string at run time.
//! Variables are frame slots (`Local`, `Cell`) or module slots (`Global`),
//! attribute and method names are interned `Sym`s, builtins are `BuiltinId`s.

use std::path::PathBuf;
use std::sync::Arc;

use kora_syntax::ast::{BinOp, BoolOp, CmpOp, FuncKind, UnaryOp};
use kora_syntax::Span;

use crate::types::{Quick, Ty};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuiltinId(pub u16);

/// An interned identifier (attribute, method, keyword-argument or field name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// A whole program: every module reached from the entry file, and the record types they declare.
#[derive(Debug, Clone)]
pub struct Program {
    pub modules: Vec<Module>,
    /// The file `kora run` was given.
    pub entry: ModId,
    pub types: Vec<RecordType>,
    /// Interned names; `Sym(i)` is `names[i]`.
    pub names: Vec<String>,
    /// String constants; `ExprKind::Str(i)` is `strings[i]`.
    pub strings: Vec<String>,
    /// `use mcp NAME` / `use python MODULE`: the external modules, indexed by `ExtId`.
    pub externals: Vec<External>,
}

/// An index into `Program::externals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExtId(pub u32);

/// A module found at run time: `use mcp fs as fs`, `use python statistics as stats`. Its
/// members are looked up when called, by whatever the embedder registered for `kind`.
#[derive(Debug, Clone)]
pub struct External {
    /// The word after `use`: `mcp`, `python`.
    pub kind: String,
    /// The server or module: `fs`, `os.path`.
    pub name: String,
    /// `file:line:col` of the first `use` naming it, for messages about its setup.
    pub place: String,
}

/// `alias.member(args)` on an external module.
#[derive(Debug, Clone)]
pub struct ExternalCall {
    pub ext: ExtId,
    /// The member as written (`read_file`, `mean`).
    pub member: String,
    pub args: Args,
    /// The type the `Ok` payload is read into (`Any` when unannotated).
    pub expect: Ty,
    /// Structural identity: `file:function#index`, as for `analyze`.
    pub site: String,
}

impl Program {
    pub fn name(&self, s: Sym) -> &str {
        &self.names[s.0 as usize]
    }

    pub fn module(&self, m: ModId) -> &Module {
        &self.modules[m.0 as usize]
    }

    pub fn record(&self, t: TypeId) -> &RecordType {
        &self.types[t.0 as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Module {
    pub id: ModId,
    /// Canonical path on disk (or a display name for in-memory sources).
    pub path: PathBuf,
    /// The path as the user should see it in messages.
    pub display: String,
    pub source: Arc<str>,
    /// Names of the module's global slots, for `m.name` and the debugger.
    pub globals: Vec<String>,
    /// The module's top level, run once per run.
    pub body: Arc<Function>,
    /// `test "name":` blocks, run by `kora test` only.
    pub tests: Vec<(String, Arc<Function>)>,
}

#[derive(Debug, Clone)]
pub struct RecordType {
    pub id: TypeId,
    pub name: String,
    pub module: ModId,
    pub fields: Vec<FieldDef>,
    pub doc: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct FieldDef {
    pub name: Sym,
    pub ty: Ty,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    pub module: ModId,
    pub params: Vec<Param>,
    /// Slot receiving extra positional arguments (`*rest`), as a tuple.
    pub star: Option<u32>,
    pub ret: Ty,
    /// `ret.quick()`, read by every return instead of `ret`.
    pub ret_quick: Quick,
    /// Total frame slots: parameters first, then other locals.
    pub nlocals: u32,
    /// Local slots captured by an inner function: they hold a `Cell` box.
    pub cell_slots: Vec<u32>,
    /// For a closure: slot `.0` receives capture number `.1` at entry.
    pub free_slots: Vec<(u32, u32)>,
    /// Both lists above are empty: entering the function fills no box, one test per call.
    pub no_boxes: bool,
    /// How the closure's captures are collected where it is defined.
    pub captures: Vec<Capture>,
    /// Names of the slots, for the debugger and error messages.
    pub slot_names: Vec<String>,
    pub body: Vec<Stmt>,
    pub doc: Option<String>,
    pub isolated: bool,
    /// `agent f() -> T: model("name")`: the `[models]` entry its model calls use.
    pub model: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Sym,
    pub slot: u32,
    pub ty: Ty,
    /// `ty.quick()`, read by every call instead of `ty`.
    pub quick: Quick,
    pub default: Option<Expr>,
    /// The default is a mutable display (`[]`, `{}`) and is built afresh per call.
    pub fresh_default: bool,
}

/// Where a closure finds a captured variable when it is created.
#[derive(Debug, Clone, Copy)]
pub enum Capture {
    /// A cell slot of the defining frame.
    Slot(u32),
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Expr(Expr),
    Assign(Target, Expr),
    /// `a = b = v`: the value is assigned to each target, left to right.
    AssignMulti(Vec<Target>, Expr),
    /// `x = x + y` on a local: appends in place when the value is unshared.
    ConcatAssign(Target, Expr),
    AugAssign(Target, BinOp, Expr),
    /// `x: T = v`: assignment with a run-time check of the value's shape.
    AnnAssign(Target, Ty, Expr),
    /// `x: T = outcome else:`; binds the `Ok` payload or runs `orelse`, which diverges.
    Unwrap {
        target: Target,
        ty: Ty,
        value: Expr,
        /// Slots for `else (why, kind):`.
        binds: Option<(Target, Target)>,
        orelse: Vec<Stmt>,
    },
    If(Vec<(Expr, Vec<Stmt>)>, Option<Vec<Stmt>>),
    While(Expr, Vec<Stmt>),
    For(Target, Expr, Vec<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    Pass,
    /// Creates a closure (evaluating defaults) and stores it.
    Def(Target, Arc<Function>),
    Match(Expr, Vec<Arm>),
    /// Runs a module's top level if it has not run, and binds it.
    Use(Target, ModId),
    Assert(Expr, Option<Expr>),
    /// `del xs[i], d[k], xs[a:b]`: each an `Index` or `Slice` expression, removed in order.
    Del(Vec<Expr>),
    /// `with mock analyze -> value:` (inside a test): the body's model calls answer with `value`.
    Mock(Expr, Vec<Stmt>),
    /// `with mock alias.member -> value:`: the body's calls of that external member answer with `value`.
    MockExternal {
        ext: ExtId,
        member: String,
        value: Expr,
        body: Vec<Stmt>,
    },
    /// `with context(max_input_tokens=N, reserve_output_tokens=N):`: the body's model calls
    /// send only what fits (see the runtime's `context_fence.rs`).
    Context {
        max_input: Expr,
        reserve_output: Option<Expr>,
        body: Vec<Stmt>,
    },
    /// `with model("name"):`: model calls made while the body runs use this entry.
    ModelBlock {
        name: Expr,
        body: Vec<Stmt>,
    },
    /// `parallel for`: every item's body runs in a fresh interpreter on a worker thread.
    ParallelFor(Box<ParallelFor>),
    /// `break value` in a `parallel for` body: stop the fan-out, and this branch answers `value`.
    BreakValue(Expr),
    /// `budget(max_tokens=N, ...):`: the body's model calls spend from a nested budget.
    Budget(Box<BudgetBlock>),
    /// `declassify value for sink:`: while the body runs, the classified parts of `value`
    /// may reach `sink` (a `[models]` entry or a `[sinks]` name) and nothing else.
    Declassify {
        value: Expr,
        sink: String,
        body: Vec<Stmt>,
    },
}

/// One `parallel for` loop, as the runtime needs it.
#[derive(Debug, Clone)]
pub struct ParallelFor {
    pub target: Target,
    pub iter: Expr,
    pub body: Vec<Stmt>,
    /// `first`: the input-order winner instead of every answer.
    pub first: bool,
    /// Where the loop's value goes, with its annotation checked at run time.
    pub into: Option<(Target, Ty)>,
    /// Slots of the enclosing frame the body reads: the only ones snapshotted per branch.
    pub reads: Vec<u32>,
}

/// One `budget(...)` block: its limits in written order, then its body.
#[derive(Debug, Clone)]
pub struct BudgetBlock {
    pub limits: Vec<(BudgetArg, Expr)>,
    pub body: Vec<Stmt>,
}

/// The arguments `budget(...)` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetArg {
    Tokens,
    Calls,
    Steps,
    Seconds,
}

impl BudgetArg {
    pub const ALL: [BudgetArg; 4] = [
        BudgetArg::Tokens,
        BudgetArg::Calls,
        BudgetArg::Steps,
        BudgetArg::Seconds,
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            BudgetArg::Tokens => "max_tokens",
            BudgetArg::Calls => "max_calls",
            BudgetArg::Steps => "max_steps",
            BudgetArg::Seconds => "max_seconds",
        }
    }

    pub fn from_keyword(k: &str) -> Option<BudgetArg> {
        BudgetArg::ALL.into_iter().find(|a| a.keyword() == k)
    }
}

#[derive(Debug, Clone)]
pub struct Arm {
    pub pattern: Pattern,
    pub guard: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Pattern {
    Wildcard,
    Bind(Target),
    Literal(Expr),
    Outcome(OutcomeTagPat, Option<Box<Pattern>>),
    Record(TypeId, Vec<(usize, Pattern)>),
    Sequence(Vec<Pattern>),
    /// `[a, *rest, z]`: the items before and after the star match one by one, and the star
    /// takes what they leave, as a list.
    SequenceStar(Vec<Pattern>, Box<Target>, Vec<Pattern>),
    /// `int(n)`, `str()`: a value of that built-in type, the sub-pattern matching the value itself.
    Class(TypeTest, Option<Box<Pattern>>),
    Or(Vec<Pattern>),
    As(Box<Pattern>, Target),
}

/// A built-in type a class pattern or `isinstance` names. As in Python, `int` also takes a
/// `bool` (`True` is an `int`), and `float` does not take an `int`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeTest {
    Int,
    Float,
    Str,
    Bool,
    List,
    Dict,
    Tuple,
    Set,
}

impl TypeTest {
    pub fn from_name(name: &str) -> Option<TypeTest> {
        Some(match name {
            "int" => TypeTest::Int,
            "float" => TypeTest::Float,
            "str" => TypeTest::Str,
            "bool" => TypeTest::Bool,
            "list" => TypeTest::List,
            "dict" => TypeTest::Dict,
            "tuple" => TypeTest::Tuple,
            "set" => TypeTest::Set,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TypeTest::Int => "int",
            TypeTest::Float => "float",
            TypeTest::Str => "str",
            TypeTest::Bool => "bool",
            TypeTest::List => "list",
            TypeTest::Dict => "dict",
            TypeTest::Tuple => "tuple",
            TypeTest::Set => "set",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeTagPat {
    Ok,
    Err,
    Uncertain,
    Exhausted,
    Failed,
}

#[derive(Debug, Clone)]
pub enum Target {
    Local(u32),
    Cell(u32),
    Global(u32),
    Index(Box<Expr>, Box<Expr>),
    Attr(Box<Expr>, Sym),
    /// `xs[lo:hi:step] = items` (lists only, as in Python).
    Slice(Box<Expr>, [Option<Box<Expr>>; 3]),
    Tuple(Vec<Target>),
    /// The `*rest` of a tuple target (at most one per tuple): the items the others leave, as a list.
    Star(Box<Target>),
    /// A name bound where nothing reads it back (`_` in a pattern).
    Discard,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(i64),
    /// An int literal past 64 bits, as its digits (with any `0x`/`0o`/`0b` prefix).
    BigInt(Box<str>),
    Float(f64),
    Bool(bool),
    None,
    Str(u32),
    /// A `b"..."` literal's octets, shared with every value it makes.
    Bytes(std::sync::Arc<[u8]>),
    FString(Vec<FPart>),
    Local(u32),
    Cell(u32),
    Global(u32),
    /// A global of another module (`m.name` where `m` is a `use`d file).
    ModuleGlobal(ModId, u32),
    Builtin(BuiltinId),
    Type(TypeId),
    Module(ModId),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    /// A display containing `*xs`; the flag marks the starred items.
    ListStar(Vec<(bool, Expr)>),
    TupleStar(Vec<(bool, Expr)>),
    Comp(Box<Comp>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    BoolOp(BoolOp, Box<Expr>, Box<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    Call(Box<Expr>, Args),
    /// `obj.name(args)` without materialising a bound method.
    MethodCall(Box<Expr>, Sym, Args),
    Attr(Box<Expr>, Sym),
    Index(Box<Expr>, Box<Expr>),
    Slice(
        Box<Expr>,
        Option<Box<Expr>>,
        Option<Box<Expr>>,
        Option<Box<Expr>>,
    ),
    Lambda(Arc<Function>),
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `analyze(data, "prompt", model="name")`: a model call with a typed outcome.
    Analyze(Box<AnalyzeCall>),
    /// `json.parse(text)`, `db.query(...)`: a standard-library call, arguments bound at check time.
    StdCall(Box<StdCall>),
    /// `ask_human(question)`: a line from the person running the program.
    AskHuman(Box<AskHumanCall>),
    /// `remaining(meter)` called by name: what the budgets in force leave of a meter.
    Remaining(Box<Expr>, String),
    /// `alias.member(...)` on an external module (`use mcp` / `use python`).
    ExternalCall(Box<ExternalCall>),
    /// `alias.tools` (every tool) or `alias.member` (one tool) of an external module, as values.
    ExternalMember(ExtId, Option<String>),
    /// `classified(value)`: the value, labelled confidential. The string says where
    /// (`classified(...) at main.ko:3:7`), for the messages of the sinks that refuse it.
    Classified(Box<Expr>, String),
    /// A literal labelled unverified by the label-transparency mode (`literal_labels.rs`);
    /// never written by a program. The string says where.
    Unverified(Box<Expr>, String),
}

#[derive(Debug, Clone)]
pub struct AskHumanCall {
    pub question: Expr,
    /// Structural identity: `file:function#index`, as for `analyze`.
    pub site: String,
}

#[derive(Debug, Clone)]
pub struct StdCall {
    pub func: crate::std_api::StdFn,
    /// The receiver of a method (`db` in `db.query(...)`).
    pub recv: Option<Expr>,
    /// One per parameter, in the member's parameter order; `None` takes the default.
    pub args: Vec<Option<Expr>>,
    /// The type the result is read into (`T` of `Result[T]`); `Any` when untyped.
    pub expect: Ty,
    /// Structural identity: `file:function#index`, as for `analyze`.
    pub site: String,
}

#[derive(Debug, Clone)]
pub struct AnalyzeCall {
    pub data: Expr,
    pub prompt: Expr,
    /// `model=`: the name of a `[models]` entry.
    pub model: Option<Expr>,
    /// The `Ok` payload's type, from the annotation on the left (`str` when there is none).
    pub expect: Ty,
    pub stream: bool,
    /// Structural identity: `file:function#index`, stable under comments and reformatting.
    pub site: String,
    /// `tools=[...]`: the tools and agents the model may call (a list value at run time).
    pub tools: Option<Expr>,
    /// `on tool_call(name, args):`, run before each tool call.
    pub on_tool_call: Option<ToolHandler>,
    /// `on tool_result(name, args, result):`, run after each tool call.
    pub on_tool_result: Option<ToolHandler>,
    /// `on token(piece):`, run for each streamed piece instead of printing it.
    pub on_token: Option<ToolHandler>,
}

/// An `on tool_call` / `on tool_result` / `on token` block. It runs in the frame of the statement it
/// hangs off: its parameters are that frame's slots, and a `return` in it answers the
/// loop (the text that replaces the tool, or the replacement result) instead of the function.
#[derive(Debug, Clone)]
pub struct ToolHandler {
    pub params: Vec<Target>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Default, Clone)]
pub struct Args {
    pub positional: Vec<Expr>,
    pub keywords: Vec<(Sym, Expr)>,
    /// `*xs` arguments, spliced after the positional ones in written order.
    pub star: Vec<(usize, Expr)>,
}

#[derive(Debug, Clone)]
pub enum FPart {
    Lit(u32),
    Field {
        expr: Expr,
        conv: Option<char>,
        spec: Vec<FPart>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompKind {
    List,
    Set,
    Dict,
    /// A generator expression; the runtime materialises it as a list.
    Generator,
}

#[derive(Debug, Clone)]
pub struct Comp {
    pub kind: CompKind,
    pub elt: Expr,
    pub value: Option<Expr>,
    pub clauses: Vec<CompFor>,
}

#[derive(Debug, Clone)]
pub struct CompFor {
    pub target: Target,
    pub iter: Expr,
    pub conds: Vec<Expr>,
}

/// The built-in functions, in `BuiltinId` order.
pub const BUILTINS: &[&str] = &[
    "print",
    "len",
    "range",
    "enumerate",
    "zip",
    "sorted",
    "reversed",
    "min",
    "max",
    "sum",
    "abs",
    "round",
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
    "set",
    "tuple",
    "any",
    "all",
    "repr",
    "ord",
    "chr",
    "divmod",
    "map",
    "filter",
    "Ok",
    "Err",
    "Uncertain",
    "Exhausted",
    "Failed",
    "isinstance",
    "hash",
    "pow",
    "input",
    "type",
    "remaining",
    "redact",
    "hex",
    "oct",
    "bin",
    "exit",
    "bytes",
];

pub fn builtin_id(name: &str) -> Option<BuiltinId> {
    BUILTINS
        .iter()
        .position(|b| *b == name)
        .map(|i| BuiltinId(i as u16))
}

pub fn builtin_name(id: BuiltinId) -> &'static str {
    BUILTINS[id.0 as usize]
}

macro_rules! well_known_syms {
    ($($konst:ident = $text:literal,)*) => {
        /// Names interned first, in this order, so the runtime can match methods on constants.
        pub mod sym {
            use super::Sym;
            well_known_syms!(@consts 0u32; $($konst,)*);
            pub const WELL_KNOWN: &[&str] = &[$($text,)*];
        }
    };
    (@consts $n:expr; $first:ident, $($rest:ident,)*) => {
        pub const $first: Sym = Sym($n);
        well_known_syms!(@consts $n + 1u32; $($rest,)*);
    };
    (@consts $n:expr;) => {};
}

well_known_syms! {
    APPEND = "append",
    EXTEND = "extend",
    INSERT = "insert",
    POP = "pop",
    REMOVE = "remove",
    INDEX = "index",
    COUNT = "count",
    SORT = "sort",
    REVERSE = "reverse",
    COPY = "copy",
    CLEAR = "clear",
    GET = "get",
    KEYS = "keys",
    VALUES = "values",
    ITEMS = "items",
    SETDEFAULT = "setdefault",
    UPDATE = "update",
    ADD = "add",
    DISCARD = "discard",
    UNION = "union",
    INTERSECTION = "intersection",
    DIFFERENCE = "difference",
    SYMMETRIC_DIFFERENCE = "symmetric_difference",
    ISSUBSET = "issubset",
    ISSUPERSET = "issuperset",
    ISDISJOINT = "isdisjoint",
    SPLIT = "split",
    RSPLIT = "rsplit",
    JOIN = "join",
    STRIP = "strip",
    LSTRIP = "lstrip",
    RSTRIP = "rstrip",
    UPPER = "upper",
    LOWER = "lower",
    REPLACE = "replace",
    STARTSWITH = "startswith",
    ENDSWITH = "endswith",
    FIND = "find",
    RFIND = "rfind",
    ISDIGIT = "isdigit",
    ISALPHA = "isalpha",
    ISALNUM = "isalnum",
    ISSPACE = "isspace",
    ISUPPER = "isupper",
    ISLOWER = "islower",
    CAPITALIZE = "capitalize",
    TITLE = "title",
    SPLITLINES = "splitlines",
    FORMAT = "format",
    ZFILL = "zfill",
    CENTER = "center",
    LJUST = "ljust",
    RJUST = "rjust",
    SWAPCASE = "swapcase",
    PARTITION = "partition",
    RPARTITION = "rpartition",
    REMOVEPREFIX = "removeprefix",
    REMOVESUFFIX = "removesuffix",
    ISNUMERIC = "isnumeric",
    ISDECIMAL = "isdecimal",
    IS_INTEGER = "is_integer",
    // Keyword arguments of builtins.
    SEP = "sep",
    END = "end",
    KEY = "key",
    DEFAULT = "default",
    START = "start",
    STRICT = "strict",
}

// Pinned: `parallel for` workers share one program across threads.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<Program>();
};
