use retry_audit::retry::{CircuitBreaker, RetryError, StopReason};
use retry_audit::retryable;

static UPSTREAM: CircuitBreaker = CircuitBreaker::new().min_calls(2);

mod upstreams {
    pub static SEARCH: retry_audit::retry::CircuitBreaker =
        retry_audit::retry::CircuitBreaker::new();
}

fn no_wait(_: std::time::Duration) {}

#[retryable(attempts = 3, breaker = UPSTREAM, budget = none, sleep = no_wait)]
fn call() -> Result<(), RetryError<std::io::Error>> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(breaker = upstreams::SEARCH)]
async fn search() -> std::io::Result<()> {
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Two failures of two calls: the breaker opens after the second attempt, and the third is
    // not sent.
    let err = call().unwrap_err();
    assert_eq!((err.reason(), err.attempts()), (StopReason::BreakerOpen, 2));
    // The next call is not sent: its error is the rejection.
    let err = call().unwrap_err();
    assert_eq!((err.reason(), err.attempts()), (StopReason::BreakerOpen, 0));
    assert_eq!(err.error().kind(), std::io::ErrorKind::Other);
    search().await.unwrap();
}
