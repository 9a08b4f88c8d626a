use retry_audit::retryable;

#[retryable]
fn call() -> Option<u32> {
    Some(1)
}

fn main() {}
