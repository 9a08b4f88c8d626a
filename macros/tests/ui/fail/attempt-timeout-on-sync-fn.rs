use retry_audit::retryable;

#[retryable(attempt_timeout = "2s")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
