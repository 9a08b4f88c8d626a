use retry_audit::retryable;

#[retryable]
fn call() {}

fn main() {}
