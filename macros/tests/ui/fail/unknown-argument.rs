use retry_audit::retryable;

#[retryable(max_attempts = 3)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
