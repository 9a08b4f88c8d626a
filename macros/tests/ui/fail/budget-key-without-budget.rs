use retry_audit::retryable;

#[retryable(budget = none, budget_key = "payments")]
fn charge() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
