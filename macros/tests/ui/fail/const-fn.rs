use retry_audit::retryable;

#[retryable]
const fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
