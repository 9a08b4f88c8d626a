use retry_audit::retryable;

#[retryable(jitter = "none")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
