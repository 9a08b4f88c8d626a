//! [`Transient`] for `reqwest::Error` (feature `reqwest`), and the decision for a
//! `reqwest::Response`.

use super::{http, Decision, Transient};

/// A status error (from `error_for_status`) decides by its status: 408, 429 and 5xx retry, other
/// 4xx stop. A connection that could not be made (refused, DNS, connect timeout) retries: nothing
/// was sent. A timeout or a failure after the request went out is [`Decision::Ambiguous`]: the
/// server may have received it. Builder, redirect and decode errors stop.
///
/// A status error has no headers: to honour `Retry-After`, keep the response (see [`decision`]).
impl Transient for reqwest::Error {
    fn decision(&self) -> Decision {
        if let Some(status) = self.status() {
            Decision::for_status(status.as_u16())
        } else if self.is_connect() {
            Decision::RETRY
        } else if self.is_timeout() || self.is_request() || self.is_body() {
            Decision::Ambiguous
        } else {
            Decision::Stop
        }
    }
    fn status(&self) -> Option<u16> {
        self.status().map(|status| status.as_u16())
    }
}

/// The decision for a response: its status, and the server's wait from its headers.
#[must_use]
pub fn decision(response: &reqwest::Response) -> Decision {
    http::decision(response.status(), response.headers())
}
