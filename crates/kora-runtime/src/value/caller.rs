//! What the standard library may ask of the interpreter: calling a value and writing output.
//!
//! Built-ins such as `sorted(key=...)` and `map` call back into Kora code;
//! they do it through this trait so they never depend on the evaluator's internals.

use kora_check::hir::Program;

use crate::error::RtResult;
use crate::value::Value;

pub trait Caller {
    /// Calls a Kora function, builtin, method or type with positional arguments.
    fn call_value(&mut self, f: &Value, args: Vec<Value>) -> RtResult<Value>;
    /// The program, for type and field names.
    fn program(&self) -> &Program;
    /// Writes to the program's standard output (`print`).
    fn write_out(&mut self, s: &str) -> RtResult<()>;
    /// Reads one line from standard input (`input`); `None` at end of input.
    fn read_line(&mut self) -> RtResult<Option<String>>;
    /// What the budgets in force leave of a meter (`remaining`); `None` when unbudgeted.
    fn remaining(&mut self, _meter: &str) -> RtResult<Value> {
        Ok(Value::None)
    }
}
