//! What to do after a failed attempt: [`Decision`], and the [`Transient`] trait that error types
//! implement to say it (domain.md §1).

use std::io;
use std::time::{Duration, SystemTime};

use super::retry_after;

/// What to do after an attempt failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The failure is transient: try again. `after` is the server's own wait (`Retry-After`,
    /// `retry-after-ms`), which replaces the backoff delay; `None` means "use the backoff".
    Retry {
        /// The wait the server asked for, if it asked.
        after: Option<Duration>,
    },
    /// The failure is permanent (400, 401, 403, 404, 422, invalid input, ...): another attempt
    /// cannot succeed, so stop at once.
    Stop,
    /// A write that may have been applied: a timeout after the request was sent, a connection reset
    /// mid-way. It is resent only when an idempotency key is in use or the operation is declared
    /// idempotent; otherwise the retry stops with [`StopReason::WriteNotConfirmed`]
    /// (RFC 9110 §9.2.2: "no response" is not "not applied").
    ///
    /// [`StopReason::WriteNotConfirmed`]: super::StopReason::WriteNotConfirmed
    Ambiguous,
}

impl Decision {
    /// A transient failure without a server wait: retry after the backoff delay.
    pub const RETRY: Decision = Decision::Retry { after: None };

    /// The decision for an HTTP status code alone: 408, 429 and the 5xx statuses retry (except
    /// 501 Not Implemented and 505 HTTP Version Not Supported, which no retry can fix); every other
    /// status stops, including all the other 4xx (domain.md §1).
    ///
    /// ```
    /// use retry_audit::retry::Decision;
    /// assert_eq!(Decision::for_status(503), Decision::RETRY);
    /// assert_eq!(Decision::for_status(404), Decision::Stop);
    /// ```
    #[must_use]
    pub const fn for_status(status: u16) -> Decision {
        if is_transient_status(status) {
            Decision::RETRY
        } else {
            Decision::Stop
        }
    }

    /// The decision for an HTTP status and its response headers: like [`Decision::for_status`],
    /// with the server's wait when the status is transient: `retry-after-ms`, `x-amz-retry-after`
    /// or `Retry-After` (delta-seconds or an HTTP-date, RFC 9110 §10.2.3), else, for a `429`, the
    /// provider's rate-limit reset header ([`wait_from_headers`](super::wait_from_headers)).
    /// Header names are matched case-insensitively.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_audit::retry::Decision;
    /// let headers = [("Retry-After", "3")];
    /// assert_eq!(
    ///     Decision::for_response(429, headers),
    ///     Decision::Retry { after: Some(Duration::from_secs(3)) },
    /// );
    /// ```
    #[must_use]
    pub fn for_response<'h>(
        status: u16,
        headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    ) -> Decision {
        match Decision::for_status(status) {
            Decision::Retry { .. } => Decision::Retry {
                after: retry_after::wait_from_headers(status, headers, SystemTime::now()),
            },
            other => other,
        }
    }

    /// Whether this decision allows another attempt at all (`Retry` or `Ambiguous`).
    #[must_use]
    pub const fn is_transient(self) -> bool {
        !matches!(self, Decision::Stop)
    }
}

/// Whether an HTTP status is worth retrying: 408, 429, and 5xx other than 501 and 505.
#[must_use]
pub const fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502..=504 | 506..=599)
}

/// An error type that knows which of its failures are transient.
///
/// `#[retryable]` calls [`Transient::decision`] on each error (unless the function names its own
/// `classify = path`). Implement it for your error type by mapping each variant to a [`Decision`]:
///
/// ```
/// use retry_audit::retry::{Decision, Transient};
///
/// enum ApiError {
///     Status(u16),
///     Timeout,
///     Invalid(String),
/// }
///
/// impl Transient for ApiError {
///     fn decision(&self) -> Decision {
///         match self {
///             ApiError::Status(code) => Decision::for_status(*code),
///             ApiError::Timeout => Decision::Ambiguous,
///             ApiError::Invalid(_) => Decision::Stop,
///         }
///     }
///     fn status(&self) -> Option<u16> {
///         match self {
///             ApiError::Status(code) => Some(*code),
///             _ => None,
///         }
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say which of its failures are transient",
    label = "`#[retryable]` needs to classify this error",
    note = "implement `retry_audit::retry::Transient` for `{Self}`, or name a function `fn(&{Self}) -> Decision` with `classify = path`"
)]
pub trait Transient {
    /// Whether to retry after this error.
    fn decision(&self) -> Decision;

    /// The HTTP status this error carries, if any; `retry_on = [...]` filters on it.
    fn status(&self) -> Option<u16> {
        None
    }
}

impl<T: Transient + ?Sized> Transient for &T {
    fn decision(&self) -> Decision {
        (**self).decision()
    }
    fn status(&self) -> Option<u16> {
        (**self).status()
    }
}

impl<T: Transient + ?Sized> Transient for Box<T> {
    fn decision(&self) -> Decision {
        (**self).decision()
    }
    fn status(&self) -> Option<u16> {
        (**self).status()
    }
}

/// By [`io::ErrorKind`]: `ConnectionRefused`, `ConnectionAborted`, `NotConnected`, `Interrupted` and
/// `WouldBlock` retry (nothing reached the peer, or the call can simply be repeated); `TimedOut` and
/// `ConnectionReset` are [`Decision::Ambiguous`] (the request may have been received); every other
/// kind (`NotFound`, `PermissionDenied`, `InvalidInput`, `InvalidData`, ...) stops.
impl Transient for io::Error {
    fn decision(&self) -> Decision {
        match self.kind() {
            io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock => Decision::RETRY,
            io::ErrorKind::TimedOut | io::ErrorKind::ConnectionReset => Decision::Ambiguous,
            _ => Decision::Stop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for transient in [408, 429, 500, 502, 503, 504, 599] {
            assert_eq!(
                Decision::for_status(transient),
                Decision::RETRY,
                "{transient}"
            );
        }
        for permanent in [200, 301, 400, 401, 403, 404, 409, 422, 501, 505] {
            assert_eq!(
                Decision::for_status(permanent),
                Decision::Stop,
                "{permanent}"
            );
        }
    }

    #[test]
    fn io_kinds() {
        let kind = |k| io::Error::from(k).decision();
        assert_eq!(kind(io::ErrorKind::ConnectionRefused), Decision::RETRY);
        assert_eq!(kind(io::ErrorKind::Interrupted), Decision::RETRY);
        assert_eq!(kind(io::ErrorKind::TimedOut), Decision::Ambiguous);
        assert_eq!(kind(io::ErrorKind::ConnectionReset), Decision::Ambiguous);
        assert_eq!(kind(io::ErrorKind::NotFound), Decision::Stop);
        assert_eq!(kind(io::ErrorKind::InvalidData), Decision::Stop);
    }

    #[test]
    fn response_headers_only_on_transient_statuses() {
        let headers = [("retry-after", "7")];
        assert_eq!(
            Decision::for_response(503, headers),
            Decision::Retry {
                after: Some(Duration::from_secs(7))
            }
        );
        assert_eq!(Decision::for_response(400, headers), Decision::Stop);
        assert_eq!(Decision::for_response(503, []), Decision::RETRY);
    }

    #[test]
    fn a_429_without_retry_after_waits_for_the_reset() {
        let headers = [
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "6m0s"),
        ];
        assert_eq!(
            Decision::for_response(429, headers),
            Decision::Retry {
                after: Some(Duration::from_secs(360))
            }
        );
        assert_eq!(Decision::for_response(404, headers), Decision::Stop);
        // Header names that are not ASCII do not trip the reader.
        let odd = [
            ("x-ratelimit-reset-é", "1s"),
            ("anthropic-ratelimit-reset", "x"),
        ];
        assert_eq!(
            Decision::for_response(429, odd),
            Decision::Retry {
                after: Some(Duration::from_secs(1))
            }
        );
    }
}
