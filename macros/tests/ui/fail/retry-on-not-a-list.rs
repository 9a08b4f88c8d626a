use retry_audit::retryable;

#[retryable(retry_on = 503)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
