use retry_audit::retryable;

#[retryable(attempts)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
