//! The retry-storm simulation (`examples/storm.rs`, included here as a module): its tables in the
//! docs/why.md are what it prints, and the behaviour behind them holds.
//!
//! `BLESS=1 cargo test --test storm` rewrites the README block instead of failing (`BLESS` must be
//! `1`; the block is found by its markers in `README.md` or any `docs/**/*.md`).

mod blocks;

use std::process::Command;
use std::time::Duration;

use retry_audit::retry::StopReason;

#[allow(dead_code)] // `main` and a few items only the example uses
#[path = "../examples/storm.rs"]
mod storm;

use storm::{
    outage_table, policy_a, policy_b, storm_table, Fault, Guard, OutageRow, Request, StormRow,
    Strategy, CAPACITY, CLIENTS, OUTAGE_CALLS, OUTAGE_CLIENTS, OUTAGE_UNTIL, QUOTA, RETRY_AFTER,
    ROUND_TRIP, SCRIPT, STORM_ATTEMPTS,
};

fn row(rows: &[StormRow], strategy: Strategy) -> &StormRow {
    rows.iter()
        .find(|r| r.strategy == strategy)
        .unwrap_or_else(|| panic!("no row for {strategy:?}"))
}

#[test]
fn readme_storm_block_is_generated() {
    blocks::Block::find("storm").expect(
        &format!("\n{}", storm::report()),
        "BLESS=1 cargo test --test storm",
    );
}

/// Set in the child processes of [`the_simulation_is_deterministic`].
const PRINT_REPORT: &str = "RETRY_AUDIT_STORM_PRINT_REPORT";
const REPORT_START: &str = "--- storm report ---\n";
const REPORT_END: &str = "--- end of storm report ---";

/// Prints the report between markers, in a child process of [`the_simulation_is_deterministic`]
/// (and does nothing in an ordinary run).
#[test]
fn print_the_report_for_the_determinism_test() {
    if std::env::var_os(PRINT_REPORT).is_some() {
        println!("{REPORT_START}{}{REPORT_END}", storm::report());
    }
}

/// The simulation run twice, each time in a process of its own (this test binary, running only
/// [`print_the_report_for_the_determinism_test`]), gives the same report both times, and the
/// same as a run in this process: nothing in it depends on a process's randomness, its
/// addresses, or the order threads are scheduled in.
#[test]
fn the_simulation_is_deterministic() {
    let run = || {
        let out = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "print_the_report_for_the_determinism_test",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(PRINT_REPORT, "1")
            .output()
            .expect("the test binary runs");
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).expect("UTF-8");
        let start = stdout.find(REPORT_START).expect("the report is printed") + REPORT_START.len();
        let end = stdout.find(REPORT_END).expect("the report ends");
        stdout[start..end].to_owned()
    };
    let (first, second) = (run(), run());
    assert!(first.len() > 1000, "a whole report: {first}");
    assert_eq!(first, second, "two runs of the simulation differ");
    assert_eq!(first, storm::report(), "a run in another process differs");
}

#[test]
fn storm_policies_behave_as_designed() {
    for retry_after in [None, Some(RETRY_AFTER)] {
        let rows = storm_table(retry_after);
        let immediate = row(&rows, Strategy::Immediate);
        let exponential = row(&rows, Strategy::Exponential);
        let fixed = row(&rows, Strategy::Fixed);
        let jitter = row(&rows, Strategy::Runtime);
        let budget = row(&rows, Strategy::RuntimeWithBudget);
        let default_budget = row(&rows, Strategy::RuntimeWithDefaultBudget);
        let context = format!("Retry-After {retry_after:?}");
        for r in &rows {
            // Every request is either accepted or refused; nobody exceeds the attempt cap; the
            // server never accepts more than C per window, so refusals are what is sent beyond.
            assert!(r.requests <= CLIENTS * STORM_ATTEMPTS, "{context}: {r:?}");
            assert!(r.requests - r.refused <= CLIENTS, "{context}: {r:?}");
            assert_eq!(
                r.requests - r.refused + r.gave_up,
                CLIENTS,
                "{context}: {r:?}"
            );
            assert!(
                r.peak >= CAPACITY,
                "{context}: all clients start together: {r:?}"
            );
        }
        // Immediate retry: every attempt inside the first window.
        assert_eq!(immediate.peak, immediate.requests, "{context}");
        assert_eq!(immediate.gave_up, CLIENTS - CAPACITY, "{context}");
        // The shared budget: far fewer requests than immediate retry, and fewer than any policy.
        assert!(
            budget.requests * 2 < immediate.requests,
            "{context}: {budget:?}"
        );
        assert!(
            rows.iter().all(|r| budget.requests <= r.requests),
            "{context}"
        );
        assert!(
            budget.stops.contains_key("budget refused a retry"),
            "{context}"
        );
        // The default budget: between no budget and the tight one. Its bound in a storm that
        // lasts under a second: every first attempt, the 100 banked retries, 20 % of the calls
        // and the floor's 10 per second.
        assert!(
            default_budget.requests < jitter.requests && default_budget.requests > budget.requests,
            "{context}: {default_budget:?}"
        );
        let seconds = default_budget.all_done.as_secs_f64();
        let bound = f64::from(CLIENTS) * 1.2 + 100.0 + 10.0 * seconds + 1.0;
        assert!(
            f64::from(default_budget.requests) <= bound,
            "{context}: {} requests, {bound} allowed",
            default_budget.requests
        );
        assert!(
            default_budget.stops.contains_key("budget refused a retry"),
            "{context}"
        );
        // Full jitter: lower retry waves than lock-step backoff, and far fewer clients give up.
        assert!(
            jitter.peak_retries < exponential.peak_retries,
            "{context}: {jitter:?} vs {exponential:?}"
        );
        assert!(jitter.peak_retries < fixed.peak_retries, "{context}");
        assert!(jitter.gave_up * 5 < exponential.gave_up, "{context}");
        assert!(jitter.gave_up * 5 < fixed.gave_up, "{context}");
        // Lock-step policies: each wave lets exactly C through.
        assert_eq!(
            exponential.gave_up,
            CLIENTS - CAPACITY * STORM_ATTEMPTS,
            "{context}"
        );
    }
}

#[test]
fn the_runtime_honours_retry_after() {
    let second = Duration::from_secs(1);
    let hinted = storm_table(Some(RETRY_AFTER));
    for strategy in [
        Strategy::Runtime,
        Strategy::RuntimeWithDefaultBudget,
        Strategy::RuntimeWithBudget,
    ] {
        // Told to come back in 1 s, no client of the runtime comes back sooner...
        let first = row(&hinted, strategy).first_retry_at.expect("some retries");
        assert!(first >= second, "{strategy:?}: first retry at {first:?}");
    }
    // ... and the jitter on top of the server's wait keeps them from coming back all at once.
    assert!(
        row(&hinted, Strategy::Runtime).peak_retries
            < row(&hinted, Strategy::ServerWaitExact).peak_retries
    );
    // Without the header, full jitter retries within the first base delay.
    let plain = storm_table(None);
    let first = row(&plain, Strategy::Runtime)
        .first_retry_at
        .expect("some retries");
    assert!(first < Duration::from_millis(100) + ROUND_TRIP, "{first:?}");
}

fn outage_row(rows: &[OutageRow], guard: Guard) -> &OutageRow {
    rows.iter()
        .find(|r| r.guard == guard)
        .unwrap_or_else(|| panic!("no row for {guard:?}"))
}

#[test]
fn under_a_long_outage_the_breaker_stops_calling_and_the_fallback_answers_every_call() {
    let rows = outage_table();
    let calls = OUTAGE_CLIENTS * OUTAGE_CALLS;
    // Calls that start while the upstream is down: one per client and second.
    let calls_down = OUTAGE_CLIENTS * u32::try_from(OUTAGE_UNTIL.as_secs()).unwrap();
    for r in &rows {
        assert_eq!(r.answered + r.degraded + r.failed, calls, "{r:?}");
    }
    let alone = outage_row(&rows, Guard::Nothing);
    let budgeted = outage_row(&rows, Guard::DefaultBudget);
    let guarded = outage_row(&rows, Guard::BreakerAndFallback);
    // Alone: every attempt of every call while down.
    assert!(alone.requests_in_outage > 4 * calls_down, "{alone:?}");
    assert_eq!(alone.degraded, 0);
    // The default budget: every call, plus the bank, 20 % of the calls and 10 per second.
    let bound = f64::from(calls_down) * 1.2 + 100.0 + 10.0 * OUTAGE_UNTIL.as_secs_f64() + 1.0;
    assert!(
        f64::from(budgeted.requests_in_outage) <= bound,
        "{budgeted:?}, {bound} allowed"
    );
    assert!(budgeted.requests_in_outage < alone.requests_in_outage / 2);
    // The breaker: a few failures to open, then a probe per cool-down; every call answered,
    // by the fallback while it is open.
    assert!(guarded.requests_in_outage <= 30, "{guarded:?}");
    assert_eq!(guarded.failed, 0);
    assert!(guarded.degraded >= calls_down - 30, "{guarded:?}");
    // It closes within a cool-down (10 s) of the upstream's recovery.
    let recovered = guarded
        .first_answer_after
        .expect("the upstream answered again");
    assert!(recovered <= Duration::from_secs(10), "{recovered:?}");
    assert!(guarded.degraded_after_recovery <= OUTAGE_CLIENTS * 10);
}

#[test]
fn replay_b_keeps_every_promise() {
    let (a, b) = (policy_a(), policy_b());
    assert_eq!(b.refused, 0, "B never runs out of quota");
    assert!(b.units_used < QUOTA);
    assert_eq!(b.duplicates, 0, "B never saves a write twice");
    assert!(b.requests <= 40 && b.retries <= 12, "the session caps hold");
    assert!(b.time.as_secs() <= 300);
    for (action, end) in SCRIPT.iter().zip(&b.actions) {
        assert!(end.requests <= 3, "{}: at most 3 attempts", action.what);
        // B draws from the default budget, which never refuses one of its few retries.
        assert_ne!(
            end.stop,
            Some(StopReason::BudgetExhausted),
            "{}",
            action.what
        );
        match end.stop {
            // A lost reply on a write without a key is never resent.
            Some(StopReason::WriteNotConfirmed) => {
                assert!(matches!(action.request, Request::Post { key: false, .. }));
                assert_eq!(end.requests, 1);
            }
            // A permanent error is sent once.
            Some(StopReason::Permanent) => assert_eq!(end.requests, 1, "{}", action.what),
            // A server wait longer than the action's budget is not slept: one request.
            Some(StopReason::ServerWaitTooLong { wait }) => {
                assert_eq!(wait.as_secs(), 120);
                assert_eq!(end.requests, 1);
            }
            _ => {}
        }
        // A 404 or a 429 with a long wait is never retried, by construction.
        if matches!(action.then, Fault::Status(404 | 429, _)) && action.faults.is_empty() {
            assert_eq!(end.requests, 1, "{}", action.what);
        }
    }
    // A, retrying everything at once, spends the quota and completes far less.
    assert_eq!(a.units_used, QUOTA);
    assert!(a.requests > 4 * b.requests);
    assert!(b.completed() > a.completed());
    assert_eq!(a.duplicates, 1, "the resend of A's lost save had no key");
}

#[test]
fn replay_matches_the_published_figures() {
    let (a, b) = (policy_a(), policy_b());
    assert_eq!(a.refused, 95);
    assert_eq!(a.requests - b.requests, 97);
    assert_eq!(QUOTA - b.units_used, 2);
    assert_eq!(b.completed() - a.completed(), 9);
    assert_eq!(SCRIPT.len() - a.completed(), 14);
    let stops = |reason: fn(&StopReason) -> bool| {
        b.actions
            .iter()
            .filter(|end| end.stop.as_ref().is_some_and(reason))
            .count()
    };
    assert_eq!(stops(|r| *r == StopReason::Permanent), 1);
    assert_eq!(stops(|r| *r == StopReason::AttemptsExhausted), 2);
    assert_eq!(stops(|r| *r == StopReason::WriteNotConfirmed), 1);
    assert_eq!(
        stops(|r| matches!(r, StopReason::ServerWaitTooLong { .. })),
        1
    );
}
