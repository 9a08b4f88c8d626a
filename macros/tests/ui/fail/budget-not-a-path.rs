use retry_audit::retryable;

#[retryable(budget = false)]
fn charge() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
