//! The retry-storm simulation (`examples/storm.rs`, included here as a module): its tables in the
//! docs/why.md are what it prints, and the behaviour behind them holds.
//!
//! `BLESS=1 cargo test --test storm` rewrites the block in docs/why.md instead of failing.

use std::fs;
use std::path::Path;
use std::time::Duration;

use retry_audit::retry::StopReason;

#[allow(dead_code)] // `main` and a few items only the example uses
#[path = "../examples/storm.rs"]
mod storm;

use storm::{
    policy_a, policy_b, storm_table, Fault, Request, StormRow, Strategy, CAPACITY, CLIENTS, QUOTA,
    RETRY_AFTER, ROUND_TRIP, SCRIPT, STORM_ATTEMPTS,
};

const START: &str = "<!-- storm:start -->";
const END: &str = "<!-- storm:end -->";

fn row(rows: &[StormRow], strategy: Strategy) -> &StormRow {
    rows.iter()
        .find(|r| r.strategy == strategy)
        .unwrap_or_else(|| panic!("no row for {strategy:?}"))
}

#[test]
fn readme_storm_block_is_generated() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/why.md");
    let readme =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let block = storm::report();
    let start = readme
        .find(START)
        .unwrap_or_else(|| panic!("docs/why.md lacks {START}"))
        + START.len();
    let end = start
        + readme[start..]
            .find(END)
            .unwrap_or_else(|| panic!("docs/why.md lacks {END} after {START}"));
    let expected = format!("{}\n{block}{}", &readme[..start], &readme[end..]);
    if expected == readme {
        return;
    }
    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        fs::write(&path, expected)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    panic!(
        "the storm tables in docs/why.md are out of date with examples/storm.rs; run \
         `BLESS=1 cargo test --test storm` to regenerate them. Expected block:\n{block}"
    );
}

#[test]
fn the_simulation_is_deterministic() {
    assert_eq!(storm::report(), storm::report());
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
    for strategy in [Strategy::Runtime, Strategy::RuntimeWithBudget] {
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
