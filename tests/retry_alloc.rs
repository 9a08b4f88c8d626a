//! A `#[retryable]` function whose first attempt succeeds allocates nothing on the heap: no box, no
//! string, no vector, sync or async, with the default budget, a budget of its own or none. With an
//! idempotency key the key's `String` is the one allocation. The default budget of an upstream is
//! made on the first call of the first function that uses it (a few allocations, once per key and
//! process): each test below calls its functions once before measuring.
//!
//! Counted by a counting global allocator (`allocation-counter`), which counts the allocations of
//! the current thread only, so the tests of this file may run in parallel.

use std::future::Future;
use std::hint::black_box;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use allocation_counter::{measure, AllocationInfo};
use retry_audit::retry::{IdempotencyKey, RetryBudget};
use retry_audit::retryable;

static API: RetryBudget = RetryBudget::new(100);

#[retryable]
fn plain_policy(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(attempts = 5, deadline = "30s", base = "50ms", cap = "2s", jitter = "decorrelated", retry_on = [429, 503])]
fn every_argument(x: u64) -> Result<u64, retry_audit::retry::RetryError<io::Error>> {
    Ok(black_box(x) + 1)
}

#[retryable(budget = API)]
fn with_budget(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(budget = none)]
fn without_budget(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(budget_key = "retry_alloc::registered_once")]
fn keyed(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(idempotency_key = key = "order:42")]
fn with_given_key(x: usize) -> io::Result<usize> {
    Ok(black_box(key).as_str().len() + black_box(x))
}

#[retryable(idempotency_key = key)]
fn with_random_key(x: usize) -> io::Result<usize> {
    Ok(black_box(key).as_str().len() + black_box(x))
}

async fn no_wait(_: Duration) {}

#[retryable(sleep = no_wait)]
async fn async_plain(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(sleep = no_wait, budget = API)]
async fn async_budget(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(sleep = no_wait, attempt_timeout = "1s")]
async fn async_timeout(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

#[retryable(sleep = no_wait, idempotency_key = key = "order:42")]
async fn async_given_key(x: usize) -> io::Result<usize> {
    Ok(black_box(key).as_str().len() + black_box(x))
}

/// With the default timer (tokio's clock, read outside any runtime here).
#[cfg(feature = "tokio")]
#[retryable]
async fn async_default_timer(x: u64) -> io::Result<u64> {
    Ok(black_box(x) + 1)
}

/// Every function once, so that the shared budgets they use exist before anything is measured.
fn warm_up() {
    let waker = Waker::from(Arc::new(NoopWaker));
    for call in [plain_policy, with_budget, without_budget] {
        call(1).unwrap();
    }
    every_argument(1).unwrap();
    poll_once(async_plain(1), &waker).unwrap();
    poll_once(async_budget(1), &waker).unwrap();
    poll_once(async_timeout(1), &waker).unwrap();
    poll_once(async_given_key(1), &waker).unwrap();
    with_given_key(1).unwrap();
    with_random_key(1).unwrap();
    #[cfg(feature = "tokio")]
    poll_once(async_default_timer(1), &waker).unwrap();
}

/// The allocations made by `call`, on this thread.
fn allocations(call: impl FnOnce()) -> AllocationInfo {
    measure(call)
}

struct NoopWaker;

impl Wake for NoopWaker {
    fn wake(self: Arc<Self>) {}
}

/// Polls `future` once with a waker made beforehand (outside the measure): each of these futures
/// is ready at its first poll, as the first attempt succeeds and nothing waits.
fn poll_once<F: Future>(future: F, waker: &Waker) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(waker)) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the first attempt succeeds: nothing waits"),
    }
}

/// The counter sees this thread's allocations (else every test here would pass for nothing).
#[test]
fn the_counter_counts() {
    let info = allocations(|| {
        black_box(Box::new(black_box(7_u64)));
        black_box(String::from("a string"));
    });
    assert_eq!(info.count_total, 2, "{info:?}");
}

#[test]
fn sync_success_allocates_nothing() {
    warm_up();
    for call in [plain_policy, with_budget, without_budget] {
        let info = allocations(|| assert_eq!(call(black_box(1)).unwrap(), 2));
        assert_eq!(info.count_total, 0, "{info:?}");
    }
    let info = allocations(|| assert_eq!(every_argument(black_box(1)).unwrap(), 2));
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[test]
fn async_success_allocates_nothing() {
    warm_up();
    let waker = Waker::from(Arc::new(NoopWaker));
    let info = allocations(|| assert_eq!(poll_once(async_plain(1), &waker).unwrap(), 2));
    assert_eq!(info.count_total, 0, "{info:?}");
    let info = allocations(|| assert_eq!(poll_once(async_budget(1), &waker).unwrap(), 2));
    assert_eq!(info.count_total, 0, "{info:?}");
    #[cfg(feature = "tokio")]
    {
        let info = allocations(|| {
            assert_eq!(poll_once(async_default_timer(1), &waker).unwrap(), 2);
        });
        assert_eq!(info.count_total, 0, "{info:?}");
    }
}

/// `attempt_timeout` runs a timer beside each attempt: the sleeper's future, boxed (the runtime
/// holds the sleeper as a trait object), is the one allocation.
#[test]
fn an_attempt_timeout_is_the_one_allocation() {
    warm_up();
    let waker = Waker::from(Arc::new(NoopWaker));
    let info = allocations(|| assert_eq!(poll_once(async_timeout(1), &waker).unwrap(), 2));
    assert_eq!(info.count_total, 1, "{info:?}");
}

/// An idempotency key is a `String`, made once before the first attempt: exactly one allocation,
/// whether the key is given (`"order:42".into()`) or random (a 36-byte UUID).
#[test]
fn a_key_is_the_one_allocation() {
    warm_up();
    let info = allocations(|| assert_eq!(with_given_key(black_box(1)).unwrap(), 9));
    assert_eq!((info.count_total, info.bytes_total), (1, 8), "{info:?}");
    let info = allocations(|| assert_eq!(with_random_key(black_box(1)).unwrap(), 37));
    assert_eq!((info.count_total, info.bytes_total), (1, 36), "{info:?}");
    let waker = Waker::from(Arc::new(NoopWaker));
    let info = allocations(|| assert_eq!(poll_once(async_given_key(1), &waker).unwrap(), 9));
    assert_eq!((info.count_total, info.bytes_total), (1, 8), "{info:?}");
    // The same as making the key by hand.
    let info = allocations(|| drop(black_box(IdempotencyKey::random())));
    assert_eq!((info.count_total, info.bytes_total), (1, 36), "{info:?}");
}

/// The default budget of a key is made once: the first call allocates it, no later call does.
#[test]
fn the_shared_budget_is_made_once() {
    let first = allocations(|| assert_eq!(keyed(black_box(1)).unwrap(), 2));
    assert!(first.count_total >= 1, "{first:?}");
    let second = allocations(|| assert_eq!(keyed(black_box(1)).unwrap(), 2));
    assert_eq!(second.count_total, 0, "{second:?}");
}
