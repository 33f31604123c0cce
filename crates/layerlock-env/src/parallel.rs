//! Spreading independent file work (one distribution's metadata, one
//! file's sha256) over the machine's cores, with results in input order so
//! that reports do not depend on which thread finished first.

use std::sync::atomic::{AtomicUsize, Ordering};

/// More threads than this only add contention on the directory cache.
const MAX_THREADS: usize = 16;

/// Items a thread claims at a time: one counter update per claim.
const CLAIM: usize = 8;

/// How many threads `len` items are given.
fn threads(len: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    cores.min(MAX_THREADS).min(len.div_ceil(CLAIM)).max(1)
}

/// `f` over `items`, each thread with its own `state` (a read buffer), the
/// results in the order of `items`.
pub(crate) fn map<T, S, R>(
    items: &[T],
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let threads = threads(items.len());
    if threads == 1 {
        let mut state = state();
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut state = state();
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(CLAIM, Ordering::Relaxed);
            if start >= items.len() {
                return done;
            }
            let end = (start + CLAIM).min(items.len());
            for (offset, item) in items[start..end].iter().enumerate() {
                done.push((start + offset, f(&mut state, item)));
            }
        }
    };
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut parts = vec![work()];
        for helper in helpers {
            match helper.join() {
                Ok(part) => parts.push(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (index, result) in parts.into_iter().flatten() {
        slots[index] = Some(result);
    }
    slots
        .into_iter()
        .map(|slot| slot.expect("every index below items.len() is claimed exactly once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_input_order_whatever_thread_made_them() {
        let items: Vec<u64> = (0..10_000).collect();
        let out = map(
            &items,
            || 0u64,
            |calls, &i| {
                *calls += 1;
                // Uneven work, so threads finish out of step.
                (0..(i % 97) * 50).fold(i, |a, b| a.wrapping_mul(31).wrapping_add(b)) ^ i
            },
        );
        let expected: Vec<u64> = items
            .iter()
            .map(|&i| (0..(i % 97) * 50).fold(i, |a, b| a.wrapping_mul(31).wrapping_add(b)) ^ i)
            .collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn no_items_and_one_item() {
        let none: Vec<u8> = Vec::new();
        assert!(map(&none, || (), |(), x| *x).is_empty());
        assert_eq!(map(&[7u8], || (), |(), x| *x + 1), vec![8]);
    }
}
