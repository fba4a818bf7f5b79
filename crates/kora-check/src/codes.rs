//! The checker's diagnostic codes; each has an entry in `docs/errors.md`.

pub const UNDEFINED_NAME: &str = "E0101";
pub const NONLOCAL_UNBOUND: &str = "E0102";
pub const PYTHON_IMPORT: &str = "E0103";
pub const USE_NOT_FOUND: &str = "E0104";
pub const USE_CYCLE: &str = "E0105";
pub const PACKAGE_NOT_DECLARED: &str = "E1401";
pub const PACKAGE_UNUSABLE: &str = "E1402";
pub const PACKAGE_ESCAPE: &str = "E1403";
/// `use helper` in code that is not a package declaring `[package.helper]`.
pub const HELPER_OUTSIDE_PACKAGE: &str = "E1406";
pub const NO_MEMBER: &str = "E0106";
pub const DUPLICATE_TYPE: &str = "E0107";
pub const UNKNOWN_STD_MODULE: &str = "E0108";
pub const USE_NEEDS_AS: &str = "E0109";
pub const ASSIGN_NEEDS_GLOBAL: &str = "E0110";
pub const UNKNOWN_TYPING_NAME: &str = "E0111";
/// `kora repl` could not add an entry to its session (it would renumber what is defined).
pub const SESSION_ENTRY: &str = "E0150";
pub const MISSING_PARAM_TYPE: &str = "E0201";
pub const MISSING_RETURN_TYPE: &str = "E0202";
pub const EMPTY_NEEDS_TYPE: &str = "E0203";
pub const TYPE_MISMATCH: &str = "E0204";
pub const UNKNOWN_TYPE: &str = "E0205";
pub const ARITY: &str = "E0206";
pub const UNKNOWN_KEYWORD: &str = "E0207";
pub const UNKNOWN_FIELD: &str = "E0208";
pub const BAD_TARGET: &str = "E0209";
pub const NO_METHOD: &str = "E0210";
pub const PERCENT_FORMAT: &str = "E0211";
pub const NOT_A_TYPE_TEST: &str = "E0212";
pub const ELSE_MUST_DIVERGE: &str = "E0301";
pub const ELSE_NOT_OUTCOME: &str = "E0302";
pub const ALT_BINDINGS: &str = "E0303";
pub const MODEL_IN_GUARD: &str = "E0304";
pub const BREAK_VALUE: &str = "E0305";
pub const RETURN_OUTSIDE: &str = "E0306";
pub const LOOP_CONTROL_OUTSIDE: &str = "E0307";
pub const BAD_PATTERN: &str = "E0308";
pub const OUTCOME_TRUTH: &str = "E0309";
pub const NOT_EXHAUSTIVE: &str = "E0310";
// Tool loops and the context fence (E0820–E0829).
pub const NOT_A_TOOL: &str = "E0820";
pub const TOOLS_SHAPE: &str = "E0821";
pub const BAD_HANDLER: &str = "E0822";
pub const HANDLER_WITHOUT_CALL: &str = "E0823";
pub const BAD_CONTEXT: &str = "E0824";
// Security labels (E0830–E0839).
pub const CLASSIFIED_TO_MODEL: &str = "E0830";
// Model choice (E0840–E0849).
pub const BAD_MODEL_CHOICE: &str = "E0840";
// External modules (`use mcp`, `use python`).
pub const UNKNOWN_EXTERNAL_KIND: &str = "E0850";
pub const EXTERNAL_NOT_VALUE: &str = "E0851";
pub const NO_EXTERNAL_MEMBER: &str = "E0852";
pub const EXTERNAL_ARGS: &str = "E0853";
pub const NOT_YET: &str = "E0901";
pub const NO_STD_MEMBER: &str = "E0601";
pub const STD_NOT_VALUE: &str = "E0602";
pub const SQL_TEXT_BUILT: &str = "E0603";
pub const BAD_REGEX: &str = "E0604";
// Tests and mocks (E0700–E0749).
pub const TEST_NOT_TOP_LEVEL: &str = "E0701";
pub const DUPLICATE_TEST: &str = "E0702";
pub const MOCK_OUTSIDE_TEST: &str = "E0703";
pub const MOCK_TARGET: &str = "E0704";
pub const MOCK_NOT_OUTCOME: &str = "E0705";
pub const UNKNOWN_METRIC: &str = "E0706";
pub const METRIC_ARGS: &str = "E0707";
// `parallel for` and isolated agents (E0760–E0779).
pub const BRANCH_ASSIGNS_OUTER: &str = "E0760";
// Budgets and the human in the loop (E0800–E0819).
pub const BUDGET_LOOSENED: &str = "E0801";
pub const BUDGET_ARG: &str = "E0802";
pub const UNKNOWN_METER: &str = "E0803";
