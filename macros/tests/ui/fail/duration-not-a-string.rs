use retry_audit::retryable;

#[retryable(base = 100)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
