//! `bytes`: an immutable run of octets (a file read raw by `fs.bytes`, a helper's payload),
//! a native value so `Value` keeps its size and only code that asks for bytes knows them.
//!
//! It behaves as Python's `bytes` where Kora has the operation: `len`, `b[i]` (an int),
//! `b[lo:hi]` (bytes), iteration (ints), `==` and ordering, `+` and `*`, `in`, `b'...'` as its
//! text.

use std::cmp::Ordering;
use std::sync::Arc;

use kora_check::std_api::StdType;
use kora_syntax::ast::BinOp;

use crate::error::RtResult;
use crate::value::grow;

use crate::value::native::{Native, NativeObject, PortableNative};
use crate::value::Value;

/// Shared by `Arc`: a PDF read once crosses into a `parallel for` branch without a copy.
#[derive(Clone, Debug)]
pub struct Bytes(pub Arc<[u8]>);

impl Bytes {
    pub fn value(b: Vec<u8>) -> Value {
        Bytes::shared(b.into())
    }

    /// A value over octets someone else holds too (a `b"..."` literal's).
    pub fn shared(b: Arc<[u8]>) -> Value {
        Value::Native(std::rc::Rc::new(Native::new(Bytes(b))))
    }

    /// The octets of a plain `bytes` value (through a captured variable's cell).
    pub fn of(v: &Value) -> Option<Arc<[u8]>> {
        match v {
            Value::Native(n) => n.downcast_ref::<Bytes>().map(|b| b.0.clone()),
            Value::Cell(c) => Bytes::of(&c.borrow()),
            _ => None,
        }
    }
}

/// `a + b` and `b * n` / `n * b` when an operand is bytes; `None` when neither is.
pub fn arith(op: BinOp, a: &Value, b: &Value) -> Option<RtResult<Value>> {
    let times = |v: &Value| match v {
        Value::Int(n) => Some(*n),
        Value::Bool(t) => Some(i64::from(*t)),
        _ => None,
    };
    let (x, y) = (Bytes::of(a), Bytes::of(b));
    let joined = |parts: &[&[u8]], n: usize| -> RtResult<Value> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut out = grow::vec(len.saturating_mul(n), "the bytes")?;
        for _ in 0..n {
            for p in parts {
                out.extend_from_slice(p);
            }
        }
        Ok(Bytes::value(out))
    };
    match (op, &x, &y) {
        (BinOp::Add, Some(x), Some(y)) => Some(joined(&[x, y], 1)),
        (BinOp::Mul, Some(x), None) => Some(joined(&[x], usize::try_from(times(b)?).unwrap_or(0))),
        (BinOp::Mul, None, Some(y)) => Some(joined(&[y], usize::try_from(times(a)?).unwrap_or(0))),
        _ => None,
    }
}

/// Python's spelling: printable ASCII as is, quotes and backslashes escaped, the rest `\xNN`.
pub fn repr(b: &[u8], out: &mut String) {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    out.push('b');
    out.push(quote);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if c as char == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote);
}

impl NativeObject for Bytes {
    fn std_type(&self) -> StdType {
        StdType::Bytes
    }

    fn repr(&self, out: &mut String) {
        repr(&self.0, out)
    }

    fn compare(&self, other: &Native) -> Option<Ordering> {
        let other = other.downcast_ref::<Bytes>()?;
        Some(self.0.as_ref().cmp(other.0.as_ref()))
    }

    fn portable(&self) -> Option<Arc<dyn PortableNative>> {
        Some(Arc::new(self.clone()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PortableNative for Bytes {
    fn revive(&self) -> Native {
        Native::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(b: &[u8]) -> String {
        let mut s = String::new();
        repr(b, &mut s);
        s
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(shown(b"%PDF-1.4\n\x00\xff"), "b'%PDF-1.4\\n\\x00\\xff'");
        assert_eq!(shown(b"it's"), "b\"it's\"");
        assert_eq!(shown(b"'\""), "b'\\'\"'");
        assert_eq!(shown(b"a\\b"), "b'a\\\\b'");
    }
}
