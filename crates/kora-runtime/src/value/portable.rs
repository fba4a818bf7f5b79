//! `Portable`: a deep, thread-safe copy of a `Value`, the only form in which data crosses into a worker.
//!
//! `Value` is `Rc`-based and never leaves its interpreter's thread. A
//! `parallel for` branch or an isolated agent gets its inputs as `Portable`
//! and rebuilds them as fresh `Value`s in its own heap, so nothing a branch
//! does (appending to a list it was given, say) can reach the caller. Two
//! references to one list in the caller become two lists in the worker;
//! a list that contains itself cannot be copied and is refused (E1251).
//! Values only the standard library makes (a database handle) are refused
//! too: they hold a connection, not data.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use kora_check::hir::{self, BuiltinId, ModId, Sym, TypeId};

use crate::error::{codes, RtError, RtResult};
use crate::value::{Dict, Function, Key, OutcomeTag, RangeObj, Record, Set, Value};

/// A `Value` with no `Rc` in it: `Send + Sync`, built by `Portable::of`, read back by `to_value`.
#[derive(Debug, Clone)]
pub enum Portable {
    None,
    Bool(bool),
    Int(i64),
    BigInt(Box<num_bigint::BigInt>),
    Float(f64),
    Str(Arc<str>),
    List(Vec<Portable>),
    Tuple(Vec<Portable>),
    Dict(Vec<(Portable, Portable)>),
    Set(Vec<Portable>),
    Range(RangeObj),
    Record(TypeId, Vec<Portable>),
    Outcome(OutcomeTag, Box<Portable>),
    Func {
        def: Arc<hir::Function>,
        captures: Vec<Portable>,
        defaults: Vec<Portable>,
    },
    Builtin(BuiltinId),
    Method(Box<Portable>, Sym),
    Type(TypeId),
    Module(ModId),
    /// A frame slot's shared box: rebuilt as a fresh box around the copied value.
    Cell(Box<Portable>),
    /// A native value that is data, not a connection (an `fs.Image`): it says how it crosses.
    Native(std::sync::Arc<dyn crate::value::native::PortableNative>),
    /// A labelled value: the label crosses with it (origins and releases are process-wide ids).
    Labeled(crate::labels::label::Tag, Box<Portable>),
}

// Pinned: this is what crosses threads.
const _: fn() = || {
    fn crosses<T: Send + Sync>() {}
    crosses::<Portable>();
};

impl Portable {
    /// Copies `v` deeply; refuses cycles and standard-library handles.
    pub fn of(v: &Value) -> RtResult<Portable> {
        Copier { path: Vec::new() }.copy(v)
    }

    /// Rebuilds the value in the current thread's heap.
    pub fn to_value(&self) -> Value {
        match self {
            Portable::None => Value::None,
            Portable::Bool(b) => Value::Bool(*b),
            Portable::Int(i) => Value::Int(*i),
            Portable::BigInt(b) => Value::BigInt(Rc::new((**b).clone())),
            Portable::Float(f) => Value::Float(*f),
            Portable::Str(s) => Value::str(&**s),
            Portable::List(xs) => Value::list(xs.iter().map(Portable::to_value).collect()),
            Portable::Tuple(xs) => Value::tuple(xs.iter().map(Portable::to_value).collect()),
            Portable::Dict(kvs) => {
                let mut d = Dict::default();
                for (k, v) in kvs {
                    d.insert(Key(k.to_value()), v.to_value());
                }
                Value::dict(d)
            }
            Portable::Set(xs) => {
                let mut s = Set::default();
                for x in xs {
                    s.insert(Key(x.to_value()));
                }
                Value::set(s)
            }
            Portable::Range(r) => Value::Range(Rc::new(*r)),
            Portable::Record(ty, fields) => Value::Record(Rc::new(Record {
                ty: *ty,
                fields: RefCell::new(fields.iter().map(Portable::to_value).collect()),
            })),
            Portable::Outcome(tag, payload) => Value::outcome(*tag, payload.to_value()),
            Portable::Func {
                def,
                captures,
                defaults,
            } => Value::Func(Rc::new(Function {
                def: def.clone(),
                captures: captures
                    .iter()
                    .map(|c| Rc::new(RefCell::new(c.to_value())))
                    .collect(),
                defaults: defaults.iter().map(Portable::to_value).collect(),
            })),
            Portable::Builtin(b) => Value::Builtin(*b),
            Portable::Method(recv, name) => Value::Method(Rc::new((recv.to_value(), *name))),
            Portable::Type(t) => Value::Type(*t),
            Portable::Module(m) => Value::Module(*m),
            Portable::Cell(v) => Value::Cell(Rc::new(RefCell::new(v.to_value()))),
            Portable::Native(n) => Value::Native(Rc::new(n.revive())),
            Portable::Labeled(tag, v) => crate::labels::label::wrap(v.to_value(), *tag),
        }
    }
}

/// One deep copy; `path` holds the containers being copied, to find a value inside itself.
struct Copier {
    path: Vec<usize>,
}

impl Copier {
    fn copy(&mut self, v: &Value) -> RtResult<Portable> {
        let p = self.copy_value(v)?;
        // A shape label (`labels/shape.rs`) lives in this thread's table, not in the value:
        // the copy crosses as a view, which is how every reader here saw the container.
        Ok(match crate::labels::shape::tag(v) {
            Some(t) => Portable::Labeled(t, Box::new(p)),
            None => p,
        })
    }

    fn copy_value(&mut self, v: &Value) -> RtResult<Portable> {
        Ok(match v {
            Value::None => Portable::None,
            Value::Bool(b) => Portable::Bool(*b),
            Value::Int(i) => Portable::Int(*i),
            Value::BigInt(b) => Portable::BigInt(Box::new((**b).clone())),
            Value::Float(f) => Portable::Float(*f),
            Value::Str(s) => Portable::Str(Arc::from(s.as_str())),
            Value::List(l) => {
                let at = self.enter(Rc::as_ptr(l) as usize)?;
                let xs = l.borrow().iter().map(|x| self.copy(x)).collect::<RtResult<_>>();
                self.leave(at);
                Portable::List(xs?)
            }
            Value::Tuple(t) => {
                let at = self.enter(Rc::as_ptr(t) as usize)?;
                let xs = t.iter().map(|x| self.copy(x)).collect::<RtResult<_>>();
                self.leave(at);
                Portable::Tuple(xs?)
            }
            Value::Dict(d) => {
                let at = self.enter(Rc::as_ptr(d) as usize)?;
                let kvs = d
                    .borrow()
                    .iter()
                    .map(|(k, v)| Ok((self.copy(&k.0)?, self.copy(v)?)))
                    .collect::<RtResult<_>>();
                self.leave(at);
                Portable::Dict(kvs?)
            }
            Value::Set(s) => {
                let xs = s.borrow().iter().map(|k| self.copy(&k.0)).collect::<RtResult<_>>()?;
                Portable::Set(xs)
            }
            Value::Range(r) => Portable::Range(**r),
            Value::Record(r) => {
                let at = self.enter(Rc::as_ptr(r) as usize)?;
                let fs = r.fields.borrow().iter().map(|x| self.copy(x)).collect::<RtResult<_>>();
                self.leave(at);
                Portable::Record(r.ty, fs?)
            }
            Value::Outcome(o) => Portable::Outcome(o.tag, Box::new(self.copy(&o.payload)?)),
            Value::Func(f) => {
                let at = self.enter(Rc::as_ptr(f) as usize)?;
                let captures = f
                    .captures
                    .iter()
                    .map(|c| self.copy_cell(c))
                    .collect::<RtResult<Vec<_>>>();
                let defaults = f.defaults.iter().map(|x| self.copy(x)).collect::<RtResult<_>>();
                self.leave(at);
                Portable::Func {
                    def: f.def.clone(),
                    captures: captures?,
                    defaults: defaults?,
                }
            }
            Value::Builtin(b) => Portable::Builtin(*b),
            Value::Method(m) => Portable::Method(Box::new(self.copy(&m.0)?), m.1),
            Value::Type(t) => Portable::Type(*t),
            Value::Module(m) => Portable::Module(*m),
            Value::Cell(c) => Portable::Cell(Box::new(self.copy_cell(c)?)),
            Value::Labeled(l) => Portable::Labeled(l.tag(), Box::new(self.copy(&l.value)?)),
            Value::LabeledSmall(s) => Portable::Labeled(s.tag(), Box::new(self.copy(&s.plain())?)),
            Value::Native(n) => match n.portable() {
                Some(p) => Portable::Native(p),
                None => {
                    return Err(RtError::new(
                        codes::NOT_PORTABLE,
                        format!(
                            "a `{}` cannot be copied into a parallel branch or an isolated agent: it holds a connection, not data; open it inside the body instead",
                            v.type_name()
                        ),
                    ))
                }
            },
        })
    }

    fn copy_cell(&mut self, c: &Rc<RefCell<Value>>) -> RtResult<Portable> {
        let at = self.enter(Rc::as_ptr(c) as usize)?;
        let v = match c.try_borrow() {
            Ok(v) => self.copy(&v),
            Err(_) => Ok(Portable::None),
        };
        self.leave(at);
        v
    }

    fn enter(&mut self, ptr: usize) -> RtResult<usize> {
        if self.path.contains(&ptr) {
            return Err(RtError::new(
                codes::NOT_PORTABLE,
                "a value that contains itself cannot be copied into a parallel branch or an isolated agent; pass the parts the branch needs",
            ));
        }
        self.path.push(ptr);
        Ok(self.path.len() - 1)
    }

    fn leave(&mut self, at: usize) {
        self.path.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_independent_of_the_original() {
        let inner = Value::list(vec![Value::Int(1)]);
        let outer = Value::list(vec![inner.clone(), Value::str("a")]);
        let p = Portable::of(&outer).expect("portable");
        let copy = p.to_value();
        if let Value::List(l) = &inner {
            l.borrow_mut().push(Value::Int(2));
        }
        let Value::List(c) = copy else {
            panic!("a list")
        };
        let Value::List(ci) = &c.borrow()[0] else {
            panic!("a list")
        };
        assert_eq!(ci.borrow().len(), 1);
    }

    #[test]
    fn a_list_inside_itself_is_refused() {
        let l = Value::list(Vec::new());
        if let Value::List(r) = &l {
            r.borrow_mut().push(l.clone());
        }
        let e = Portable::of(&l).expect_err("a cycle");
        assert_eq!(e.code, codes::NOT_PORTABLE);
        if let Value::List(r) = &l {
            r.borrow_mut().clear();
        }
    }

    #[test]
    fn a_shared_list_twice_is_two_copies_not_a_cycle() {
        let shared = Value::list(vec![Value::Int(7)]);
        let both = Value::tuple(vec![shared.clone(), shared]);
        let p = Portable::of(&both).expect("not a cycle");
        assert!(matches!(p, Portable::Tuple(ref xs) if xs.len() == 2));
    }
}
