use retry_audit::retryable;

#[retryable(attempts = 1)]
fn once() -> std::io::Result<()> {
    Ok(())
}

#[retryable(attempts = 10)]
fn ten() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    once().unwrap();
    ten().unwrap();
}
