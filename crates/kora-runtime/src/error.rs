//! Runtime errors: a code, a message, and the Kora stack trace gathered as the error unwinds.

use kora_check::hir::ModId;
use kora_syntax::Span;

/// Error codes of runtime failures; each has an entry in `docs/errors.md`.
pub mod codes {
    pub const NO_ARM: &str = "E1001";
    pub const GUARDED_OFF: &str = "E1002";
    pub const RECURSION: &str = "E1003";
    pub const OVERFLOW: &str = "E1004";
    pub const ZERO_DIVISION: &str = "E1005";
    pub const INDEX: &str = "E1006";
    pub const KEY: &str = "E1007";
    pub const TYPE: &str = "E1008";
    pub const VALUE: &str = "E1009";
    pub const ATTRIBUTE: &str = "E1010";
    pub const ASSERTION: &str = "E1011";
    pub const ARGUMENTS: &str = "E1012";
    pub const UNWRAP: &str = "E1013";
    pub const IO: &str = "E1015";
    pub const CONFIG: &str = "E1016";
    pub const REPLAY_MISS: &str = "E1017";
    pub const MODEL_IN_GUARD: &str = "E1018";
    /// A value would outgrow what can be allocated: refused before the allocation aborts.
    pub const MEMORY: &str = "E1019";
    /// Not an error: the program called `exit(...)` (the CLI exits with its code).
    pub const EXIT: &str = "E1020";
    /// Ctrl-C stopped the entry `kora repl` was running.
    pub const INTERRUPTED: &str = "E1021";
    pub const EFFECT_REFUSED: &str = "E1101";
    pub const BAD_PATTERN: &str = "E1102";
    pub const NOT_ENCODABLE: &str = "E1103";
    pub const STD_VALUE: &str = "E1104";
    // Tests, mocks and evaluation (E1200–E1249).
    pub const MOCK_MISMATCH: &str = "E1201";
    pub const MOCK_VALUE: &str = "E1202";
    // `parallel for` and isolated agents (E1250–E1269).
    pub const NOT_PORTABLE: &str = "E1251";
    pub const STOPPED: &str = "E1252";
    // Tool loops (E1300–E1319).
    pub const NOT_A_TOOL: &str = "E1301";
    // Budgets and the human in the loop (E1320–E1339).
    pub const BUDGET_LOOSENED: &str = "E1321";
    pub const BUDGET_VALUE: &str = "E1322";
    pub const UNKNOWN_METER: &str = "E1323";
    pub const NO_HUMAN: &str = "E1324";
    /// Not an error: a durable run stopped to wait for `kora answer` (the CLI exits 3).
    pub const SUSPENDED: &str = "E1325";
    /// A classified value reached a model (or tool) no open `declassify` released it to.
    pub const CLASSIFIED_TO_SINK: &str = "E1341";
    /// `declassify ... for NAME` where NAME is no configured sink.
    pub const UNKNOWN_SINK: &str = "E1342";
    /// An unverified value chose what a dangerous operation touches.
    pub const UNVERIFIED_TO_SINK: &str = "E1343";
}

/// One frame of a Kora stack trace.
#[derive(Clone, Debug)]
pub struct TraceEntry {
    pub func: String,
    pub module: ModId,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct RtError {
    pub code: &'static str,
    pub message: String,
    /// Innermost frame first.
    pub trace: Vec<TraceEntry>,
    /// Where in the current frame the error arose, until the frame records it.
    pub pending: Option<Span>,
    /// Set when this is not an error but `exit(...)`: the process status to end with.
    pub exit_status: Option<i32>,
}

pub type RtResult<T> = Result<T, Box<RtError>>;

impl RtError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Box<RtError> {
        Box::new(RtError {
            code,
            message: message.into(),
            trace: Vec::new(),
            pending: None,
            exit_status: None,
        })
    }

    /// `exit(...)`: ends the run with `status`, printing `message` (if any) on stderr.
    pub fn exit(status: i32, message: String) -> Box<RtError> {
        let mut e = RtError::new(codes::EXIT, message);
        e.exit_status = Some(status);
        e
    }
}

/// Shorthand for `Err(RtError::new(code, message))`.
pub fn fail<T>(code: &'static str, message: impl Into<String>) -> RtResult<T> {
    Err(RtError::new(code, message))
}

pub fn type_error<T>(message: impl Into<String>) -> RtResult<T> {
    fail(codes::TYPE, message)
}
