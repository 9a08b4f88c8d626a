use retry_audit::retryable;

#[retryable(base = "200ms", cap = "5s")]
fn both() -> std::io::Result<()> {
    Ok(())
}

#[retryable(base = "1s", cap = "1s")]
fn equal() -> std::io::Result<()> {
    Ok(())
}

#[retryable(cap = "1m")]
fn cap_only() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    both().unwrap();
    equal().unwrap();
    cap_only().unwrap();
}
