use retry_audit::retryable;

#[retryable(deadline = "90m")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
