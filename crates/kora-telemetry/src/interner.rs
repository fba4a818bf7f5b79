//! The run's interned strings, kept on the interpreter's thread: model and agent names, call
//! sites, tool names. A span's record refers to them by id, so the same name is copied once
//! a run rather than once a span.
//!
//! Names come from the program's source and configuration, so a run has few of them; the
//! first sighting is announced to the encoder in the batch (`Event::Intern`). A small
//! direct-mapped cache in front of the table answers the names a loop repeats without
//! hashing them. Past `CAP` distinct strings (a tracer fed made-up names) a record carries
//! its own copy instead, so the table's memory stays bounded.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::span_event::{Event, Text};

/// The most distinct strings a run interns.
const CAP: usize = 1 << 16;

/// Slots of the cache in front of the table (a power of two).
const RECENT: usize = 64;

/// Every string interned so far, and their ids.
pub(crate) struct Interner {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32, BuildHasherDefault<Fold>>,
    /// `1 + id` of a recently seen string per slot (0: empty), checked by content.
    recent: [u32; RECENT],
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            names: Vec::new(),
            ids: HashMap::default(),
            recent: [0; RECENT],
        }
    }
}

impl Interner {
    /// The record's reference to `s`; a string seen for the first time is announced in `batch`.
    // Called two or three times a span: the cache's hit belongs in the caller.
    #[inline(always)]
    pub(crate) fn text(&mut self, s: &str, batch: &mut Vec<Event>) -> Text {
        let slot = slot_of(s);
        if let Some(id) = self.recent[slot].checked_sub(1) {
            if self
                .names
                .get(id as usize)
                .is_some_and(|n| same(n.as_bytes(), s.as_bytes()))
            {
                return Text::Interned(id);
            }
        }
        self.look_up(s, slot, batch)
    }

    /// Whether `t` stands for `s`, without interning `s`.
    #[inline]
    pub(crate) fn is(&self, t: &Text, s: &str) -> bool {
        match t {
            Text::Interned(id) => self
                .names
                .get(*id as usize)
                .is_some_and(|n| same(n.as_bytes(), s.as_bytes())),
            Text::Owned(o) => **o == *s,
        }
    }

    /// `text` past the cache: the table, or a new entry.
    #[cold]
    fn look_up(&mut self, s: &str, slot: usize, batch: &mut Vec<Event>) -> Text {
        if let Some(&id) = self.ids.get(s) {
            self.recent[slot] = id + 1;
            return Text::Interned(id);
        }
        if self.names.len() >= CAP {
            return Text::Owned(s.into());
        }
        let id = self.names.len() as u32;
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        self.recent[slot] = id + 1;
        batch.push(Event::Intern(id, s.into()));
        Text::Interned(id)
    }
}

/// The cache slot of a string: its length and its ends, which tell apart the few names of a run.
#[inline]
fn slot_of(s: &str) -> usize {
    let b = s.as_bytes();
    let ends = match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => usize::from(f) * 3 + usize::from(l),
        _ => 0,
    };
    (b.len() * 7 + ends) & (RECENT - 1)
}

/// Byte equality without a call into `memcmp` for the short names a run repeats: two
/// overlapping eight-byte words cover eight to sixteen bytes.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[at..at + 8]);
            u64::from_le_bytes(w)
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    a == b
}

/// A multiply-and-rotate hash over eight bytes at a time: the table's keys are short names
/// from the program, never chosen by an adversary, so SipHash's protection buys nothing here.
#[derive(Default)]
pub(crate) struct Fold(u64);

impl Hasher for Fold {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(t: Text) -> u32 {
        match t {
            Text::Interned(i) => i,
            Text::Owned(s) => panic!("{s} was not interned"),
        }
    }

    #[test]
    fn the_same_text_gets_the_same_id_and_is_announced_once() {
        let mut i = Interner::default();
        let mut batch = Vec::new();
        let a = id(i.text("gpt-x", &mut batch));
        // Same length and ends, other content: the cache slot is shared, the id is not.
        let b = id(i.text("gpz-x", &mut batch));
        let again = String::from("gpt-x");
        assert_eq!(id(i.text(&again, &mut batch)), a);
        assert_eq!(id(i.text("gpz-x", &mut batch)), b);
        assert_ne!(a, b);
        let announced: Vec<(u32, &str)> = batch
            .iter()
            .map(|e| match e {
                Event::Intern(i, s) => (*i, &**s),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(announced, [(a, "gpt-x"), (b, "gpz-x")]);
    }

    #[test]
    fn same_agrees_with_slice_equality() {
        let base: Vec<u8> = (0..24).collect();
        for n in 0..24 {
            for at in 0..n {
                let mut other = base[..n].to_vec();
                assert!(same(&base[..n], &other));
                other[at] ^= 1;
                assert!(!same(&base[..n], &other), "{n} bytes, differing at {at}");
            }
            assert!(!same(&base[..n], &base[..n + 1]));
        }
    }

    #[test]
    fn past_the_cap_a_record_carries_its_own_copy() {
        let mut i = Interner::default();
        let mut batch = Vec::new();
        for n in 0..CAP {
            i.text(&n.to_string(), &mut batch);
        }
        assert!(matches!(i.text("one more", &mut batch), Text::Owned(s) if &*s == "one more"));
        assert!(matches!(i.text("7", &mut batch), Text::Interned(_)));
        assert_eq!(batch.len(), CAP);
    }
}
