//! The default timer of async functions (feature `tokio`) reads tokio's clock, so a paused test
//! clock drives the deadline: time spent in an attempt counts, whatever the wall clock says.

use std::time::Duration;

use retry_audit::retry::{RetryError, StopReason};
use retry_audit::retryable;
use tokio::time::Instant;

#[retryable(attempts = 5, deadline = "10s", base = "100ms", cap = "1s")]
async fn slow_and_failing(latency: Duration) -> Result<(), RetryError<std::io::Error>> {
    tokio::time::sleep(latency).await;
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[tokio::test(start_paused = true)]
async fn waits_run_on_the_paused_clock() {
    let start = Instant::now();
    let err = slow_and_failing(Duration::ZERO).await.unwrap_err();
    assert_eq!(err.reason(), StopReason::AttemptsExhausted);
    assert_eq!(err.attempts(), 5);
    let elapsed = start.elapsed();
    // Four waits of at most 100, 200, 400 and 800 ms, slept in virtual time.
    assert!(elapsed <= Duration::from_millis(1504), "{elapsed:?}");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_measured_on_tokio_time() {
    // One attempt takes 20 virtual seconds: past the 10 s deadline, so no retry. A clock that
    // read the wall time (which has not moved) would retry five times.
    let err = slow_and_failing(Duration::from_secs(20)).await.unwrap_err();
    assert_eq!(err.attempts(), 1);
    assert_eq!(err.reason(), StopReason::DeadlineExceeded);
}
