//! Labelled ints and bools stored inline in a `Value` (`Value::LabeledSmall`): no box, no count.
//!
//! A `Tag` is 13 bytes and a `Value`'s payload is 8, so the label is interned: a process-wide,
//! append-only table of at most 4095 tags (`parallel for` carries values to other threads, so
//! an id must mean the same tag everywhere), read without a lock. The payload packs the tag's
//! id (12 bits), a kind bit (int or bool) and the number (51 bits, signed). Anything that does
//! not fit (a larger int, a float, a tag with a release, a full table) stays a `Labeled` box:
//! both forms mean the same labelled value, and every reader goes through `label::split`,
//! `label::tag_of` or `label::deep`, which answer for both.
//!
//! A tag with a release (a value derived inside a `declassify` block) is never interned:
//! releases are written into boxes in place and counted per block, and interning them would
//! grow the table by one entry per block run.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::labels::label::Tag;
use crate::value::Value;

const ID_BITS: u32 = 12;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const KIND_BOOL: u64 = 1 << ID_BITS;
const SHIFT: u32 = ID_BITS + 1;
/// Origin ids above this do not pack into a table entry (programs have a few dozen).
const ORIGIN_BITS: u32 = 28;

/// A labelled int or bool, with its label's id, in one word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Small(u64);

impl Small {
    /// `n` labelled with the tag whose id is `id`, when `n` fits in 51 bits.
    #[inline(always)]
    pub fn int_with_id(n: i64, id: u64) -> Option<Small> {
        // `n` fits in 51 bits exactly when shifting it past the id and kind bits, done as a
        // multiplication, does not overflow: one checked multiply instead of a round trip.
        n.checked_mul(1 << SHIFT).map(|w| Small(w as u64 | id))
    }

    /// A plain int or bool labelled `tag`, when both fit; `None` for anything else.
    pub fn new(v: &Value, tag: Tag) -> Option<Small> {
        match v {
            // The cheap test first: an int that does not fit needs no table lookup.
            Value::Int(n) if (n << SHIFT) >> SHIFT == *n => Small::int_with_id(*n, id_of(tag)?),
            Value::Bool(b) => Some(Small(((*b as u64) << SHIFT) | KIND_BOOL | id_of(tag)?)),
            _ => None,
        }
    }

    /// The label's id: two values carry the same label exactly when their ids are equal.
    #[inline(always)]
    pub fn id(self) -> u64 {
        self.0 & ID_MASK
    }

    /// The int, when this is one (not a bool).
    #[inline(always)]
    pub fn int(self) -> Option<i64> {
        (self.0 & KIND_BOOL == 0).then_some((self.0 as i64) >> SHIFT)
    }

    /// Whether this is a bool (otherwise an int).
    #[inline(always)]
    pub fn is_bool(self) -> bool {
        self.0 & KIND_BOOL != 0
    }

    /// `self + q` (or `self - q`), for an int, with the same label: the sum of the packed
    /// words, since `q` shifted past the id and kind bits leaves them as they are, and an
    /// overflow of the 51-bit number is an overflow of the 64-bit word. `None` for a bool or
    /// when `q` or the result does not fit.
    #[inline(always)]
    pub fn add_int(self, q: i64, negate: bool) -> Option<Small> {
        if self.is_bool() {
            return None;
        }
        // Overflows exactly when `q` does not fit in 51 bits.
        let shifted = q.checked_mul(1 << SHIFT)?;
        self.add_word(shifted, negate)
    }

    /// `self + y` (or `self - y`) for two ints with this one label: `y`'s number is already
    /// shifted in its word, under an id that is this one's, so masking the id leaves it.
    #[inline(always)]
    pub fn add_same(self, y: Small, negate: bool) -> Option<Small> {
        if (self.0 | y.0) & KIND_BOOL != 0 {
            return None;
        }
        self.add_word((y.0 & !ID_MASK) as i64, negate)
    }

    #[inline(always)]
    fn add_word(self, shifted: i64, negate: bool) -> Option<Small> {
        let w = self.0 as i64;
        let r = if negate {
            w.checked_sub(shifted)
        } else {
            w.checked_add(shifted)
        };
        r.map(|r| Small(r as u64))
    }

    /// A key that orders ints with one label as their numbers do: the packed word itself,
    /// since the number sits in the top bits above an id and kind bit that are then equal.
    #[inline(always)]
    pub fn order_key(self) -> i64 {
        self.0 as i64
    }

    /// The plain value, its label dropped.
    #[inline]
    pub fn plain(self) -> Value {
        let n = (self.0 as i64) >> SHIFT;
        if self.0 & KIND_BOOL == 0 {
            Value::Int(n)
        } else {
            Value::Bool(n != 0)
        }
    }

    /// The label.
    #[inline]
    pub fn tag(self) -> Tag {
        tag_at(self.id())
    }

    /// A bool with this value's label.
    #[inline(always)]
    pub fn same_label_bool(self, b: bool) -> Small {
        Small(((b as u64) << SHIFT) | KIND_BOOL | self.id())
    }
}

/// The interned tags; slot 0 is never used, so an empty slot (0) is never a tag's packing.
static SLOTS: [AtomicU64; 1 << ID_BITS] = [const { AtomicU64::new(0) }; 1 << ID_BITS];
/// Slots `1..=LEN` hold tags.
static LEN: AtomicUsize = AtomicUsize::new(0);
/// Held only to append, so two threads never give one tag two ids.
static APPEND: Mutex<()> = Mutex::new(());

fn pack(tag: Tag) -> Option<u64> {
    let fits = |o: u32| o < (1 << ORIGIN_BITS);
    if tag.release != 0 || tag.bits == 0 || !fits(tag.secret_from) || !fits(tag.untrusted_from) {
        return None;
    }
    Some(
        tag.bits as u64
            | (tag.secret_from as u64) << 8
            | (tag.untrusted_from as u64) << (8 + ORIGIN_BITS),
    )
}

fn unpack(p: u64) -> Tag {
    let mask = (1u64 << ORIGIN_BITS) - 1;
    Tag {
        bits: p as u8,
        secret_from: ((p >> 8) & mask) as u32,
        untrusted_from: ((p >> (8 + ORIGIN_BITS)) & mask) as u32,
        release: 0,
    }
}

fn find(packed: u64, upto: usize) -> Option<u64> {
    (1..=upto)
        .find(|&i| SLOTS[i].load(Ordering::Acquire) == packed)
        .map(|i| i as u64)
}

thread_local! {
    /// The last tag this thread looked up and its id (packed 0: none). A loop labelling its
    /// results with one tag asks for the same id every step; this skips the table scan.
    /// Per thread, so the pair is always read as it was written.
    static LAST: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// The id of `tag`, interning it; `None` when it cannot be inline (see the header).
pub fn id_of(tag: Tag) -> Option<u64> {
    let packed = pack(tag)?;
    let (last, id) = LAST.with(|c| c.get());
    if last == packed {
        return Some(id);
    }
    let id = intern(packed)?;
    LAST.with(|c| c.set((packed, id)));
    Some(id)
}

fn intern(packed: u64) -> Option<u64> {
    let len = LEN.load(Ordering::Acquire);
    if let Some(id) = find(packed, len) {
        return Some(id);
    }
    let _guard = APPEND.lock().unwrap_or_else(|e| e.into_inner());
    let now = LEN.load(Ordering::Acquire);
    if let Some(id) = find(packed, now) {
        return Some(id);
    }
    let next = now + 1;
    if next >= SLOTS.len() {
        return None;
    }
    SLOTS[next].store(packed, Ordering::Release);
    LEN.store(next, Ordering::Release);
    Some(next as u64)
}

/// The tag an id stands for. Ids come only from `id_of`, so the slot is filled.
#[inline]
fn tag_at(id: u64) -> Tag {
    unpack(SLOTS[id as usize & (SLOTS.len() - 1)].load(Ordering::Acquire))
}

/// The int `n`, too wide to be inline, in a box labelled with the tag whose id is `id`.
#[cold]
#[inline(never)]
pub(crate) fn wide_int(n: i64, id: u64) -> Value {
    crate::labels::label::boxed(Value::Int(n), tag_at(id))
}

/// The id of the join of two ids' tags: the same id when they are equal (a compare, no lookup).
#[inline(always)]
pub fn join_ids(a: u64, b: u64) -> Option<u64> {
    if a == b {
        return Some(a);
    }
    join_distinct(a, b)
}

/// The last join of two different ids, `a | b << 12 | joined << 24` (0: none yet). A loop
/// mixing two secrets joins the same pair on every step; one entry saves the table scan.
static LAST_JOIN: AtomicU64 = AtomicU64::new(0);

#[cold]
#[inline(never)]
fn join_distinct(a: u64, b: u64) -> Option<u64> {
    let key = a | b << ID_BITS;
    let last = LAST_JOIN.load(Ordering::Relaxed);
    if last != 0 && last & ((1 << (2 * ID_BITS)) - 1) == key {
        return Some(last >> (2 * ID_BITS));
    }
    let joined = id_of(tag_at(a).join(tag_at(b)))?;
    // Ids never change meaning (the table only grows), so a stale entry is still right.
    LAST_JOIN.store(key | joined << (2 * ID_BITS), Ordering::Relaxed);
    Some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_and_bools_round_trip_with_their_label() {
        let t = Tag::classified(crate::labels::label::origin("label_small test"));
        for n in [0, 1, -1, 42, (1 << 50) - 1, -(1 << 50)] {
            let s = Small::new(&Value::Int(n), t).expect("fits");
            assert!(matches!(s.plain(), Value::Int(m) if m == n));
            assert_eq!((s.int(), s.tag()), (Some(n), t));
        }
        let b = Small::new(&Value::Bool(true), t).expect("fits");
        assert!(matches!(b.plain(), Value::Bool(true)));
        assert_eq!((b.int(), b.tag()), (None, t));
    }

    #[test]
    fn what_does_not_fit_is_refused() {
        let t = Tag::classified(crate::labels::label::origin("label_small test"));
        assert!(Small::new(&Value::Int(1 << 50), t).is_none());
        assert!(Small::new(&Value::Int(i64::MIN), t).is_none());
        assert!(Small::new(&Value::Float(1.0), t).is_none());
        let released = Tag { release: 7, ..t };
        assert!(Small::new(&Value::Int(1), released).is_none());
    }

    #[test]
    fn adding_on_the_packed_word_keeps_the_label_and_refuses_what_does_not_fit() {
        let t = Tag::classified(crate::labels::label::origin("label_small add"));
        let s = Small::new(&Value::Int(40), t).expect("fits");
        let up = s.add_int(2, false).expect("adds");
        let down = s.add_int(-45, true).expect("subtracts");
        assert_eq!((up.int(), up.tag()), (Some(42), t));
        assert_eq!((down.int(), down.tag()), (Some(85), t));
        let top = Small::new(&Value::Int((1 << 50) - 1), t).expect("fits");
        assert!(top.add_int(1, false).is_none(), "past 51 bits");
        assert!(
            s.add_int(1 << 55, false).is_none(),
            "an operand past 51 bits"
        );
        let b = Small::new(&Value::Bool(true), t).expect("fits");
        assert!(b.add_int(1, false).is_none(), "a bool is not added here");
    }

    #[test]
    fn equal_tags_share_an_id_and_joins_keep_both_labels() {
        let a = Tag::classified(crate::labels::label::origin("label_small a"));
        let b = Tag::unverified(crate::labels::label::origin("label_small b"));
        assert_eq!(id_of(a), id_of(a));
        let (ia, ib) = (id_of(a).expect("a"), id_of(b).expect("b"));
        assert_ne!(ia, ib);
        let j = tag_at(join_ids(ia, ib).expect("joined"));
        assert_eq!(j, a.join(b));
        // Asked again (the memo) and the other way round (a join is not symmetric in origins).
        assert_eq!(tag_at(join_ids(ia, ib).expect("joined")), a.join(b));
        assert_eq!(tag_at(join_ids(ib, ia).expect("joined")), b.join(a));
    }
}
