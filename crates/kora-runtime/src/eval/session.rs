//! An interpreter that outlives one program: `kora repl` runs entry after entry in it.
//!
//! Each accepted entry comes with the program so far (the checker's session only
//! ever appends modules, types, names, strings and globals) and the entry's own
//! statements as a function of the session module. `adopt` takes the grown
//! program over, keeping every module's variables; `run_entry` runs only the new
//! statements, so what earlier entries did (their effects included) is not done
//! again.

use std::rc::Rc;
use std::sync::Arc;

use kora_check::hir::{self, Program};

use crate::error::RtResult;
use crate::eval::interp::{Interp, KwNames, ModState};
use crate::value::{Function, Value};

impl Interp<'_> {
    /// Takes over `prog`, which must extend the program running now: the same modules,
    /// types, names and strings first. Module variables are kept; new ones start as
    /// `None`, new modules as not yet run.
    pub fn adopt(&mut self, prog: Arc<Program>) -> Result<(), String> {
        let old = &self.prog;
        let extends = prog.modules.len() >= old.modules.len()
            && prog.types.len() >= old.types.len()
            && prog.names.starts_with(&old.names)
            && prog.strings.starts_with(&old.strings)
            && old
                .modules
                .iter()
                .zip(&prog.modules)
                .all(|(a, b)| a.path == b.path && b.globals.starts_with(&a.globals));
        if !extends {
            return Err("the new program does not extend the one running".into());
        }
        for s in &prog.strings[self.consts.len()..] {
            self.consts.push(Value::str(s.as_str()));
        }
        for (m, module) in prog.modules.iter().enumerate() {
            match self.globals.get_mut(m) {
                Some(g) => g.resize(module.globals.len(), Value::None),
                None => self.globals.push(vec![Value::None; module.globals.len()]),
            }
        }
        self.mod_state.resize(prog.modules.len(), ModState::NotRun);
        self.prog = prog;
        Ok(())
    }

    /// Watches `flag` before every statement: when something (a Ctrl-C handler) sets it,
    /// the running code stops with E1021. Costs one test per statement.
    pub fn interrupt_on(&mut self, flag: &'static std::sync::atomic::AtomicBool) {
        self.interrupt = Some(flag);
        self.watched = true;
    }

    /// Runs one entry's statements (`body`, a function of the entry module) against the
    /// module state earlier entries left; returns what the body returned (`None` unless
    /// the entry ends with an expression).
    pub fn run_entry(&mut self, body: Arc<hir::Function>) -> RtResult<Value> {
        let m = body.module.0 as usize;
        if let Some(state) = self.mod_state.get_mut(m) {
            // The session module is always running: nothing may `use` it.
            *state = ModState::Done;
        }
        // Nothing is active between entries, whatever the last one left behind.
        self.guard_depth = 0;
        self.mocks.clear();
        self.fences.clear();
        self.model_scope.clear();
        let closure = Rc::new(Function {
            def: body,
            captures: Vec::new(),
            defaults: Vec::new(),
        });
        let base = self.stack.len();
        let r = self.invoke(&closure, base, 0, KwNames::NONE);
        let _ = self.flush_out();
        r
    }
}
