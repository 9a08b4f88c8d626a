//! The shared retry budget under load: 1 000 concurrent tasks against one service, on tokio's
//! paused clock. In a sustained outage the budget refuses retries (about one request per call goes
//! out instead of `attempts`); after enough successes it allows them again.

mod retry_support;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use retry_audit::retry::{RetryBudget, RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{ApiError, PausedTokio};
use tokio::task::JoinSet;

const TASKS: u32 = 1000;

static OUTAGE_BUDGET: RetryBudget = RetryBudget::new(100);
static OUTAGE_REQUESTS: AtomicU32 = AtomicU32::new(0);

#[retryable(attempts = 3, base = "100ms", cap = "1s", budget = OUTAGE_BUDGET, sleep = PausedTokio)]
async fn during_outage() -> Result<u32, RetryError<ApiError>> {
    OUTAGE_REQUESTS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    Err(ApiError::status(503))
}

#[tokio::test(start_paused = true)]
async fn a_sustained_outage_shared_by_1000_tasks_gets_almost_no_retries() {
    let mut tasks = JoinSet::new();
    for _ in 0..TASKS {
        tasks.spawn(during_outage());
    }
    let mut budget_refused = 0;
    let mut exhausted = 0;
    while let Some(result) = tasks.join_next().await {
        match result.unwrap().unwrap_err().reason() {
            StopReason::BudgetExhausted => budget_refused += 1,
            StopReason::AttemptsExhausted => exhausted += 1,
            other => panic!("unexpected stop: {other}"),
        }
    }
    let requests = OUTAGE_REQUESTS.load(Ordering::SeqCst);
    // Without the budget: 3 000 requests. With it: every first attempt (never refused), and the
    // retries granted while more than half of the 100 tokens were left.
    assert!(
        (TASKS..=TASKS + 50).contains(&requests),
        "{requests} requests for {TASKS} calls"
    );
    assert_eq!(budget_refused + exhausted, TASKS);
    assert!(budget_refused >= TASKS - 50, "{budget_refused} refused");
    assert_eq!(OUTAGE_BUDGET.tokens(), 0);
}

static RECOVERY_BUDGET: RetryBudget = RetryBudget::new(100);
static HEALTHY: AtomicBool = AtomicBool::new(false);
static RECOVERY_REQUESTS: AtomicU32 = AtomicU32::new(0);

/// Fails on its first attempt while the service is down; succeeds otherwise... and, when healthy,
/// fails once in a call marked by `flaky`.
#[retryable(attempts = 3, base = "100ms", cap = "1s", budget = RECOVERY_BUDGET, sleep = PausedTokio)]
async fn recovering(flaky: bool) -> Result<u32, RetryError<ApiError>> {
    let n = RECOVERY_REQUESTS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    if !HEALTHY.load(Ordering::SeqCst) {
        return Err(ApiError::status(503));
    }
    if flaky && n.is_multiple_of(2) {
        return Err(ApiError::Refused);
    }
    Ok(n)
}

async fn run_all(calls: u32, flaky: bool) -> Vec<Result<u32, RetryError<ApiError>>> {
    let mut tasks = JoinSet::new();
    for _ in 0..calls {
        tasks.spawn(recovering(flaky));
    }
    let mut results = Vec::new();
    while let Some(result) = tasks.join_next().await {
        results.push(result.unwrap());
    }
    results
}

async fn one_flaky_call_is_retried() -> bool {
    // Make the next request number even, so that the call fails once.
    if RECOVERY_REQUESTS.load(Ordering::SeqCst) % 2 == 1 {
        RECOVERY_REQUESTS.fetch_add(1, Ordering::SeqCst);
    }
    let before = RECOVERY_REQUESTS.load(Ordering::SeqCst);
    let result = recovering(true).await;
    let sent = RECOVERY_REQUESTS.load(Ordering::SeqCst) - before;
    match result {
        Ok(_) => {
            assert_eq!(sent, 2);
            true
        }
        Err(err) => {
            assert_eq!((sent, err.reason()), (1, StopReason::BudgetExhausted));
            false
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_budget_recovers_after_successes() {
    // The outage drains the budget: retries are refused.
    let outage = run_all(TASKS, false).await;
    assert!(outage.iter().all(Result::is_err));
    assert_eq!(RECOVERY_BUDGET.tokens(), 0);

    // The service is back. Each success refunds 0.1 token: after 500 successes the bucket holds
    // 50 of 100 tokens, not more than half, so a failure is still not retried...
    HEALTHY.store(true, Ordering::SeqCst);
    let healed = run_all(500, false).await;
    assert!(healed.iter().all(Result::is_ok));
    assert_eq!(RECOVERY_BUDGET.tokens(), 50);
    assert!(!one_flaky_call_is_retried().await);

    // ...and after enough further successes to be above half again, it is.
    let more = run_all(30, false).await;
    assert!(more.iter().all(Result::is_ok));
    assert!(RECOVERY_BUDGET.allows_retry());
    assert!(one_flaky_call_is_retried().await);
}
