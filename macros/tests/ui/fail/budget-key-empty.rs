use retry_audit::retryable;

#[retryable(budget_key = " ")]
fn charge() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
