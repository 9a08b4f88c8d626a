use retry_audit::retry::{CircuitBreaker, Decision, Transient};
use retry_audit::retryable;

#[derive(Debug)]
struct MyError;

impl Transient for MyError {
    fn decision(&self) -> Decision {
        Decision::RETRY
    }
}

static QUOTES: CircuitBreaker = CircuitBreaker::new();

#[retryable(breaker = QUOTES)]
fn quote() -> Result<(), MyError> {
    Err(MyError)
}

fn main() {}
