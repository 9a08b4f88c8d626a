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

/// The decision for a status and its headers (`Retry-After`, `retry-after-ms`,
/// `x-amz-retry-after`).
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
/// ```
#[must_use]
pub fn decision(status: http::StatusCode, headers: &http::HeaderMap) -> Decision {
    match Decision::for_status(status.as_u16()) {
        Decision::Retry { .. } => Decision::Retry {
            after: retry_after(headers),
        },
        other => other,
    }
}

/// The server's wait from response headers, if any.
#[must_use]
pub fn retry_after(headers: &http::HeaderMap) -> Option<std::time::Duration> {
    let pairs = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
    retry_after::from_headers(pairs, SystemTime::now())
}

/// A key as a header value (`request.header("Idempotency-Key", key)`); fails only for a key
/// chosen by the caller that holds characters a header cannot carry.
impl TryFrom<&IdempotencyKey> for http::HeaderValue {
    type Error = http::header::InvalidHeaderValue;

    fn try_from(key: &IdempotencyKey) -> Result<Self, Self::Error> {
        http::HeaderValue::from_str(key.as_str())
    }
}
