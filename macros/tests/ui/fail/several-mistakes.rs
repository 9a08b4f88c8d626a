use retry_audit::retryable;

// Every mistake is reported in one compile, one error each.
#[retryable(attempts = 0, jitter = "none", retry_on = [404], cap = "1ms", base = "1s", nope = 1)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
