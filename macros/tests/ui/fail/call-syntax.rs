use retry_audit::retryable;

#[retryable(deadline("10s"))]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
