use retry_audit::retryable;

#[retryable(cap = "10m")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
