//! Running independent fetches side by side, at most `LIMIT` at a time: a fetch waits on the
//! network, not the CPU, so more run at once than there are cores, but a graph of hundreds of
//! packages does not start hundreds of `git` processes together.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many fetches run at once.
pub const LIMIT: usize = 8;

/// `work` applied to every item, `LIMIT` at a time, answers in the items' order; `None` for an
/// item whose work panicked (the others still run).
pub fn each<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..LIMIT.min(items.len()))
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else {
                        break;
                    };
                    let r = work(item);
                    if let Ok(mut out) = out.lock() {
                        out[i] = Some(r);
                    }
                })
            })
            .collect();
        // A worker that panicked took one item with it; joining here keeps the panic from
        // ending the scope, and the item's answer stays `None`.
        for w in workers {
            let _ = w.join();
        }
    });
    out.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_their_order_and_a_panic_costs_one_item() {
        let items: Vec<usize> = (0..50).collect();
        let got = each(&items, |&i| {
            assert!(i != 7, "item 7 fails");
            i * 2
        });
        assert_eq!(got.len(), 50);
        assert_eq!(got[7], None);
        for (i, g) in got.iter().enumerate().filter(|(i, _)| *i != 7) {
            assert_eq!(*g, Some(i * 2));
        }
        let busiest = AtomicUsize::new(0);
        let now = AtomicUsize::new(0);
        each(&items, |_| {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            busiest.fetch_max(n, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(2));
            now.fetch_sub(1, Ordering::SeqCst);
        });
        assert!(busiest.load(Ordering::SeqCst) <= LIMIT);
    }
}
