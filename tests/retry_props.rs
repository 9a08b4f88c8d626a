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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use retry_audit::retry::{
    AsyncSleeper, Decision, Jitter, Policy, Retry, RetryError, Sleeper, StopReason,
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
