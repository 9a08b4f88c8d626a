use retry_audit::retry::{Decision, Transient};
use retry_audit::retryable;

#[derive(Debug)]
struct MyError;

impl Transient for MyError {
    fn decision(&self) -> Decision {
        Decision::RETRY
    }
}

#[retryable(attempt_timeout = "1s")]
async fn call() -> Result<(), MyError> {
    Err(MyError)
}

fn main() {}
