use retry_audit::retry::RetryBudget;
use retry_audit::retryable;

static API: RetryBudget = RetryBudget::new(100);

#[retryable(breaker = API)]
fn quote() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
