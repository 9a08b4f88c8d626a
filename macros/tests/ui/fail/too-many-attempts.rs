use retry_audit::retryable;

#[retryable(attempts = 50)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
