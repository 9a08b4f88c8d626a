//! [`Transient`] for `tonic::Status` (feature `tonic`), as gRPC's retry design A6 decides: an
//! explicit list of retryable codes, and the server's pushback (`grpc-retry-pushback-ms`, a
//! negative value meaning "do not retry").
//!
//! A `#[retryable]` function that calls a tonic client and returns `Result<T, tonic::Status>`
//! then has every guarantee of the runtime: the default budget, `breaker`, `max_concurrent`,
//! `fallback`, and a per-attempt timeout (`attempt_timeout`) whose cut attempts are told apart
//! from the server's own `DEADLINE_EXCEEDED`.

use std::time::{Duration, SystemTime};

use tonic::{Code, Status};

use super::{retry_after, AttemptTimedOut, Decision, Rejected, Transient};

/// The metadata key of the server's pushback (gRFC A6).
pub const PUSHBACK: &str = "grpc-retry-pushback-ms";
/// The metadata key this runtime marks its own statuses with: `attempt-timeout` on a
/// `DEADLINE_EXCEEDED` made by a per-attempt timeout, `rejected` on a call the breaker or the
/// bulkhead did not send.
pub const MARK: &str = "x-retry-audit";

/// The server's pushback: `Some(Ok(wait))`, `Some(Err(()))` for a negative or malformed value
/// (A6: do not retry), `None` when there is none.
#[must_use]
pub fn pushback(status: &Status) -> Option<Result<Duration, ()>> {
    let value = status.metadata().get(PUSHBACK)?;
    let parsed = value
        .to_str()
        .ok()
        .and_then(|text| text.trim().parse::<i64>().ok());
    Some(match parsed {
        Some(ms) if ms >= 0 => Ok(Duration::from_millis(ms.unsigned_abs())),
        _ => Err(()),
    })
}

fn marked(status: &Status, mark: &str) -> bool {
    status
        .metadata()
        .get(MARK)
        .is_some_and(|value| value.as_encoded_bytes() == mark.as_bytes())
}

/// The server's wait from the status's metadata: the pushback, else `Retry-After` and the
/// rate-limit reset headers (as for an HTTP `429`).
fn server_wait(status: &Status) -> Option<Duration> {
    if let Some(Ok(wait)) = pushback(status) {
        return Some(wait);
    }
    let headers = status.metadata().clone().into_headers();
    let pairs = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
    retry_after::wait_from_headers(429, pairs, SystemTime::now())
}

/// By code, after gRFC A6 and the gRPC status code guide:
///
/// - a negative (or malformed) `grpc-retry-pushback-ms`: stop, whatever the code;
/// - `UNAVAILABLE`: retry after the pushback when the server sent one (it answered, and asked
///   for a retry); without one it is [`Decision::Ambiguous`], resent only when the call is
///   idempotent (or carries an idempotency key): the connection may have dropped after the
///   request went out;
/// - `RESOURCE_EXHAUSTED`: retry only with the server's wait (pushback, `Retry-After` or a
///   rate-limit reset in the metadata); without one, a quota or a message size, which no retry
///   fixes: stop;
/// - `ABORTED` (a conflict, such as a transaction aborted): retry, after the pushback if any;
/// - `DEADLINE_EXCEEDED`: ambiguous when this runtime's per-attempt timeout cut the attempt
///   (`From<AttemptTimedOut>`); the caller's own deadline otherwise: stop;
/// - every other code (`INVALID_ARGUMENT`, `NOT_FOUND`, `PERMISSION_DENIED`, `UNIMPLEMENTED`,
///   `INTERNAL`, `UNKNOWN`, ...): stop.
///
/// ```
/// use retry_audit::retry::{Decision, Transient};
///
/// assert_eq!(tonic::Status::aborted("conflict").decision(), Decision::RETRY);
/// assert_eq!(tonic::Status::unavailable("down").decision(), Decision::Ambiguous);
/// assert_eq!(tonic::Status::not_found("no such row").decision(), Decision::Stop);
///
/// let mut busy = tonic::Status::resource_exhausted("slow down");
/// busy.metadata_mut().insert("grpc-retry-pushback-ms", "250".parse().unwrap());
/// assert_eq!(
///     busy.decision(),
///     Decision::Retry { after: Some(std::time::Duration::from_millis(250)) },
/// );
/// ```
impl Transient for Status {
    fn decision(&self) -> Decision {
        if let Some(Err(())) = pushback(self) {
            return Decision::Stop;
        }
        if marked(self, "rejected") {
            return Decision::Stop;
        }
        match self.code() {
            Code::Unavailable => match pushback(self) {
                Some(Ok(wait)) => Decision::Retry { after: Some(wait) },
                _ => Decision::Ambiguous,
            },
            Code::ResourceExhausted => match server_wait(self) {
                Some(wait) => Decision::Retry { after: Some(wait) },
                None => Decision::Stop,
            },
            Code::Aborted => Decision::Retry {
                after: pushback(self).and_then(Result::ok),
            },
            Code::DeadlineExceeded if marked(self, "attempt-timeout") => Decision::Ambiguous,
            _ => Decision::Stop,
        }
    }
}

/// A cut attempt is a `DEADLINE_EXCEEDED` marked as this runtime's (so that it is told from the
/// caller's own deadline).
impl From<AttemptTimedOut> for Status {
    fn from(timeout: AttemptTimedOut) -> Self {
        let mut status = Status::deadline_exceeded(timeout.to_string());
        status.metadata_mut().insert(
            MARK,
            tonic::metadata::MetadataValue::from_static("attempt-timeout"),
        );
        status
    }
}

/// A call the breaker or the bulkhead did not send is an `UNAVAILABLE` marked as this
/// runtime's, never retried.
impl From<Rejected> for Status {
    fn from(rejected: Rejected) -> Self {
        let mut status = Status::unavailable(rejected.to_string());
        status.metadata_mut().insert(
            MARK,
            tonic::metadata::MetadataValue::from_static("rejected"),
        );
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::StopReason;

    fn with(status: Status, key: &'static str, value: &'static str) -> Status {
        let mut status = status;
        status
            .metadata_mut()
            .insert(key, tonic::metadata::MetadataValue::from_static(value));
        status
    }

    #[test]
    fn codes() {
        let cases = [
            (Status::unavailable("x"), Decision::Ambiguous),
            (Status::aborted("x"), Decision::RETRY),
            (Status::resource_exhausted("x"), Decision::Stop),
            (Status::deadline_exceeded("x"), Decision::Stop),
            (Status::invalid_argument("x"), Decision::Stop),
            (Status::not_found("x"), Decision::Stop),
            (Status::permission_denied("x"), Decision::Stop),
            (Status::internal("x"), Decision::Stop),
            (Status::unknown("x"), Decision::Stop),
            (Status::unimplemented("x"), Decision::Stop),
        ];
        for (status, decision) in cases {
            assert_eq!(status.decision(), decision, "{:?}", status.code());
        }
    }

    #[test]
    fn pushback_and_its_negative() {
        let wait = |ms| Decision::Retry {
            after: Some(Duration::from_millis(ms)),
        };
        let unavailable = with(Status::unavailable("x"), PUSHBACK, "1500");
        assert_eq!(unavailable.decision(), wait(1500));
        let exhausted = with(Status::resource_exhausted("x"), PUSHBACK, "20");
        assert_eq!(exhausted.decision(), wait(20));
        let aborted = with(Status::aborted("x"), PUSHBACK, "5");
        assert_eq!(aborted.decision(), wait(5));
        for value in ["-1", "soon", ""] {
            let stop = with(Status::unavailable("x"), PUSHBACK, value);
            assert_eq!(stop.decision(), Decision::Stop, "{value:?}");
        }
    }

    #[test]
    fn a_rate_limit_reset_in_the_metadata_counts_as_the_servers_wait() {
        let exhausted = with(
            Status::resource_exhausted("x"),
            "x-ratelimit-reset-requests",
            "2s",
        );
        assert_eq!(
            exhausted.decision(),
            Decision::Retry {
                after: Some(Duration::from_secs(2))
            }
        );
    }

    #[test]
    fn the_runtimes_own_statuses() {
        let cut = Status::from(AttemptTimedOut {
            limit: Duration::from_secs(1),
        });
        assert_eq!(cut.code(), Code::DeadlineExceeded);
        assert_eq!(cut.decision(), Decision::Ambiguous);
        let refused = Status::from(Rejected::new(StopReason::BreakerOpen));
        assert_eq!(refused.code(), Code::Unavailable);
        assert_eq!(refused.decision(), Decision::Stop);
    }
}
