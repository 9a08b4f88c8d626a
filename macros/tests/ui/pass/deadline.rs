use retry_audit::retryable;

#[retryable(deadline = "250ms")]
fn short() -> std::io::Result<()> {
    Ok(())
}

#[retryable(deadline = "60m")]
fn batch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    short().unwrap();
    batch().unwrap();
}
