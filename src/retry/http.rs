//! [`Transient`] for the `http` crate's types (feature `http`): statuses and whole responses
//! (`Retry-After` included).

use std::time::SystemTime;

use super::{retry_after, Decision, IdempotencyKey, Transient};

/// 408, 429 and 5xx (but 501 and 505) retry; every other status stops.
impl Transient for http::StatusCode {
    fn decision(&self) -> Decision {
        Decision::for_status(self.as_u16())
    }
    fn status(&self) -> Option<u16> {
        Some(self.as_u16())
    }
}

/// The status decides; a transient status carries the server's wait from the headers.
impl<B> Transient for http::Response<B> {
    fn decision(&self) -> Decision {
        decision(self.status(), self.headers())
    }
    fn status(&self) -> Option<u16> {
        Some(self.status().as_u16())
    }
}

/// The decision for a status and its headers: a transient status carries the server's wait,
/// `Retry-After` (`retry-after-ms`, `x-amz-retry-after`) first, then for a `429` the rate-limit
/// reset headers ([`server_wait`]).
///
/// ```
/// use std::time::Duration;
/// use http::{HeaderMap, StatusCode};
/// use retry_audit::retry::{http::decision, Decision};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// assert_eq!(
///     decision(StatusCode::TOO_MANY_REQUESTS, &headers),
///     Decision::Retry { after: Some(Duration::from_secs(2)) },
/// );
/// assert_eq!(decision(StatusCode::NOT_FOUND, &headers), Decision::Stop);
///
/// let mut openai = HeaderMap::new();
/// openai.insert("x-ratelimit-reset-requests", "6m0s".parse().unwrap());
/// assert_eq!(
///     decision(StatusCode::TOO_MANY_REQUESTS, &openai),
///     Decision::Retry { after: Some(Duration::from_secs(360)) },
/// );
/// ```
#[must_use]
pub fn decision(status: http::StatusCode, headers: &http::HeaderMap) -> Decision {
    match Decision::for_status(status.as_u16()) {
        Decision::Retry { .. } => Decision::Retry {
            after: server_wait(status, headers),
        },
        other => other,
    }
}

/// The wait of `Retry-After`, `retry-after-ms` or `x-amz-retry-after`, if any (not the reset
/// headers: see [`server_wait`]).
#[must_use]
pub fn retry_after(headers: &http::HeaderMap) -> Option<std::time::Duration> {
    retry_after::from_headers(pairs(headers), SystemTime::now())
}

/// The server's wait for a response: `Retry-After` and its variants, then, for a `429`, the
/// rate-limit reset headers ([`wait_from_headers`](super::wait_from_headers)).
#[must_use]
pub fn server_wait(
    status: http::StatusCode,
    headers: &http::HeaderMap,
) -> Option<std::time::Duration> {
    retry_after::wait_from_headers(status.as_u16(), pairs(headers), SystemTime::now())
}

fn pairs(headers: &http::HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
}

/// A key as a header value (`request.header("Idempotency-Key", key)`); fails only for a key
/// chosen by the caller that holds characters a header cannot carry.
impl TryFrom<&IdempotencyKey> for http::HeaderValue {
    type Error = http::header::InvalidHeaderValue;

    fn try_from(key: &IdempotencyKey) -> Result<Self, Self::Error> {
        http::HeaderValue::from_str(key.as_str())
    }
}
