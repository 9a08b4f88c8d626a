use retry_audit::retryable;

#[retryable(base = "0ms")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
