//! Values and what is computed from values alone: the 16-byte `Value` (this file), a list's
//! storage (`list_items.rs`), ints as text, Python's operators (`arith`), comparison and
//! hashing (`compare.rs`), subscripts (`index.rs`), iteration (`iter.rs`), rendering as
//! CPython does (`format/`), annotation checks (`conform.rs`), JSON for model calls
//! (`json.rs`), Unicode tables, values made by other concerns (`native.rs`), and the
//! thread-safe snapshot that crosses into a worker (`portable.rs`).
//!
//! May use: `config`, and `labels`, the one two-way edge: a label is part of a value, so
//! `==`, ordering, rendering and the operators read through it (architecture invariant 6).
//! Must not know: the interpreter's frames or calls (a value-level function that must call
//! back, like `sorted(key=...)`, takes a `caller::Caller`), effects, the standard library.
//!
//! The runtime value: a 16-byte enum whose heap parts are `Rc`-shared inside one interpreter.
//!
//! Values never cross a thread (architecture invariant 5); `parallel for`
//! will move them only as `Portable` snapshots. Containers are
//! `Rc<RefCell<_>>` because Kora, like Python, has reference semantics for
//! lists, dicts, sets and records.

pub mod arith;
pub mod big_int;
pub mod bytes;
pub mod caller;
pub mod compare;
pub mod conform;
pub mod format;
pub mod grow;
pub mod index;
pub(crate) mod int_text;
pub mod iter;
pub mod json;
pub mod list_items;
pub mod native;
pub mod portable;
pub mod unicode;

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use indexmap::{IndexMap, IndexSet};
use num_traits::ToPrimitive;
use rustc_hash::FxBuildHasher;

use kora_check::hir;

pub use crate::value::list_items::ListItems;

pub type Dict = IndexMap<Key, Value, FxBuildHasher>;
pub type Set = IndexSet<Key, FxBuildHasher>;

// `repr(C, u64)`: a full-word tag and every payload at offset 8, so a `Value` has
// no padding. With the default layout the tag is one byte and bytes 1..8 are
// padding or a small payload; moving a `Value` then copies them as overlapping
// unaligned words, and the next load of them misses store forwarding: that stall
// was a third of the time of a call-heavy benchmark. The tag keeps its niche, so
// `RtResult<Value>` stays 16 bytes (pinned below).
#[derive(Default)]
#[repr(C, u64)]
pub enum Value {
    #[default]
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A labelled int or bool packed with its label's id (`crate::labels::small`): the same
    /// value as a `Labeled` box around it. Fifth, so `is_plain` still tests one tag compare.
    LabeledSmall(crate::labels::small::Small),
    /// An int outside i64 range (`value::big_int`): never one that fits, so `Int` and
    /// `BigInt` values of one number cannot both exist.
    BigInt(Rc<num_bigint::BigInt>),
    Str(Rc<KStr>),
    List(Rc<RefCell<ListItems>>),
    Tuple(Rc<Vec<Value>>),
    Dict(Rc<RefCell<Dict>>),
    Set(Rc<RefCell<Set>>),
    Range(Rc<RangeObj>),
    Record(Rc<Record>),
    Outcome(Rc<Outcome>),
    Func(Rc<Function>),
    Builtin(hir::BuiltinId),
    /// A method looked up but not yet called (`f = xs.append`).
    Method(Rc<(Value, hir::Sym)>),
    /// A record type used as a value: calling it constructs a record.
    Type(hir::TypeId),
    Module(hir::ModId),
    /// A captured variable's shared box; lives only in frame slots, never in user-visible values.
    Cell(Rc<RefCell<Value>>),
    /// A value only the standard library makes (`sql.Db`, `time.DateTime`).
    Native(Rc<native::Native>),
    /// A value with a security label (`crate::labels::label`); never nested.
    Labeled(Rc<crate::labels::label::Labeled>),
}

impl Clone for Value {
    // Inlined: cloning a slot is the interpreter's most frequent operation, and
    // for scalars it must not cost a call.
    #[inline(always)]
    fn clone(&self) -> Value {
        match self {
            Value::None => Value::None,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Float(f) => Value::Float(*f),
            Value::LabeledSmall(s) => Value::LabeledSmall(*s),
            Value::BigInt(b) => Value::BigInt(b.clone()),
            Value::Str(s) => Value::Str(s.clone()),
            Value::List(l) => Value::List(l.clone()),
            Value::Tuple(t) => Value::Tuple(t.clone()),
            Value::Dict(d) => Value::Dict(d.clone()),
            Value::Set(s) => Value::Set(s.clone()),
            Value::Range(r) => Value::Range(r.clone()),
            Value::Record(r) => Value::Record(r.clone()),
            Value::Outcome(o) => Value::Outcome(o.clone()),
            Value::Func(f) => Value::Func(f.clone()),
            Value::Builtin(b) => Value::Builtin(*b),
            Value::Method(m) => Value::Method(m.clone()),
            Value::Type(t) => Value::Type(*t),
            Value::Module(m) => Value::Module(*m),
            Value::Cell(c) => Value::Cell(c.clone()),
            Value::Native(n) => Value::Native(n.clone()),
            Value::Labeled(l) => Value::Labeled(l.clone()),
        }
    }
}

// Pinned: every slot, list element and argument is one of these.
const _: () = assert!(std::mem::size_of::<Value>() == 16);
const _: () = assert!(std::mem::size_of::<crate::error::RtResult<Value>>() == 16);
const _: () = assert!(std::mem::size_of::<Option<Value>>() == 16);

/// Drops `v` without a call when it owns no heap part, the common case of numbers.
///
/// The compiler's drop of a `Value` is an out-of-line function even when the value is an
/// int it has just matched; on the arithmetic paths that call was a tenth of the time.
#[inline(always)]
pub fn discard(v: Value) {
    match v {
        Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::LabeledSmall(_)
        | Value::Builtin(_)
        | Value::Type(_)
        | Value::Module(_) => std::mem::forget(v),
        heap => drop(heap),
    }
}

/// Whether `v` owns no heap part: a number, a bool, `None` or an inline labelled scalar.
/// Tested as one compare of the tag (the first five variants), which is why those stay first.
/// "Plain" here is about memory, not labels: a list of secret ints is still copied as a block.
#[inline(always)]
pub fn is_plain(v: &Value) -> bool {
    matches!(
        v,
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::LabeledSmall(_)
    )
}

/// Stores `v` in `slot`, dropping the old value through `discard`.
#[inline(always)]
pub fn store(slot: &mut Value, v: Value) {
    discard(std::mem::replace(slot, v));
}

/// A string with its ASCII-ness remembered, so indexing an ASCII string is O(1).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KStr {
    s: String,
    ascii: bool,
}

impl KStr {
    pub fn new(s: String) -> KStr {
        let ascii = s.is_ascii();
        KStr { s, ascii }
    }

    pub fn as_str(&self) -> &str {
        &self.s
    }

    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// Number of characters (Python's `len`).
    pub fn char_len(&self) -> usize {
        if self.ascii {
            self.s.len()
        } else {
            self.s.chars().count()
        }
    }

    pub fn push_str(&mut self, other: &str) {
        self.ascii &= other.is_ascii();
        self.s.push_str(other);
    }

    /// `push_str` within the memory limit (`grow.rs`): `s += t` in a loop may double a string.
    pub fn push_str_within(&mut self, other: &str) -> crate::error::RtResult<()> {
        crate::value::grow::reserve_str(&mut self.s, other.len(), "the string")?;
        self.push_str(other);
        Ok(())
    }

    pub fn into_string(self) -> String {
        self.s
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeObj {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl RangeObj {
    pub fn len(&self) -> usize {
        let RangeObj { start, stop, step } = *self;
        let n = if step > 0 && start < stop {
            (stop as i128 - start as i128 + step as i128 - 1) / step as i128
        } else if step < 0 && start > stop {
            (start as i128 - stop as i128 - step as i128 - 1) / (-(step as i128))
        } else {
            0
        };
        n as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th element; callers stay below `len()`, so the result fits, but the
    /// intermediate product may not, hence the wide arithmetic.
    pub fn get(&self, i: usize) -> i64 {
        (self.start as i128 + self.step as i128 * i as i128) as i64
    }
}

/// An instance of a `type Name:` record. Fields are in declaration order.
pub struct Record {
    pub ty: hir::TypeId,
    pub fields: RefCell<Vec<Value>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutcomeTag {
    Ok,
    Err,
    Uncertain,
    Exhausted,
    Failed,
}

impl OutcomeTag {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeTag::Ok => "Ok",
            OutcomeTag::Err => "Err",
            OutcomeTag::Uncertain => "Uncertain",
            OutcomeTag::Exhausted => "Exhausted",
            OutcomeTag::Failed => "Failed",
        }
    }

    /// The lower-case tag `else (why, kind):` binds.
    pub fn kind(self) -> &'static str {
        match self {
            OutcomeTag::Ok => "ok",
            OutcomeTag::Err => "err",
            OutcomeTag::Uncertain => "uncertain",
            OutcomeTag::Exhausted => "exhausted",
            OutcomeTag::Failed => "failed",
        }
    }
}

pub struct Outcome {
    pub tag: OutcomeTag,
    pub payload: Value,
}

/// A closure: the resolved function plus what it captured and its evaluated defaults.
pub struct Function {
    pub def: std::sync::Arc<hir::Function>,
    pub captures: Vec<Rc<RefCell<Value>>>,
    /// One per parameter that has a default, in parameter order. Re-evaluated per call
    /// when the default is a mutable display (no shared-default footgun).
    pub defaults: Vec<Value>,
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(KStr::new(s.into())))
    }

    /// A string from text known to be ASCII (a piece of an ASCII string), without
    /// scanning it again to find that out.
    pub fn str_ascii(s: &str) -> Value {
        debug_assert!(s.is_ascii());
        Value::Str(Rc::new(KStr {
            s: s.to_owned(),
            ascii: true,
        }))
    }

    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(RefCell::new(ListItems::new(v))))
    }

    pub fn tuple(v: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(v))
    }

    pub fn dict(d: Dict) -> Value {
        Value::Dict(Rc::new(RefCell::new(d)))
    }

    pub fn set(s: Set) -> Value {
        Value::Set(Rc::new(RefCell::new(s)))
    }

    pub fn outcome(tag: OutcomeTag, payload: Value) -> Value {
        Value::Outcome(Rc::new(Outcome { tag, payload }))
    }

    /// Python's type name, used in error messages (`int`, `list`, `Expense`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Set(_) => "set",
            Value::Range(_) => "range",
            Value::Record(_) => "record",
            Value::Outcome(_) => "outcome",
            Value::Func(_) => "function",
            Value::Builtin(_) => "builtin function",
            Value::Method(_) => "method",
            Value::Type(_) => "type",
            Value::Module(_) => "module",
            Value::Cell(_) => "cell",
            Value::Native(n) => n.type_name(),
            Value::Labeled(l) => l.value.type_name(),
            Value::LabeledSmall(s) => s.plain().type_name(),
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.as_str().is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Set(s) => !s.borrow().is_empty(),
            Value::Range(r) => !r.is_empty(),
            // Branching on a secret is an implicit flow, which labels do not track (DECISIONS.md).
            Value::Labeled(l) => l.value.truthy(),
            Value::LabeledSmall(s) => s.plain().truthy(),
            Value::Native(_) => bytes::Bytes::of(self).is_none_or(|b| !b.is_empty()),
            _ => true,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// Whether this value may be a dict key or set member.
    pub fn is_hashable(&self) -> bool {
        match self {
            Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::BigInt(_)
            | Value::Float(_)
            | Value::Str(_) => true,
            Value::Tuple(t) => t.iter().all(Value::is_hashable),
            Value::Outcome(o) => o.payload.is_hashable(),
            Value::Type(_) | Value::Builtin(_) | Value::Func(_) | Value::Module(_) => true,
            Value::Labeled(l) => l.value.is_hashable(),
            Value::LabeledSmall(_) => true,
            _ => false,
        }
    }
}

/// A hashable value, compared with Python's equality (`1 == 1.0 == True`).
///
/// Construct only from values for which `is_hashable()` holds; the caller
/// reports the error for the rest.
#[derive(Clone)]
pub struct Key(pub Value);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        crate::value::compare::values_equal(&self.0, &other.0)
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state)
    }
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::None => 0u8.hash(state),
        Value::Bool(b) => (*b as i64).hash(state),
        Value::Int(i) => i.hash(state),
        // Never equal to an `Int`; equal to a float only when the float is exactly it, and
        // such floats hash by their bits below.
        Value::BigInt(b) => match b.to_f64().filter(|f| {
            f.is_finite()
                && crate::value::big_int::cmp_float(b, *f) == Some(std::cmp::Ordering::Equal)
        }) {
            Some(f) => f.to_bits().hash(state),
            None => b.hash(state),
        },
        Value::Float(f) => {
            // Integral floats hash like the int they equal, as in Python.
            if f.fract() == 0.0 && (i64::MIN as f64..-(i64::MIN as f64)).contains(f) {
                (*f as i64).hash(state)
            } else {
                f.to_bits().hash(state)
            }
        }
        Value::Str(s) => s.as_str().hash(state),
        Value::Tuple(t) => {
            t.len().hash(state);
            for x in t.iter() {
                hash_value(x, state);
            }
        }
        Value::Outcome(o) => {
            (o.tag as u8).hash(state);
            hash_value(&o.payload, state);
        }
        Value::Type(t) => t.0.hash(state),
        Value::Builtin(b) => b.0.hash(state),
        Value::Module(m) => m.0.hash(state),
        Value::Func(f) => (Rc::as_ptr(f) as usize).hash(state),
        // A labelled key hashes as its value, so `d[secret]` finds the entry `d["s"]` made.
        Value::Labeled(_) | Value::LabeledSmall(_) => {
            hash_value(&crate::labels::label::plain(v), state)
        }
        _ => 0xffu8.hash(state),
    }
}
