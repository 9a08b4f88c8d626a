use retry_audit::retryable;

#[retryable(breaker = retry_audit::retry::CircuitBreaker::new())]
fn quote() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
