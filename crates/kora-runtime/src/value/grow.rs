//! Growing strings and containers without aborting: every growth path asks here first.
//!
//! The allocator aborts the process when an allocation fails, and no stable hook turns
//! that into an error. So a string, list or dict about to outgrow `MAX_BYTES` (or an
//! allocation the system refuses) is a clean run-time error, E1019, the same for
//! `"a" * n`, `s + s`, `"".join(...)`, `xs.append(x)`, a comprehension, `d[k] = v` or an
//! f-string. CPython raises `MemoryError` in the same places, later; a run that needs a
//! single value of more than 4 GiB is not one an agent program means to make.

use crate::error::{codes, fail, RtResult};

/// The largest string or container storage built, in bytes.
pub const MAX_BYTES: usize = 1 << 32;

/// The limit in force: `MAX_BYTES`, or less when `KORA_MAX_VALUE_BYTES` says so (read once;
/// tests use it to reach the limit without allocating gigabytes).
pub fn max_bytes() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("KORA_MAX_VALUE_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(MAX_BYTES, |n| n.min(MAX_BYTES))
    })
}

/// The error every growth path gives.
#[cold]
#[inline(never)]
pub fn too_large<T>(what: &str) -> RtResult<T> {
    let limit = max_bytes();
    let shown = if limit >= 1 << 30 {
        format!("{} GiB", limit >> 30)
    } else {
        format!("{limit} bytes")
    };
    fail(
        codes::MEMORY,
        format!("MemoryError: {what} would need more than {shown} of memory"),
    )
}

/// Whether `items` elements of `T` fit under the limit.
fn fits<T>(items: usize) -> bool {
    items
        .checked_mul(std::mem::size_of::<T>().max(1))
        .is_some_and(|b| b <= max_bytes())
}

/// Makes room for `more` bytes in `s`, or fails cleanly.
pub fn reserve_str(s: &mut String, more: usize, what: &str) -> RtResult<()> {
    match s.len().checked_add(more) {
        Some(total) if total <= max_bytes() => {}
        _ => return too_large(what),
    }
    if s.capacity() - s.len() >= more || s.try_reserve(more).is_ok() {
        return Ok(());
    }
    too_large(what)
}

/// Appends `piece` to `s`, growing it only within the limit.
#[inline]
pub fn push_str(s: &mut String, piece: &str, what: &str) -> RtResult<()> {
    reserve_str(s, piece.len(), what)?;
    s.push_str(piece);
    Ok(())
}

/// An empty string with room for `cap` bytes.
pub fn string(cap: usize, what: &str) -> RtResult<String> {
    let mut s = String::new();
    reserve_str(&mut s, cap, what)?;
    Ok(s)
}

/// Makes room for `more` items in `v`, or fails cleanly.
pub fn reserve_vec<T>(v: &mut Vec<T>, more: usize, what: &str) -> RtResult<()> {
    match v.len().checked_add(more) {
        Some(total) if fits::<T>(total) => {}
        _ => return too_large(what),
    }
    if v.capacity() - v.len() >= more || v.try_reserve(more).is_ok() {
        return Ok(());
    }
    too_large(what)
}

/// An empty vector with room for `cap` items.
pub fn vec<T>(cap: usize, what: &str) -> RtResult<Vec<T>> {
    let mut v = Vec::new();
    reserve_vec(&mut v, cap, what)?;
    Ok(v)
}

/// Room for one more item: a compare of length and capacity unless the vector is full.
#[inline(always)]
pub fn room<T>(v: &mut Vec<T>, what: &str) -> RtResult<()> {
    if v.len() == v.capacity() {
        return reserve_vec(v, 1, what);
    }
    Ok(())
}

/// Room for one more entry of a dict or set holding `len` entries of about `entry` bytes.
#[inline(always)]
pub fn entry_room(len: usize, entry: usize, what: &str) -> RtResult<()> {
    if len.saturating_add(1).saturating_mul(entry) > max_bytes() {
        return too_large(what);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_past_the_limit_is_an_error_not_an_abort() {
        let mut s = String::from("ab");
        assert!(reserve_str(&mut s, MAX_BYTES, "the string").is_err());
        assert!(push_str(&mut s, "cd", "the string").is_ok());
        assert_eq!(s, "abcd");
        let mut v: Vec<u64> = vec![1];
        assert!(reserve_vec(&mut v, MAX_BYTES / 8, "the list").is_err());
        assert!(reserve_vec(&mut v, usize::MAX, "the list").is_err());
        assert!(room(&mut v, "the list").is_ok());
        assert!(entry_room(MAX_BYTES, 16, "the dict").is_err());
        assert!(string(usize::MAX, "x").is_err());
        let e = vec::<u8>(MAX_BYTES + 1, "the text").err().map(|e| e.code);
        assert_eq!(e, Some(codes::MEMORY));
    }
}
