//! Values another concern makes (a database handle, a datetime, an image): the seam that lets
//! `Value` hold them without naming the modules that define them.
//!
//! The standard library (and later tool sources) implement `NativeObject`; the value layer
//! only asks what every value must answer: its type, its text, equality and order, how it
//! travels as JSON to a model, and whether a copy may cross into a `parallel for` branch.

use std::any::Any;
use std::cmp::Ordering;
use std::sync::Arc;

use kora_check::std_api::StdType;

/// What a value made outside the evaluator answers.
pub trait NativeObject: Any {
    fn std_type(&self) -> StdType;

    fn repr(&self, out: &mut String);

    /// `str(x)`: the `repr` unless the type says otherwise.
    fn to_str(&self, out: &mut String) {
        self.repr(out)
    }

    /// Equality and order against another native; `None` when they do not compare.
    fn compare(&self, _other: &Native) -> Option<Ordering> {
        None
    }

    /// The text standing in its place inside data sent to a model, when it may be sent.
    fn json_marker(&self) -> Option<&'static str> {
        None
    }

    /// A thread-safe copy for a `parallel for` branch; `None` for a connection or a handle
    /// that belongs to one interpreter.
    fn portable(&self) -> Option<Arc<dyn PortableNative>> {
        None
    }

    fn as_any(&self) -> &dyn Any;
}

/// A native value on its way into another interpreter.
pub trait PortableNative: Send + Sync + std::fmt::Debug {
    fn revive(&self) -> Native;
}

/// A boxed `NativeObject`: one pointer, so `Value::Native(Rc<Native>)` keeps `Value` at 16 bytes.
pub struct Native(Box<dyn NativeObject>);

impl Native {
    pub fn new(object: impl NativeObject) -> Native {
        Native(Box::new(object))
    }

    pub fn downcast_ref<T: NativeObject>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }

    pub fn type_name(&self) -> &'static str {
        self.0.std_type().name()
    }
}

impl std::ops::Deref for Native {
    type Target = dyn NativeObject;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}
