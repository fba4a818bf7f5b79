//! Reading outside data into a declared type: the shared tail of every typed parser (json, yaml, sql, xml, notes).
//!
//! Each format first builds plain Kora values (dicts in document order,
//! lists, scalars); `narrow` then checks and converts that tree into the
//! annotation's type, naming the first path that does not fit
//! (`$.items[2].amount: expected an integer, found a string`). Record fields
//! the data left out take their declared defaults.

use std::rc::Rc;

use kora_check::hir::{Program, TypeId};
use kora_check::types::Ty;

use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Record, Set, Value};

/// The ids of the standard library's own record types.
pub struct StdTypes {
    pub response: Option<TypeId>,
    pub re_match: Option<TypeId>,
    pub xml_element: Option<TypeId>,
}

impl StdTypes {
    pub fn find(p: &Program) -> StdTypes {
        let id = |name: &str| p.types.iter().find(|t| t.name == name).map(|t| t.id);
        StdTypes {
            response: id("http.Response"),
            re_match: id("re.Match"),
            xml_element: id("xml.Element"),
        }
    }
}

/// Looks a `str` key up without allocating a `Value` for it; hashes exactly as `Key` hashes a string.
pub struct StrKey<'a>(pub &'a str);

impl std::hash::Hash for StrKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl indexmap::Equivalent<Key> for StrKey<'_> {
    fn equivalent(&self, k: &Key) -> bool {
        k.0.as_str() == Some(self.0)
    }
}

/// The data's own word for a value's kind, used in path errors.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::None => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::Float(_) => "a number",
        Value::Str(_) => "a string",
        Value::List(_) | Value::Tuple(_) => "an array",
        Value::Dict(_) => "an object",
        _ => "a value",
    }
}

/// How strictly scalars convert: SQLite has no booleans and stores them as 0/1.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lenience {
    Strict,
    IntBools,
}

impl Interp<'_> {
    /// Checks and converts an untyped value into `ty`, or names the first path that does not fit.
    pub(crate) fn narrow(
        &mut self,
        v: Value,
        ty: &Ty,
        path: &mut String,
        l: Lenience,
    ) -> Result<Value, String> {
        let mismatch = |path: &str, want: &str, v: &Value| {
            Err(format!("{}: expected {want}, found {}", path, kind(v)))
        };
        match ty {
            Ty::Any | Ty::Func | Ty::Module => Ok(v),
            Ty::Int => match v {
                Value::Int(_) => Ok(v),
                Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::Int(f as i64)),
                _ => mismatch(path, "an integer", &v),
            },
            Ty::Float => match v {
                Value::Float(_) => Ok(v),
                Value::Int(i) => Ok(Value::Float(i as f64)),
                _ => mismatch(path, "a number", &v),
            },
            Ty::Bool => match v {
                Value::Bool(_) => Ok(v),
                Value::Int(i @ (0 | 1)) if l == Lenience::IntBools => Ok(Value::Bool(i == 1)),
                _ => mismatch(path, "true or false", &v),
            },
            Ty::Str => match v {
                Value::Str(_) => Ok(v),
                _ => mismatch(path, "a string", &v),
            },
            Ty::None => match v {
                Value::None => Ok(v),
                _ => mismatch(path, "null", &v),
            },
            Ty::Literal(ms) => match &v {
                Value::Str(s) if ms.iter().any(|m| m == s.as_str()) => Ok(v),
                Value::Str(s) => Err(format!(
                    "{}: {:?} is not one of {}",
                    path,
                    s.as_str(),
                    ms.iter()
                        .map(|m| format!("{m:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                _ => mismatch(path, "a string", &v),
            },
            Ty::List(t) | Ty::Set(t) | Ty::TupleOf(t) => {
                let items = match &v {
                    Value::List(l) => l.borrow().clone(),
                    Value::Tuple(t) => t.as_ref().clone(),
                    _ => return mismatch(path, "an array", &v),
                };
                let out = self.narrow_items(items, |_| t, path, l)?;
                Ok(match ty {
                    Ty::List(_) => Value::list(out),
                    Ty::TupleOf(_) => Value::tuple(out),
                    _ => {
                        let mut s = Set::default();
                        for x in out {
                            if !x.is_hashable() {
                                return Err(format!("{}: a set cannot hold {}", path, kind(&x)));
                            }
                            s.insert(Key(x));
                        }
                        Value::set(s)
                    }
                })
            }
            Ty::Tuple(ts) => {
                let items = match &v {
                    Value::List(l) => l.borrow().clone(),
                    Value::Tuple(t) => t.as_ref().clone(),
                    _ => return mismatch(path, "an array", &v),
                };
                if items.len() != ts.len() {
                    return Err(format!(
                        "{}: expected {} items, found {}",
                        path,
                        ts.len(),
                        items.len()
                    ));
                }
                let out = self.narrow_items(items, |i| &ts[i], path, l)?;
                Ok(Value::tuple(out))
            }
            Ty::Dict(kt, vt) => {
                let Value::Dict(d) = &v else {
                    return mismatch(path, "an object", &v);
                };
                let entries: Vec<(Key, Value)> = d
                    .borrow()
                    .iter()
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                let mut out = Dict::default();
                for (k, x) in entries {
                    let mark = path.len();
                    push_key(path, &k.0);
                    let key = narrow_key(k.0, kt).map_err(|w| format!("{}: key {w}", path))?;
                    let val = self.narrow(x, vt, path, l)?;
                    path.truncate(mark);
                    out.insert(Key(key), val);
                }
                Ok(Value::dict(out))
            }
            Ty::Record(id, name) => {
                if let Value::Record(r) = &v {
                    if r.ty == *id {
                        return Ok(v);
                    }
                }
                let Value::Dict(d) = &v else {
                    return mismatch(path, &format!("an object for `{name}`"), &v);
                };
                let prog = self.prog.clone();
                let rec = prog.record(*id);
                let mut fields = Vec::with_capacity(rec.fields.len());
                for f in &rec.fields {
                    let fname = prog.name(f.name);
                    let given = d.borrow().get(&StrKey(fname)).cloned();
                    let mark = path.len();
                    path.push('.');
                    path.push_str(fname);
                    let val = match (given, &f.default) {
                        (Some(Value::None), Some(def)) | (None, Some(def)) => {
                            let saved = self.cur_mod;
                            self.cur_mod = rec.module.0 as usize;
                            let r = self.eval(def);
                            self.cur_mod = saved;
                            r.map_err(|e| format!("{}: its default failed: {}", path, e.message))?
                        }
                        (Some(x), _) => self.narrow(x, &f.ty, path, l)?,
                        (None, None) => {
                            if matches!(&f.ty, Ty::Union(ts) if ts.contains(&Ty::None))
                                || f.ty == Ty::None
                            {
                                Value::None
                            } else {
                                return Err(format!("{}: missing required field", path));
                            }
                        }
                    };
                    path.truncate(mark);
                    fields.push(val);
                }
                Ok(Value::Record(Rc::new(Record {
                    ty: *id,
                    fields: std::cell::RefCell::new(fields),
                })))
            }
            Ty::Union(ts) => {
                // An exact fit first, so `int | str` keeps "7" a string.
                for t in ts {
                    if crate::value::conform::conforms(&self.prog, &v, t)
                        && !matches!(
                            t,
                            Ty::Record(..)
                                | Ty::List(_)
                                | Ty::Dict(..)
                                | Ty::Tuple(_)
                                | Ty::TupleOf(_)
                                | Ty::Set(_)
                        )
                    {
                        return Ok(v);
                    }
                }
                let mut first = None;
                for t in ts {
                    match self.narrow(v.clone(), t, path, l) {
                        Ok(x) => return Ok(x),
                        Err(e) => {
                            first.get_or_insert(e);
                        }
                    }
                }
                Err(first.unwrap_or_else(|| format!("{}: no alternative fits", path)))
            }
            Ty::Outcome(..) => Err(format!("{}: an outcome cannot be read from data", path)),
            Ty::Std(t) => Err(format!(
                "{}: a `{}` cannot be read from data",
                path,
                t.name()
            )),
        }
    }

    fn narrow_items<'t>(
        &mut self,
        items: Vec<Value>,
        ty_of: impl Fn(usize) -> &'t Ty,
        path: &mut String,
        l: Lenience,
    ) -> Result<Vec<Value>, String> {
        let mut out = Vec::with_capacity(items.len());
        for (i, x) in items.into_iter().enumerate() {
            let mark = path.len();
            path.push('[');
            path.push_str(&i.to_string());
            path.push(']');
            out.push(self.narrow(x, ty_of(i), path, l)?);
            path.truncate(mark);
        }
        Ok(out)
    }

    /// `narrow` from the root, with the path starting at `$`.
    pub(crate) fn narrow_root(&mut self, v: Value, ty: &Ty, l: Lenience) -> Result<Value, String> {
        if !ty.is_known() {
            return Ok(v);
        }
        let mut path = String::from("$");
        self.narrow(v, ty, &mut path, l)
    }
}

fn push_key(path: &mut String, k: &Value) {
    match k {
        Value::Str(s)
            if !s.as_str().is_empty()
                && s.as_str().chars().all(|c| c.is_alphanumeric() || c == '_') =>
        {
            path.push('.');
            path.push_str(s.as_str());
        }
        Value::Str(s) => {
            path.push('[');
            path.push_str(&format!("{:?}", s.as_str()));
            path.push(']');
        }
        other => {
            path.push('[');
            path.push_str(other.type_name());
            path.push(']');
        }
    }
}

/// Object keys are text in every format; `dict[int, V]` asks for them as numbers.
fn narrow_key(k: Value, kt: &Ty) -> Result<Value, String> {
    match (kt, &k) {
        (Ty::Int, Value::Str(s)) => s
            .as_str()
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| format!("{:?} is not an integer", s.as_str())),
        (Ty::Float, Value::Str(s)) => s
            .as_str()
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| format!("{:?} is not a number", s.as_str())),
        (Ty::Str | Ty::Any, _) => Ok(k),
        (Ty::Literal(ms), Value::Str(s)) if ms.iter().any(|m| m == s.as_str()) => Ok(k),
        (Ty::Literal(ms), Value::Str(s)) => {
            Err(format!("{:?} is not one of {}", s.as_str(), ms.join(", ")))
        }
        _ => Ok(k),
    }
}
