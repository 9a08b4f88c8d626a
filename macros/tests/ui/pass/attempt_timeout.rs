use std::time::Duration;

use retry_audit::retry::{RetryError, StopReason};
use retry_audit::retryable;

#[retryable(attempt_timeout = "2s", idempotent = true, attempts = 2)]
async fn slow_read() -> Result<(), RetryError<std::io::Error>> {
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok(())
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let err = slow_read().await.unwrap_err();
    assert_eq!(err.attempts(), 2);
    assert_eq!(err.reason(), StopReason::AttemptsExhausted);
    assert_eq!(err.error().kind(), std::io::ErrorKind::TimedOut);
}
