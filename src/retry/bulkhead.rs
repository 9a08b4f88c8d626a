//! [`Bulkhead`]: a cap on the calls in flight to one upstream (domain.md §6), so that a slow or
//! failing service cannot take every thread, task and connection of its callers with it.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A counting semaphore on the attempts in flight to one upstream. An attempt takes a permit
/// before it is sent and gives it back when its answer is in (not during the wait before a
/// retry). When every permit is out, the attempt waits in a brief queue if the bulkhead has one
/// ([`Bulkhead::queue`], at most 1 s, never past the deadline); beyond it, the attempt is not
/// sent: the retry stops with [`StopReason::BulkheadFull`](super::StopReason::BulkheadFull), and
/// the fallback answers if there is one.
///
/// The queue is brief on purpose: waiting long for a permit in front of an upstream that is slow
/// adds its latency to every caller, which is what the bulkhead is there to stop. The waiting
/// attempt checks for a free permit every millisecond on the retry's clock (no order between
/// waiters).
///
/// Lock-free and `const`-constructible, for a `static` shared by every function that calls the
/// upstream (`#[retryable(bulkhead = NAME)]`), or made per upstream by `max_concurrent = N`
/// ([`shared_bulkhead`](super::shared_bulkhead)). By hand:
///
/// ```
/// use retry_audit::retry::Bulkhead;
///
/// static SEARCH: Bulkhead = Bulkhead::new(2);
///
/// let first = SEARCH.try_acquire().expect("a permit");
/// let second = SEARCH.try_acquire().expect("a permit");
/// assert!(SEARCH.try_acquire().is_none(), "full");
/// drop(first);
/// assert_eq!(SEARCH.in_flight(), 1);
/// assert!(SEARCH.try_acquire().is_some());
/// # drop(second);
/// ```
#[derive(Debug)]
pub struct Bulkhead {
    limit: AtomicU32,
    in_flight: AtomicU32,
    queue: Duration,
}

impl Bulkhead {
    /// The largest limit.
    pub const MAX_CONCURRENT: u32 = 1_000_000;
    /// The longest queue.
    pub const MAX_QUEUE: Duration = Duration::from_secs(1);
    /// How often a queued attempt looks for a free permit.
    pub const QUEUE_STEP: Duration = Duration::from_millis(1);

    /// A bulkhead of `max_concurrent` permits (1..=1 000 000; 20 is a common choice for one HTTP
    /// upstream).
    ///
    /// # Panics
    /// When `max_concurrent` is 0 or more than [`Bulkhead::MAX_CONCURRENT`].
    #[must_use]
    pub const fn new(max_concurrent: u32) -> Self {
        assert!(
            max_concurrent >= 1 && max_concurrent <= Self::MAX_CONCURRENT,
            "Bulkhead::new: max_concurrent must be 1..=1000000"
        );
        Bulkhead {
            limit: AtomicU32::new(max_concurrent),
            in_flight: AtomicU32::new(0),
            queue: Duration::ZERO,
        }
    }

    /// The longest an attempt waits for a permit when all are out (none by default; at most
    /// [`Bulkhead::MAX_QUEUE`]).
    ///
    /// # Panics
    /// When `max_wait` is longer than [`Bulkhead::MAX_QUEUE`].
    #[must_use]
    pub const fn queue(mut self, max_wait: Duration) -> Self {
        assert!(
            max_wait.as_millis() <= Self::MAX_QUEUE.as_millis(),
            "Bulkhead::queue: a bulkhead's queue is brief: at most 1 s"
        );
        self.queue = max_wait;
        self
    }

    /// How long an attempt may wait for a permit.
    #[must_use]
    pub const fn max_wait(&self) -> Duration {
        self.queue
    }

    /// A permit, if one is free. It is given back when dropped.
    pub fn try_acquire(&self) -> Option<BulkheadPermit<'_>> {
        let limit = self.limit.load(Ordering::Relaxed);
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| BulkheadPermit { bulkhead: self })
    }

    /// The permits out now.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Acquire)
    }

    /// The limit.
    #[must_use]
    pub fn max_concurrent(&self) -> u32 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Lowers the limit to `limit` if it is higher (permits already out stay out).
    pub(crate) fn lower_limit(&self, limit: u32) {
        self.limit.fetch_min(limit.max(1), Ordering::Relaxed);
    }
}

/// A permit of a [`Bulkhead`]: one call in flight. Dropping it gives the permit back (also when
/// the call panics or its future is dropped).
#[must_use = "the permit is given back as soon as it is dropped"]
pub struct BulkheadPermit<'a> {
    bulkhead: &'a Bulkhead,
}

impl fmt::Debug for BulkheadPermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkheadPermit").finish_non_exhaustive()
    }
}

impl Drop for BulkheadPermit<'_> {
    fn drop(&mut self) {
        self.bulkhead.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_more_than_the_limit_across_threads() {
        static BULKHEAD: Bulkhead = Bulkhead::new(3);
        static PEAK: AtomicU32 = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        if let Some(_permit) = BULKHEAD.try_acquire() {
                            PEAK.fetch_max(BULKHEAD.in_flight(), Ordering::SeqCst);
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        assert!(PEAK.load(Ordering::SeqCst) <= 3);
        assert_eq!(BULKHEAD.in_flight(), 0, "every permit given back");
    }

    #[test]
    #[should_panic(expected = "max_concurrent must be 1..=1000000")]
    fn zero_is_rejected() {
        let _ = Bulkhead::new(0);
    }
}
