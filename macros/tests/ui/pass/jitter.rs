use retry_audit::retryable;

#[retryable(jitter = "full")]
fn full() -> std::io::Result<()> {
    Ok(())
}

#[retryable(jitter = "decorrelated")]
fn decorrelated() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    full().unwrap();
    decorrelated().unwrap();
}
