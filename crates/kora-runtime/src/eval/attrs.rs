//! Attribute reads and method calls on values: record fields, module members, natives, and receivers seen through a label.

use std::rc::Rc;

use kora_check::hir::{self, Sym};

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

impl Interp<'_> {
    pub(crate) fn call_method(
        &mut self,
        recv: &Value,
        name: Sym,
        args: Vec<Value>,
        kw: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        if let Value::Record(r) = recv {
            // A record field holding a function is called like a method.
            let rec = self.prog.record(r.ty);
            if let Some(i) = rec.fields.iter().position(|f| f.name == name) {
                let f = r.fields.borrow()[i].clone();
                return self.call_value_kw(&f, args, kw);
            }
        }
        if let Value::Module(m) = recv {
            let f = self.module_attr(*m, name)?;
            return self.call_value_kw(&f, args, kw);
        }
        if crate::labels::label::any() {
            if let Some(t) = crate::eval::label_calls::shape_decided(recv, name, &args, &kw) {
                // The receiver is read as its readers see it (a view, if an earlier change
                // gave it a shape label).
                let seen = crate::labels::shape::seen_or(recv);
                let r = self.call_method_any(&seen, name, args, kw)?;
                crate::labels::shape::mark(recv, t);
                return Ok(r);
            }
            if let Some(view) = crate::labels::shape::seen(recv) {
                return self.call_method(&view, name, args, kw);
            }
            if crate::eval::label_calls::is_size_method(name) {
                // The table's size row: a position, a count or a set relation read from a
                // container is as labelled as everything the container holds.
                let tag = crate::eval::label_calls::deep_operands(recv, &args, &kw);
                let r = self.call_method_any(recv, name, args, kw)?;
                return Ok(crate::labels::label::wrap_opt(r, tag));
            }
            return self.call_method_any(recv, name, args, kw);
        }
        self.call_method_plain(recv, name, args, kw)
    }

    /// A method call once labels exist, its operands plain or not.
    fn call_method_any(
        &mut self,
        recv: &Value,
        name: Sym,
        args: Vec<Value>,
        kw: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        if !plain_operands(recv, &args, &kw) {
            return self.call_method_labeled(recv, name, args, kw);
        }
        self.call_method_plain(recv, name, args, kw)
    }

    /// A method call once labels exist: see `label_calls.rs` for the modes.
    #[cold]
    fn call_method_labeled(
        &mut self,
        recv: &Value,
        name: Sym,
        args: Vec<Value>,
        kw: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        use crate::eval::label_calls::Mode;
        let mode = crate::eval::label_calls::method_mode(recv);
        // A plain receiver with plain arguments is a plain call. For a string receiver
        // (flatten mode) "plain" means no label anywhere inside an argument: the receiver
        // itself is a string, whose own label is its only one.
        let plain_args = match mode {
            Mode::Flatten => !crate::eval::label_calls::any_deep(&args, &kw),
            _ => crate::eval::label_calls::argument_labels(&args, &kw).is_none(),
        };
        if plain_args && !crate::labels::label::is_labeled(recv) {
            return self.call_method_plain(recv, name, args, kw);
        }
        let (plain, own) = crate::labels::label::split(recv);
        let plain = plain.into_owned();
        let r = match mode {
            Mode::Through => {
                let from_args = crate::eval::label_calls::argument_labels(&args, &kw);
                let r = self.call_method_plain(&plain, name, args, kw)?;
                crate::labels::label::wrap_opt(r, from_args)
            }
            _ => {
                let deep_own = if mode == Mode::Flatten {
                    crate::labels::label::deep(recv)
                } else {
                    own
                };
                let plain = if deep_own.is_some() && mode == Mode::Flatten {
                    crate::labels::label::reveal(&plain)
                } else {
                    plain
                };
                let r = crate::eval::label_calls::apply(mode, args, kw, |a, k| {
                    self.call_method_plain(&plain, name, a, k)
                })?;
                return Ok(crate::labels::label::wrap_opt(r, deep_own));
            }
        };
        Ok(crate::labels::label::wrap_opt(r, own))
    }

    #[inline]
    fn call_method_plain(
        &mut self,
        recv: &Value,
        name: Sym,
        args: Vec<Value>,
        kw: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        if let Value::Native(_) = recv {
            return self.native_method(recv, name, args, kw, true);
        }
        crate::eval::methods::call_method(self, recv, name, args, kw)
    }

    fn module_attr(&mut self, m: hir::ModId, name: Sym) -> RtResult<Value> {
        let module = self.prog.module(m);
        let n = self.prog.name(name);
        match module.globals.iter().position(|g| g == n) {
            Some(i) => self.global(m.0 as usize, i),
            None => Err(RtError::new(
                codes::ATTRIBUTE,
                format!("module '{}' has no attribute '{}'", module.display, n),
            )),
        }
    }

    pub(crate) fn get_attr(&mut self, v: &Value, name: Sym) -> RtResult<Value> {
        match v {
            Value::Record(r) => {
                let rec = self.prog.record(r.ty);
                if let Some(i) = rec.fields.iter().position(|f| f.name == name) {
                    return Ok(r.fields.borrow()[i].clone());
                }
                Err(RtError::new(
                    codes::ATTRIBUTE,
                    format!("'{}' has no field '{}'", rec.name, self.prog.name(name)),
                ))
            }
            Value::Module(m) => self.module_attr(*m, name),
            Value::Native(_) => self.native_method(v, name, Vec::new(), Vec::new(), false),
            Value::Labeled(l) if !crate::eval::methods::has_method(&l.value, name) => {
                let r = self.get_attr(&l.value.clone(), name)?;
                Ok(crate::labels::label::wrap(r, l.tag()))
            }
            _ if crate::eval::methods::has_method(v, name) => {
                Ok(Value::Method(Rc::new((v.clone(), name))))
            }
            _ => Err(RtError::new(
                codes::ATTRIBUTE,
                format!(
                    "'{}' object has no attribute '{}'",
                    v.type_name(),
                    self.prog.name(name)
                ),
            )),
        }
    }
}

/// Whether a method call is plain in every mode (`label_calls.rs`) without asking the
/// receiver's mode: an unlabelled receiver, and arguments that are unlabelled scalars, which
/// hold nothing inside that a flatten could find. Once a secret exists, `line.strip()` and
/// `s.split("|")` then cost what they cost before it.
#[inline]
fn plain_operands(recv: &Value, args: &[Value], kw: &[(Sym, Value)]) -> bool {
    !crate::labels::label::is_labeled(recv)
        && args.iter().all(crate::labels::label::is_scalar)
        && kw.iter().all(|(_, v)| crate::labels::label::is_scalar(v))
}
