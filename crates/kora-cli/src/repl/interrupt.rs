//! Ctrl-C while an entry runs: a SIGINT handler that raises a flag the interpreter checks
//! before each statement, so the entry stops (E1021) and the session goes on.
//!
//! At the prompt the terminal is in raw mode and Ctrl-C reaches the line editor as a key,
//! not as a signal; the handler only ever sees presses made while code runs.

use std::sync::atomic::{AtomicBool, Ordering};

/// Raised by the handler, cleared by the interpreter when it stops.
pub static PRESSED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_sigint(_: std::os::raw::c_int) {
    PRESSED.store(true, Ordering::Relaxed);
}

/// Installs the handler; `false` where there is none (the default action then applies).
#[cfg(unix)]
pub fn install() -> bool {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(on_sigint),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { sigaction(Signal::SIGINT, &action) }.is_ok()
}

#[cfg(not(unix))]
pub fn install() -> bool {
    let _ = PRESSED.load(Ordering::Relaxed);
    false
}
