use retry_audit::retryable;

#[retryable(attempts = 3, deadline = "5s", attempts = 4)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
