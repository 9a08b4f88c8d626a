//! Property tests of the retry runtime: random policies (attempts, deadline, base, cap, jitter,
//! idempotency) against random failure scripts (transient errors, server waits, ambiguous
//! writes, permanent errors, successes, each attempt taking a random time), run blocking
//! (`Retry::run_sync`) and async (`AsyncRetry`) on a virtual clock. Whatever the script:
//!
//! - the attempts never exceed the policy's cap;
//! - no wait ends at or past the deadline (so the total sleep never passes it either);
//! - every backoff delay is within `[0, cap]` (and within full jitter's ceiling for the retry, or
//!   `[base, cap]` for decorrelated jitter); a server wait is honoured, never shortened, with at
//!   most `max(wait / 10, base)` of jitter on top;
//! - a `Retry-After` longer than the time left stops at once, without sleeping;
//! - an ambiguous failure of a write that is not idempotent (no key) is never resent;
//! - a permanent error stops at once, a success is returned at once.
//!
//! And for what surrounds the loop:
//!
//! - a shared ratio budget (the default design: `percent` % of the calls plus a floor per
//!   second) never grants more retries than its bank, its deposits and its floor allow, does not
//!   refuse before its bank is spent, and a retry it refuses is neither sent, nor waited for, nor
//!   counted as an attempt;
//! - a circuit breaker, driven by random admissions, outcomes, dropped tickets and time, keeps
//!   its state machine: closed never refuses, open refuses until its cool-down ends and only a
//!   failure opens it, half-open lets at most `probes` probes out, closes only after that many
//!   successes and opens again on a probe's failure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use retry_audit::retry::{
    AsyncSleeper, BreakerState, BreakerTicket, CircuitBreaker, Decision, Jitter, Policy, Retry,
    RetryBudget, RetryError, Sleeper, StopReason,
};

/// One failure of the scripted operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// Transient, no server wait: the backoff decides.
    Transient,
    /// Transient with the server's wait (`Retry-After`).
    ServerWait(Duration),
    /// The request went out and no answer came back.
    Ambiguous,
    /// A 4xx: retrying cannot help.
    Permanent,
}

fn classify(failure: &Failure) -> Decision {
    match *failure {
        Failure::Transient => Decision::RETRY,
        Failure::ServerWait(wait) => Decision::Retry { after: Some(wait) },
        Failure::Ambiguous => Decision::Ambiguous,
        Failure::Permanent => Decision::Stop,
    }
}

/// One attempt of the script: how long it takes and how it ends.
#[derive(Clone, Copy, Debug)]
struct Step {
    latency: Duration,
    outcome: Result<u32, Failure>,
}

/// A virtual clock shared by the attempts and the sleeper, recording every wait.
struct Clock {
    origin: Instant,
    elapsed_nanos: AtomicU64,
    /// `(time of the wait, its length)`, since the start.
    sleeps: Mutex<Vec<(Duration, Duration)>>,
}

impl Clock {
    fn new() -> Self {
        Clock {
            origin: Instant::now(),
            elapsed_nanos: AtomicU64::new(0),
            sleeps: Mutex::new(Vec::new()),
        }
    }

    fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.elapsed_nanos.load(Ordering::SeqCst))
    }

    fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).expect("a short test");
        self.elapsed_nanos.fetch_add(nanos, Ordering::SeqCst);
    }

    fn record(&self, delay: Duration) {
        self.sleeps
            .lock()
            .expect("not poisoned")
            .push((self.elapsed(), delay));
        self.advance(delay);
    }

    fn sleeps(&self) -> Vec<(Duration, Duration)> {
        self.sleeps.lock().expect("not poisoned").clone()
    }
}

impl Sleeper for Clock {
    fn now(&self) -> Instant {
        self.origin + self.elapsed()
    }

    fn sleep(&self, delay: Duration) {
        self.record(delay);
    }
}

impl AsyncSleeper for Clock {
    type Sleep = std::future::Ready<()>;

    fn now(&self) -> Instant {
        self.origin + self.elapsed()
    }

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        self.record(delay);
        std::future::ready(())
    }
}

/// What a run did: when each attempt started, the waits, the result.
struct Trace {
    attempt_starts: Vec<Duration>,
    sleeps: Vec<(Duration, Duration)>,
    result: Result<u32, RetryError<Failure>>,
}

/// The step for attempt `n` (1-based); past the end of the script, transient failures.
fn step(script: &[Step], n: u32) -> Step {
    script.get(n as usize - 1).copied().unwrap_or(Step {
        latency: Duration::ZERO,
        outcome: Err(Failure::Transient),
    })
}

fn run_sync(policy: Policy, script: &[Step], seed: u64) -> Trace {
    let clock = Clock::new();
    let mut attempt_starts = Vec::new();
    let result = Retry::with_classifier(policy, classify)
        .with_rng(fastrand::Rng::with_seed(seed))
        .run_sync(&clock, |attempt| {
            attempt_starts.push(clock.elapsed());
            let step = step(script, attempt.number());
            clock.advance(step.latency);
            step.outcome
        });
    Trace {
        attempt_starts,
        sleeps: clock.sleeps(),
        result,
    }
}

fn run_async(
    runtime: &tokio::runtime::Runtime,
    policy: Policy,
    script: &[Step],
    seed: u64,
) -> Trace {
    let clock = Clock::new();
    let mut attempt_starts = Vec::new();
    let result = runtime.block_on(async {
        let mut retry = Retry::with_classifier(policy, classify)
            .with_rng(fastrand::Rng::with_seed(seed))
            .start_async(&clock);
        let mut n = 0;
        loop {
            n += 1;
            attempt_starts.push(clock.elapsed());
            let step = step(script, n);
            let attempt = async {
                clock.advance(step.latency);
                tokio::task::yield_now().await;
                step.outcome
            };
            if let std::ops::ControlFlow::Break(done) = retry.attempt(attempt).await {
                break done;
            }
        }
    });
    Trace {
        attempt_starts,
        sleeps: clock.sleeps(),
        result,
    }
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        1u32..=Policy::MAX_ATTEMPTS,
        // Deadlines from a millisecond (tighter than most waits) to the longest allowed.
        prop_oneof![1u64..=2_000, 1u64..=60_000, 1u64..=3_600_000],
        1u64..=10_000_000,
        0u64..=300_000_000,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(attempts, deadline_ms, base_us, extra_us, decorrelated, idempotent)| {
                let base = Duration::from_micros(base_us);
                let cap = (base + Duration::from_micros(extra_us)).min(Policy::MAX_CAP);
                Policy::new()
                    .attempts(attempts)
                    .deadline(Duration::from_millis(deadline_ms))
                    .backoff(base, cap)
                    .jitter(if decorrelated {
                        Jitter::Decorrelated
                    } else {
                        Jitter::Full
                    })
                    .idempotent(idempotent)
            },
        )
}

fn failure() -> impl Strategy<Value = Failure> {
    prop_oneof![
        4 => Just(Failure::Transient),
        2 => (0u64..=120_000).prop_map(|ms| Failure::ServerWait(Duration::from_millis(ms))),
        1 => Just(Failure::ServerWait(Duration::MAX)),
        1 => Just(Failure::Ambiguous),
        1 => Just(Failure::Permanent),
    ]
}

fn script() -> impl Strategy<Value = Vec<Step>> {
    let step = (
        prop_oneof![Just(0u64), 0u64..=50, 0u64..=5_000],
        prop_oneof![6 => failure().prop_map(Err), 1 => any::<u32>().prop_map(Ok)],
    )
        .prop_map(|(latency_ms, outcome)| Step {
            latency: Duration::from_millis(latency_ms),
            outcome,
        });
    proptest::collection::vec(step, 1..=12)
}

/// Timers may wake a millisecond late: the runtime ends every wait at least this long before
/// the deadline (src/retry/run.rs).
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// Every promise of the module doc, for one run.
#[allow(clippy::too_many_lines)]
fn check(policy: &Policy, script: &[Step], trace: &Trace) -> Result<(), TestCaseError> {
    let calls = u32::try_from(trace.attempt_starts.len()).expect("few attempts");
    let deadline = policy.overall_deadline();

    // The attempt cap, and the count the error reports.
    prop_assert!(calls >= 1 && calls <= policy.max_attempts());
    if let Err(error) = &trace.result {
        prop_assert_eq!(error.attempts(), calls);
    }
    // One wait between two attempts, none after the last.
    prop_assert_eq!(trace.sleeps.len() as u32, calls - 1);

    // No wait ends at or past the deadline; all waits together stay under it.
    let total: Duration = trace.sleeps.iter().map(|(_, d)| *d).sum();
    prop_assert!(
        total < deadline,
        "slept {total:?} of a {deadline:?} deadline"
    );
    for &(at, delay) in &trace.sleeps {
        prop_assert!(
            at + delay + TIMER_SLACK <= deadline,
            "a wait of {delay:?} at {at:?} ends past the deadline {deadline:?}"
        );
    }

    // Each wait against what the attempt before it said.
    for (i, &(_, delay)) in trace.sleeps.iter().enumerate() {
        let n = u32::try_from(i).expect("few attempts");
        match step(script, n + 1).outcome {
            Err(Failure::ServerWait(wait)) => {
                let jitter = (wait / 10).max(policy.base());
                prop_assert!(
                    delay >= wait && delay <= wait.saturating_add(jitter),
                    "server wait {wait:?}, slept {delay:?}"
                );
            }
            Err(Failure::Transient | Failure::Ambiguous) => {
                prop_assert!(delay <= policy.cap(), "{delay:?} over the cap");
                match policy.jitter_kind() {
                    Jitter::Full => prop_assert!(
                        delay <= policy.backoff_ceiling(n),
                        "retry {n}: {delay:?} over the ceiling {:?}",
                        policy.backoff_ceiling(n)
                    ),
                    Jitter::Decorrelated => prop_assert!(delay >= policy.base()),
                }
            }
            other => prop_assert!(false, "a wait after {other:?}"),
        }
    }

    // How the run ended, from the last attempt's outcome.
    let last = step(script, calls);
    let time_left =
        deadline.saturating_sub(trace.attempt_starts[calls as usize - 1] + last.latency);
    match (last.outcome, &trace.result) {
        (Ok(value), Ok(got)) => prop_assert_eq!(value, *got),
        (Ok(_), Err(e)) => prop_assert!(false, "a success reported as {e:?}"),
        (Err(_), Ok(got)) => prop_assert!(false, "a failure reported as success {got}"),
        (Err(failure), Err(error)) => {
            prop_assert_eq!(*error.error(), failure);
            let reason = error.reason();
            let last_allowed = calls == policy.max_attempts();
            let no_time = time_left <= TIMER_SLACK;
            match failure {
                Failure::Permanent => prop_assert_eq!(reason, StopReason::Permanent),
                Failure::Ambiguous if !policy.is_idempotent() => {
                    // Never resent: this was the last request, whatever was left.
                    prop_assert_eq!(reason, StopReason::WriteNotConfirmed);
                }
                Failure::ServerWait(wait) if wait >= time_left => {
                    // Longer than the time left: stop now, and say why.
                    if !last_allowed && !no_time {
                        prop_assert_eq!(reason, StopReason::ServerWaitTooLong { wait });
                    } else {
                        let stopped = matches!(
                            reason,
                            StopReason::AttemptsExhausted
                                | StopReason::DeadlineExceeded
                                | StopReason::ServerWaitTooLong { .. }
                        );
                        prop_assert!(stopped, "stopped with {reason:?}");
                    }
                }
                _ => {
                    // A retryable failure ends the run only when the attempts or the time ran
                    // out.
                    let out_of_room = (reason == StopReason::AttemptsExhausted && last_allowed)
                        || reason == StopReason::DeadlineExceeded
                        || matches!(reason, StopReason::ServerWaitTooLong { .. });
                    prop_assert!(
                        out_of_room,
                        "stopped with {reason:?} after {calls} of {} attempts",
                        policy.max_attempts()
                    );
                }
            }
        }
    }

    // Earlier attempts: none of them may have ended the run, so each was retryable.
    for n in 1..calls {
        match step(script, n).outcome {
            Ok(_) => prop_assert!(false, "attempt {n} succeeded and was followed by another"),
            Err(Failure::Permanent) => {
                prop_assert!(false, "attempt {n}: a permanent error retried");
            }
            Err(Failure::Ambiguous) => prop_assert!(
                policy.is_idempotent(),
                "attempt {n}: an ambiguous write without a key was resent"
            ),
            Err(_) => {}
        }
    }
    Ok(())
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 2_000,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn blocking_retries_keep_every_promise() {
    runner()
        .run(
            &(policy(), script(), any::<u64>()),
            |(policy, script, seed)| check(&policy, &script, &run_sync(policy, &script, seed)),
        )
        .unwrap();
}

#[test]
fn async_retries_keep_every_promise() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    runner()
        .run(
            &(policy(), script(), any::<u64>()),
            |(policy, script, seed)| {
                check(
                    &policy,
                    &script,
                    &run_async(&runtime, policy, &script, seed),
                )
            },
        )
        .unwrap();
}

/// The checks are not vacuous: a trace that breaks a promise is rejected.
#[test]
fn the_checks_reject_a_broken_trace() {
    let policy = Policy::new().attempts(3);
    let script = [Step {
        latency: Duration::ZERO,
        outcome: Err(Failure::Ambiguous),
    }];
    let honest = run_sync(policy, &script, 1);
    assert!(check(&policy, &script, &honest).is_ok());
    // The same failure, resent twice.
    let resent = Trace {
        attempt_starts: vec![Duration::ZERO; 3],
        sleeps: vec![(Duration::ZERO, Duration::from_millis(10)); 2],
        result: Err(RetryError::new(
            Failure::Ambiguous,
            StopReason::AttemptsExhausted,
            3,
        )),
    };
    assert!(check(&policy, &script, &resent).is_err());
    // A wait past the deadline.
    let late = Trace {
        attempt_starts: vec![Duration::ZERO; 2],
        sleeps: vec![(Duration::ZERO, policy.overall_deadline())],
        result: Err(RetryError::new(
            Failure::Ambiguous,
            StopReason::WriteNotConfirmed,
            2,
        )),
    };
    assert!(check(&policy.idempotent(true), &script, &late).is_err());
}

// ------------------------------------------------------------------------------------------------
// A shared ratio budget across many calls
// ------------------------------------------------------------------------------------------------

/// One call of a session: its script, and the time since the previous call.
#[derive(Clone, Debug)]
struct Call {
    gap: Duration,
    script: Vec<Step>,
}

/// A session against a struggling upstream: short waits, mostly transient failures, calls close
/// together, and a small floor, so that the budget runs dry.
fn session() -> impl Strategy<Value = (Policy, u32, u32, Vec<Call>)> {
    let policy = (2u32..=Policy::MAX_ATTEMPTS, 1u64..=50, 0u64..=150).prop_map(
        |(attempts, base_ms, extra_ms)| {
            Policy::new()
                .attempts(attempts)
                .deadline(Duration::from_secs(60))
                .backoff(
                    Duration::from_millis(base_ms),
                    Duration::from_millis(base_ms + extra_ms),
                )
        },
    );
    let step = (
        0u64..=20,
        prop_oneof![
            8 => Just(Err(Failure::Transient)),
            1 => (0u64..=500).prop_map(|ms| Err(Failure::ServerWait(Duration::from_millis(ms)))),
            1 => Just(Err(Failure::Permanent)),
            2 => any::<u32>().prop_map(Ok),
        ],
    )
        .prop_map(|(latency_ms, outcome)| Step {
            latency: Duration::from_millis(latency_ms),
            outcome,
        });
    let call =
        (0u64..=300, proptest::collection::vec(step, 1..=10)).prop_map(|(gap_ms, script)| Call {
            gap: Duration::from_millis(gap_ms),
            script,
        });
    (
        policy,
        1u32..=100,
        1u32..=5,
        proptest::collection::vec(call, 1..=80),
    )
}

/// The checks, for `calls` run with `budget` (a ratio budget of `percent` and `per_second`; the
/// meta-test runs them with none, to see them fail).
fn check_budget(
    policy: Policy,
    budget: Option<&RetryBudget>,
    (percent, per_second): (u32, u32),
    calls: &[Call],
    seed: u64,
) -> Result<(), TestCaseError> {
    let bank = per_second * 10;
    let clock = Clock::new();
    let mut granted = 0u32;
    for (i, call) in calls.iter().enumerate() {
        clock.advance(call.gap);
        let sleeps_before = clock.sleeps().len();
        let mut sent = 0u32;
        let mut retry = Retry::with_classifier(policy, classify)
            .with_rng(fastrand::Rng::with_seed(seed ^ i as u64));
        if let Some(budget) = budget {
            retry = retry.budget(budget);
        }
        let result = retry.run_sync(&clock, |attempt| {
            sent += 1;
            let step = step(&call.script, attempt.number());
            clock.advance(step.latency);
            step.outcome
        });
        let slept = u32::try_from(clock.sleeps().len() - sleeps_before).expect("few waits");
        prop_assert!(sent >= 1 && sent <= policy.max_attempts());
        // One wait per retry sent: a refused retry is not waited for.
        prop_assert_eq!(slept, sent - 1);
        if let Err(error) = &result {
            prop_assert_eq!(error.attempts(), sent, "attempts are the requests sent");
            if error.reason() == StopReason::BudgetExhausted {
                // Refused only a retry the policy allowed, and only once the bank is spent.
                prop_assert!(matches!(
                    error.error(),
                    Failure::Transient | Failure::ServerWait(_) | Failure::Ambiguous
                ));
                prop_assert!(
                    granted + sent - 1 + 1 >= bank,
                    "refused after {} retries with a bank of {bank}",
                    granted + sent - 1
                );
            }
        }
        granted += sent - 1;
    }
    let elapsed = clock.elapsed().as_secs_f64();
    let allowed = f64::from(bank)
        + f64::from(percent) / 100.0 * f64::from(u32::try_from(calls.len()).expect("few calls"))
        + f64::from(per_second) * elapsed
        + 1.0;
    prop_assert!(
        f64::from(granted) <= allowed,
        "{granted} retries granted, {allowed} allowed"
    );
    Ok(())
}

#[test]
fn a_shared_ratio_budget_keeps_its_bound_and_its_accounting() {
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &(session(), any::<u64>()),
            |((policy, percent, per_second, calls), seed)| {
                let budget = RetryBudget::ratio(percent, per_second);
                prop_assert_eq!(budget.max_tokens(), per_second * 10);
                check_budget(policy, Some(&budget), (percent, per_second), &calls, seed)
            },
        )
        .unwrap();
}

/// The budget's checks are not vacuous: run without the budget they claim, the calls exceed its
/// bound (a bank of 10, 2 calls over no time: at most 10.4 + 1 retries, and 18 are sent).
#[test]
fn the_budget_checks_reject_a_budget_that_grants_too_much() {
    let policy = Policy::new()
        .attempts(10)
        .deadline(Duration::from_secs(3600))
        .backoff(Duration::from_micros(1), Duration::from_micros(1));
    let outage = vec![
        Step {
            latency: Duration::ZERO,
            outcome: Err(Failure::Transient),
        };
        10
    ];
    let calls = vec![
        Call {
            gap: Duration::ZERO,
            script: outage,
        };
        2
    ];
    let budget = RetryBudget::ratio(20, 1);
    assert!(check_budget(policy, Some(&budget), (20, 1), &calls, 1).is_ok());
    assert!(check_budget(policy, None, (20, 1), &calls, 1).is_err());
}

// ------------------------------------------------------------------------------------------------
// The breaker's state machine
// ------------------------------------------------------------------------------------------------

/// One event of a breaker's life.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// An attempt asks to go out.
    Admit,
    /// The `n`-th ticket out (modulo those out) ends: a success, a failure, or no word.
    Succeed(usize),
    Fail(usize),
    Drop(usize),
    /// Time passes.
    Wait(Duration),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => Just(Event::Admit),
        2 => any::<usize>().prop_map(Event::Succeed),
        3 => any::<usize>().prop_map(Event::Fail),
        1 => any::<usize>().prop_map(Event::Drop),
        2 => (0u64..=6_000).prop_map(|ms| Event::Wait(Duration::from_millis(ms))),
    ]
}

fn breaker_config() -> impl Strategy<Value = (u32, u64, u64, u32, u32)> {
    (1u32..=99, 1u64..=60, 1u64..=20, 1u32..=4, 1u32..=12)
}

fn check_breaker(
    (rate, window_s, cool_down_s, probes, min_calls): (u32, u64, u64, u32, u32),
    events: &[Event],
) -> Result<(), TestCaseError> {
    let cool_down = Duration::from_secs(cool_down_s);
    let breaker = CircuitBreaker::new()
        .failure_rate(rate)
        .window(Duration::from_secs(window_s))
        .cool_down(cool_down)
        .probes(probes)
        .min_calls(min_calls);
    let mut now = Instant::now();
    // The tickets out, with the round they were let out in (a round ends when the breaker
    // opens or closes: the tickets of an older round no longer count).
    let mut out: Vec<(BreakerTicket<'_>, u32)> = Vec::new();
    let mut round = 0;
    // When the breaker last opened, and the probes that succeeded since it went half-open.
    let mut opened_at: Option<Instant> = None;
    let mut probe_successes = 0;
    for &event in events {
        let before = breaker.state(now);
        let probes_out = |out: &[(BreakerTicket<'_>, u32)], round: u32| {
            out.iter()
                .filter(|(t, r)| t.is_probe() && *r == round)
                .count() as u32
        };
        let mut failed = false;
        let mut probe_succeeded = false;
        let mut probe_failed = false;
        match event {
            Event::Admit => {
                let admitted = breaker.admit(now);
                match before {
                    BreakerState::Closed => prop_assert!(admitted.is_ok(), "closed refused"),
                    BreakerState::Open => prop_assert!(admitted.is_err(), "open let one out"),
                    BreakerState::HalfOpen => prop_assert_eq!(
                        admitted.is_ok(),
                        probes_out(&out, round) + probe_successes < probes,
                        "half-open lets exactly {} probes out",
                        probes
                    ),
                }
                if let Ok(ticket) = admitted {
                    out.push((ticket, round));
                }
            }
            Event::Succeed(n) | Event::Fail(n) | Event::Drop(n) if !out.is_empty() => {
                let (ticket, of) = out.remove(n % out.len());
                let probe = ticket.is_probe() && of == round;
                match event {
                    Event::Succeed(_) => {
                        probe_succeeded = probe;
                        ticket.success();
                    }
                    Event::Fail(_) => {
                        failed = true;
                        probe_failed = probe;
                        ticket.failure(now);
                    }
                    _ => drop(ticket),
                }
            }
            Event::Wait(d) => now += d,
            _ => {}
        }
        let after = breaker.state(now);
        // Only a failure opens the breaker.
        if before != BreakerState::Open && after == BreakerState::Open {
            prop_assert!(failed, "{:?} -> Open after {:?}", before, event);
            opened_at = Some(now);
            probe_successes = 0;
            round += 1;
        }
        // A probe's failure opens it again.
        if probe_failed && before == BreakerState::HalfOpen {
            prop_assert_eq!(after, BreakerState::Open);
        }
        if probe_succeeded && before == BreakerState::HalfOpen {
            probe_successes += 1;
        }
        // It closes only after `probes` successful probes.
        if before == BreakerState::HalfOpen && after == BreakerState::Closed {
            prop_assert_eq!(
                probe_successes,
                probes,
                "closed after {} probes",
                probe_successes
            );
            probe_successes = 0;
            round += 1;
        }
        // Open until the cool-down ends, half-open from then on.
        if let Some(at) = opened_at {
            if after == BreakerState::Open {
                prop_assert!(now < at + cool_down);
            } else if before == BreakerState::Open {
                prop_assert!(now >= at + cool_down, "half-open before the cool-down");
            }
        }
        let admits = match after {
            BreakerState::Closed => true,
            BreakerState::Open => false,
            BreakerState::HalfOpen => probes_out(&out, round) + probe_successes < probes,
        };
        prop_assert_eq!(breaker.would_admit(now), admits);
    }
    Ok(())
}

#[test]
fn the_breaker_keeps_its_state_machine() {
    let mut runner = TestRunner::new(Config {
        cases: 1_000,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &(
                breaker_config(),
                proptest::collection::vec(event(), 1..=120),
            ),
            |(config, events)| check_breaker(config, &events),
        )
        .unwrap();
}
