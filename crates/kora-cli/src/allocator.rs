//! The process allocator: mimalloc, entered through its plain calls whenever the requested alignment allows.
//!
//! The `mimalloc` crate's allocator passes every request to `mi_malloc_aligned`, whose
//! alignment checks and page probe cost about twice the plain `mi_malloc` fast path. Rust
//! asks for alignment 1 (strings) or 8 (`Rc`s, vectors of values) almost always, and
//! mimalloc aligns every block to at least a machine word (its own `mi_realloc_aligned`
//! takes the plain path for those alignments for the same reason), so only larger
//! alignments need the aligned entry points. On the string benchmark the aligned path was
//! a tenth of the instructions.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Every mimalloc block is aligned to at least this (`MI_INTPTR_SIZE`).
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

pub struct Mimalloc;

// SAFETY: each method forwards to the mimalloc call with the same contract: blocks of at
// least `size` bytes aligned to `layout.align()` (plain calls only when mimalloc's word
// alignment already satisfies it), freed by `mi_free` whatever call made them.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded under the same contract (see the impl).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded under the same contract (see the impl).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from one of the calls above, all of which `mi_free` frees.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded under the same contract (see the impl).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_meet_every_alignment_asked() {
        let a = Mimalloc;
        for align in [1, 2, 8, 16, 64, 4096] {
            for size in [1, 7, 8, 24, 100, 5000] {
                let layout = Layout::from_size_align(size, align).expect("valid layout");
                // SAFETY: a non-zero size; the block is freed with the layout it was made with.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    p.write_bytes(0xab, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc size {size} align {align}");
                    assert_eq!(*q.add(size - 1), 0xab);
                    a.dealloc(q, Layout::from_size_align(size * 3, align).expect("valid"));
                    let z = a.alloc_zeroed(layout);
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
