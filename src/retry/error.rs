//! Why a retry stopped ([`StopReason`]) and the opt-in error that carries it ([`RetryError`]).

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
    /// The server asked to wait (`Retry-After`) longer than the time left; nothing was slept.
    ServerWaitTooLong {
        /// The wait the server asked for.
        wait: Duration,
    },
    /// The shared [`RetryBudget`](super::RetryBudget) refused the retry.
    BudgetExhausted,
    /// An ambiguous failure of a write without an idempotency key: the write may have been
    /// applied, and was not resent.
    WriteNotConfirmed,
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
        }
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

/// The last error of a retried operation, with why it stopped and how many attempts were made.
///
/// A `#[retryable]` function returns it when its signature says so (`-> Result<T, RetryError<E>>`,
/// the body still failing with `E`); otherwise the function returns the bare `E`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryError<E> {
    error: E,
    reason: StopReason,
    attempts: u32,
}

impl<E> RetryError<E> {
    /// Wraps the last error.
    pub const fn new(error: E, reason: StopReason, attempts: u32) -> Self {
        RetryError {
            error,
            reason,
            attempts,
        }
    }

    /// Why the operation stopped.
    pub const fn reason(&self) -> StopReason {
        self.reason
    }

    /// How many attempts were made (the first one included).
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The last error.
    pub const fn error(&self) -> &E {
        &self.error
    }

    /// The last error, by value.
    pub fn into_error(self) -> E {
        self.error
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.attempts == 1 { "" } else { "s" };
        write!(
            f,
            "{} after {} attempt{s}: {}",
            self.reason, self.attempts, self.error
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
}
