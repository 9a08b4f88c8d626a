use retry_audit::retryable;

#[retryable(attempts = 0)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
