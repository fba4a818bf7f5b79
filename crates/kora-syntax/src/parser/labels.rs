//! The named expectations the grammar reports, each with the help line a reader needs next.
//!
//! Ranks decide which label speaks when several fail at the same token: a
//! missing `:` after a header (3) outranks "end of the statement" (0), which
//! otherwise appears at the end of every expression.

use super::error::Lbl;

pub const NAME: Lbl = Lbl::new(
    "a name",
    "a name starts with a letter or `_`; keywords cannot be used as names",
);
pub const EXPR: Lbl = Lbl::new(
    "an expression",
    "write a value, a name, a call or an operator expression here",
)
.ranked(2);
pub const STMT: Lbl = Lbl::new(
    "a statement",
    "a line starts with a statement: an assignment, a call, `if`, `for`, `def`, `return`, ...",
);
pub const END_STMT: Lbl = Lbl::new(
    "the end of the statement",
    "put each statement on its own line; check for a missing operator, comma or bracket",
)
.ranked(0);
pub const TYPE: Lbl = Lbl::new(
    "a type",
    "write a type such as `int`, `list[str]`, `dict[str, int]`, `Expense` or `\"low\" | \"high\"`",
);
pub const PATTERN: Lbl = Lbl::new(
    "a pattern",
    "a pattern is `_`, a name, a literal, `Ok(x)`, `Expense(amount=a)`, `(a, b)` or `p | q`",
);
pub const COMMA: Lbl = Lbl::new("`,`", "separate the items with commas").ranked(2);
pub const CLOSE_PAREN: Lbl =
    Lbl::new("`)`", "close the parenthesis, or separate items with `,`").ranked(2);
pub const CLOSE_BRACKET: Lbl =
    Lbl::new("`]`", "close the bracket, or separate items with `,`").ranked(2);
pub const CLOSE_BRACE: Lbl =
    Lbl::new("`}`", "close the brace, or separate entries with `,`").ranked(2);

pub const COLON_DICT: Lbl = Lbl::new(
    "`:` between the key and the value",
    "write dict entries as `key: value`",
)
.ranked(2);
pub const COLON_IF: Lbl = Lbl::new(
    "`:` after the `if` condition",
    "end the `if` line with `:` and indent the body below it",
)
.ranked(3);
pub const COLON_ELIF: Lbl = Lbl::new(
    "`:` after the `elif` condition",
    "end the `elif` line with `:` and indent the body below it",
)
.ranked(3);
pub const COLON_ELSE: Lbl = Lbl::new(
    "`:` after `else`",
    "write `else:` and indent the body below it",
)
.ranked(3);
pub const COLON_WHILE: Lbl = Lbl::new(
    "`:` after the `while` condition",
    "end the `while` line with `:` and indent the body below it",
)
.ranked(3);
pub const COLON_FOR: Lbl = Lbl::new(
    "`:` after the `for` header",
    "write `for x in xs:` and indent the body below it",
)
.ranked(3);
pub const IN_FOR: Lbl = Lbl::new("`in` after the loop variable", "write `for x in xs:`").ranked(3);
pub const COLON_DEF: Lbl = Lbl::new(
    "`:` after the function signature",
    "write `def name(a: int) -> T:` and indent the body below it",
)
.ranked(3);
pub const PARAMS: Lbl = Lbl::new(
    "`(` to start the parameter list",
    "write the parameters in parentheses: `def name(a: int, b: str):`",
)
.ranked(2);
pub const COLON_CASE: Lbl = Lbl::new(
    "`:` after the `case` pattern",
    "write `case pattern:` and indent the arm's body below it",
)
.ranked(3);
pub const CASE: Lbl = Lbl::new(
    "`case` to start a match arm",
    "every line directly inside a `match` starts an arm: `case pattern:`",
)
.ranked(2);
pub const COLON_BLOCK: Lbl = Lbl::new(
    "`:` to start the block",
    "end the line with `:` and indent the body below it",
)
.ranked(3);
pub const FOR_SINK: Lbl = Lbl::new(
    "`for` and the sink name",
    "write `declassify value for sink:` naming where the value may go",
)
.ranked(3);
pub const ARROW_MOCK: Lbl = Lbl::new(
    "`->` after the mocked name",
    "write `with mock analyze -> Ok(value):`",
)
.ranked(3);
pub const AS_NAME: Lbl = Lbl::new("a name after `as`", "write `as name`").ranked(2);
pub const USE_TARGET: Lbl = Lbl::new(
    "a module after `use`",
    "write `use json`, `use \"./lib/file.ko\" as name` or `use python statistics as stats`",
)
.ranked(2);
pub const FIELD: Lbl = Lbl::new(
    "a field declaration",
    "each line of a `type` block is `name: Type` or `name: Type = default`",
)
.ranked(2);

/// "expected an indented block after ..." labels.
pub const fn block(what: &'static str) -> Lbl {
    Lbl::new(
        what,
        "indent the body one level (4 spaces) deeper than the line that opens it",
    )
    .code("E0024")
    .ranked(3)
}
