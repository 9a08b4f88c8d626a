use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_audit::retry::{RetryError, StopReason};
use retry_audit::retryable;

static RETRIES: AtomicU32 = AtomicU32::new(0);
static STOPS: AtomicU32 = AtomicU32::new(0);

fn on_retry(attempt: u32, delay: Duration, error: &std::io::Error) {
    assert!(delay <= Duration::from_millis(2));
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionRefused);
    RETRIES.fetch_add(attempt, Ordering::SeqCst);
}

fn on_stop<E>(error: &RetryError<E>) {
    assert_eq!(error.reason(), StopReason::AttemptsExhausted);
    STOPS.fetch_add(1, Ordering::SeqCst);
}

#[retryable(attempts = 3, base = "1ms", cap = "2ms", on_retry = on_retry, on_stop = on_stop)]
fn connect() -> std::io::Result<()> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

fn main() {
    connect().unwrap_err();
    assert_eq!(RETRIES.load(Ordering::SeqCst), 1 + 2);
    assert_eq!(STOPS.load(Ordering::SeqCst), 1);
}
