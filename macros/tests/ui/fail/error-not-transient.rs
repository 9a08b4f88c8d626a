use retry_audit::retryable;

#[derive(Debug)]
struct MyError;

#[retryable]
fn call() -> Result<(), MyError> {
    Err(MyError)
}

fn main() {}
