use retry_audit::retryable;

#[retryable(deadline = "0s")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
