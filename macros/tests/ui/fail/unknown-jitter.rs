use retry_audit::retryable;

#[retryable(jitter = "equal")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
