use retry_audit::retry::RetryBudget;
use retry_audit::retryable;

static API: RetryBudget = RetryBudget::new(100);

#[retryable(budget = API, budget_key = "payments")]
fn charge() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
