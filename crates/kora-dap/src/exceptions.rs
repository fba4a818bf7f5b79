//! Stopping on errors: the one exception filter the adapter offers (`uncaught`), and what the
//! editor is told about the error the program stopped on.
//!
//! Kora has no way to catch an error, so every runtime error is uncaught: with the filter
//! on, the program stops in the frame that raised it, before the stack unwinds, and the
//! stop carries the error's code and message (a message computed from a classified value
//! is already withheld by the runtime, so nothing secret is shown here).

use std::sync::atomic::Ordering;

use dap::responses::ExceptionInfoResponse;
use dap::types::{ExceptionBreakMode, ExceptionBreakpointsFilter};

use crate::link::Shared;

/// The filter's id, as `setExceptionBreakpoints` names it.
pub const UNCAUGHT: &str = "uncaught";

/// What `initialize` advertises.
pub fn filters() -> Vec<ExceptionBreakpointsFilter> {
    vec![ExceptionBreakpointsFilter {
        filter: UNCAUGHT.into(),
        label: "Uncaught errors".into(),
        description: Some(
            "Stop where a runtime error is raised, with its message, before the program ends"
                .into(),
        ),
        default: Some(true),
        supports_condition: None,
        condition_description: None,
    }]
}

/// `setExceptionBreakpoints`: stopping on errors is on exactly when the filter is listed.
pub fn set(shared: &Shared, filters: &[String]) {
    let on = filters.iter().any(|f| f == UNCAUGHT);
    shared.stop_on_error.store(on, Ordering::Release);
}

/// The error the program stopped on.
#[derive(Clone, Debug)]
pub struct Raised {
    pub code: String,
    pub message: String,
}

/// `exceptionInfo` for the error the program is stopped on.
pub fn info(r: &Raised) -> ExceptionInfoResponse {
    ExceptionInfoResponse {
        exception_id: r.code.clone(),
        description: Some(r.message.clone()),
        break_mode: ExceptionBreakMode::Unhandled,
        details: None,
    }
}
