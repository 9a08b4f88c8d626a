use retry_audit::retryable;

#[retryable(on_retry = |_, _, _| {})]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
