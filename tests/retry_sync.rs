//! Behaviour of blocking `#[retryable]` functions, on a virtual clock (`sleep = VirtualClock`):
//! attempt counts, the deadline, jitter bounds and spread, statuses, Retry-After, idempotency.
//!
//! Each function here opts out of the default budget (`budget = none`): these tests run hundreds
//! of retries through one module, far more than its shared budget would let through; the default
//! budget has its own tests (`tests/retry_default_budget.rs`).

mod retry_support;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Duration;

use retry_audit::retry::{Decision, RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{http_date_ago, http_date_in, ApiError, Service, VirtualClock};

const MS: Duration = Duration::from_millis(1);

#[retryable(budget = none, attempts = 4, deadline = "10s", base = "100ms", cap = "1s", sleep = VirtualClock)]
fn call(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

/// The same, returning the function's own error type (the last error).
#[retryable(budget = none, attempts = 3, sleep = VirtualClock)]
fn call_plain(service: &Service) -> Result<u32, ApiError> {
    service.request(None)
}

fn run(service: &Service) -> Result<u32, RetryError<ApiError>> {
    VirtualClock::reset();
    call(service)
}

#[test]
fn succeeds_after_transient_failures_with_exact_attempt_counts() {
    for failures in 0..4 {
        let script = (0..failures).map(|_| Err(ApiError::Refused)).chain([Ok(7)]);
        let service = Service::new(script);
        assert_eq!(run(&service).unwrap(), 7);
        assert_eq!(service.calls.get(), failures + 1);
        assert_eq!(VirtualClock::sleeps().len(), failures as usize);
    }
}

#[test]
fn gives_up_after_exactly_the_attempt_limit() {
    let service = Service::always(Err(ApiError::status(503)));
    let err = run(&service).unwrap_err();
    assert_eq!(service.calls.get(), 4);
    assert_eq!(err.attempts(), 4);
    assert_eq!(err.reason(), StopReason::AttemptsExhausted);
    assert_eq!(
        VirtualClock::sleeps().len(),
        3,
        "no wait after the last attempt"
    );
}

#[test]
fn plain_signature_returns_the_last_error() {
    VirtualClock::reset();
    let service = Service::new([
        Err(ApiError::Refused),
        Err(ApiError::status(502)),
        Err(ApiError::status(503)),
    ]);
    assert_eq!(call_plain(&service).unwrap_err(), ApiError::status(503));
    assert_eq!(service.calls.get(), 3);
}

#[test]
fn permanent_4xx_stops_at_once() {
    for code in [400, 401, 403, 404, 409, 422] {
        let service = Service::always(Err(ApiError::status(code)));
        let err = run(&service).unwrap_err();
        assert_eq!(service.calls.get(), 1, "{code}");
        assert_eq!(err.reason(), StopReason::Permanent, "{code}");
        assert!(VirtualClock::sleeps().is_empty(), "{code}");
    }
}

#[test]
fn transient_statuses_are_retried() {
    for code in [408, 429, 500, 502, 503, 504] {
        let service = Service::new([Err(ApiError::status(code)), Ok(1)]);
        assert_eq!(run(&service).unwrap(), 1, "{code}");
        assert_eq!(service.calls.get(), 2, "{code}");
    }
}

#[retryable(budget = none, attempts = 10, deadline = "1m", base = "100ms", cap = "2s", sleep = VirtualClock)]
fn call_ten_times(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn every_delay_is_within_full_jitter_bounds_and_delays_are_spread() {
    let base = 100 * MS;
    let cap = 2000 * MS;
    let mut by_retry: Vec<BTreeSet<Duration>> = vec![BTreeSet::new(); 9];
    for _ in 0..200 {
        VirtualClock::reset();
        let service = Service::always(Err(ApiError::Refused));
        let err = call_ten_times(&service).unwrap_err();
        assert_eq!(err.attempts(), 10);
        let sleeps = VirtualClock::sleeps();
        assert_eq!(sleeps.len(), 9);
        for (n, delay) in sleeps.into_iter().enumerate() {
            let ceiling = (base * 2u32.pow(n as u32)).min(cap);
            assert!(delay <= ceiling, "retry {n}: {delay:?} > {ceiling:?}");
            by_retry[n].insert(delay);
        }
    }
    for (n, delays) in by_retry.iter().enumerate() {
        let ceiling = (base * 2u32.pow(n as u32)).min(cap);
        // Spread over the whole range, not clustered: full jitter, not a fixed or proportional
        // delay.
        assert!(
            delays.len() > 190,
            "retry {n}: only {} distinct delays",
            delays.len()
        );
        assert!(*delays.first().unwrap() < ceiling / 4, "retry {n}");
        assert!(*delays.last().unwrap() > ceiling * 3 / 4, "retry {n}");
    }
}

#[retryable(budget = none, attempts = 10, deadline = "2s", base = "500ms", cap = "2s", sleep = VirtualClock)]
fn call_slow(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn never_sleeps_past_the_deadline() {
    let deadline = 2000 * MS;
    let latency = 300 * MS;
    let mut reasons = BTreeSet::new();
    for _ in 0..300 {
        VirtualClock::reset();
        let service = Service::always(Err(ApiError::Refused));
        service.latency.set(latency);
        let err = call_slow(&service).unwrap_err();
        // Every wait ended before the deadline: the time before the last attempt started is
        // under it (the last attempt itself is not cut in blocking code).
        let before_last_attempt = VirtualClock::elapsed().saturating_sub(latency);
        assert!(before_last_attempt < deadline, "{before_last_attempt:?}");
        assert_eq!(VirtualClock::sleeps().len() as u32, err.attempts() - 1);
        reasons.insert(err.reason().as_str());
    }
    assert_eq!(
        reasons.into_iter().collect::<Vec<_>>(),
        ["deadline exceeded"],
        "ten attempts of 300 ms cannot fit in 2 s: the deadline stops every run"
    );
}

#[test]
fn retry_after_seconds_replace_the_backoff() {
    let service = Service::new([Err(ApiError::with_header(503, "Retry-After", "3")), Ok(1)]);
    assert_eq!(run(&service).unwrap(), 1);
    let [delay] = VirtualClock::sleeps()[..] else {
        panic!("one wait expected")
    };
    // The server's wait, plus at most a tenth of it (or `base`) of jitter; never less.
    assert!(delay >= 3000 * MS && delay <= 3300 * MS, "{delay:?}");
}

#[test]
fn retry_after_milliseconds_header() {
    let service = Service::new([
        Err(ApiError::with_header(429, "retry-after-ms", "1500")),
        Ok(1),
    ]);
    assert_eq!(run(&service).unwrap(), 1);
    let delay = VirtualClock::sleeps()[0];
    assert!(delay >= 1500 * MS && delay <= 1650 * MS, "{delay:?}");
}

#[test]
fn retry_after_http_date_is_honoured() {
    let date = http_date_in(4);
    let service = Service::new([Err(ApiError::with_header(503, "Retry-After", &date)), Ok(1)]);
    assert_eq!(run(&service).unwrap(), 1);
    let delay = VirtualClock::sleeps()[0];
    // An HTTP-date has a resolution of one second.
    assert!(delay >= 3000 * MS && delay <= 4400 * MS, "{delay:?}");
}

#[test]
fn retry_after_date_in_the_past_is_clamped_to_now() {
    let date = http_date_ago(3600);
    let service = Service::new([Err(ApiError::with_header(503, "Retry-After", &date)), Ok(1)]);
    assert_eq!(run(&service).unwrap(), 1);
    let delay = VirtualClock::sleeps()[0];
    assert!(delay <= 100 * MS, "only jitter, at most `base`: {delay:?}");
}

#[test]
fn retry_after_longer_than_the_time_left_stops_without_sleeping() {
    for value in [
        "120".to_owned(),
        http_date_in(3600),
        "99999999999999999999999".to_owned(),
    ] {
        let service = Service::always(Err(ApiError::with_header(429, "Retry-After", &value)));
        let err = run(&service).unwrap_err();
        assert_eq!(service.calls.get(), 1, "{value}");
        assert!(VirtualClock::sleeps().is_empty(), "{value}");
        assert!(
            matches!(err.reason(), StopReason::ServerWaitTooLong { wait } if wait > 10 * 1000 * MS),
            "{value}: {:?}",
            err.reason()
        );
    }
}

#[test]
fn retry_after_that_barely_fits_is_waited_and_ends_before_the_deadline() {
    let service = Service::new([Err(ApiError::with_header(503, "Retry-After", "9")), Ok(5)]);
    assert_eq!(run(&service).unwrap(), 5);
    let delay = VirtualClock::sleeps()[0];
    assert!(delay >= 9000 * MS && delay < 10_000 * MS, "{delay:?}");
}

#[retryable(budget = none, attempts = 5, base = "10ms", cap = "10ms", idempotency_key = key, sleep = VirtualClock)]
fn create(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(Some(key.as_str()))
}

#[test]
fn idempotency_key_is_identical_across_attempts() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Lost), Err(ApiError::status(503)), Ok(3)]);
    assert_eq!(
        create(&service).unwrap(),
        3,
        "a lost write is resent with its key"
    );
    let keys = service.keys.borrow().clone();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    assert_eq!(keys[0].len(), 36, "a UUID: {}", keys[0]);

    let other = Service::new([Ok(1)]);
    create(&other).unwrap();
    assert_ne!(
        other.keys.borrow()[0],
        keys[0],
        "a new operation gets a new key"
    );
}

#[retryable(budget = none, attempts = 3, base = "10ms", cap = "10ms", idempotency_key = key = format!("order:{order_id}"), sleep = VirtualClock)]
fn place_order(service: &Service, order_id: u64) -> Result<u32, RetryError<ApiError>> {
    service.request(Some(key.as_ref()))
}

#[test]
fn domain_idempotency_key_is_computed_once() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Lost), Ok(1)]);
    place_order(&service, 42).unwrap();
    assert_eq!(*service.keys.borrow(), ["order:42", "order:42"]);
}

#[test]
fn ambiguous_write_without_key_is_not_resent() {
    let service = Service::new([Err(ApiError::Lost), Ok(1)]);
    let err = run(&service).unwrap_err();
    assert_eq!(service.calls.get(), 1);
    assert_eq!(err.reason(), StopReason::WriteNotConfirmed);
    assert_eq!(*err.error(), ApiError::Lost);
    assert!(VirtualClock::sleeps().is_empty());
}

#[retryable(budget = none, attempts = 3, idempotent = true, sleep = VirtualClock)]
fn read(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn ambiguous_failure_of_a_declared_idempotent_operation_is_resent() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Lost), Err(ApiError::Lost), Ok(9)]);
    assert_eq!(read(&service).unwrap(), 9);
    assert_eq!(service.calls.get(), 3);
}

#[retryable(budget = none, attempts = 3, retry_on = [503], sleep = VirtualClock)]
fn only_503(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn retry_on_restricts_the_statuses() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(500)));
    assert_eq!(
        only_503(&service).unwrap_err().reason(),
        StopReason::Permanent
    );
    assert_eq!(service.calls.get(), 1, "500 is not in the set");

    let service = Service::new([Err(ApiError::status(503)), Ok(1)]);
    assert_eq!(only_503(&service).unwrap(), 1);

    let service = Service::new([Err(ApiError::Refused), Ok(1)]);
    assert_eq!(
        only_503(&service).unwrap(),
        1,
        "no status: its own decision"
    );
}

fn nothing_is_transient(_: &ApiError) -> Decision {
    Decision::Stop
}

#[retryable(budget = none, classify = nothing_is_transient, sleep = VirtualClock)]
fn classified(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn classify_overrides_the_error_type() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::Refused));
    assert_eq!(
        classified(&service).unwrap_err().reason(),
        StopReason::Permanent
    );
    assert_eq!(service.calls.get(), 1);
}

thread_local! {
    static EVENTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn on_retry(attempt: u32, delay: Duration, error: &ApiError) {
    EVENTS.with(|e| {
        e.borrow_mut()
            .push(format!("retry {attempt} {} {error}", delay <= 200 * MS));
    });
}

fn on_stop(error: &RetryError<ApiError>) {
    EVENTS.with(|e| {
        e.borrow_mut()
            .push(format!("stop {} {}", error.attempts(), error.reason()));
    });
}

#[retryable(budget = none, attempts = 3, base = "100ms", cap = "200ms", on_retry = on_retry, on_stop = on_stop, sleep = VirtualClock)]
fn observed(service: &Service) -> Result<u32, ApiError> {
    service.request(None)
}

#[test]
fn hooks_see_each_retry_and_the_stop() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::Refused));
    observed(&service).unwrap_err();
    let events = EVENTS.with(|e| e.borrow().clone());
    assert_eq!(
        events,
        [
            "retry 1 true Refused",
            "retry 2 true Refused",
            "stop 3 attempts exhausted"
        ]
    );
}

#[test]
fn seeded_jitter_is_reproducible() {
    let delays = |seed| {
        fastrand::seed(seed);
        VirtualClock::reset();
        call_ten_times(&Service::always(Err(ApiError::Refused))).unwrap_err();
        VirtualClock::sleeps()
    };
    assert_eq!(delays(7), delays(7));
    assert_ne!(delays(7), delays(8));
}

#[retryable(budget = none, attempts = 10, deadline = "1m", base = "100ms", cap = "3s", jitter = "decorrelated", sleep = VirtualClock)]
fn decorrelated(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn decorrelated_delays_stay_between_base_and_cap_and_vary() {
    let mut below_cap = BTreeSet::new();
    for _ in 0..100 {
        VirtualClock::reset();
        decorrelated(&Service::always(Err(ApiError::Refused))).unwrap_err();
        for delay in VirtualClock::sleeps() {
            assert!(delay >= 100 * MS && delay <= 3000 * MS, "{delay:?}");
            if delay < 3000 * MS {
                below_cap.insert(delay);
            }
        }
    }
    // Growth reaches the cap after a few retries; below it every delay is drawn anew.
    assert!(below_cap.len() > 200, "{} distinct delays", below_cap.len());
}
