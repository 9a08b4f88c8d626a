//! [`RetryBudget`]: one token bucket shared by every call to a service, so that an outage does not
//! multiply the traffic sent to it (domain.md §3). Two designs: the retry ratio with a floor that
//! `#[retryable]` uses by default ([`RetryBudget::standard`]), and gRPC retry throttling
//! ([`RetryBudget::new`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Tokens are counted in thousandths so that a fractional refund or deposit stays an integer.
const MILLI: u64 = 1000;
/// A ratio budget keeps the time of its last refill in the low 40 bits of its state (in
/// milliseconds since its first use: 34 years) and its tokens in the high 24 bits.
const TIME_BITS: u32 = 40;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
/// A ratio budget banks at most this many seconds of its floor.
const WINDOW_SECS: u64 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Design {
    /// gRPC retry throttling, in thousandths of a token.
    Throttle { capacity: u64, refund: u64 },
    /// A retry ratio with a floor, in thousandths of a token: `deposit` per first attempt, one
    /// token per retry, `floor` tokens per second (= thousandths per millisecond), at most
    /// `capacity`.
    Ratio {
        deposit: u64,
        floor: u64,
        capacity: u64,
    },
}

/// A retry budget shared across threads and tasks. A budget never refuses a first attempt: only
/// retries. A refused retry is not sent, costs nothing and is not counted as an attempt.
///
/// # The default: a ratio with a floor ([`RetryBudget::standard`], [`RetryBudget::ratio`])
///
/// Finagle's and tower's design, and reqwest's default (20 % of requests), as a token bucket:
///
/// - every call's first attempt deposits `percent` % of a token (20 %: one retry per five calls);
/// - every retry takes one whole token, and is refused when less than one is left;
/// - the bucket also refills by `min_per_sec` tokens per second (the floor, 10 by default), so
///   that a quiet client, whose few calls deposit little, can still retry;
/// - it holds at most 10 seconds of the floor (100 tokens by default), and starts full.
///
/// In steady state retries add at most `percent` % to the load plus the floor, whatever the
/// traffic; in an outage the first ~100 retries go out, then only what the ratio and the floor
/// allow. Time is read from the retry's own clock (a virtual one in tests).
///
/// `#[retryable]` draws from one such budget per upstream by default: one per module path, or
/// per `budget_key = "..."` ([`shared_budget`](super::shared_budget)); `budget = none` turns it
/// off.
///
/// # gRPC retry throttling ([`RetryBudget::new`])
///
/// - The bucket starts full, at `max_tokens`.
/// - Every failed attempt whose error is transient (or ambiguous) costs one token.
/// - Every success refunds `token_ratio` of a token (0.1 by default), up to `max_tokens`.
/// - A **retry** is refused while the bucket holds `max_tokens / 2` or fewer tokens.
///
/// It is charged by *failures*, whoever sends them, so it reacts to an outage seen by many callers
/// at once, after at most `max_tokens / 2` failures, and recovers only after real successes: while
/// the service stays down only first attempts go out. (The AWS quota — 500 tokens, a retry costs
/// 5, a timeout retry 10, a success refunds 1 — only charges retries, so a burst of first attempts
/// drains nothing, and its budget depends on the traffic mix.)
///
/// Both designs are lock-free, one [`AtomicU64`] updated with compare-and-swap, and
/// `const`-constructible for a `static`:
///
/// ```
/// use std::time::Instant;
/// use retry_audit::retry::RetryBudget;
///
/// // Retries up to 20 % of calls, plus 10 per second.
/// static SEARCH_API: RetryBudget = RetryBudget::standard();
/// // 100 tokens: retries stop after ~50 failures in a row, and come back after
/// // 50 / 0.1 = 500 successes.
/// static PAYMENTS_API: RetryBudget = RetryBudget::new(100);
///
/// assert!(SEARCH_API.try_retry(Instant::now()));
/// assert!(PAYMENTS_API.allows_retry());
/// ```
#[derive(Debug)]
pub struct RetryBudget {
    design: Design,
    /// Throttle: the tokens. Ratio: the tokens (high bits) and the time of the last refill.
    state: AtomicU64,
    /// Ratio: the instant its clock counts from (its first use).
    origin: OnceLock<Instant>,
}

const fn pack(tokens: u64, time_ms: u64) -> u64 {
    (tokens << TIME_BITS) | (time_ms & TIME_MASK)
}

const fn unpack(state: u64) -> (u64, u64) {
    (state >> TIME_BITS, state & TIME_MASK)
}

impl RetryBudget {
    /// The largest `max_tokens` of a throttling budget (gRPC's limit).
    pub const MAX_TOKENS: u32 = 1000;
    /// The default retry ratio, in percent of calls.
    pub const DEFAULT_PERCENT: u32 = 20;
    /// The default floor, in retries per second.
    pub const DEFAULT_PER_SECOND: u32 = 10;

    /// A full bucket of `max_tokens` (1..=1000) with gRPC retry throttling and its default refund
    /// of 0.1 token per success.
    ///
    /// # Panics
    /// When `max_tokens` is 0 or over 1000 (at compile time for a `static`).
    #[must_use]
    pub const fn new(max_tokens: u32) -> Self {
        assert!(
            max_tokens >= 1 && max_tokens <= Self::MAX_TOKENS,
            "RetryBudget::new: max_tokens must be 1..=1000"
        );
        let capacity = max_tokens as u64 * MILLI;
        RetryBudget {
            design: Design::Throttle {
                capacity,
                refund: MILLI / 10,
            },
            state: AtomicU64::new(capacity),
            origin: OnceLock::new(),
        }
    }

    /// A ratio budget: retries up to `percent` % of the calls (1..=1000: 20 is one retry per five
    /// calls, 200 two retries per call), plus `min_per_sec` retries per second (1..=1000) however
    /// few the calls, with at most 10 seconds of that floor banked. Starts full.
    ///
    /// # Panics
    /// When `percent` or `min_per_sec` is 0 or over 1000.
    #[must_use]
    pub const fn ratio(percent: u32, min_per_sec: u32) -> Self {
        assert!(
            percent >= 1 && percent <= 1000,
            "RetryBudget::ratio: percent must be 1..=1000"
        );
        assert!(
            min_per_sec >= 1 && min_per_sec <= 1000,
            "RetryBudget::ratio: min_per_sec must be 1..=1000"
        );
        let capacity = min_per_sec as u64 * WINDOW_SECS * MILLI;
        RetryBudget {
            design: Design::Ratio {
                deposit: percent as u64 * MILLI / 100,
                floor: min_per_sec as u64,
                capacity,
            },
            state: AtomicU64::new(pack(capacity, 0)),
            origin: OnceLock::new(),
        }
    }

    /// The default budget of an upstream: [`RetryBudget::ratio`]`(20, 10)`, retries up to 20 %
    /// of the calls plus 10 per second (Finagle's defaults; reqwest's and tower's 20 %).
    #[must_use]
    pub const fn standard() -> Self {
        Self::ratio(Self::DEFAULT_PERCENT, Self::DEFAULT_PER_SECOND)
    }

    /// Sets the refund per success of a throttling budget, in thousandths of a token (gRPC's
    /// `tokenRatio` × 1000): 100 is 0.1 token, 1000 is one token.
    ///
    /// # Panics
    /// When `milli` is 0 (the budget would never recover) or over 1000, or on a ratio budget.
    #[must_use]
    pub const fn with_token_ratio_milli(mut self, milli: u32) -> Self {
        assert!(
            milli >= 1 && milli as u64 <= MILLI,
            "RetryBudget::with_token_ratio_milli: the refund must be 1..=1000 thousandths of a token"
        );
        let Design::Throttle { capacity, .. } = self.design else {
            panic!("RetryBudget::with_token_ratio_milli: only a throttling budget (RetryBudget::new) has a refund");
        };
        self.design = Design::Throttle {
            capacity,
            refund: milli as u64,
        };
        self
    }

    /// Whether this is a ratio budget ([`RetryBudget::ratio`], [`RetryBudget::standard`]).
    #[must_use]
    pub const fn is_ratio(&self) -> bool {
        matches!(self.design, Design::Ratio { .. })
    }

    /// Milliseconds since the budget's first use, on the caller's clock.
    fn millis(&self, now: Instant) -> u64 {
        let origin = *self.origin.get_or_init(|| now);
        u64::try_from(now.saturating_duration_since(origin).as_millis())
            .unwrap_or(TIME_MASK)
            .min(TIME_MASK)
    }

    /// A ratio budget's tokens at `now_ms`, the floor's refill since its last update included.
    fn refilled(state: u64, now_ms: u64, floor: u64, capacity: u64) -> (u64, u64) {
        let (tokens, then) = unpack(state);
        let elapsed = now_ms.saturating_sub(then);
        let tokens = tokens
            .saturating_add(elapsed.saturating_mul(floor))
            .min(capacity);
        (tokens, now_ms.max(then))
    }

    /// Records that a call's first attempt goes out at `now`: a ratio budget takes its deposit
    /// (a throttling budget ignores it).
    pub fn record_request(&self, now: Instant) {
        let Design::Ratio {
            deposit,
            floor,
            capacity,
        } = self.design
        else {
            return;
        };
        // A full bucket (the usual state) is left as it is, without a write: every call would
        // otherwise take the shared cache line for itself, on every core that calls the service.
        if unpack(self.state.load(Ordering::Relaxed)).0 >= capacity {
            return;
        }
        let now_ms = self.millis(now);
        let _ = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                let (tokens, time) = Self::refilled(state, now_ms, floor, capacity);
                Some(pack((tokens + deposit).min(capacity), time))
            });
    }

    /// Takes one retry from the budget at `now`, if it allows one. The runtime calls it once per
    /// retry, after the wait is known and before it is slept.
    ///
    /// A ratio budget takes a token (after the floor's refill up to `now`); a throttling budget
    /// answers [`RetryBudget::allows_retry`] (its failures were charged already).
    pub fn try_retry(&self, now: Instant) -> bool {
        match self.design {
            Design::Throttle { .. } => self.allows_retry(),
            Design::Ratio {
                floor, capacity, ..
            } => {
                let now_ms = self.millis(now);
                self.state
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                        let (tokens, time) = Self::refilled(state, now_ms, floor, capacity);
                        (tokens >= MILLI).then(|| pack(tokens - MILLI, time))
                    })
                    .is_ok()
            }
        }
    }

    /// Whether a retry may be sent now. Throttling: more than half the tokens are left. Ratio: at
    /// least one token is left, not counting the floor's refill since the last retry.
    #[must_use]
    pub fn allows_retry(&self) -> bool {
        let state = self.state.load(Ordering::Relaxed);
        match self.design {
            Design::Throttle { capacity, .. } => state > capacity / 2,
            Design::Ratio { .. } => unpack(state).0 >= MILLI,
        }
    }

    /// Records a failed attempt with a transient or ambiguous error: one token less (throttling;
    /// a ratio budget is charged by retries instead).
    pub fn record_failure(&self) {
        if !matches!(self.design, Design::Throttle { .. }) {
            return;
        }
        // `fetch_update` is a compare-and-swap loop; the closure always returns `Some`.
        let _ = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |tokens| {
                Some(tokens.saturating_sub(MILLI))
            });
    }

    /// Records a success: `token_ratio` of a token back, up to the maximum (throttling; a ratio
    /// budget is refilled by calls and by time instead).
    pub fn record_success(&self) {
        let Design::Throttle { capacity, refund } = self.design else {
            return;
        };
        // A full bucket (the usual state) is left as it is, without a write.
        let _ = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |tokens| {
                (tokens < capacity).then(|| (tokens + refund).min(capacity))
            });
    }

    /// The whole tokens left (rounded down; for a ratio budget, as of its last update).
    #[must_use]
    pub fn tokens(&self) -> u32 {
        let state = self.state.load(Ordering::Relaxed);
        let milli = match self.design {
            Design::Throttle { .. } => state,
            Design::Ratio { .. } => unpack(state).0,
        };
        u32::try_from(milli / MILLI).unwrap_or(u32::MAX)
    }

    /// The capacity, in tokens.
    #[must_use]
    pub const fn max_tokens(&self) -> u32 {
        let capacity = match self.design {
            Design::Throttle { capacity, .. } | Design::Ratio { capacity, .. } => capacity,
        };
        (capacity / MILLI) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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

    #[test]
    fn a_ratio_budget_banks_ten_seconds_of_its_floor_and_refills_with_time() {
        let budget = RetryBudget::ratio(20, 10);
        let t0 = Instant::now();
        assert_eq!(budget.max_tokens(), 100);
        let granted = (0..200).filter(|_| budget.try_retry(t0)).count();
        assert_eq!(granted, 100, "the bank, no more");
        assert!(!budget.try_retry(t0));
        // 100 ms of the floor (10/s) is one token.
        assert!(!budget.try_retry(t0 + Duration::from_millis(99)));
        assert!(budget.try_retry(t0 + Duration::from_millis(100)));
        assert!(!budget.try_retry(t0 + Duration::from_millis(100)));
        // Five calls deposit one token (20 %).
        for _ in 0..5 {
            budget.record_request(t0 + Duration::from_millis(100));
        }
        assert!(budget.try_retry(t0 + Duration::from_millis(100)));
        assert!(!budget.try_retry(t0 + Duration::from_millis(100)));
        // An hour later it is full again, not more.
        let later = t0 + Duration::from_secs(3600);
        assert_eq!((0..200).filter(|_| budget.try_retry(later)).count(), 100);
    }

    #[test]
    fn a_clock_that_goes_back_refills_nothing() {
        let budget = RetryBudget::ratio(20, 1);
        let before = Instant::now();
        let t0 = before + Duration::from_secs(60);
        while budget.try_retry(t0) {}
        assert!(!budget.try_retry(before));
        assert!(!budget.try_retry(t0 + Duration::from_millis(999)));
        assert!(budget.try_retry(t0 + Duration::from_secs(1)));
    }

    #[test]
    #[should_panic(expected = "only a throttling budget")]
    fn a_ratio_budget_has_no_refund() {
        let _ = RetryBudget::standard().with_token_ratio_milli(500);
    }
}
