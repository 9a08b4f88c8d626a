//! The bulkhead's brief queue (`Bulkhead::queue`), on virtual clocks: an attempt that finds every
//! permit out waits for one, a millisecond at a time, at most the queue's length and never past
//! the deadline; then it is refused (`BulkheadFull`) without being sent.

mod retry_support;

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use retry_audit::retry::{
    Bulkhead, BulkheadPermit, Policy, Retry, RetryError, Sleeper, StopReason,
};
use retry_audit::retryable;
use retry_support::{ApiError, PausedTokio, Service, VirtualClock};

/// A virtual clock that gives a permit back after `release_after` of waiting.
struct Releasing<'b> {
    elapsed: Cell<Duration>,
    origin: Instant,
    held: RefCell<Option<BulkheadPermit<'b>>>,
    release_after: Duration,
    sleeps: Cell<u32>,
}

impl Sleeper for Releasing<'_> {
    fn now(&self) -> Instant {
        self.origin + self.elapsed.get()
    }

    fn sleep(&self, delay: Duration) {
        self.sleeps.set(self.sleeps.get() + 1);
        self.elapsed.set(self.elapsed.get() + delay);
        if self.elapsed.get() >= self.release_after {
            self.held.borrow_mut().take();
        }
    }
}

fn call(
    bulkhead: &Bulkhead,
    clock: &Releasing<'_>,
    deadline: Duration,
) -> Result<u32, RetryError<std::io::Error>> {
    Retry::new(Policy::new().deadline(deadline))
        .bulkhead(bulkhead)
        .run_sync(clock, |_| Ok(7))
}

fn clock(bulkhead: &Bulkhead, release_after: Duration) -> Releasing<'_> {
    Releasing {
        elapsed: Cell::new(Duration::ZERO),
        origin: Instant::now(),
        held: RefCell::new(bulkhead.try_acquire()),
        release_after,
        sleeps: Cell::new(0),
    }
}

#[test]
fn a_queued_attempt_gets_the_permit_freed_within_the_queue() {
    let bulkhead = Bulkhead::new(1).queue(Duration::from_millis(50));
    let clock = clock(&bulkhead, Duration::from_millis(3));
    assert_eq!(call(&bulkhead, &clock, Duration::from_secs(10)).unwrap(), 7);
    assert_eq!(clock.sleeps.get(), 3, "three steps of a millisecond");
    assert_eq!(bulkhead.in_flight(), 0);
}

#[test]
fn beyond_the_queue_the_attempt_is_refused_without_being_sent() {
    let bulkhead = Bulkhead::new(1).queue(Duration::from_millis(20));
    let clock = clock(&bulkhead, Duration::from_secs(60));
    let err = call(&bulkhead, &clock, Duration::from_secs(10)).unwrap_err();
    assert_eq!(
        (err.reason(), err.attempts()),
        (StopReason::BulkheadFull, 0)
    );
    assert_eq!(
        clock.elapsed.get(),
        Duration::from_millis(20),
        "the queue's length, no more"
    );
    assert_eq!(err.report().waits(), 0, "a queue is not a retry's wait");
}

#[test]
fn the_queue_never_waits_past_the_deadline() {
    let bulkhead = Bulkhead::new(1).queue(Duration::from_secs(1));
    let clock = clock(&bulkhead, Duration::from_secs(60));
    let err = call(&bulkhead, &clock, Duration::from_millis(10)).unwrap_err();
    assert_eq!(err.reason(), StopReason::BulkheadFull);
    assert!(
        clock.elapsed.get() < Duration::from_millis(10),
        "{:?}",
        clock.elapsed.get()
    );
}

#[test]
fn without_a_queue_a_full_bulkhead_refuses_at_once() {
    let bulkhead = Bulkhead::new(1);
    let clock = clock(&bulkhead, Duration::ZERO);
    let err = call(&bulkhead, &clock, Duration::from_secs(10)).unwrap_err();
    assert_eq!(err.reason(), StopReason::BulkheadFull);
    assert_eq!(clock.sleeps.get(), 0);
}

static SINGLE: Bulkhead = Bulkhead::new(1).queue(Duration::from_millis(50));

#[retryable(bulkhead = SINGLE, budget = none, sleep = PausedTokio)]
async fn one_at_a_time(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request_async(None).await
}

/// Two async calls at once through a bulkhead of one with a queue: the second waits for the
/// first (10 ms), then goes out.
#[tokio::test(start_paused = true)]
async fn an_async_call_waits_in_the_queue_for_the_one_before_it() {
    VirtualClock::reset();
    let slow = Service::new([Ok(1)]);
    slow.latency.set(Duration::from_millis(10));
    let fast = Service::new([Ok(2)]);
    let (first, second) = tokio::join!(one_at_a_time(&slow), one_at_a_time(&fast));
    assert_eq!((first.unwrap(), second.unwrap()), (1, 2));
    let queued: Duration = VirtualClock::sleeps().iter().sum();
    assert!(
        queued >= Duration::from_millis(10) && queued <= Duration::from_millis(12),
        "{queued:?}"
    );
}

#[test]
#[should_panic(expected = "at most 1 s")]
fn a_long_queue_is_refused() {
    let _ = Bulkhead::new(1).queue(Duration::from_secs(2));
}
