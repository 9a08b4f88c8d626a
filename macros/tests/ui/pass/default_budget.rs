//! No `budget`: the upstream's shared budget (by module path, or by `budget_key`); `budget = none`
//! turns it off.
use retry_audit::retry::{shared_budget, RetryError, StopReason};
use retry_audit::retryable;

fn no_wait(_: std::time::Duration) {}

#[retryable(attempts = 10, base = "1ms", cap = "1ms", sleep = no_wait)]
fn by_module() -> Result<(), RetryError<std::io::Error>> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 10, base = "1ms", cap = "1ms", budget_key = "ui::pass::payments", sleep = no_wait)]
fn by_key() -> Result<(), RetryError<std::io::Error>> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 10, base = "1ms", cap = "1ms", budget = none, sleep = no_wait)]
fn unbudgeted() -> Result<(), RetryError<std::io::Error>> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

fn main() {
    // The module's budget holds 100 retries (10 per second of the floor banked).
    let mut retries = 0;
    loop {
        let err = by_module().unwrap_err();
        retries += err.attempts() - 1;
        if err.reason() == StopReason::BudgetExhausted {
            break;
        }
    }
    assert!((100..=110).contains(&retries), "{retries}");
    assert!(shared_budget(module_path!()).tokens() < 1);
    // Another key is another budget...
    assert_eq!(by_key().unwrap_err().reason(), StopReason::AttemptsExhausted);
    assert!(shared_budget("ui::pass::payments").tokens() < 100);
    // ...and without one, every attempt goes out.
    assert_eq!(unbudgeted().unwrap_err().attempts(), 10);
}
