//! A panic inside the retried body propagates unchanged: the same payload reaches the caller,
//! the body is not run again (a panic is a bug, not a transient failure), the shared budget is
//! not charged for it, and nothing is left poisoned: the same budget, the same `#[retryable]`
//! function and the same thread keep working afterwards. Blocking and async, through the
//! runtime API and through `#[retryable]`.

use std::ops::ControlFlow;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_audit::retry::{Policy, Retry, RetryBudget, RetryError, StopReason};
use retry_audit::retryable;

/// A payload no code in the runtime could make up: it must arrive as it was thrown.
#[derive(Debug, PartialEq, Eq)]
struct Bug {
    code: u32,
}

fn refused() -> std::io::Error {
    std::io::ErrorKind::ConnectionRefused.into()
}

const POLICY: Policy = Policy::new()
    .attempts(5)
    .backoff(Duration::from_millis(1), Duration::from_millis(1));

fn no_sleep(_: Duration) {}

/// The payload of a caught panic, as a `Bug`.
fn bug(payload: Box<dyn std::any::Any + Send>) -> Bug {
    *payload
        .downcast::<Bug>()
        .unwrap_or_else(|other| panic!("the payload changed type: {other:?}"))
}

/// Quiet panics: the default hook would print each expected one.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Bug>().is_none() {
                default(info);
            }
        }));
    });
    f()
}

#[test]
fn a_panic_in_a_blocking_body_propagates_once_and_the_budget_still_works() {
    let budget = RetryBudget::new(10);
    let mut calls = 0;
    let caught = quietly(|| {
        panic::catch_unwind(AssertUnwindSafe(|| {
            Retry::<std::io::Error>::new(POLICY)
                .budget(&budget)
                .run_sync(&no_sleep, |_| -> Result<u32, std::io::Error> {
                    calls += 1;
                    panic::panic_any(Bug { code: 7 })
                })
        }))
    });
    assert_eq!(
        bug(caught.expect_err("the panic propagates")),
        Bug { code: 7 }
    );
    assert_eq!(calls, 1, "a panic is not retried");
    assert_eq!(budget.tokens(), 10, "a panic is not charged as a failure");

    // After two transient failures, the third attempt panics: the two failures are charged,
    // the panic is not, and nothing runs after it.
    let mut calls = 0;
    let caught = quietly(|| {
        panic::catch_unwind(AssertUnwindSafe(|| {
            Retry::new(POLICY).budget(&budget).run_sync(
                &no_sleep,
                |attempt| -> Result<u32, std::io::Error> {
                    calls += 1;
                    if attempt.number() < 3 {
                        return Err(refused());
                    }
                    panic::panic_any(Bug { code: 8 })
                },
            )
        }))
    });
    assert_eq!(
        bug(caught.expect_err("the panic propagates")),
        Bug { code: 8 }
    );
    assert_eq!(calls, 3);
    assert_eq!(budget.tokens(), 8);

    // The budget keeps working: a retry is granted (more than half left), a success refunds.
    let mut calls = 0;
    let result = Retry::new(POLICY)
        .budget(&budget)
        .run_sync(&no_sleep, |attempt| {
            calls += 1;
            if attempt.number() == 1 {
                Err(refused())
            } else {
                Ok(attempt.number())
            }
        });
    assert_eq!(result.map_err(|e| e.reason()), Ok(2));
    assert_eq!(calls, 2);
    assert_eq!(budget.tokens(), 7, "7.1 tokens: one failure, one refund");
}

static SYNC_BUDGET: RetryBudget = RetryBudget::new(10);
static SYNC_CALLS: AtomicU32 = AtomicU32::new(0);

#[retryable(attempts = 4, base = "1ms", cap = "1ms", budget = SYNC_BUDGET, sleep = no_sleep)]
fn flaky_sync(panic_on: u32) -> Result<u32, RetryError<std::io::Error>> {
    let n = SYNC_CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n == panic_on {
        panic::panic_any(Bug { code: n });
    }
    if n % 2 == 1 {
        return Err(refused());
    }
    Ok(n)
}

#[test]
fn a_panic_in_a_retryable_fn_propagates_and_the_function_works_afterwards() {
    // Call 1 fails (transient), call 2 panics: the panic ends the call.
    let caught = quietly(|| panic::catch_unwind(|| flaky_sync(2)));
    assert_eq!(
        bug(caught.expect_err("the panic propagates")),
        Bug { code: 2 }
    );
    assert_eq!(SYNC_CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(
        SYNC_BUDGET.tokens(),
        9,
        "the failure is charged, the panic is not"
    );
    // The same function, the same budget: call 3 fails, call 4 succeeds.
    assert_eq!(flaky_sync(0).map_err(|e| e.reason()), Ok(4));
    assert_eq!(
        SYNC_BUDGET.tokens(),
        8,
        "8.1 after one more failure and a success"
    );
}

/// A second thread panicking in the body does not disturb a shared `static` budget used by
/// others at the same time.
#[test]
fn a_panic_on_one_thread_leaves_a_shared_budget_usable_by_the_others() {
    static SHARED: RetryBudget = RetryBudget::new(100);
    let panicking = std::thread::spawn(|| {
        quietly(|| {
            Retry::<std::io::Error>::new(POLICY)
                .budget(&SHARED)
                .run_sync(&no_sleep, |_| -> Result<u32, std::io::Error> {
                    panic::panic_any(Bug { code: 1 })
                })
        })
    });
    let payload = panicking.join().expect_err("the thread panicked");
    assert_eq!(bug(payload), Bug { code: 1 });
    let result = Retry::new(POLICY)
        .budget(&SHARED)
        .run_sync(&no_sleep, |attempt| {
            if attempt.number() < 3 {
                Err(refused())
            } else {
                Ok(())
            }
        });
    assert!(result.is_ok());
    assert_eq!(SHARED.tokens(), 98);
    assert!(SHARED.allows_retry());
}

static ASYNC_BUDGET: RetryBudget = RetryBudget::new(10);

async fn run_async(panic_on: u32, calls: &'static AtomicU32) -> Result<u32, StopReason> {
    let sleep = |_: Duration| tokio::task::yield_now();
    let mut retry = Retry::new(POLICY).budget(&ASYNC_BUDGET).start_async(&sleep);
    loop {
        let attempt = async {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::task::yield_now().await;
            if n == panic_on {
                panic::panic_any(Bug { code: n });
            }
            if n % 2 == 1 {
                Err(refused())
            } else {
                Ok(n)
            }
        };
        if let ControlFlow::Break(done) = retry.attempt(attempt).await {
            return done.map_err(|e| e.reason());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_an_async_body_propagates_once_and_the_budget_still_works() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    quietly(|| ());
    // Attempt 1 fails (transient), attempt 2 panics: the task ends with that panic.
    let joined = tokio::spawn(run_async(2, &CALLS)).await;
    let error = joined.expect_err("the task panicked");
    assert!(error.is_panic());
    assert_eq!(bug(error.into_panic()), Bug { code: 2 });
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        2,
        "not retried after the panic"
    );
    assert_eq!(ASYNC_BUDGET.tokens(), 9);

    // The same budget, from another task: attempt 3 fails, attempt 4 succeeds.
    let result = tokio::spawn(run_async(0, &CALLS)).await.expect("no panic");
    assert_eq!(result, Ok(4));
    assert_eq!(ASYNC_BUDGET.tokens(), 8);
}

static ASYNC_FN_BUDGET: RetryBudget = RetryBudget::new(10);
static ASYNC_FN_CALLS: AtomicU32 = AtomicU32::new(0);

async fn yield_sleep(_: Duration) {
    tokio::task::yield_now().await;
}

#[retryable(attempts = 4, base = "1ms", cap = "1ms", budget = ASYNC_FN_BUDGET, sleep = yield_sleep)]
async fn flaky_async(panic_on: u32) -> Result<u32, RetryError<std::io::Error>> {
    let n = ASYNC_FN_CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::task::yield_now().await;
    if n == panic_on {
        panic::panic_any(Bug { code: n });
    }
    if n % 2 == 1 {
        return Err(refused());
    }
    Ok(n)
}

#[tokio::test]
async fn a_panic_in_an_async_retryable_fn_propagates_and_the_function_works_afterwards() {
    quietly(|| ());
    let error = tokio::spawn(flaky_async(2)).await.expect_err("panicked");
    assert_eq!(bug(error.into_panic()), Bug { code: 2 });
    assert_eq!(ASYNC_FN_CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(ASYNC_FN_BUDGET.tokens(), 9);
    let result = flaky_async(0).await.map_err(|e| e.reason());
    assert_eq!(result, Ok(4));
    assert_eq!(ASYNC_FN_BUDGET.tokens(), 8);
}
