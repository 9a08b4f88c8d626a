use retry_audit::retryable;

#[retryable(base = "2s", cap = "500ms")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
