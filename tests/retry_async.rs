//! Behaviour of async `#[retryable]` functions on tokio's paused clock (`start_paused`): virtual
//! time advances only when every task waits, so timings are exact.
//!
//! Each function here opts out of the default budget (`budget = none`): these tests run hundreds
//! of retries through one module, far more than its shared budget would let through; the default
//! budget has its own tests (`tests/retry_default_budget.rs`).

mod retry_support;

use std::time::Duration;

use retry_audit::retry::{RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{ApiError, PausedTokio, Service, VirtualClock};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

#[retryable(budget = none, attempts = 4, deadline = "10s", base = "100ms", cap = "1s", sleep = PausedTokio)]
async fn call(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

#[tokio::test(start_paused = true)]
async fn exact_attempt_counts_and_waits_on_the_virtual_clock() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Refused), Err(ApiError::status(503)), Ok(4)]);
    let start = Instant::now();
    assert_eq!(call(&service).await.unwrap(), 4);
    assert_eq!(service.calls.get(), 3);
    let sleeps = VirtualClock::sleeps();
    assert_eq!(sleeps.len(), 2);
    assert!(sleeps[0] <= 100 * MS && sleeps[1] <= 200 * MS, "{sleeps:?}");
    // It really waited (tokio's timer wakes on whole milliseconds).
    let waited: Duration = sleeps.iter().sum();
    assert!(start.elapsed() >= waited && start.elapsed() <= waited + 2 * MS);

    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(500)));
    let err = call(&service).await.unwrap_err();
    assert_eq!((service.calls.get(), err.attempts()), (4, 4));
    assert_eq!(err.reason(), StopReason::AttemptsExhausted);
}

#[tokio::test(start_paused = true)]
async fn permanent_4xx_stops_at_once() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(404)));
    let err = call(&service).await.unwrap_err();
    assert_eq!(service.calls.get(), 1);
    assert_eq!(err.reason(), StopReason::Permanent);
    assert!(VirtualClock::sleeps().is_empty());
}

#[retryable(budget = none, attempts = 10, deadline = "2s", base = "500ms", cap = "2s", sleep = PausedTokio)]
async fn call_slow(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

#[tokio::test(start_paused = true)]
async fn never_sleeps_past_the_deadline() {
    let latency = 300 * MS;
    for _ in 0..100 {
        VirtualClock::reset();
        let service = Service::always(Err(ApiError::Refused));
        service.latency.set(latency);
        let start = Instant::now();
        let err = call_slow(&service).await.unwrap_err();
        let before_last_attempt = start.elapsed().saturating_sub(latency);
        assert!(before_last_attempt < 2000 * MS, "{before_last_attempt:?}");
        assert_eq!(err.reason(), StopReason::DeadlineExceeded);
    }
}

#[retryable(budget = none, attempts = 3, deadline = "10s", attempt_timeout = "1s", idempotent = true, sleep = PausedTokio)]
async fn call_cut(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_cuts_each_attempt() {
    VirtualClock::reset();
    let service = Service::always(Ok(1));
    service.latency.set(60_000 * MS);
    let start = Instant::now();
    let err = call_cut(&service).await.unwrap_err();
    assert_eq!(err.attempts(), 3);
    assert_eq!(err.reason(), StopReason::AttemptsExhausted);
    assert_eq!(*err.error(), ApiError::Cut(1000 * MS));
    assert_eq!(service.calls.get(), 0, "no attempt got to answer");
    // The sleeper served both the attempts' timers (1 s each) and the two waits between them.
    let sleeps = VirtualClock::sleeps();
    assert_eq!(sleeps.len(), 5, "{sleeps:?}");
    assert!(
        sleeps.iter().step_by(2).all(|t| *t == 1000 * MS),
        "{sleeps:?}"
    );
    let waits = sleeps[1] + sleeps[3];
    let elapsed = start.elapsed();
    assert!(
        elapsed >= 3000 * MS + waits && elapsed <= 3000 * MS + waits + 3 * MS,
        "{elapsed:?}"
    );
}

#[retryable(budget = none, attempts = 5, deadline = "2s", base = "100ms", cap = "100ms", attempt_timeout = "1500ms", idempotent = true, sleep = PausedTokio)]
async fn call_cut_by_deadline(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

#[tokio::test(start_paused = true)]
async fn an_attempt_is_never_cut_later_than_the_time_left() {
    VirtualClock::reset();
    let service = Service::always(Ok(1));
    service.latency.set(60_000 * MS);
    let start = Instant::now();
    let err = call_cut_by_deadline(&service).await.unwrap_err();
    // 1.5 s, a wait under 100 ms, then the rest of the 2 s: cut at the deadline exactly.
    assert_eq!(start.elapsed(), 2000 * MS);
    assert_eq!(err.attempts(), 2);
    assert_eq!(err.reason(), StopReason::DeadlineExceeded);
    let ApiError::Cut(second) = *err.error() else {
        panic!("{err:?}")
    };
    assert!(second < 500 * MS, "{second:?}");
}

#[retryable(budget = none, attempts = 3, deadline = "2s", attempt_timeout = "1s", sleep = PausedTokio)]
async fn write_cut(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

#[tokio::test(start_paused = true)]
async fn a_cut_write_without_key_is_not_resent() {
    VirtualClock::reset();
    let service = Service::always(Ok(1));
    service.latency.set(5000 * MS);
    let err = write_cut(&service).await.unwrap_err();
    assert_eq!(err.attempts(), 1);
    assert_eq!(err.reason(), StopReason::WriteNotConfirmed);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_on_the_clock() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::with_header(429, "Retry-After", "2")), Ok(1)]);
    let start = Instant::now();
    assert_eq!(call(&service).await.unwrap(), 1);
    let elapsed = start.elapsed();
    assert!(elapsed >= 2000 * MS && elapsed <= 2200 * MS, "{elapsed:?}");
}

#[tokio::test(start_paused = true)]
async fn too_long_retry_after_stops_without_sleeping() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::with_header(503, "Retry-After", "120")));
    let start = Instant::now();
    let err = call(&service).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        err.reason(),
        StopReason::ServerWaitTooLong {
            wait: Duration::from_secs(120)
        }
    );
}

#[retryable(budget = none, attempts = 4, base = "10ms", cap = "10ms", idempotency_key = key, sleep = PausedTokio)]
async fn create(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(Some(key.as_ref())).await
}

#[tokio::test(start_paused = true)]
async fn idempotency_key_is_identical_across_attempts() {
    let service = Service::new([Err(ApiError::Lost), Err(ApiError::Lost), Ok(2)]);
    assert_eq!(create(&service).await.unwrap(), 2);
    let keys = service.keys.borrow();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
}

#[tokio::test(start_paused = true)]
async fn ambiguous_write_without_key_is_not_resent() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Lost), Ok(1)]);
    let err = call(&service).await.unwrap_err();
    assert_eq!(service.calls.get(), 1);
    assert_eq!(err.reason(), StopReason::WriteNotConfirmed);
}

/// A body that only reads shared, thread-safe state: the wrapper's future is `Send`.
#[retryable(budget = none, attempts = 3, base = "1ms", cap = "1ms", idempotent = true, sleep = PausedTokio)]
async fn shared(counter: &std::sync::atomic::AtomicU32) -> std::io::Result<u32> {
    let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::task::yield_now().await;
    if n < 2 {
        return Err(std::io::ErrorKind::TimedOut.into());
    }
    Ok(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wrapper_future_is_send() {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let task = tokio::spawn(shared(&COUNTER));
    assert_eq!(task.await.unwrap().unwrap(), 2);
}
