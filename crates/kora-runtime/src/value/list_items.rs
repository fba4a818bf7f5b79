//! A list's storage: a `Vec<Value>` that copies and frees runs of plain values (numbers, bools, `None`) as blocks.
//!
//! The compiler's clone and drop of a `Value` dispatch on the tag for every element, even
//! when a whole list is ints: a slice of a number list then costs one dispatch per element
//! to build and another to free, which was half of the time of the indexing bench. A plain
//! value owns no heap part, so a bitwise copy of it is a clone and forgetting it is a drop;
//! the two `unsafe` blocks below rely on exactly that, after a scan has shown every element
//! involved is plain. The scan reads tags only, a few instructions per element, and gives
//! up at the first chunk that holds a heap value, so a list of strings pays little for it.

use std::ops::{Deref, DerefMut};

use crate::value::{is_plain, Value};

/// Elements are scanned in chunks this long, without a branch per element, so the
/// compiler can keep the scan tight; the chunk ends the scan early on heap values.
const CHUNK: usize = 16;

/// The elements of a Kora list. Derefs to the `Vec` it wraps, so every `Vec` and slice
/// method works on it unchanged.
#[derive(Default)]
pub struct ListItems(Vec<Value>);

impl ListItems {
    pub fn new(v: Vec<Value>) -> ListItems {
        ListItems(v)
    }

    pub fn into_vec(mut self) -> Vec<Value> {
        std::mem::take(&mut self.0)
    }
}

impl From<Vec<Value>> for ListItems {
    fn from(v: Vec<Value>) -> ListItems {
        ListItems(v)
    }
}

impl Deref for ListItems {
    type Target = Vec<Value>;

    #[inline(always)]
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl DerefMut for ListItems {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.0
    }
}

impl Drop for ListItems {
    fn drop(&mut self) {
        if all_plain(&self.0) {
            // SAFETY: every element is plain (no heap part, no drop glue that does
            // anything), so leaving them undropped leaks nothing; the Vec's own drop then
            // frees the buffer.
            unsafe { self.0.set_len(0) }
        }
    }
}

/// Whether every value of `items` is plain.
#[inline]
pub fn all_plain(items: &[Value]) -> bool {
    let mut chunks = items.chunks_exact(CHUNK);
    for c in &mut chunks {
        if !c.iter().fold(true, |acc, v| acc & is_plain(v)) {
            return false;
        }
    }
    chunks.remainder().iter().all(is_plain)
}

/// `items[start], items[start + step], ...` (`len` of them), cloned.
///
/// Callers resolve the slice first, so every index is in bounds; each is still checked.
pub fn pick_strided(items: &[Value], start: usize, step: isize, len: usize) -> Vec<Value> {
    if step == 1 {
        let run = &items[start..start + len];
        if !all_plain(run) {
            return run.to_vec();
        }
        let mut out: Vec<Value> = Vec::with_capacity(len);
        // SAFETY: `len` slots were reserved, and the run is plain, so its bitwise copy owns
        // nothing the original also owns (the clone of a plain value).
        unsafe {
            std::ptr::copy_nonoverlapping(run.as_ptr(), out.as_mut_ptr(), len);
            out.set_len(len);
        }
        return out;
    }
    let mut out: Vec<Value> = Vec::with_capacity(len);
    let dst = out.as_mut_ptr();
    let mut i = start as isize;
    let mut k = 0;
    // Plain values are copied bitwise until the first heap value; from there on each is
    // cloned, so a mixed list costs one extra tag test per element and nothing more.
    while k < len {
        let v = &items[i as usize];
        if !is_plain(v) {
            break;
        }
        // SAFETY: `k < len`, the capacity reserved above; `v` is plain (tested above).
        unsafe { dst.add(k).write(std::ptr::read(v)) };
        k += 1;
        i += step;
    }
    // SAFETY: the first `k` slots were just written.
    unsafe { out.set_len(k) };
    while k < len {
        out.push(items[i as usize].clone());
        k += 1;
        i += step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(n: i64) -> Vec<Value> {
        (0..n).map(Value::Int).collect()
    }

    fn show(v: &[Value]) -> Vec<String> {
        v.iter()
            .map(|x| match x {
                Value::Int(i) => i.to_string(),
                Value::Str(s) => s.as_str().to_string(),
                Value::Float(f) => f.to_string(),
                _ => "?".into(),
            })
            .collect()
    }

    #[test]
    fn plain_scan_finds_a_heap_value_anywhere() {
        for at in [0, 5, 15, 16, 31, 40] {
            let mut v = ints(41);
            assert!(all_plain(&v));
            v[at] = Value::str("s");
            assert!(!all_plain(&v), "heap value at {at} missed");
        }
        assert!(all_plain(&[]));
    }

    #[test]
    fn strided_picks_match_plain_indexing() {
        let mut mixed = ints(50);
        mixed[21] = Value::str("x");
        for items in [ints(50), mixed] {
            for (start, step, len) in [
                (0, 1, 50),
                (3, 2, 20),
                (49, -1, 50),
                (49, -7, 8),
                (10, 1, 0),
                (0, 3, 17),
            ] {
                let got = pick_strided(&items, start, step, len);
                let want: Vec<Value> = (0..len)
                    .map(|k| items[(start as isize + step * k as isize) as usize].clone())
                    .collect();
                assert_eq!(show(&got), show(&want));
            }
        }
    }

    #[test]
    fn a_copied_heap_value_is_shared_not_stolen() {
        let s = Value::str("kept");
        let items = vec![Value::Int(1), s.clone(), Value::Float(2.5)];
        let Value::Str(rc) = &s else { unreachable!() };
        let picked = pick_strided(&items, 0, 1, 3);
        assert_eq!(std::rc::Rc::strong_count(rc), 3);
        drop(ListItems::new(picked));
        drop(ListItems::new(items));
        assert_eq!(std::rc::Rc::strong_count(rc), 1);
    }
}
