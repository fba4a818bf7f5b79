//! Python's `UnboundLocalError`, caught before running: `count += 1` in a function that never
//! gave `count` a value.
//!
//! Assigning a name anywhere in a function makes it local to all of the function, so
//! `count += 1` on a module variable reads a local that has no value yet: CPython raises
//! `UnboundLocalError`, and Kora's runtime would compute with `None`. The fix is `global
//! count` (or `nonlocal count` for an enclosing function's variable), which the message
//! names. Statements are lowered in source order, so "not yet assigned" is a textual
//! reading; a parameter or an earlier assignment on any path counts as a value.

use kora_syntax::ast::{self, ExprKind as AE};
use kora_syntax::Diagnostic;

use crate::codes;
use crate::lower::Lowerer;

impl Lowerer<'_> {
    /// Refuses `name op= value` (or `name = name + value`) on a local with no value yet.
    pub(crate) fn check_augmented_local(&mut self, target: &ast::Expr) {
        let AE::Name(name) = &target.kind else {
            return;
        };
        let Some(f) = self.fns.last() else {
            return;
        };
        if f.is_module
            || f.global_decl.contains(name)
            || f.comp.iter().any(|c| c.contains_key(name))
        {
            return;
        }
        let Some(&s) = f.slots.get(name) else {
            return;
        };
        let bound = f.assigned.contains(&s)
            || f.declared.contains(&s)
            || f.free_slots.iter().any(|(slot, _)| *slot == s);
        if bound {
            return;
        }
        let fname = f.name.clone();
        let enclosing = self.fns[..self.fns.len() - 1]
            .iter()
            .rev()
            .any(|outer| !outer.is_module && outer.slots.contains_key(name));
        let global = self.info().global_ix.contains_key(name);
        let (what, help) = if enclosing {
            (
                format!("`{name}` belongs to an enclosing function"),
                format!("add `nonlocal {name}` at the top of `{fname}` to update that variable"),
            )
        } else if global {
            (
                format!("`{name}` is a module variable"),
                format!(
                    "add `global {name}` at the top of `{fname}` to update the module's `{name}`, or pass it in and return the new value"
                ),
            )
        } else {
            (
                format!("`{name}` has no value yet here"),
                format!("assign it first, for example `{name} = 0`"),
            )
        };
        self.err(
            Diagnostic::error(
                codes::ASSIGN_NEEDS_GLOBAL,
                format!("`{name}` is updated in `{fname}` before it is assigned there"),
                target.span,
            )
            .with_label(format!(
                "assigning `{name}` makes it local to `{fname}`, and this reads it first"
            ))
            .with_note(what)
            .with_help(help),
        );
    }
}
