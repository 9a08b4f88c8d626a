//! [`RetryBudget`]: one token bucket shared by every call to a service, so that an outage does not
//! multiply the traffic sent to it (domain.md §3).

use std::sync::atomic::{AtomicU32, Ordering};

/// Tokens are counted in thousandths so that a fractional refund (gRPC's `tokenRatio`, 0.1 by
/// default) stays an integer.
const MILLI: u32 = 1000;

/// A retry budget shared across threads and tasks: the gRPC retry-throttling design (gRFC A6).
///
/// - The bucket starts full, at `max_tokens`.
/// - Every failed attempt whose error is transient (or ambiguous) costs one token.
/// - Every success refunds `token_ratio` of a token (0.1 by default), up to `max_tokens`.
/// - A **retry** is refused while the bucket holds `max_tokens / 2` or fewer tokens. The first
///   attempt of a call is never refused: only retries are.
///
/// **Why this design and not the AWS quota** (500 tokens, a retry costs 5, a timeout retry 10, a
/// success refunds 1): the gRPC bucket is charged by *failures*, whoever sends them, so it reacts
/// to an outage seen by many callers at once, after at most `max_tokens / 2` failures, whatever the
/// mix of first attempts and retries; and it recovers only after real successes, so while the
/// service stays down only first attempts go out (at most one request per call, never a storm).
/// The AWS quota only charges retries, so a burst of first attempts drains nothing, and its
/// refund of 1 per success against a cost of 5 makes the budget depend on the traffic mix. Both
/// are a single atomic counter; the gRPC one needs no per-error cost table.
///
/// Lock-free: one [`AtomicU32`] updated with compare-and-swap; `const`-constructible for a
/// `static`:
///
/// ```
/// use retry_audit::retry::RetryBudget;
///
/// // 100 tokens: retries stop after ~50 failures in a row, and come back after
/// // 50 / 0.1 = 500 successes.
/// static PAYMENTS_API: RetryBudget = RetryBudget::new(100);
/// // A faster recovery: each success refunds half a token.
/// static SEARCH_API: RetryBudget = RetryBudget::new(20).with_token_ratio_milli(500);
///
/// assert!(PAYMENTS_API.allows_retry());
/// assert_eq!(SEARCH_API.tokens(), 20);
/// ```
#[derive(Debug)]
pub struct RetryBudget {
    // All three in thousandths of a token.
    capacity: u32,
    refund: u32,
    tokens_left: AtomicU32,
}

impl RetryBudget {
    /// The largest `max_tokens` (gRPC's limit).
    pub const MAX_TOKENS: u32 = 1000;

    /// A full bucket of `max_tokens` (1..=1000) with the gRPC default refund of 0.1 token per
    /// success.
    ///
    /// # Panics
    /// When `max_tokens` is 0 or over 1000 (at compile time for a `static`).
    #[must_use]
    pub const fn new(max_tokens: u32) -> Self {
        assert!(
            max_tokens >= 1 && max_tokens <= Self::MAX_TOKENS,
            "RetryBudget::new: max_tokens must be 1..=1000"
        );
        RetryBudget {
            capacity: max_tokens * MILLI,
            refund: MILLI / 10,
            tokens_left: AtomicU32::new(max_tokens * MILLI),
        }
    }

    /// Sets the refund per success, in thousandths of a token (gRPC's `tokenRatio` × 1000):
    /// 100 is 0.1 token, 1000 is one token.
    ///
    /// # Panics
    /// When `milli` is 0 (the budget would never recover) or over 1000.
    #[must_use]
    pub const fn with_token_ratio_milli(mut self, milli: u32) -> Self {
        assert!(
            milli >= 1 && milli <= MILLI,
            "RetryBudget::with_token_ratio_milli: the refund must be 1..=1000 thousandths of a token"
        );
        self.refund = milli;
        self
    }

    /// Whether a retry may be sent now: more than half the tokens are left.
    #[must_use]
    pub fn allows_retry(&self) -> bool {
        self.tokens_left.load(Ordering::Relaxed) > self.capacity / 2
    }

    /// Records a failed attempt with a transient or ambiguous error: one token less.
    pub fn record_failure(&self) {
        // `fetch_update` is a compare-and-swap loop; the closure always returns `Some`.
        let _ = self
            .tokens_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |tokens| {
                Some(tokens.saturating_sub(MILLI))
            });
    }

    /// Records a success: `token_ratio` of a token back, up to the maximum.
    pub fn record_success(&self) {
        // A full bucket (the usual state) is left as it is, without a write: every success would
        // otherwise take the shared cache line for itself, on every core that calls the service.
        let _ = self
            .tokens_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |tokens| {
                (tokens < self.capacity).then(|| (tokens + self.refund).min(self.capacity))
            });
    }

    /// The whole tokens left (rounded down).
    #[must_use]
    pub fn tokens(&self) -> u32 {
        self.tokens_left.load(Ordering::Relaxed) / MILLI
    }

    /// The capacity, in tokens.
    #[must_use]
    pub const fn max_tokens(&self) -> u32 {
        self.capacity / MILLI
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_at_half_and_recovers_with_successes() {
        let budget = RetryBudget::new(10);
        for _ in 0..4 {
            budget.record_failure();
        }
        assert_eq!(budget.tokens(), 6);
        assert!(budget.allows_retry());
        budget.record_failure();
        assert_eq!(budget.tokens(), 5);
        assert!(!budget.allows_retry(), "5 of 10 is not more than half");
        budget.record_success();
        assert!(budget.allows_retry(), "5.1 is more than half");
    }

    #[test]
    fn never_below_zero_nor_above_max() {
        let budget = RetryBudget::new(2).with_token_ratio_milli(1000);
        for _ in 0..10 {
            budget.record_failure();
        }
        assert_eq!(budget.tokens(), 0);
        for _ in 0..10 {
            budget.record_success();
        }
        assert_eq!(budget.tokens(), 2);
    }

    #[test]
    fn shared_across_threads() {
        static BUDGET: RetryBudget = RetryBudget::new(1000);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100 {
                        BUDGET.record_failure();
                    }
                });
            }
        });
        assert_eq!(BUDGET.tokens(), 600);
    }

    #[test]
    #[should_panic(expected = "max_tokens must be 1..=1000")]
    fn zero_tokens_is_rejected() {
        let _ = RetryBudget::new(0);
    }
}
