use retry_audit::retryable;

#[retryable(idempotency_key = "order-1")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
