use retry_audit::retry::RetryBudget;
use retry_audit::retryable;

static API: RetryBudget = RetryBudget::new(10);

mod budgets {
    pub static SEARCH: retry_audit::retry::RetryBudget =
        retry_audit::retry::RetryBudget::new(100).with_token_ratio_milli(500);
}

#[retryable(budget = API)]
fn call() -> std::io::Result<()> {
    Ok(())
}

#[retryable(budget = budgets::SEARCH)]
async fn search() -> std::io::Result<()> {
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    call().unwrap();
    search().await.unwrap();
    assert_eq!(API.tokens(), 10);
}
