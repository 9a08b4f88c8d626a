use std::time::Duration;

use retry_audit::retryable;

fn blocking_sleep(delay: Duration) {
    std::thread::sleep(delay);
}

#[retryable(sleep = blocking_sleep)]
async fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
