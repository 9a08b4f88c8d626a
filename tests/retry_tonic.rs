//! `Transient` for `tonic::Status` (feature `tonic`) through `#[retryable]` async functions that
//! call a gRPC stub, on tokio's paused clock: the server's pushback and the rate-limit reset in
//! the metadata, A6's codes, ambiguous `UNAVAILABLE`, a per-attempt timeout told from the
//! server's deadline, the default budget, the breaker with its fallback, the bulkhead.
//!
//! The stub answers from a script the way a tonic client hands statuses back (a code, a message,
//! the trailers as metadata); what is checked is what the runtime does with them.

#![cfg(all(feature = "tonic", feature = "tokio"))]

mod retry_support;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::time::Duration;

use retry_audit::retry::{CircuitBreaker, Retried, RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{PausedTokio, VirtualClock};
use tonic::{Code, Status};

/// A gRPC stub with scripted answers; `hang` makes every call wait that long first.
#[derive(Default)]
struct Stub {
    script: RefCell<VecDeque<Result<u32, Status>>>,
    then: RefCell<Option<Result<u32, Status>>>,
    calls: Cell<u32>,
    hang: Cell<Duration>,
}

impl Stub {
    fn new(
        script: impl IntoIterator<Item = Result<u32, Status>>,
        then: Result<u32, Status>,
    ) -> Self {
        Stub {
            script: RefCell::new(script.into_iter().collect()),
            then: RefCell::new(Some(then)),
            ..Stub::default()
        }
    }

    async fn get_quote(&self) -> Result<u32, Status> {
        self.calls.set(self.calls.get() + 1);
        tokio::time::sleep(self.hang.get()).await;
        let next = self.script.borrow_mut().pop_front();
        next.or_else(|| self.then.borrow().clone())
            .expect("scripted")
    }
}

fn with(mut status: Status, key: &'static str, value: &'static str) -> Status {
    status.metadata_mut().insert(key, value.parse().unwrap());
    status
}

#[retryable(attempts = 4, deadline = "10s", idempotent = true, budget_key = "tonic::quotes", sleep = PausedTokio)]
async fn quote(stub: &Stub) -> Result<u32, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn the_servers_pushback_and_rate_limit_reset_replace_the_backoff() {
    VirtualClock::reset();
    let stub = Stub::new(
        [
            Err(with(
                Status::unavailable("draining"),
                "grpc-retry-pushback-ms",
                "1500",
            )),
            Err(with(
                Status::resource_exhausted("quota"),
                "x-ratelimit-reset-requests",
                "2s",
            )),
        ],
        Ok(7),
    );
    assert_eq!(quote(&stub).await.unwrap(), 7);
    let waits = VirtualClock::sleeps();
    assert_eq!(waits.len(), 2);
    assert!(
        waits[0] >= Duration::from_millis(1500) && waits[0] <= Duration::from_millis(1650),
        "{waits:?}"
    );
    assert!(
        waits[1] >= Duration::from_secs(2) && waits[1] <= Duration::from_millis(2200),
        "{waits:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_negative_pushback_and_a_bare_resource_exhausted_stop_at_once() {
    for status in [
        with(
            Status::unavailable("go away"),
            "grpc-retry-pushback-ms",
            "-1",
        ),
        Status::resource_exhausted("daily quota"),
        Status::invalid_argument("bad symbol"),
        Status::deadline_exceeded("the caller's deadline"),
    ] {
        VirtualClock::reset();
        let stub = Stub::new([], Err(status));
        let err = quote(&stub).await.unwrap_err();
        assert_eq!((err.reason(), stub.calls.get()), (StopReason::Permanent, 1));
        assert!(VirtualClock::sleeps().is_empty());
    }
    // A pushback longer than the time left: not slept.
    let stub = Stub::new(
        [],
        Err(with(
            Status::aborted("later"),
            "grpc-retry-pushback-ms",
            "60000",
        )),
    );
    let err = quote(&stub).await.unwrap_err();
    assert_eq!(
        err.reason(),
        StopReason::ServerWaitTooLong {
            wait: Duration::from_secs(60)
        }
    );
}

#[retryable(attempts = 4, budget_key = "tonic::orders", sleep = PausedTokio)]
async fn place_order(stub: &Stub) -> Result<u32, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn unavailable_on_a_call_that_is_not_idempotent_is_ambiguous() {
    VirtualClock::reset();
    let stub = Stub::new([Err(Status::unavailable("connection reset"))], Ok(1));
    let err = place_order(&stub).await.unwrap_err();
    assert_eq!(
        (err.reason(), stub.calls.get()),
        (StopReason::WriteNotConfirmed, 1)
    );
    // The idempotent read is resent.
    let stub = Stub::new([Err(Status::unavailable("connection reset"))], Ok(1));
    assert_eq!(quote(&stub).await.unwrap(), 1);
    assert_eq!(stub.calls.get(), 2);
}

#[retryable(attempts = 3, deadline = "10s", attempt_timeout = "1s", idempotent = true, budget_key = "tonic::timed", sleep = PausedTokio)]
async fn timed_quote(stub: &Stub) -> Result<u32, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn deadline_exceeded_is_retried_only_when_the_attempt_timeout_fired() {
    VirtualClock::reset();
    let stub = Stub::new([], Ok(3));
    stub.hang.set(Duration::from_secs(5));
    let err = timed_quote(&stub).await.unwrap_err();
    assert_eq!(err.error().code(), Code::DeadlineExceeded);
    assert_eq!(
        (err.reason(), err.attempts()),
        (StopReason::AttemptsExhausted, 3)
    );
    // The server's own DEADLINE_EXCEEDED is the caller's deadline: not retried.
    let stub = Stub::new([], Err(Status::deadline_exceeded("server side")));
    let err = timed_quote(&stub).await.unwrap_err();
    assert_eq!((err.reason(), err.attempts()), (StopReason::Permanent, 1));
}

/// The module's default budget: 200 calls to a stub that is down, 5 attempts each.
#[retryable(attempts = 5, base = "1ms", cap = "1ms", deadline = "60s", idempotent = true, sleep = PausedTokio)]
async fn during_outage(stub: &Stub) -> Result<u32, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn the_module_has_a_budget_by_default() {
    VirtualClock::reset();
    let stub = Stub::new([], Err(Status::unavailable("down")));
    let mut attempts = 0;
    let mut refused = 0;
    for _ in 0..200 {
        let err = during_outage(&stub).await.unwrap_err();
        attempts += err.attempts();
        if err.reason() == StopReason::BudgetExhausted {
            refused += 1;
        }
    }
    assert_eq!(
        attempts,
        stub.calls.get(),
        "refused retries are not attempts"
    );
    let retries = stub.calls.get() - 200;
    assert!(
        (100..=150).contains(&retries),
        "{retries} retries instead of 800"
    );
    assert!(refused >= 150, "{refused}");
}

static QUOTES: CircuitBreaker = CircuitBreaker::new().min_calls(2);

/// The degraded path: the last quote kept in a cache (here, a constant).
async fn cached_quote(stub: &Stub) -> Result<u32, Status> {
    let _ = stub;
    tokio::task::yield_now().await;
    Ok(100)
}

#[retryable(attempts = 3, idempotent = true, breaker = QUOTES, fallback = cached_quote, budget_key = "tonic::breaker", sleep = PausedTokio)]
async fn guarded_quote(stub: &Stub) -> Result<Retried<u32>, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_goes_to_the_fallback_once_and_never_retries_it() {
    VirtualClock::reset();
    let stub = Stub::new([], Err(Status::unavailable("down")));
    let answer = guarded_quote(&stub).await.unwrap();
    assert_eq!(*answer.value(), 100);
    assert!(answer.is_degraded());
    assert_eq!(answer.report().stop_reason(), Some(StopReason::BreakerOpen));
    assert_eq!(stub.calls.get(), 2);
    let answer = guarded_quote(&stub).await.unwrap();
    assert_eq!((answer.attempts(), answer.is_degraded()), (0, true));
    assert_eq!(stub.calls.get(), 2, "not sent while open");
    // A permanent status is an answer: no fallback.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let stub = Stub::new([], Err(Status::not_found("no such symbol")));
    let err = guarded_quote(&stub).await.unwrap_err();
    assert_eq!(
        (err.reason(), err.is_degraded()),
        (StopReason::Permanent, false)
    );
}

#[retryable(max_concurrent = 1, budget_key = "tonic::bulkhead", sleep = PausedTokio)]
async fn single_file(stub: &Stub) -> Result<u32, RetryError<Status>> {
    stub.get_quote().await
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_refuses_the_call_without_sending_it() {
    VirtualClock::reset();
    let slow = Stub::new([], Ok(1));
    slow.hang.set(Duration::from_secs(1));
    let fast = Stub::new([], Ok(2));
    let (first, second) = tokio::join!(single_file(&slow), async {
        tokio::task::yield_now().await;
        single_file(&fast).await
    });
    assert_eq!(first.unwrap(), 1);
    let err = second.unwrap_err();
    assert_eq!(
        (err.reason(), err.attempts()),
        (StopReason::BulkheadFull, 0)
    );
    assert_eq!(err.error().code(), Code::Unavailable);
    assert_eq!(fast.calls.get(), 0);
    assert_eq!(single_file(&fast).await.unwrap(), 2);
}
