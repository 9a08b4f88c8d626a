use retry_audit::retry::{Decision, Transient};
use retry_audit::retryable;

#[derive(Debug)]
struct MyError;

impl Transient for MyError {
    fn decision(&self) -> Decision {
        Decision::RETRY
    }
}

#[retryable(max_concurrent = 20)]
fn render() -> Result<(), MyError> {
    Err(MyError)
}

fn main() {}
