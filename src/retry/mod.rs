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
//! - **A shared budget** ([`RetryBudget`]) keeps an outage from multiplying traffic: retries up to
//!   20 % of the calls plus 10 per second ([`RetryBudget::standard`]; `#[retryable]` uses one per
//!   upstream by default, [`shared_budget`]), or gRPC retry throttling ([`RetryBudget::new`]).
//! - **An isolated upstream**: a [`CircuitBreaker`] stops calling an upstream whose calls mostly
//!   fail and probes it after a cool-down; a [`Bulkhead`] caps the calls in flight to it. Both
//!   refuse an attempt without sending it ([`StopReason::BreakerOpen`],
//!   [`StopReason::BulkheadFull`]).
//! - **One fallback, once**: when the retry gives up on a transient failure, or the breaker or the
//!   bulkhead refuses the call, the caller may answer from a degraded path once
//!   ([`RetryError::degrade`]); never after a permanent error.
//!
//! The caller can tell every outcome apart ([`StopReason`], [`RetryError`]) and see what a call
//! did, a success included ([`Report`], [`Retried`]); hooks and the `tracing` feature (one span per
//! call, a DEBUG event per retry, a WARN event only when giving up or falling back) make each retry
//! observable.
//!
//! The same runtime serves tower stacks (`retry_audit::tower`, feature `tower`),
//! reqwest-middleware clients (`retry_audit::reqwest_middleware`, feature `reqwest-middleware`)
//! and tonic clients (`Transient` for `tonic::Status`, feature `tonic`).
//!
//! Dependencies: with `default-features = false` the library is only this runtime, and pulls in
//! `fastrand`, `httpdate` and the `retry-audit-macros` proc-macro (`syn`, `quote`, `proc-macro2`
//! at build time); `tokio`, `http`, `reqwest`, `tracing`, `tower`, `reqwest-middleware` and `tonic`
//! are optional features.

mod breaker;
mod budget;
mod bulkhead;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
mod client;
mod decision;
mod error;
mod key;
mod policy;
mod retry_after;
mod run;
mod shared;
mod sleep;

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "reqwest")]
pub mod reqwest;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_middleware;
#[cfg(feature = "tonic")]
pub mod tonic;
#[cfg(feature = "tower")]
pub mod tower;

pub use breaker::{BreakerState, BreakerTicket, CircuitBreaker};
pub use budget::RetryBudget;
pub use bulkhead::{Bulkhead, BulkheadPermit};
pub use decision::{is_transient_status, Decision, Transient};
pub use error::{AttemptTimedOut, Rejected, Report, Retried, RetryError, StopReason};
pub use key::IdempotencyKey;
pub use policy::{Jitter, Policy};
pub use retry_after::{
    from_headers as retry_after_from_headers, parse_go_duration, parse_rfc3339, reset_from_headers,
    wait_from_headers,
};
pub use retry_after::{parse_retry_after, parse_retry_after_ms};
pub use run::{AsyncRetry, Attempt, OnRetry, OnStop, Retry};
pub use shared::{shared_budget, shared_bulkhead};
#[cfg(feature = "tokio")]
pub use sleep::TokioSleeper;
pub use sleep::{AsyncSleeper, Sleeper, ThreadSleeper};

/// The pages of `docs/runtime/`: each one's examples run as doctests.
#[cfg(doctest)]
mod docs {
    #[doc = include_str!("../../docs/runtime/reset-headers.md")]
    pub struct ResetHeaders;
    #[doc = include_str!("../../docs/runtime/budget.md")]
    pub struct Budget;
    #[doc = include_str!("../../docs/runtime/breaker.md")]
    pub struct Breaker;
    // Its example is an async `#[retryable]` function: tokio's timer.
    #[cfg(feature = "tokio")]
    #[doc = include_str!("../../docs/runtime/bulkhead.md")]
    pub struct Bulkhead;
    #[doc = include_str!("../../docs/runtime/fallback.md")]
    pub struct Fallback;
    #[doc = include_str!("../../docs/runtime/observability.md")]
    pub struct Observability;
    #[cfg(feature = "tower")]
    #[doc = include_str!("../../docs/runtime/tower.md")]
    pub struct Tower;
    #[cfg(feature = "reqwest-middleware")]
    #[doc = include_str!("../../docs/runtime/reqwest-middleware.md")]
    pub struct ReqwestMiddleware;
    #[cfg(all(feature = "tonic", feature = "tokio"))]
    #[doc = include_str!("../../docs/runtime/tonic.md")]
    pub struct Tonic;
}

/// Used by the code `#[retryable]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    use std::future::Future;

    pub use super::sleep::ThreadSleeper as DefaultSleeper;
    #[cfg(feature = "tokio")]
    pub use super::sleep::TokioSleeper as DefaultAsyncSleeper;

    #[cfg(not(feature = "tokio"))]
    use super::AsyncSleeper;
    use super::{Retried, RetryError};

    pub use super::shared::Slot;

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

    /// The function returns its own value and error types.
    pub fn into_plain<T, E>(result: Result<Retried<T>, RetryError<E>>) -> Result<T, E> {
        result
            .map(Retried::into_value)
            .map_err(RetryError::into_error)
    }

    /// The function returns its own value and `RetryError<E>`.
    pub fn into_detailed<T, E>(
        result: Result<Retried<T>, RetryError<E>>,
    ) -> Result<T, RetryError<E>> {
        result.map(Retried::into_value)
    }

    /// The function returns `Retried<T>` and its own error type.
    pub fn into_retried<T, E>(result: Result<Retried<T>, RetryError<E>>) -> Result<Retried<T>, E> {
        result.map_err(RetryError::into_error)
    }

    /// The function returns `Retried<T>` and `RetryError<E>`.
    pub fn into_full<T, E>(
        result: Result<Retried<T>, RetryError<E>>,
    ) -> Result<Retried<T>, RetryError<E>> {
        result
    }

    /// The outcome of an async retry's last round, with the report of a success.
    pub fn reported<T, E>(
        done: Result<T, RetryError<E>>,
        retry: &super::AsyncRetry<'_, E>,
    ) -> Result<Retried<T>, RetryError<E>> {
        done.map(|value| Retried::new(value, retry.report()))
    }

    /// The outcome of a call, or, when the fallback may answer, the stopped call (its value type
    /// fixed, so that a fallback returning another type is reported where it is named).
    pub fn falls_back<T, E>(
        done: Result<Retried<T>, RetryError<E>>,
    ) -> Result<Result<Retried<T>, RetryError<E>>, Stopped<T, E>> {
        match done {
            Err(stopped) if stopped.allows_fallback() => Err(Stopped {
                stopped,
                value: std::marker::PhantomData,
            }),
            done => Ok(done),
        }
    }

    /// A call stopped for a reason the fallback may answer.
    pub struct Stopped<T, E> {
        stopped: RetryError<E>,
        value: std::marker::PhantomData<fn() -> T>,
    }

    impl<T, E> Stopped<T, E> {
        /// The outcome once the fallback has answered.
        pub fn degrade(self, answer: Result<T, E>) -> Result<Retried<T>, RetryError<E>> {
            self.stopped.degrade(answer)
        }
    }

    /// The span of one call (a `tracing` span with the feature, nothing without).
    #[cfg(feature = "tracing")]
    pub struct CallSpan(tracing::Span);

    /// The span of one call (a `tracing` span with the feature, nothing without).
    #[cfg(not(feature = "tracing"))]
    pub struct CallSpan;

    /// The span of a call of `function`.
    #[must_use]
    #[inline]
    pub fn call_span(function: &'static str) -> CallSpan {
        #[cfg(feature = "tracing")]
        {
            CallSpan(tracing::info_span!("retryable", function))
        }
        #[cfg(not(feature = "tracing"))]
        {
            let _ = function;
            CallSpan
        }
    }

    impl CallSpan {
        /// Enters the span for the rest of a sync call.
        #[must_use]
        #[inline]
        pub fn enter(&self) -> impl Sized + '_ {
            #[cfg(feature = "tracing")]
            {
                self.0.enter()
            }
            #[cfg(not(feature = "tracing"))]
            {}
        }

        /// Runs `f` in the span.
        #[inline]
        pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            #[cfg(feature = "tracing")]
            {
                self.0.in_scope(f)
            }
            #[cfg(not(feature = "tracing"))]
            {
                f()
            }
        }

        /// Runs one round of an async call (an attempt and its wait, or the fallback) in the span.
        #[inline]
        pub fn instrument<F: Future>(&self, round: F) -> impl Future<Output = F::Output> {
            #[cfg(feature = "tracing")]
            {
                tracing::Instrument::instrument(round, self.0.clone())
            }
            #[cfg(not(feature = "tracing"))]
            {
                round
            }
        }
    }
}
