use retry_audit::retryable;

#[retryable(retry_on = [])]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
