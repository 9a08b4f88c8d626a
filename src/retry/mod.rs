//! The runtime of [`#[retryable]`](crate::retryable): a retry loop that keeps every rule of a
//! compliant retry by construction (domain.md §1–§5).
//!
//! - **Bounded twice**: at most [`Policy::attempts`] attempts (1..=10) *and* an overall deadline;
//!   no wait ends at or past the deadline.
//! - **Full jitter**: the wait before retry `n` is `random(0, min(cap, base * 2^n))`
//!   ([`Jitter::Full`]; [`Jitter::Decorrelated`] is the alternative; there is no "no jitter").
//! - **The server's wait wins**: a `Retry-After` (delta-seconds or HTTP-date) or `retry-after-ms`,
//!   else a rate-limit reset header (`x-ratelimit-reset-requests: 6m0s`,
//!   `anthropic-ratelimit-tokens-reset: <RFC 3339>`, `x-ratelimit-reset: <seconds or epoch>`,
//!   [`wait_from_headers`]), carried by [`Decision::Retry`], replaces the backoff delay; when it
//!   does not fit in the time left, the loop stops at once with [`StopReason::ServerWaitTooLong`]
//!   instead of sleeping.
//! - **Only transient failures are retried**: the error type says which through [`Transient`]
//!   (implemented for [`std::io::Error`], and with features for `http::StatusCode`,
//!   `http::Response` and `reqwest::Error`); every 4xx but 408 and 429 stops.
//! - **Writes are not resent blindly**: a [`Decision::Ambiguous`] failure (timeout after sending,
//!   connection reset) is resent only when an [`IdempotencyKey`] is in use or the operation is
//!   declared idempotent; otherwise the loop stops with [`StopReason::WriteNotConfirmed`].
//! - **A shared budget** ([`RetryBudget`], gRPC retry throttling) keeps an outage from multiplying
//!   traffic: when it runs low only first attempts go out.
//!
//! The caller can tell every outcome apart ([`StopReason`], [`RetryError`]); hooks and the
//! `tracing` feature make each retry observable (attempt number, delay, reason).
//!
//! Dependencies: with `default-features = false` the library is only this runtime, and pulls in
//! `fastrand`, `httpdate` and the `retry-audit-macros` proc-macro (`syn`, `quote`, `proc-macro2`
//! at build time); `tokio`, `http`, `reqwest` and `tracing` are optional features.

mod budget;
mod decision;
mod error;
mod key;
mod policy;
mod retry_after;
mod run;
mod sleep;

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "reqwest")]
pub mod reqwest;

pub use budget::RetryBudget;
pub use decision::{is_transient_status, Decision, Transient};
pub use error::{AttemptTimedOut, RetryError, StopReason};
pub use key::IdempotencyKey;
pub use policy::{Jitter, Policy};
pub use retry_after::{
    from_headers as retry_after_from_headers, parse_go_duration, parse_retry_after,
    parse_retry_after_ms, parse_rfc3339, reset_from_headers, wait_from_headers,
};
pub use run::{AsyncRetry, Attempt, OnRetry, OnStop, Retry};
#[cfg(feature = "tokio")]
pub use sleep::TokioSleeper;
pub use sleep::{AsyncSleeper, Sleeper, ThreadSleeper};

/// Used by the code `#[retryable]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    use std::future::Future;

    pub use super::sleep::ThreadSleeper as DefaultSleeper;
    #[cfg(feature = "tokio")]
    pub use super::sleep::TokioSleeper as DefaultAsyncSleeper;

    #[cfg(not(feature = "tokio"))]
    use super::AsyncSleeper;
    use super::RetryError;

    /// Stands in for the tokio timer when the `tokio` feature is off. It is never run: it lacks
    /// [`DefaultTimer`], so [`default_async_sleeper`] rejects it at compile time, with one error
    /// that says how to fix the build.
    #[cfg(not(feature = "tokio"))]
    #[derive(Clone, Copy, Debug)]
    pub struct DefaultAsyncSleeper;

    #[cfg(not(feature = "tokio"))]
    impl AsyncSleeper for DefaultAsyncSleeper {
        type Sleep = std::future::Ready<()>;

        fn sleep(&self, _: std::time::Duration) -> Self::Sleep {
            unreachable!("`default_async_sleeper` rejects this type at compile time")
        }
    }

    /// The default async timer is available (feature `tokio`).
    #[diagnostic::on_unimplemented(
        message = "an async `#[retryable]` function needs an async timer to wait between attempts",
        label = "no async timer",
        note = "enable the `tokio` feature of `retry-audit`, or name an async sleep function with `sleep = path`"
    )]
    pub trait DefaultTimer {}

    #[cfg(feature = "tokio")]
    impl DefaultTimer for DefaultAsyncSleeper {}

    /// The default timer of async functions, when there is one.
    pub fn default_async_sleeper<S: DefaultTimer>(sleeper: &S) -> &S {
        sleeper
    }

    /// Fixes the output type of the body's async block (so `?` inside it knows its error type).
    pub fn ascribe<R, F: Future<Output = R>>(attempt: F) -> F {
        attempt
    }

    /// The function returns its own error type.
    #[allow(clippy::missing_errors_doc)]
    pub fn into_plain<T, E>(result: Result<T, RetryError<E>>) -> Result<T, E> {
        result.map_err(RetryError::into_error)
    }
}
