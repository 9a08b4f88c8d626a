use retry_audit::retryable;

// `tokio::time::sleep` returns a future: it cannot wait in a blocking function.
#[retryable(sleep = tokio::time::sleep)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
