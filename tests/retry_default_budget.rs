//! The budget `#[retryable]` draws from when none is written: one per upstream (the module path,
//! or `budget_key`), retries up to 20 % of the calls plus 10 per second, 100 banked; on the
//! virtual clock of `tests/retry_support` (its floor refills with virtual time).
//!
//! Each test keys its functions apart (`budget_key`), so that the tests of this file, which run
//! in parallel, do not share a budget.

mod retry_support;

use std::time::Duration;

use retry_audit::retry::{shared_budget, RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{ApiError, Service, VirtualClock};

#[retryable(attempts = 5, base = "1ms", cap = "1ms", deadline = "60s", budget_key = "default::outage", sleep = VirtualClock)]
fn during_outage(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[retryable(attempts = 5, base = "1ms", cap = "1ms", deadline = "60s", budget = none, sleep = VirtualClock)]
fn unbudgeted(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

/// 300 calls during an outage, 5 attempts each: 1 500 requests without a budget; with the default
/// one, every first attempt, the 100 banked retries, one per five calls and the floor's 10 per
/// second of (virtual) time.
#[test]
fn an_outage_gets_the_banked_retries_then_a_fifth_of_the_calls_plus_the_floor() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(503)));
    let mut refused = 0;
    for _ in 0..300 {
        let err = during_outage(&service).unwrap_err();
        // The refused retry is not an attempt: the count is the requests this call sent.
        if err.reason() == StopReason::BudgetExhausted {
            refused += 1;
        } else {
            assert_eq!(err.reason(), StopReason::AttemptsExhausted);
        }
    }
    let retries = service.calls.get() - 300;
    let elapsed = VirtualClock::elapsed().as_secs_f64();
    // The bound of the design (+1 for the fraction of a token being rounded up in a deposit).
    let bound = 100.0 + 0.2 * 300.0 + 10.0 * elapsed + 1.0;
    assert!(
        f64::from(retries) <= bound,
        "{retries} retries, {bound} allowed"
    );
    assert!(retries >= 100, "{retries}: the bank is spent first");
    assert!(refused >= 250, "{refused} calls refused a retry");
    assert!(shared_budget("default::outage").tokens() < 1);

    // The same calls without a budget: every attempt.
    let service = Service::always(Err(ApiError::status(503)));
    for _ in 0..300 {
        unbudgeted(&service).unwrap_err();
    }
    assert_eq!(service.calls.get(), 1500);
}

#[retryable(attempts = 3, base = "1ms", cap = "1ms", deadline = "60s", budget_key = "default::accounting", sleep = VirtualClock)]
fn counted(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

/// A retry the budget refuses is neither sent, nor slept for, nor counted as an attempt.
#[test]
fn a_refused_retry_is_not_an_attempt() {
    VirtualClock::reset();
    let budget = shared_budget("default::accounting");
    let service = Service::always(Err(ApiError::Refused));
    // Drain the bank.
    while budget.tokens() >= 1 {
        counted(&service).unwrap_err();
    }
    VirtualClock::reset();
    let before = service.calls.get();
    let err = counted(&service).unwrap_err();
    assert_eq!(err.reason(), StopReason::BudgetExhausted);
    assert_eq!(err.attempts(), 1);
    assert_eq!(service.calls.get() - before, 1);
    assert_eq!(err.report().waits(), 0);
    assert!(
        VirtualClock::sleeps().is_empty(),
        "the refused retry was not waited for"
    );
}

#[retryable(attempts = 2, base = "1ms", cap = "1ms", deadline = "60s", budget_key = "default::quiet", sleep = VirtualClock)]
fn quiet(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

/// A client that calls rarely deposits little: the floor lets it retry again after a while.
#[test]
fn the_floor_lets_a_quiet_client_retry() {
    VirtualClock::reset();
    let budget = shared_budget("default::quiet");
    let failing = Service::always(Err(ApiError::Refused));
    while budget.tokens() >= 1 {
        quiet(&failing).unwrap_err();
    }
    assert_eq!(
        quiet(&failing).unwrap_err().reason(),
        StopReason::BudgetExhausted
    );
    // A tenth of a second later: one retry (10 per second).
    VirtualClock::advance(Duration::from_millis(100));
    let service = Service::new([Err(ApiError::Refused)]);
    *service.then_mut() = Some(Ok(1));
    assert_eq!(quiet(&service).unwrap(), 1);
    assert_eq!(service.calls.get(), 2);
}

mod payments {
    use super::{ApiError, RetryError, Service, VirtualClock};
    use retry_audit::retryable;

    #[retryable(attempts = 4, base = "1ms", cap = "1ms", budget_key = "default::payments", sleep = VirtualClock)]
    pub fn charge(service: &Service) -> Result<u32, RetryError<ApiError>> {
        service.request(None)
    }
}

mod refunds {
    use super::{ApiError, RetryError, Service, VirtualClock};
    use retry_audit::retryable;

    #[retryable(attempts = 4, base = "1ms", cap = "1ms", budget_key = "default::payments", sleep = VirtualClock)]
    pub fn refund(service: &Service) -> Result<u32, RetryError<ApiError>> {
        service.request(None)
    }
}

/// Two functions of two modules that name one key share one budget.
#[test]
fn a_budget_key_groups_functions_of_one_upstream() {
    VirtualClock::reset();
    let down = Service::always(Err(ApiError::status(502)));
    while shared_budget("default::payments").tokens() >= 1 {
        payments::charge(&down).unwrap_err();
    }
    let err = refunds::refund(&down).unwrap_err();
    assert_eq!(
        (err.reason(), err.attempts()),
        (StopReason::BudgetExhausted, 1)
    );
}

#[retryable(attempts = 3, base = "1ms", cap = "1ms", sleep = VirtualClock)]
fn by_module(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

/// Without `budget_key`, the key is the module path.
#[test]
fn the_default_key_is_the_module_path() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Refused)]);
    *service.then_mut() = Some(Ok(5));
    let budget = shared_budget(module_path!());
    let before = budget.tokens();
    assert_eq!(by_module(&service).unwrap(), 5);
    assert_eq!(
        budget.tokens(),
        before - 1,
        "the retry came from the module's budget"
    );
}
