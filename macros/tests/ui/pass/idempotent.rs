use retry_audit::retryable;

#[retryable(idempotent = true)]
fn read() -> std::io::Result<()> {
    Ok(())
}

#[retryable(idempotent = false)]
fn write() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    read().unwrap();
    write().unwrap();
}
