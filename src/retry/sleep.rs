//! How a retry waits and reads the time: [`Sleeper`] for blocking code, [`AsyncSleeper`] for async
//! code. Both are injectable, so tests can run on a virtual clock.

use std::future::Future;
use std::time::{Duration, Instant};

/// A clock and a blocking wait, for synchronous retries.
///
/// Any `Fn(Duration)` is a `Sleeper` that reads the real clock; implement the trait yourself to
/// drive a virtual clock in tests (advance it in `sleep`, read it in `now`).
pub trait Sleeper {
    /// The current time; the deadline is measured with it.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Blocks for `delay`.
    fn sleep(&self, delay: Duration);
}

impl<F: Fn(Duration)> Sleeper for F {
    fn sleep(&self, delay: Duration) {
        self(delay);
    }
}

/// The default for synchronous functions: [`std::thread::sleep`] and [`Instant::now`].
///
/// Never call a blocking retry from async code: `std::thread::sleep` stalls the executor thread
/// (domain.md §3). Make the function `async` instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleeper;

impl Sleeper for ThreadSleeper {
    fn sleep(&self, delay: Duration) {
        std::thread::sleep(delay);
    }
}

/// A clock and a non-blocking wait, for async retries.
///
/// Any `Fn(Duration) -> impl Future<Output = ()>` is an `AsyncSleeper` that reads the real clock
/// (`async_std::task::sleep`, `smol::Timer::after` wrapped to return `()`, ...). With the `tokio`
/// feature, `TokioSleeper` uses tokio's timer and clock, so tests on a paused clock
/// (`#[tokio::test(start_paused = true)]`) run in virtual time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot wait in async code",
    label = "no async timer",
    note = "an async `#[retryable]` fn waits with tokio by default: enable the `tokio` feature of `retry-audit`, or name an async sleep function with `sleep = path`"
)]
pub trait AsyncSleeper {
    /// The future returned by [`AsyncSleeper::sleep`].
    type Sleep: Future<Output = ()>;

    /// The current time; the deadline is measured with it.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Waits for `delay` without blocking the thread.
    fn sleep(&self, delay: Duration) -> Self::Sleep;
}

impl<F, Fut> AsyncSleeper for F
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = ()>,
{
    type Sleep = Fut;

    fn sleep(&self, delay: Duration) -> Fut {
        self(delay)
    }
}

/// Tokio's timer and clock (`tokio::time::sleep`, `tokio::time::Instant::now`): the default for
/// async functions. Honours a paused test clock.
#[cfg(feature = "tokio")]
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl AsyncSleeper for TokioSleeper {
    type Sleep = tokio::time::Sleep;

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep(&self, delay: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(delay)
    }
}
