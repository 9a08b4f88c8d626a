//! [`Policy`]: the bounds of one retried operation. `#[retryable]` builds one as a `const` from its
//! arguments (after checking them at compile time); hand-written code builds one the same way.

use std::time::Duration;

/// How the backoff delay is randomised (domain.md §2). There is no "none": clients that failed
/// together would retry together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Jitter {
    /// `random(0, min(cap, base * 2^n))` before retry `n` (n = 0 for the first retry).
    #[default]
    Full,
    /// `min(cap, random(base, previous * 3))`, starting from `previous = base` (AWS's
    /// "decorrelated jitter").
    Decorrelated,
}

/// The bounds of one retried operation: attempts, overall deadline, backoff, and which failures may
/// be resent.
///
/// Every field has a compliant default (3 attempts, 10 s deadline, full jitter from 100 ms capped at
/// 5 s); the builder methods are `const` and check their argument, so a `const` policy with a bad
/// value does not compile:
///
/// ```
/// use std::time::Duration;
/// use retry_audit::retry::{Jitter, Policy};
///
/// const SEARCH: Policy = Policy::new()
///     .attempts(4)
///     .deadline(Duration::from_secs(8))
///     .backoff(Duration::from_millis(200), Duration::from_secs(2))
///     .jitter(Jitter::Decorrelated);
/// assert_eq!(SEARCH.max_attempts(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    attempts: u32,
    deadline: Duration,
    base: Duration,
    cap: Duration,
    jitter: Jitter,
    attempt_timeout: Option<Duration>,
    idempotent: bool,
    retry_on: Option<&'static [u16]>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new()
    }
}

const fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

impl Policy {
    /// The most attempts a policy allows (first attempt included). gRPC caps at 5; more than 10
    /// only multiplies the load on a service that is already failing.
    pub const MAX_ATTEMPTS: u32 = 10;
    /// The longest overall deadline: past an hour, a retry loop is a job queue in disguise.
    pub const MAX_DEADLINE: Duration = Duration::from_secs(3600);
    /// The longest backoff cap.
    pub const MAX_CAP: Duration = Duration::from_secs(300);

    /// The default policy: 3 attempts, a 10 s deadline, full jitter from 100 ms capped at 5 s,
    /// ambiguous failures not resent.
    #[must_use]
    pub const fn new() -> Self {
        Policy {
            attempts: 3,
            deadline: Duration::from_secs(10),
            base: Duration::from_millis(100),
            cap: Duration::from_secs(5),
            jitter: Jitter::Full,
            attempt_timeout: None,
            idempotent: false,
            retry_on: None,
        }
    }

    /// The number of attempts in total, the first one included (1..=10).
    ///
    /// # Panics
    /// When `attempts` is 0 or more than [`Policy::MAX_ATTEMPTS`].
    #[must_use]
    pub const fn attempts(mut self, attempts: u32) -> Self {
        assert!(
            attempts >= 1 && attempts <= Self::MAX_ATTEMPTS,
            "Policy::attempts must be 1..=10"
        );
        self.attempts = attempts;
        self
    }

    /// The overall deadline, measured from the start of the first attempt: no wait ends past it.
    ///
    /// # Panics
    /// When `deadline` is zero or longer than [`Policy::MAX_DEADLINE`].
    #[must_use]
    pub const fn deadline(mut self, deadline: Duration) -> Self {
        assert!(
            !deadline.is_zero() && nanos(deadline) <= nanos(Self::MAX_DEADLINE),
            "Policy::deadline must be more than 0 and at most 1 hour"
        );
        self.deadline = deadline;
        self
    }

    /// The backoff: `base` is the ceiling of the first wait, doubled at each retry up to `cap`.
    ///
    /// # Panics
    /// When `base` is zero (a retry without a wait is the worst storm amplifier), `cap < base`,
    /// or `cap` is longer than [`Policy::MAX_CAP`].
    #[must_use]
    pub const fn backoff(mut self, base: Duration, cap: Duration) -> Self {
        assert!(!base.is_zero(), "Policy::backoff: base must be more than 0");
        assert!(
            nanos(cap) >= nanos(base),
            "Policy::backoff: cap must be at least base"
        );
        assert!(
            nanos(cap) <= nanos(Self::MAX_CAP),
            "Policy::backoff: cap must be at most 5 minutes"
        );
        self.base = base;
        self.cap = cap;
        self
    }

    /// The jitter strategy.
    #[must_use]
    pub const fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Cuts each attempt of an async operation at `timeout`, and never later than the time left
    /// before the deadline. The cut attempt counts as [`Decision::Ambiguous`].
    ///
    /// # Panics
    /// When `timeout` is zero.
    ///
    /// [`Decision::Ambiguous`]: super::Decision::Ambiguous
    #[must_use]
    pub const fn attempt_timeout(mut self, timeout: Duration) -> Self {
        assert!(
            !timeout.is_zero(),
            "Policy::attempt_timeout must be more than 0"
        );
        self.attempt_timeout = Some(timeout);
        self
    }

    /// Declares the operation idempotent in effect (a read, a PUT of a whole resource, a write
    /// carrying an idempotency key): ambiguous failures are resent. Without it they stop with
    /// [`StopReason::WriteNotConfirmed`].
    ///
    /// [`StopReason::WriteNotConfirmed`]: super::StopReason::WriteNotConfirmed
    #[must_use]
    pub const fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Retries only errors whose HTTP status ([`Transient::status`]) is in `statuses`; an error
    /// with a status outside the set stops, one without a status keeps its own decision.
    ///
    /// # Panics
    /// When the set is empty or holds a status that is not transient by nature: a 4xx other than
    /// 408 and 429 (the request itself is wrong; domain.md §1), or a non-error status.
    ///
    /// [`Transient::status`]: super::Transient::status
    #[must_use]
    pub const fn retry_on(mut self, statuses: &'static [u16]) -> Self {
        assert!(!statuses.is_empty(), "Policy::retry_on: the set is empty");
        let mut i = 0;
        while i < statuses.len() {
            let status = statuses[i];
            assert!(
                status == 408 || status == 429 || (status >= 500 && status <= 599),
                "Policy::retry_on: only 408, 429 and 5xx statuses can be transient"
            );
            i += 1;
        }
        self.retry_on = Some(statuses);
        self
    }

    /// The number of attempts in total.
    #[must_use]
    pub const fn max_attempts(&self) -> u32 {
        self.attempts
    }

    /// The overall deadline.
    #[must_use]
    pub const fn overall_deadline(&self) -> Duration {
        self.deadline
    }

    /// The backoff base.
    #[must_use]
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The backoff cap.
    #[must_use]
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// The jitter strategy.
    #[must_use]
    pub const fn jitter_kind(&self) -> Jitter {
        self.jitter
    }

    /// The per-attempt timeout, if any.
    #[must_use]
    pub const fn per_attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// Whether ambiguous failures are resent.
    #[must_use]
    pub const fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The explicit status set, if any.
    #[must_use]
    pub const fn status_set(&self) -> Option<&'static [u16]> {
        self.retry_on
    }

    // retry-audit: allow(missing-jitter, reason = "a ceiling, not a wait: `Retry::backoff_delay` waits a random time below it")
    /// The ceiling of the full-jitter wait before retry `n` (0-based): `min(cap, base * 2^n)`.
    #[must_use]
    pub fn backoff_ceiling(&self, n: u32) -> Duration {
        let factor = 1u32.checked_shl(n).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .map_or(self.cap, |grown| grown.min(self.cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_doubles_up_to_the_cap() {
        let p = Policy::new().backoff(Duration::from_millis(100), Duration::from_secs(1));
        let ceilings: Vec<_> = (0..6).map(|n| p.backoff_ceiling(n).as_millis()).collect();
        assert_eq!(ceilings, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(p.backoff_ceiling(40), Duration::from_secs(1), "no overflow");
    }

    #[test]
    #[should_panic(expected = "Policy::attempts must be 1..=10")]
    fn zero_attempts_panic() {
        let _ = Policy::new().attempts(0);
    }

    #[test]
    #[should_panic(expected = "cap must be at least base")]
    fn cap_below_base_panics() {
        let _ = Policy::new().backoff(Duration::from_secs(2), Duration::from_secs(1));
    }

    #[test]
    #[should_panic(expected = "only 408, 429 and 5xx")]
    fn permanent_status_in_set_panics() {
        let _ = Policy::new().retry_on(&[429, 404]);
    }
}
