use std::time::Duration;

use retry_audit::retry::{RetryBudget, RetryError};
use retry_audit::retryable;

static BUDGET: RetryBudget = RetryBudget::new(50);

fn on_retry(_: u32, _: Duration, _: &std::io::Error) {}
fn on_stop(_: &RetryError<std::io::Error>) {}

#[retryable(
    attempts = 4,
    deadline = "8s",
    base = "200ms",
    cap = "2s",
    jitter = "decorrelated",
    attempt_timeout = "1s",
    idempotency_key = key,
    idempotent = true,
    budget = BUDGET,
    on_retry = on_retry,
    on_stop = on_stop,
    sleep = tokio::time::sleep,
)]
async fn create(name: &str) -> std::io::Result<String> {
    Ok(format!("{name}:{key}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert!(create("a").await.unwrap().starts_with("a:"));
}
