use retry_audit::retryable;

#[retryable(attempts = u32::MAX)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
