use retry_audit::retryable;

#[retryable(base = "10s")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
