use retry_audit::retryable;

#[retryable(idempotent = "yes")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
