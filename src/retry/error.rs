//! Why a retry stopped ([`StopReason`]), the opt-in error that carries it ([`RetryError`]), what a
//! call did ([`Report`], also on a success: [`Retried`]), and the error of a call that a breaker or
//! a bulkhead did not let out ([`Rejected`]).

use std::error::Error;
use std::fmt;
use std::time::Duration;

/// Why a retried operation stopped with an error (domain.md §5). Each outcome is distinct so a
/// caller can tell "gave up" from "cannot succeed" from "may have been applied".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The error is permanent: another attempt cannot succeed.
    Permanent,
    /// Every allowed attempt was made and failed.
    AttemptsExhausted,
    /// The next wait would end at or past the deadline (or the deadline has passed).
    DeadlineExceeded,
    /// The server asked to wait (`Retry-After`, a rate-limit reset header, gRPC pushback) longer
    /// than the time left; nothing was slept.
    ServerWaitTooLong {
        /// The wait the server asked for.
        wait: Duration,
    },
    /// The shared [`RetryBudget`](super::RetryBudget) refused the retry. The refused retry was not
    /// sent and is not counted as an attempt.
    BudgetExhausted,
    /// An ambiguous failure of a write without an idempotency key: the write may have been
    /// applied, and was not resent.
    WriteNotConfirmed,
    /// The [`CircuitBreaker`](super::CircuitBreaker) of the upstream is open (or half-open with
    /// its probes already out): the attempt was not sent.
    BreakerOpen,
    /// The [`Bulkhead`](super::Bulkhead) of the upstream is full: the attempt was not sent.
    BulkheadFull,
}

impl StopReason {
    /// A short, stable, lower-case label (for logs and metrics).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::Permanent => "permanent error",
            StopReason::AttemptsExhausted => "attempts exhausted",
            StopReason::DeadlineExceeded => "deadline exceeded",
            StopReason::ServerWaitTooLong { .. } => "server wait too long",
            StopReason::BudgetExhausted => "budget exhausted",
            StopReason::WriteNotConfirmed => "write not confirmed",
            StopReason::BreakerOpen => "breaker open",
            StopReason::BulkheadFull => "bulkhead full",
        }
    }

    /// Whether a fallback may answer instead: the retry gave up on a transient failure, or the
    /// breaker or the bulkhead kept the call from going out. Not after a permanent error (a `404`
    /// is an answer, not an outage) nor after a write that may have been applied (the caller must
    /// hear that it may have been).
    #[must_use]
    pub const fn allows_fallback(self) -> bool {
        !matches!(self, StopReason::Permanent | StopReason::WriteNotConfirmed)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::ServerWaitTooLong { wait } => write!(
                f,
                "server wait too long: asked to wait {wait:?}, more than the time left"
            ),
            StopReason::WriteNotConfirmed => {
                f.write_str("write not confirmed: it may have been applied and was not resent")
            }
            other => f.write_str(other.as_str()),
        }
    }
}

/// What one call did: attempts sent, waits slept, why it stopped, whether a fallback answered.
///
/// A success carries one too ([`Retried::report`]): a success that needed three attempts is worth
/// knowing about. Refused retries (budget, breaker, bulkhead) are not attempts: `attempts` counts
/// the requests that went out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    attempts: u32,
    waits: u32,
    waited: Duration,
    stop: Option<StopReason>,
    degraded: bool,
}

impl Report {
    /// A report of `attempts` attempts and the waits between them.
    #[must_use]
    pub const fn new(attempts: u32, waits: u32, waited: Duration) -> Self {
        Report {
            attempts,
            waits,
            waited,
            stop: None,
            degraded: false,
        }
    }

    /// The same report, stopped for `reason`.
    #[must_use]
    pub const fn stopped(mut self, reason: StopReason) -> Self {
        self.stop = Some(reason);
        self
    }

    /// The same report, answered by the fallback.
    #[must_use]
    pub const fn degraded(mut self) -> Self {
        self.degraded = true;
        self
    }

    /// The attempts sent, the first one included (0 when the breaker or the bulkhead refused the
    /// first one).
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The waits slept between attempts.
    #[must_use]
    pub const fn waits(&self) -> u32 {
        self.waits
    }

    /// The time slept in those waits, in total.
    #[must_use]
    pub const fn waited(&self) -> Duration {
        self.waited
    }

    /// Why the retry stopped without a success of its own (`None` for a success). On a degraded
    /// answer, why the primary path gave up.
    #[must_use]
    pub const fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Whether the answer (or the error) came from the fallback.
    #[must_use]
    pub const fn is_degraded(&self) -> bool {
        self.degraded
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.attempts == 1 { "" } else { "s" };
        write!(f, "{} attempt{s}", self.attempts)?;
        if self.waits > 0 {
            write!(f, ", {:?} waited", self.waited)?;
        }
        if let Some(reason) = self.stop {
            write!(f, ", stopped: {}", reason.as_str())?;
        }
        if self.degraded {
            f.write_str(", answered by the fallback")?;
        }
        Ok(())
    }
}

/// A value with the [`Report`] of the call that produced it.
///
/// A `#[retryable]` function returns it when its signature says so (`-> Result<Retried<T>, E>`,
/// the body still returning `T`): the caller then sees how many attempts the value took, how long
/// was waited, and whether it is a degraded answer from the fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retried<T> {
    value: T,
    report: Report,
}

impl<T> Retried<T> {
    /// Pairs a value with its report.
    pub const fn new(value: T, report: Report) -> Self {
        Retried { value, report }
    }

    /// The value.
    pub const fn value(&self) -> &T {
        &self.value
    }

    /// The value, by value.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The value and the report.
    pub fn into_parts(self) -> (T, Report) {
        (self.value, self.report)
    }

    /// What the call did.
    pub const fn report(&self) -> &Report {
        &self.report
    }

    /// The attempts sent (shorthand for `report().attempts()`).
    pub const fn attempts(&self) -> u32 {
        self.report.attempts
    }

    /// Whether the fallback answered (shorthand for `report().is_degraded()`).
    pub const fn is_degraded(&self) -> bool {
        self.report.degraded
    }
}

/// The last error of a retried operation, with why it stopped and how many attempts were made.
///
/// A `#[retryable]` function returns it when its signature says so (`-> Result<T, RetryError<E>>`,
/// the body still failing with `E`); otherwise the function returns the bare `E`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryError<E> {
    error: E,
    reason: StopReason,
    report: Report,
}

impl<E> RetryError<E> {
    /// Wraps the last error.
    pub const fn new(error: E, reason: StopReason, attempts: u32) -> Self {
        RetryError {
            error,
            reason,
            report: Report::new(attempts, 0, Duration::ZERO).stopped(reason),
        }
    }

    /// Wraps the last error with the whole report of the call (its stop reason set).
    pub const fn with_report(error: E, reason: StopReason, report: Report) -> Self {
        RetryError {
            error,
            reason,
            report: report.stopped(reason),
        }
    }

    /// Why the operation stopped.
    pub const fn reason(&self) -> StopReason {
        self.reason
    }

    /// How many attempts were made (the first one included; refused retries are not attempts).
    pub const fn attempts(&self) -> u32 {
        self.report.attempts
    }

    /// What the call did: attempts, waits, stop reason, fallback.
    pub const fn report(&self) -> &Report {
        &self.report
    }

    /// Whether this error came from the fallback (which was called because the retry gave up).
    pub const fn is_degraded(&self) -> bool {
        self.report.degraded
    }

    /// The last error.
    pub const fn error(&self) -> &E {
        &self.error
    }

    /// The last error, by value.
    pub fn into_error(self) -> E {
        self.error
    }

    /// Whether a fallback may answer instead ([`StopReason::allows_fallback`]), and none has yet.
    pub const fn allows_fallback(&self) -> bool {
        self.reason.allows_fallback() && !self.report.degraded
    }

    /// The outcome once the fallback has answered with `fallback` (called once, by the caller,
    /// only when [`RetryError::allows_fallback`]): its value, or its error, marked degraded, with
    /// this call's report.
    ///
    /// ```
    /// use retry_audit::retry::{Policy, Retry};
    ///
    /// let no_wait = |_| {};
    /// let done = Retry::new(Policy::new().attempts(2))
    ///     .run_sync_with_report(&no_wait, |_| -> std::io::Result<&str> {
    ///         Err(std::io::ErrorKind::ConnectionRefused.into())
    ///     });
    /// let answer = match done {
    ///     Err(stopped) if stopped.allows_fallback() => stopped.degrade(Ok("from the cache")),
    ///     other => other,
    /// }
    /// .unwrap();
    /// assert_eq!(*answer.value(), "from the cache");
    /// assert!(answer.is_degraded());
    /// assert_eq!(answer.attempts(), 2);
    /// ```
    pub fn degrade<T>(self, fallback: Result<T, E>) -> Result<Retried<T>, RetryError<E>> {
        let report = self.report.degraded();
        #[cfg(feature = "tracing")]
        tracing::warn!(
            attempts = report.attempts,
            reason = self.reason.as_str(),
            fallback_failed = fallback.is_err(),
            "answered by the fallback"
        );
        match fallback {
            Ok(value) => Ok(Retried::new(value, report)),
            Err(error) => Err(RetryError {
                error,
                reason: self.reason,
                report,
            }),
        }
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = self.report.attempts;
        let s = if attempts == 1 { "" } else { "s" };
        let degraded = if self.report.degraded {
            " (the fallback failed too)"
        } else {
            ""
        };
        write!(
            f,
            "{} after {attempts} attempt{s}{degraded}: {}",
            self.reason, self.error
        )
    }
}

impl<E: Error + 'static> Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.error)
    }
}

/// An attempt was cut by `attempt_timeout` (or by the deadline). An async `#[retryable]` function
/// with `attempt_timeout` needs `E: From<AttemptTimedOut>` to report it as its own error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptTimedOut {
    /// How long the attempt was allowed to run.
    pub limit: Duration,
}

impl fmt::Display for AttemptTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt cut after {:?}", self.limit)
    }
}

impl Error for AttemptTimedOut {}

/// The [`io::Error`](std::io::Error) for a cut attempt has kind `TimedOut`.
impl From<AttemptTimedOut> for std::io::Error {
    fn from(timeout: AttemptTimedOut) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, timeout)
    }
}

/// A call the [`CircuitBreaker`](super::CircuitBreaker) or the [`Bulkhead`](super::Bulkhead) did
/// not let out: nothing was sent. A `#[retryable]` function with `breaker`, `max_concurrent` or
/// `bulkhead` needs `E: From<Rejected>` for the case where the very first attempt is refused (a
/// refused retry keeps the last real error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejected {
    reason: StopReason,
}

impl Rejected {
    /// A rejection for `reason` ([`StopReason::BreakerOpen`] or [`StopReason::BulkheadFull`]).
    #[must_use]
    pub const fn new(reason: StopReason) -> Self {
        Rejected { reason }
    }

    /// Why the call was not sent.
    #[must_use]
    pub const fn reason(&self) -> StopReason {
        self.reason
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not sent: {}", self.reason.as_str())
    }
}

impl Error for Rejected {}

/// The [`io::Error`](std::io::Error) for a rejected call has kind `Other` (a permanent kind to
/// [`Transient`](super::Transient): the refusal is final for this call).
impl From<Rejected> for std::io::Error {
    fn from(rejected: Rejected) -> Self {
        std::io::Error::other(rejected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let err = RetryError::new("HTTP 503", StopReason::AttemptsExhausted, 3);
        assert_eq!(
            err.to_string(),
            "attempts exhausted after 3 attempts: HTTP 503"
        );
        let err = RetryError::new("reset", StopReason::WriteNotConfirmed, 1);
        assert_eq!(
            err.to_string(),
            "write not confirmed: it may have been applied and was not resent after 1 attempt: reset"
        );
        let reason = StopReason::ServerWaitTooLong {
            wait: Duration::from_secs(120),
        };
        assert_eq!(reason.as_str(), "server wait too long");
        assert!(reason.to_string().contains("120s"));
    }

    #[test]
    fn fallback_only_after_giving_up() {
        assert!(!StopReason::Permanent.allows_fallback());
        assert!(!StopReason::WriteNotConfirmed.allows_fallback());
        for reason in [
            StopReason::AttemptsExhausted,
            StopReason::DeadlineExceeded,
            StopReason::ServerWaitTooLong {
                wait: Duration::from_secs(1),
            },
            StopReason::BudgetExhausted,
            StopReason::BreakerOpen,
            StopReason::BulkheadFull,
        ] {
            assert!(reason.allows_fallback(), "{reason}");
        }
    }

    #[test]
    fn a_degraded_error_is_not_degraded_twice() {
        let err = RetryError::new("503", StopReason::AttemptsExhausted, 3);
        let failed = err.degrade::<u32>(Err("cache miss")).unwrap_err();
        assert!(failed.is_degraded());
        assert!(!failed.allows_fallback(), "one fallback, once");
        assert_eq!(failed.attempts(), 3);
        assert_eq!(
            failed.to_string(),
            "attempts exhausted after 3 attempts (the fallback failed too): cache miss"
        );
    }
}
