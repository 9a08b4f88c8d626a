//! Retry storms and a replayed quota experiment, simulated in virtual time with the runtime that
//! `#[retryable]` expands to (`retry_audit::retry`): no network, no real sleeping, fixed seeds, so
//! every run prints the same tables.
//!
//! `cargo run --example storm` prints the Markdown block that `docs/why.md` holds between
//! `<!-- storm:start -->` and `<!-- storm:end -->`; `tests/storm.rs` includes this file, checks that
//! the block is up to date (`BLESS=1 cargo test --test storm` rewrites it) and checks the
//! behaviour behind the numbers.
//!
//! 1. **Storm** ([`storm`]): 100 clients send their first request at the same instant (the
//!    service has just come back) to a server that accepts `CAPACITY` requests per 100 ms window
//!    and answers `429` beyond it, with or without `Retry-After`. Each policy runs once; the
//!    clients are futures on a small discrete-event scheduler ([`run_tasks`]) whose clock jumps
//!    from one wake-up to the next. The runtime's clients use [`Retry::start_async`] with
//!    [`Clock`] as their timer and a seeded generator ([`Retry::with_rng`]).
//!    A variant draws from the default budget of `#[retryable]` ([`RetryBudget::standard`]).
//! 2. **Long outage** ([`outage`]): clients that call an upstream every second while it is
//!    down for a minute, with the runtime alone, with the default budget, and with the default
//!    budget, a [`CircuitBreaker`] and a fallback.
//! 3. **Replay** ([`replay`]) of `domain.md` §7: a quota of 24 units that never refills, 20
//!    scripted user actions ([`SCRIPT`]), policy A (retry every error at once, cut at 8 requests
//!    per action) against policy B (the runtime, [`Retry::run_sync`] on the virtual clock, plus a
//!    small session layer for what the runtime does not do per call: the caps across actions, the
//!    read cache and the sharing of an identical in-flight read).

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::fmt::Write as _;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use retry_audit::retry::{
    parse_retry_after, AsyncSleeper, CircuitBreaker, Decision, IdempotencyKey, Policy, Retry,
    RetryBudget, RetryError, Sleeper, StopReason, Transient,
};

fn main() {
    print!("{}", report());
}

// ------------------------------------------------------------------------------------------------
// Virtual time
// ------------------------------------------------------------------------------------------------

/// A virtual clock shared by every client of one simulation. Nothing moves it but the scheduler
/// ([`run_tasks`]), which jumps to the next wake-up, and the blocking [`Sleeper`] impl, which
/// advances it by the delay asked for.
#[derive(Clone, Debug)]
pub struct Clock(Arc<ClockState>);

#[derive(Debug)]
struct ClockState {
    origin: Instant,
    elapsed_nanos: AtomicU64,
    /// The wake-up time asked for by the task being polled, if it is waiting.
    wake_at: Mutex<Option<Duration>>,
}

impl Clock {
    #[must_use]
    pub fn new() -> Self {
        Clock(Arc::new(ClockState {
            origin: Instant::now(),
            elapsed_nanos: AtomicU64::new(0),
            wake_at: Mutex::new(None),
        }))
    }

    /// The virtual time since the start of the simulation.
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.0.elapsed_nanos.load(Ordering::Relaxed))
    }

    fn set(&self, elapsed: Duration) {
        let nanos =
            u64::try_from(elapsed.as_nanos()).expect("a simulation lasts less than 584 years");
        self.0.elapsed_nanos.store(nanos, Ordering::Relaxed);
    }

    fn advance(&self, by: Duration) {
        self.set(self.elapsed() + by);
    }

    fn instant(&self) -> Instant {
        self.0.origin + self.elapsed()
    }

    fn take_wake_at(&self) -> Option<Duration> {
        self.0.wake_at.lock().expect("clock lock").take()
    }

    /// A future that is ready once the clock reads `elapsed() + delay`.
    fn after(&self, delay: Duration) -> VirtualSleep {
        VirtualSleep {
            clock: self.clone(),
            delay,
            until: None,
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// Blocking retries (`Retry::run_sync`): a wait advances the clock at once.
impl Sleeper for Clock {
    fn now(&self) -> Instant {
        self.instant()
    }

    fn sleep(&self, delay: Duration) {
        self.advance(delay);
    }
}

/// Async retries (`Retry::start_async`): a wait is a [`VirtualSleep`] for the scheduler.
impl AsyncSleeper for Clock {
    type Sleep = VirtualSleep;

    fn now(&self) -> Instant {
        self.instant()
    }

    fn sleep(&self, delay: Duration) -> VirtualSleep {
        self.after(delay)
    }
}

/// A wait on the virtual clock: pending until the scheduler has moved the clock far enough.
#[derive(Debug)]
pub struct VirtualSleep {
    clock: Clock,
    delay: Duration,
    until: Option<Duration>,
}

impl Future for VirtualSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let now = self.clock.elapsed();
        let delay = self.delay;
        let until = *self.until.get_or_insert(now + delay);
        if now >= until {
            return Poll::Ready(());
        }
        *self.clock.0.wake_at.lock().expect("clock lock") = Some(until);
        Poll::Pending
    }
}

type Task<'t> = Pin<Box<dyn Future<Output = ()> + 't>>;

/// Runs `tasks` to completion in virtual time: polls the task due first (ties: the lower index
/// first), and when it waits, files it under the wake-up time it asked for. Single-threaded and
/// deterministic; the tasks may only wait on `clock`.
fn run_tasks(clock: &Clock, mut tasks: Vec<Task<'_>>) {
    struct NoWake;
    impl Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(NoWake));
    let mut cx = Context::from_waker(&waker);
    let mut due: BinaryHeap<Reverse<(Duration, usize)>> = (0..tasks.len())
        .map(|i| Reverse((clock.elapsed(), i)))
        .collect();
    while let Some(Reverse((at, i))) = due.pop() {
        clock.set(at);
        if tasks[i].as_mut().poll(&mut cx).is_pending() {
            let wake_at = clock
                .take_wake_at()
                .expect("a simulated client waits only on the virtual clock");
            due.push(Reverse((wake_at, i)));
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Part 1: the storm
// ------------------------------------------------------------------------------------------------

/// Clients that fail together.
pub const CLIENTS: u32 = 100;
/// The server's rate-limit window.
pub const WINDOW: Duration = Duration::from_millis(100);
/// Requests the server accepts per window; the rest get `429`.
pub const CAPACITY: u32 = 10;
/// Round trip of one request: the next attempt cannot start earlier.
pub const ROUND_TRIP: Duration = Duration::from_millis(20);
/// Attempts per client, the first included, for every policy.
pub const STORM_ATTEMPTS: u32 = 5;
/// The runtime's policy (and the base and cap of exponential backoff without jitter).
pub const STORM_POLICY: Policy = Policy::new()
    .attempts(STORM_ATTEMPTS)
    .backoff(Duration::from_millis(100), Duration::from_secs(5))
    .deadline(Duration::from_secs(10));
/// The wait of the fixed-delay policy.
pub const FIXED_DELAY: Duration = Duration::from_secs(1);
/// The `Retry-After` of the second variant, in seconds (the header's own unit).
pub const RETRY_AFTER: &str = "1";
/// The tokens of the shared budget (gRPC retry throttling, 0.1 token back per success).
pub const BUDGET_TOKENS: u32 = 100;
const STORM_SEED: u64 = 0x5707_2026;

/// How a client waits between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Resends as soon as the `429` arrives.
    Immediate,
    /// Sleeps [`FIXED_DELAY`] every time.
    Fixed,
    /// Sleeps `base * 2^n` (capped), the same for every client.
    Exponential,
    /// Sleeps exactly what `Retry-After` says (only in the `Retry-After` variant).
    ServerWaitExact,
    /// The runtime: full jitter, `Retry-After` honoured with a little jitter on top.
    Runtime,
    /// The runtime drawing every retry from one [`RetryBudget`] shared by all clients.
    RuntimeWithBudget,
    /// The runtime with the budget `#[retryable]` draws from by default (one per upstream):
    /// [`RetryBudget::standard`], 20 % of the calls plus 10 retries per second.
    RuntimeWithDefaultBudget,
}

impl Strategy {
    fn label(self) -> &'static str {
        match self {
            Strategy::Immediate => "immediate retry",
            Strategy::Fixed => "fixed 1 s",
            Strategy::Exponential => "exponential, no jitter",
            Strategy::ServerWaitExact => "`Retry-After` exactly, no jitter",
            Strategy::Runtime => "runtime: full jitter",
            Strategy::RuntimeWithBudget => "runtime + shared `RetryBudget`",
            Strategy::RuntimeWithDefaultBudget => "runtime + the default budget",
        }
    }
}

/// One row of a storm table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormRow {
    pub strategy: Strategy,
    /// Requests sent by all clients.
    pub requests: u32,
    /// Requests answered `429`.
    pub refused: u32,
    /// The most requests that arrived in one 100 ms window.
    pub peak: u32,
    /// The most retries (attempts after the first) that arrived in one 100 ms window.
    pub peak_retries: u32,
    /// When the first retry reached the server.
    pub first_retry_at: Option<Duration>,
    /// When the last client got its last answer.
    pub all_done: Duration,
    /// Clients that stopped without a success.
    pub gave_up: u32,
    /// Why they stopped, for the runtime's clients.
    pub stops: BTreeMap<&'static str, u32>,
}

/// The rate-limited server of the storm.
struct WindowServer {
    retry_after: Option<&'static str>,
    arrived: BTreeMap<u128, u32>,
    retries_arrived: BTreeMap<u128, u32>,
    accepted: BTreeMap<u128, u32>,
    first_retry_at: Option<Duration>,
    requests: u32,
    refused: u32,
}

/// A `429 Too Many Requests`, with the server's `Retry-After` if it sent one.
#[derive(Clone, Copy, Debug)]
struct TooManyRequests {
    retry_after: Option<&'static str>,
}

impl Transient for TooManyRequests {
    fn decision(&self) -> Decision {
        Decision::for_response(429, self.retry_after.map(|value| ("Retry-After", value)))
    }

    fn status(&self) -> Option<u16> {
        Some(429)
    }
}

impl WindowServer {
    fn request(&mut self, at: Duration, retry: bool) -> Result<(), TooManyRequests> {
        let window = at.as_nanos() / WINDOW.as_nanos();
        self.requests += 1;
        *self.arrived.entry(window).or_default() += 1;
        if retry {
            *self.retries_arrived.entry(window).or_default() += 1;
            self.first_retry_at.get_or_insert(at);
        }
        let accepted = self.accepted.entry(window).or_default();
        if *accepted < CAPACITY {
            *accepted += 1;
            Ok(())
        } else {
            self.refused += 1;
            Err(TooManyRequests {
                retry_after: self.retry_after,
            })
        }
    }
}

/// One request: it reaches the server now, its answer arrives a round trip later.
async fn send(
    clock: &Clock,
    server: &RefCell<WindowServer>,
    attempt: u32,
) -> Result<(), TooManyRequests> {
    let answer = server.borrow_mut().request(clock.elapsed(), attempt > 1);
    clock.after(ROUND_TRIP).await;
    answer
}

/// How a client ended: when, and why it stopped if it did not succeed.
struct End {
    at: Duration,
    stop: Option<&'static str>,
}

// retry-audit: allow(retries-client-error, reason = "the simulation's hand-written loop retries every refusal, as the clients it compares do")
/// A hand-written retry loop: `STORM_ATTEMPTS` attempts, `strategy`'s wait in between.
async fn naive_client(clock: &Clock, server: &RefCell<WindowServer>, strategy: Strategy) -> End {
    for attempt in 1..=STORM_ATTEMPTS {
        let answer = send(clock, server, attempt).await;
        let Err(refused) = answer else {
            return End {
                at: clock.elapsed(),
                stop: None,
            };
        };
        if attempt == STORM_ATTEMPTS {
            break;
        }
        let delay = match strategy {
            Strategy::Fixed => FIXED_DELAY,
            Strategy::Exponential => STORM_POLICY.backoff_ceiling(attempt - 1),
            Strategy::ServerWaitExact => refused
                .retry_after
                .and_then(|value| parse_retry_after(value, std::time::UNIX_EPOCH))
                .unwrap_or_default(),
            _ => Duration::ZERO,
        };
        clock.after(delay).await;
    }
    End {
        at: clock.elapsed(),
        stop: Some("out of attempts"),
    }
}

/// The runtime's retry, as `#[retryable]` expands it for an async function.
async fn runtime_client(
    clock: &Clock,
    server: &RefCell<WindowServer>,
    budget: Option<&RetryBudget>,
    seed: u64,
) -> End {
    let mut retry =
        Retry::<TooManyRequests>::new(STORM_POLICY).with_rng(fastrand::Rng::with_seed(seed));
    if let Some(budget) = budget {
        retry = retry.budget(budget);
    }
    let mut retry = retry.start_async(clock);
    for attempt in 1.. {
        if let ControlFlow::Break(result) = retry.attempt(send(clock, server, attempt)).await {
            let stop = result.err().map(|e: RetryError<_>| match e.reason() {
                StopReason::AttemptsExhausted => "out of attempts",
                StopReason::BudgetExhausted => "budget refused a retry",
                other => other.as_str(),
            });
            return End {
                at: clock.elapsed(),
                stop,
            };
        }
    }
    unreachable!("the policy allows at most {STORM_ATTEMPTS} attempts")
}

/// Runs one policy: `CLIENTS` clients, all starting at t = 0.
#[must_use]
pub fn storm(strategy: Strategy, retry_after: Option<&'static str>) -> StormRow {
    let clock = Clock::new();
    let server = RefCell::new(WindowServer {
        retry_after,
        arrived: BTreeMap::new(),
        retries_arrived: BTreeMap::new(),
        accepted: BTreeMap::new(),
        first_retry_at: None,
        requests: 0,
        refused: 0,
    });
    let budget = if strategy == Strategy::RuntimeWithDefaultBudget {
        RetryBudget::standard()
    } else {
        RetryBudget::new(BUDGET_TOKENS)
    };
    let ends = RefCell::new(Vec::new());
    let tasks: Vec<Task<'_>> = (0..CLIENTS)
        .map(|id| {
            let (clock, server, budget, ends) = (&clock, &server, &budget, &ends);
            let seed = STORM_SEED + u64::from(id);
            Box::pin(async move {
                let end = match strategy {
                    Strategy::Runtime => runtime_client(clock, server, None, seed).await,
                    Strategy::RuntimeWithBudget | Strategy::RuntimeWithDefaultBudget => {
                        runtime_client(clock, server, Some(budget), seed).await
                    }
                    _ => naive_client(clock, server, strategy).await,
                };
                ends.borrow_mut().push(end);
            }) as Task<'_>
        })
        .collect();
    run_tasks(&clock, tasks);
    let server = server.into_inner();
    let ends = ends.into_inner();
    let mut stops = BTreeMap::new();
    for stop in ends.iter().filter_map(|end| end.stop) {
        *stops.entry(stop).or_default() += 1;
    }
    StormRow {
        strategy,
        requests: server.requests,
        refused: server.refused,
        peak: server.arrived.values().copied().max().unwrap_or(0),
        peak_retries: server.retries_arrived.values().copied().max().unwrap_or(0),
        first_retry_at: server.first_retry_at,
        all_done: ends.iter().map(|end| end.at).max().unwrap_or_default(),
        gave_up: stops.values().sum(),
        stops,
    }
}

/// The policies of one variant, in table order.
#[must_use]
pub fn storm_table(retry_after: Option<&'static str>) -> Vec<StormRow> {
    let mut strategies = vec![Strategy::Immediate, Strategy::Fixed, Strategy::Exponential];
    if retry_after.is_some() {
        strategies.push(Strategy::ServerWaitExact);
    }
    strategies.extend([
        Strategy::Runtime,
        Strategy::RuntimeWithDefaultBudget,
        Strategy::RuntimeWithBudget,
    ]);
    strategies
        .into_iter()
        .map(|strategy| storm(strategy, retry_after))
        .collect()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn render_storm(out: &mut String, rows: &[StormRow]) {
    let _ = writeln!(
        out,
        "| policy | requests | refused (`429`) | peak load per 100 ms (C = {CAPACITY}) \
         | peak retries per 100 ms | all clients done at | gave up |"
    );
    out.push_str("|---|--:|--:|--:|--:|--:|---|\n");
    for row in rows {
        let why = match row.stops.len() {
            0 => String::new(),
            1 => format!(" ({})", row.stops.keys().next().expect("one reason")),
            _ => {
                let parts: Vec<String> = row
                    .stops
                    .iter()
                    .map(|(why, n)| format!("{n} {why}"))
                    .collect();
                format!(" ({})", parts.join(", "))
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} ({:.1} × C) | {} | {} | {}{why} |",
            row.strategy.label(),
            row.requests,
            row.refused,
            row.peak,
            f64::from(row.peak) / f64::from(CAPACITY),
            row.peak_retries,
            secs(row.all_done),
            row.gave_up,
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Part 2: a long outage
// ------------------------------------------------------------------------------------------------

/// Clients that call the upstream, each once a second.
pub const OUTAGE_CLIENTS: u32 = 20;
/// Calls per client (one a second: two minutes).
pub const OUTAGE_CALLS: u32 = 120;
/// The upstream answers `503` to everything until then, and `200` after.
pub const OUTAGE_UNTIL: Duration = Duration::from_secs(60);
const OUTAGE_SEED: u64 = 0x6f75_7461_6765;

/// How the clients of the long outage call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// The runtime alone (`budget = none`).
    Nothing,
    /// The runtime with the default budget, shared by the clients.
    DefaultBudget,
    /// The default budget, a shared [`CircuitBreaker`] (defaults: more than 50 % of at least 10
    /// outcomes over 30 s, 10 s cool-down, 3 probes) and a fallback (a cached answer).
    BreakerAndFallback,
}

impl Guard {
    fn label(self) -> &'static str {
        match self {
            Guard::Nothing => "runtime alone (`budget = none`)",
            Guard::DefaultBudget => "runtime + the default budget",
            Guard::BreakerAndFallback => "runtime + default budget + breaker + fallback",
        }
    }
}

/// One row of the long-outage table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutageRow {
    pub guard: Guard,
    /// Requests that reached the upstream while it was down.
    pub requests_in_outage: u32,
    /// Requests that reached it in all.
    pub requests: u32,
    /// Calls answered by the upstream, by the fallback, and not answered at all.
    pub answered: u32,
    pub degraded: u32,
    pub failed: u32,
    /// When, after the upstream came back, it answered a call for the first time.
    pub first_answer_after: Option<Duration>,
    /// Calls the fallback answered after the upstream came back (the breaker still open).
    pub degraded_after_recovery: u32,
}

/// A `503` while the upstream is down.
#[derive(Clone, Copy, Debug)]
struct Down;

impl Transient for Down {
    fn decision(&self) -> Decision {
        Decision::RETRY
    }
    fn status(&self) -> Option<u16> {
        Some(503)
    }
}

impl From<retry_audit::retry::Rejected> for Down {
    fn from(_: retry_audit::retry::Rejected) -> Self {
        Down
    }
}

#[derive(Default)]
struct OutageServer {
    requests: u32,
    requests_in_outage: u32,
    first_answer: Option<Duration>,
}

impl OutageServer {
    fn request(&mut self, at: Duration) -> Result<(), Down> {
        self.requests += 1;
        if at < OUTAGE_UNTIL {
            self.requests_in_outage += 1;
            return Err(Down);
        }
        Ok(())
    }
}

/// How a call ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Upstream,
    Fallback,
    Failed,
}

/// One client: a call every second (starting at `offset`), each a `#[retryable]` call as the
/// attribute expands it, with `guard`.
async fn outage_client(
    clock: &Clock,
    server: &RefCell<OutageServer>,
    (budget, breaker): (Option<&RetryBudget>, Option<&CircuitBreaker>),
    offset: Duration,
    seed: u64,
    answers: &RefCell<Vec<(Duration, Answer)>>,
) {
    for call in 0..OUTAGE_CALLS {
        let start = offset + Duration::from_secs(u64::from(call));
        if let Some(wait) = start.checked_sub(clock.elapsed()) {
            clock.after(wait).await;
        }
        let mut retry = Retry::<Down>::new(STORM_POLICY)
            .with_rng(fastrand::Rng::with_seed(seed ^ u64::from(call)));
        if let Some(budget) = budget {
            retry = retry.budget(budget);
        }
        if let Some(breaker) = breaker {
            retry = retry.breaker(breaker).fallback_follows();
        }
        let mut retry = retry.start_async(clock);
        let done = loop {
            let attempt = async {
                let answer = server.borrow_mut().request(clock.elapsed());
                clock.after(ROUND_TRIP).await;
                answer
            };
            if let ControlFlow::Break(done) = retry.attempt(attempt).await {
                break done;
            }
        };
        let answer = match done {
            Ok(()) => Answer::Upstream,
            // The fallback answers from a cache: no request.
            Err(stopped) if breaker.is_some() && stopped.allows_fallback() => Answer::Fallback,
            Err(_) => Answer::Failed,
        };
        if answer == Answer::Upstream {
            let mut server = server.borrow_mut();
            server.first_answer.get_or_insert(clock.elapsed());
        }
        answers.borrow_mut().push((clock.elapsed(), answer));
    }
}

/// Runs the long outage with `guard`: every client starts at its own offset in the first second.
#[must_use]
pub fn outage(guard: Guard) -> OutageRow {
    let clock = Clock::new();
    let server = RefCell::new(OutageServer::default());
    let budget = RetryBudget::standard();
    let breaker = CircuitBreaker::new();
    let answers = RefCell::new(Vec::new());
    let guards = match guard {
        Guard::Nothing => (None, None),
        Guard::DefaultBudget => (Some(&budget), None),
        Guard::BreakerAndFallback => (Some(&budget), Some(&breaker)),
    };
    let tasks: Vec<Task<'_>> = (0..OUTAGE_CLIENTS)
        .map(|id| {
            let (clock, server, answers) = (&clock, &server, &answers);
            let offset = Duration::from_millis(u64::from(id) * 1000 / u64::from(OUTAGE_CLIENTS));
            let seed = OUTAGE_SEED + u64::from(id);
            Box::pin(async move {
                outage_client(clock, server, guards, offset, seed, answers).await;
            }) as Task<'_>
        })
        .collect();
    run_tasks(&clock, tasks);
    let server = server.into_inner();
    let answers = answers.into_inner();
    let count = |kind: Answer| {
        u32::try_from(answers.iter().filter(|(_, a)| *a == kind).count()).expect("few calls")
    };
    OutageRow {
        guard,
        requests_in_outage: server.requests_in_outage,
        requests: server.requests,
        answered: count(Answer::Upstream),
        degraded: count(Answer::Fallback),
        failed: count(Answer::Failed),
        first_answer_after: server
            .first_answer
            .map(|at| at.saturating_sub(OUTAGE_UNTIL)),
        degraded_after_recovery: u32::try_from(
            answers
                .iter()
                .filter(|(at, a)| *a == Answer::Fallback && *at >= OUTAGE_UNTIL)
                .count(),
        )
        .expect("few calls"),
    }
}

/// The rows of the long-outage table.
#[must_use]
pub fn outage_table() -> Vec<OutageRow> {
    [
        Guard::Nothing,
        Guard::DefaultBudget,
        Guard::BreakerAndFallback,
    ]
    .into_iter()
    .map(outage)
    .collect()
}

fn render_outage(out: &mut String, rows: &[OutageRow]) {
    let calls = OUTAGE_CLIENTS * OUTAGE_CALLS;
    let outage_secs = OUTAGE_UNTIL.as_secs_f64();
    let _ = writeln!(
        out,
        "| policy | requests while down ({}-s outage) | per second (demand: {OUTAGE_CLIENTS}) \
         | requests in all | calls answered by the upstream | by the fallback (after recovery) \
         | not answered (of {calls}) | first answer after recovery |",
        OUTAGE_UNTIL.as_secs()
    );
    out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} | {} | {} | {} ({}) | {} | {} |",
            row.guard.label(),
            row.requests_in_outage,
            f64::from(row.requests_in_outage) / outage_secs,
            row.requests,
            row.answered,
            row.degraded,
            row.degraded_after_recovery,
            row.failed,
            row.first_answer_after
                .map_or_else(|| "never".to_owned(), secs),
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Part 3: the replay of domain.md §7
// ------------------------------------------------------------------------------------------------

/// The fake server's quota: it never refills.
pub const QUOTA: u32 = 24;
/// Policy A: the outside harness cuts an action at this many requests.
pub const A_CUT: usize = 8;
/// Policy B, per action: attempts (the first included) and deadline.
pub const B_ATTEMPTS: u32 = 3;
pub const B_ACTION_DEADLINE: Duration = Duration::from_secs(20);
/// Policy B, over the whole session (enforced by [`Session`], around the runtime).
pub const B_SESSION_REQUESTS: u32 = 40;
pub const B_SESSION_RETRIES: u32 = 12;
pub const B_SESSION_TIME: Duration = Duration::from_secs(300);
/// A reply arrives after this long; a lost one is given up after the client's timeout.
const REPLY: Duration = Duration::from_millis(200);
const TIMEOUT: Duration = Duration::from_secs(5);
const REPLAY_SEED: u64 = 0x0007_2026;

/// What an action asks the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Get(&'static str),
    /// A write; `key` says whether the endpoint accepts an `Idempotency-Key`.
    Post {
        path: &'static str,
        key: bool,
    },
}

/// The server's answer to one request that it accepted (that is: charged a unit for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `200`: a read answers, a write is saved.
    Ok,
    /// An error status, with a `Retry-After` value if any. Nothing is saved.
    Status(u16, Option<&'static str>),
    /// The request is processed (a write is saved) and the reply is lost: the client times out.
    Lost,
}

/// One scripted user action.
#[derive(Clone, Copy, Debug)]
pub struct Action {
    pub what: &'static str,
    pub request: Request,
    /// The answers to the action's 1st, 2nd, ... accepted request; `then` answers the rest.
    pub faults: &'static [Fault],
    pub then: Fault,
    /// Starts at the same instant as the previous action (two parts of one screen).
    pub with_previous: bool,
}

const OK: Fault = Fault::Ok;
const LOST: Fault = Fault::Lost;
const fn status(code: u16) -> Fault {
    Fault::Status(code, None)
}
const RATE_LIMITED: Fault = Fault::Status(429, Some("120"));
const fn get(path: &'static str) -> Request {
    Request::Get(path)
}
const fn post_keyed(path: &'static str) -> Request {
    Request::Post { path, key: true }
}
const fn post_unkeyed(path: &'static str) -> Request {
    Request::Post { path, key: false }
}
const fn act(
    what: &'static str,
    request: Request,
    faults: &'static [Fault],
    then: Fault,
) -> Action {
    Action {
        what,
        request,
        faults,
        then,
        with_previous: false,
    }
}
const fn with_previous(mut action: Action) -> Action {
    action.with_previous = true;
    action
}

/// The 20 user actions and the server's scripted faults. The published replay does not give its
/// script; this one is built to be consistent with every fact `domain.md` §7 states (the output
/// compares them). `answers` are the replies to the action's 1st, 2nd, ... request that the
/// server accepts; `then` answers every later one. A request refused for want of quota reaches
/// no script.
///
/// How the §7 facts pin it down: A completes 6 actions, all before its quota is gone (after
/// that every request is refused): actions 1-8 hold 8 + 8 requests on the permanent error and the
/// rate-limited action, a lost save resent without a key (2 requests, saved twice) and 5 clean
/// actions: 23 units. Action 9's first request takes the last unit, then 7 + 11 × 8 = 95 requests
/// are refused. B: 1 + 1 + 2 + 1 requests on actions 3, 4, 5 and 9, 3 + 3 on the two actions at
/// the attempt cap, 2 on the retried settings write, and 9 on the other 13 actions, three of them
/// served by its read cache and one by sharing a read in flight: 22 requests, 2 units kept.
#[rustfmt::skip]
pub const SCRIPT: [Action; 20] = [
    //  what the user does           request                            answers                              then          // the §7 fact it carries
    act("open the app",              get("/me"),                        &[],                                 OK),
    act("list projects",             get("/projects"),                  &[],                                 OK),
    act("summarise project 7",       post_keyed("/summaries"),          &[],                                 RATE_LIMITED), // rate-limited, hint 120 s
    act("open project 9 (deleted)",  get("/projects/9"),                &[],                                 status(404)),  // the permanent error
    act("save a draft",              post_keyed("/drafts"),             &[LOST],                             OK),           // lost reply, keyed write
    act("list projects again",       get("/projects"),                  &[],                                 OK),           // B reuses a read
    act("open notifications",        get("/notifications"),             &[],                                 OK),
    with_previous(
    act("notification badge",        get("/notifications"),             &[],                                 OK)),          // B shares a read in flight
    act("post a comment",            post_unkeyed("/comments"),         &[LOST],                             OK),           // lost reply, no key
    act("open project 7",            get("/projects/7"),                &[],                                 OK),
    act("search invoices",           get("/search?q=invoices"),         &[],                                 status(503)),  // B: 3-attempt cap
    act("back to the profile",       get("/me"),                        &[],                                 OK),           // B reuses a read
    act("change settings",           post_keyed("/settings"),           &[status(503)],                      OK),           // B: one retry, then done
    act("weekly report",             get("/reports/weekly"),            &[LOST, status(503), status(502)],   OK),           // B: 3-attempt cap
    act("open project 7 again",      get("/projects/7"),                &[],                                 OK),           // B reuses a read
    act("save a second draft",       post_keyed("/drafts"),             &[],                                 OK),
    act("list drafts",               get("/drafts"),                    &[],                                 OK),
    act("open project 12",           get("/projects/12"),               &[],                                 OK),
    act("share project 12",          post_keyed("/projects/12/share"),  &[],                                 OK),
    act("open the activity feed",    get("/activity"),                  &[],                                 OK),
];

impl Action {
    fn fault(&self, nth: usize) -> Fault {
        self.faults.get(nth).copied().unwrap_or(self.then)
    }

    fn is_write(&self) -> bool {
        matches!(self.request, Request::Post { .. })
    }

    fn request_text(&self) -> String {
        match self.request {
            Request::Get(path) => format!("`GET {path}`"),
            Request::Post { path, key: true } => format!("`POST {path}` (takes a key)"),
            Request::Post { path, key: false } => format!("`POST {path}` (no key)"),
        }
    }

    fn faults_text(&self) -> String {
        let show = |fault: Fault| match fault {
            Fault::Ok => "ok".to_owned(),
            Fault::Status(code, None) => code.to_string(),
            Fault::Status(code, Some(after)) => format!("{code} `Retry-After: {after}`"),
            Fault::Lost => "reply lost".to_owned(),
        };
        if self.faults.is_empty() {
            return match self.then {
                Fault::Ok => "none".to_owned(),
                other => format!("{} every time", show(other)),
            };
        }
        let firsts: Vec<String> = self.faults.iter().map(|&f| show(f)).collect();
        format!("{}, then {}", firsts.join(", "), show(self.then))
    }
}

/// What the replay's server sent back for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Accepted(Fault),
    /// The quota is gone: refused, free of charge.
    Refused,
}

impl Reply {
    fn latency(self) -> Duration {
        if self == Reply::Accepted(Fault::Lost) {
            TIMEOUT
        } else {
            REPLY
        }
    }

    fn short(self) -> String {
        match self {
            Reply::Accepted(Fault::Ok) => "ok".to_owned(),
            Reply::Accepted(Fault::Status(code, _)) => code.to_string(),
            Reply::Accepted(Fault::Lost) => "lost reply".to_owned(),
            Reply::Refused => "refused".to_owned(),
        }
    }
}

/// The fake server of §7: a quota of units that never refills, and a store of idempotency keys.
#[derive(Debug)]
struct QuotaServer {
    units_left: u32,
    requests: u32,
    refused: u32,
    /// How many times each action's write was saved.
    saved: BTreeMap<usize, u32>,
    keys: BTreeSet<String>,
}

impl QuotaServer {
    fn new() -> Self {
        QuotaServer {
            units_left: QUOTA,
            requests: 0,
            refused: 0,
            saved: BTreeMap::new(),
            keys: BTreeSet::new(),
        }
    }

    /// One request of action `index`; `answered` counts the action's accepted requests so far.
    fn handle(&mut self, index: usize, answered: &mut usize, key: Option<&str>) -> Reply {
        self.requests += 1;
        if self.units_left == 0 {
            self.refused += 1;
            return Reply::Refused;
        }
        self.units_left -= 1;
        let action = &SCRIPT[index];
        let fault = action.fault(*answered);
        *answered += 1;
        if action.is_write() && matches!(fault, Fault::Ok | Fault::Lost) {
            // A key already seen is a replay of the first save: charged, not saved again.
            let replay = key.is_some_and(|key| !self.keys.insert(key.to_owned()));
            if !replay {
                *self.saved.entry(index).or_default() += 1;
            }
        }
        Reply::Accepted(fault)
    }

    fn duplicates(&self) -> u32 {
        self.saved.values().map(|n| n.saturating_sub(1)).sum()
    }
}

/// How one action ended for one policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionEnd {
    pub requests: u32,
    pub completed: bool,
    /// The runtime's stop reason (policy B, when it stopped with an error).
    pub stop: Option<StopReason>,
    pub note: String,
}

/// A policy's whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub actions: Vec<ActionEnd>,
    pub requests: u32,
    pub refused: u32,
    pub units_used: u32,
    pub retries: u32,
    pub duplicates: u32,
    pub time: Duration,
    /// The unit count after each action.
    pub units_after: Vec<u32>,
}

impl Run {
    #[must_use]
    pub fn completed(&self) -> usize {
        self.actions.iter().filter(|a| a.completed).count()
    }
}

/// Groups a sequence of replies: `8 × 404`, `1 × lost reply, 7 × refused`.
fn replies_text(replies: &[Reply]) -> String {
    let mut groups: Vec<(String, u32)> = Vec::new();
    for reply in replies {
        let text = reply.short();
        match groups.last_mut() {
            Some((last, n)) if *last == text => *n += 1,
            _ => groups.push((text, 1)),
        }
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(text, n)| {
            if n == 1 {
                text
            } else {
                format!("{n} × {text}")
            }
        })
        .collect();
    parts.join(", ")
}

/// Moves `clock` to the start of an action: the previous action's start when the two run
/// together, else the end of everything so far.
fn start_action(clock: &Clock, action: &Action, previous_start: Duration, latest: Duration) {
    clock.set(if action.with_previous {
        previous_start
    } else {
        latest
    });
}

/// Policy A: every error is resent at once, without a key; the harness cuts at [`A_CUT`].
#[must_use]
pub fn policy_a() -> Run {
    let clock = Clock::new();
    let mut server = QuotaServer::new();
    let (mut actions, mut units_after) = (Vec::new(), Vec::new());
    let (mut previous_start, mut latest) = (Duration::ZERO, Duration::ZERO);
    for (index, action) in SCRIPT.iter().enumerate() {
        start_action(&clock, action, previous_start, latest);
        previous_start = clock.elapsed();
        let mut replies = Vec::new();
        let mut answered = 0;
        let completed = loop {
            let reply = server.handle(index, &mut answered, None);
            clock.advance(reply.latency());
            replies.push(reply);
            if reply == Reply::Accepted(Fault::Ok) {
                break true;
            }
            if replies.len() == A_CUT {
                break false;
            }
        };
        latest = latest.max(clock.elapsed());
        let saved = server.saved.get(&index).copied().unwrap_or(0);
        let mut note = match (completed, replies.len()) {
            (true, 1) => "done".to_owned(),
            (true, _) => format!("done after {}", replies_text(&replies)),
            (false, _) => format!("cut at {A_CUT}: {}", replies_text(&replies)),
        };
        if let Fault::Status(429, Some(after)) = action.then {
            let _ = write!(note, ", `Retry-After: {after}` ignored");
        }
        if saved == 2 {
            note.push_str("; **saved twice**");
        } else if saved > 2 {
            let _ = write!(note, "; **saved {saved} times**");
        } else if saved == 1 && !completed {
            note.push_str("; it was in fact saved");
        }
        actions.push(ActionEnd {
            requests: u32::try_from(replies.len()).expect("at most 8"),
            completed,
            stop: None,
            note,
        });
        units_after.push(server.units_left);
    }
    Run {
        retries: server.requests - u32::try_from(SCRIPT.len()).expect("20 actions"),
        requests: server.requests,
        refused: server.refused,
        units_used: QUOTA - server.units_left,
        duplicates: server.duplicates(),
        time: latest,
        units_after,
        actions,
    }
}

/// Policy B's errors, as its HTTP client would report them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiError {
    Status(u16, Option<&'static str>),
    /// No reply before the timeout: the request may have been processed.
    Lost,
    /// The quota is gone (a `429` without `Retry-After`).
    Refused,
    /// Not sent: the session's cap (`40 requests`, `12 retries`) is reached.
    SessionCap(&'static str),
}

impl Transient for ApiError {
    fn decision(&self) -> Decision {
        match *self {
            ApiError::Status(code, after) => {
                Decision::for_response(code, after.map(|value| ("Retry-After", value)))
            }
            ApiError::Lost => Decision::Ambiguous,
            ApiError::Refused => Decision::RETRY,
            ApiError::SessionCap(_) => Decision::Stop,
        }
    }

    fn status(&self) -> Option<u16> {
        match *self {
            ApiError::Status(code, _) => Some(code),
            ApiError::Refused => Some(429),
            _ => None,
        }
    }
}

/// Policy B's caps across actions, which the runtime does not keep (it bounds one call): checked
/// before each request, and the time left shortens each action's deadline.
#[derive(Debug, Default)]
pub struct Session {
    pub requests: u32,
    pub retries: u32,
}

/// Policy B: each action is one `Retry::run_sync` call of the runtime on the virtual clock (3
/// attempts, a 20 s deadline, full jitter from 500 ms, `Retry-After` honoured, ambiguous failures
/// resent only for reads and keyed writes), inside a session layer that keeps the overall caps,
/// reuses successful reads and lets a read join an identical one in flight.
#[must_use]
pub fn policy_b() -> Run {
    let clock = Clock::new();
    let mut server = QuotaServer::new();
    let mut session = Session::default();
    // The budget `#[retryable]` draws from by default, shared by the session's calls.
    let budget = RetryBudget::standard();
    let mut cache: BTreeSet<&str> = BTreeSet::new();
    let (mut actions, mut units_after) = (Vec::new(), Vec::new());
    let (mut previous_start, mut latest) = (Duration::ZERO, Duration::ZERO);
    for (index, action) in SCRIPT.iter().enumerate() {
        start_action(&clock, action, previous_start, latest);
        previous_start = clock.elapsed();
        let end = if let Some(end) = b_without_request(index, action, &actions, &cache) {
            end
        } else {
            b_request(index, action, &clock, &budget, &mut server, &mut session)
        };
        if let (Request::Get(path), true) = (action.request, end.completed) {
            cache.insert(path);
        }
        latest = latest.max(clock.elapsed());
        actions.push(end);
        units_after.push(server.units_left);
    }
    Run {
        requests: server.requests,
        refused: server.refused,
        units_used: QUOTA - server.units_left,
        retries: session.retries,
        duplicates: server.duplicates(),
        time: latest,
        units_after,
        actions,
    }
}

/// A read that B answers without a request: it joins the identical read of the action started
/// at the same instant, or reuses an earlier successful read.
fn b_without_request(
    index: usize,
    action: &Action,
    done: &[ActionEnd],
    cache: &BTreeSet<&str>,
) -> Option<ActionEnd> {
    let Request::Get(path) = action.request else {
        return None;
    };
    let previous = index.checked_sub(1).map(|i| (&SCRIPT[i], &done[i]));
    if let Some((before, shared)) = previous {
        if action.with_previous && before.request == action.request && shared.requests > 0 {
            return Some(ActionEnd {
                requests: 0,
                completed: shared.completed,
                stop: shared.stop,
                note: format!("joined action {index}'s identical read in flight"),
            });
        }
    }
    cache.contains(path).then(|| ActionEnd {
        requests: 0,
        completed: true,
        stop: None,
        note: "reused an earlier successful read".to_owned(),
    })
}

/// One action sent through the runtime.
fn b_request(
    index: usize,
    action: &Action,
    clock: &Clock,
    budget: &RetryBudget,
    server: &mut QuotaServer,
    session: &mut Session,
) -> ActionEnd {
    let key = match action.request {
        Request::Post { path, key: true } => {
            Some(IdempotencyKey::new(format!("{path}:action-{}", index + 1)))
        }
        _ => None,
    };
    let idempotent = !action.is_write() || key.is_some();
    let time_left = B_SESSION_TIME.saturating_sub(clock.elapsed());
    if time_left.is_zero() {
        return ActionEnd {
            requests: 0,
            completed: false,
            stop: None,
            note: "not started: the session's 300 s are spent".to_owned(),
        };
    }
    let policy = Policy::new()
        .attempts(B_ATTEMPTS)
        .deadline(B_ACTION_DEADLINE.min(time_left))
        .backoff(Duration::from_millis(500), Duration::from_secs(5))
        .idempotent(idempotent);
    let mut replies = Vec::new();
    let mut answered = 0;
    let seed = REPLAY_SEED + u64::try_from(index).expect("20 actions");
    let result = Retry::<ApiError>::new(policy)
        .budget(budget)
        .with_rng(fastrand::Rng::with_seed(seed))
        .run_sync(clock, |attempt| {
            if session.requests >= B_SESSION_REQUESTS {
                return Err(ApiError::SessionCap("40 requests"));
            }
            if attempt.number() > 1 {
                if session.retries >= B_SESSION_RETRIES {
                    return Err(ApiError::SessionCap("12 retries"));
                }
                session.retries += 1;
            }
            session.requests += 1;
            let reply = server.handle(
                index,
                &mut answered,
                key.as_ref().map(IdempotencyKey::as_str),
            );
            clock.advance(reply.latency());
            replies.push(reply);
            match reply {
                Reply::Accepted(Fault::Ok) => Ok(()),
                Reply::Accepted(Fault::Status(code, after)) => Err(ApiError::Status(code, after)),
                Reply::Accepted(Fault::Lost) => Err(ApiError::Lost),
                Reply::Refused => Err(ApiError::Refused),
            }
        });
    let requests = u32::try_from(replies.len()).expect("at most 3");
    let sent = replies_text(&replies);
    match result {
        Ok(()) => {
            let mut note = if requests == 1 {
                "done".to_owned()
            } else {
                format!("done after {sent}")
            };
            if key.is_some() && replies.contains(&Reply::Accepted(Fault::Lost)) {
                note.push_str("; the key made the resend a replay of the first save");
            }
            ActionEnd {
                requests,
                completed: true,
                stop: None,
                note,
            }
        }
        Err(error) => {
            // A session cap is the wrapper's refusal (classified `Stop` so that the runtime ends
            // the call); it is not the server's permanent error.
            let (stop, why) = match (error.reason(), *error.error()) {
                (_, ApiError::SessionCap(cap)) => (None, format!("session cap ({cap}) after {sent}")),
                (StopReason::Permanent, _) => (Some(StopReason::Permanent), format!("permanent error ({sent})")),
                (StopReason::AttemptsExhausted, _) => (
                    Some(StopReason::AttemptsExhausted),
                    format!("{B_ATTEMPTS}-attempt cap ({sent})"),
                ),
                (reason @ StopReason::ServerWaitTooLong { wait }, _) => (
                    Some(reason),
                    format!(
                        "server wait too long ({sent}: asked {} s, the action has {} s), not slept",
                        wait.as_secs(),
                        B_ACTION_DEADLINE.as_secs()
                    ),
                ),
                (StopReason::WriteNotConfirmed, _) => (
                    Some(StopReason::WriteNotConfirmed),
                    format!("write not confirmed ({sent}), reported \"may have been saved, not resent\""),
                ),
                (other, _) => (Some(other), format!("{} ({sent})", other.as_str())),
            };
            ActionEnd {
                requests,
                completed: false,
                stop,
                note: format!("**stopped**: {why}"),
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// The report
// ------------------------------------------------------------------------------------------------

fn render_replay(out: &mut String, a: &Run, b: &Run) {
    out.push_str(
        "| | A: retry every error at once, cut at 8 per action | B: the runtime + session caps |\n\
         |---|--:|--:|\n",
    );
    let rows: [(&str, String, String); 8] = [
        (
            "requests sent",
            a.requests.to_string(),
            b.requests.to_string(),
        ),
        (
            "of which refused (quota gone)",
            a.refused.to_string(),
            b.refused.to_string(),
        ),
        ("retries", a.retries.to_string(), b.retries.to_string()),
        (
            "units used (of 24)",
            a.units_used.to_string(),
            b.units_used.to_string(),
        ),
        (
            "actions completed (of 20)",
            a.completed().to_string(),
            b.completed().to_string(),
        ),
        (
            "actions abandoned",
            (SCRIPT.len() - a.completed()).to_string(),
            (SCRIPT.len() - b.completed()).to_string(),
        ),
        (
            "writes saved twice",
            a.duplicates.to_string(),
            b.duplicates.to_string(),
        ),
        ("virtual time", secs(a.time), secs(b.time)),
    ];
    for (what, x, y) in rows {
        let _ = writeln!(out, "| {what} | {x} | {y} |");
    }
}

fn render_actions(out: &mut String, a: &Run, b: &Run) {
    out.push_str(
        "| # | user action | request | scripted answers | A: requests (units left) | A | B: \
         requests (units left) | B |\n|--:|---|---|---|--:|---|--:|---|\n",
    );
    for (i, action) in SCRIPT.iter().enumerate() {
        let together = if action.with_previous {
            format!(" (same time as {i})")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| {n} | {what}{together} | {request} | {faults} | {an} ({au}) | {anote} | {bn} ({bu}) | {bnote} |",
            n = i + 1,
            what = action.what,
            request = action.request_text(),
            faults = action.faults_text(),
            an = a.actions[i].requests,
            au = a.units_after[i],
            anote = a.actions[i].note,
            bn = b.actions[i].requests,
            bu = b.units_after[i],
            bnote = b.actions[i].note,
        );
    }
}

/// B's stops, counted by reason.
fn b_stops(b: &Run) -> (usize, usize, usize, usize) {
    let count = |f: fn(StopReason) -> bool| {
        b.actions
            .iter()
            .filter_map(|a| a.stop)
            .filter(|&r| f(r))
            .count()
    };
    (
        count(|r| r == StopReason::Permanent),
        count(|r| r == StopReason::AttemptsExhausted),
        count(|r| r == StopReason::WriteNotConfirmed),
        count(|r| matches!(r, StopReason::ServerWaitTooLong { .. })),
    )
}

/// The action (1-based) after which A had no unit left.
fn quota_gone_at(a: &Run) -> usize {
    a.units_after
        .iter()
        .position(|&u| u == 0)
        .map_or(0, |i| i + 1)
}

fn render_comparison(out: &mut String, a: &Run, b: &Run) {
    let gone = quota_gone_at(a);
    let (permanent, capped, unconfirmed, too_long) = b_stops(b);
    let a_requests_on = |then: fn(Fault) -> bool| {
        SCRIPT
            .iter()
            .zip(&a.actions)
            .find(|(action, _)| then(action.then))
            .map_or(0, |(_, end)| end.requests)
    };
    let permanent_a = a_requests_on(|f| matches!(f, Fault::Status(404, _)));
    let limited_a = a_requests_on(|f| matches!(f, Fault::Status(429, _)));
    let quota = if gone <= 8 {
        format!("action {gone}")
    } else {
        format!(
            "{} units after 8 actions; the last at action {gone}'s first request",
            QUOTA - a.units_after[7]
        )
    };
    let diff = |x: usize, y: usize| i64::try_from(x).unwrap_or(0) - i64::try_from(y).unwrap_or(0);
    let rows: [(&str, &str, String); 11] = [
        ("A spent the whole quota by", "the 8th action", quota),
        (
            "A requests on the permanent error / the rate-limited action",
            "8 / 8",
            format!("{permanent_a} / {limited_a}"),
        ),
        ("A requests refused after that", "95", a.refused.to_string()),
        (
            "A requests in total",
            "119 (derived: 24 + 95)",
            a.requests.to_string(),
        ),
        (
            "B requests in total",
            "22 (derived: 119 − 97)",
            b.requests.to_string(),
        ),
        (
            "A requests minus B requests",
            "97",
            diff(a.requests as usize, b.requests as usize).to_string(),
        ),
        ("B units kept", "2", (QUOTA - b.units_used).to_string()),
        (
            "actions B finished more than A",
            "9",
            format!(
                "{} ({} vs {})",
                diff(b.completed(), a.completed()),
                b.completed(),
                a.completed()
            ),
        ),
        (
            "writes saved twice, A / B",
            "1 / 0",
            format!("{} / {}", a.duplicates, b.duplicates),
        ),
        (
            "B stops: permanent / 3-attempt cap / not confirmed / server wait 120 s",
            "1 / 2 / 1 / 1",
            format!("{permanent} / {capped} / {unconfirmed} / {too_long}"),
        ),
        (
            "A actions abandoned while showing \"trying again\"",
            "14",
            (SCRIPT.len() - a.completed()).to_string(),
        ),
    ];
    out.push_str("| figure | published | ours |\n|---|---|---|\n");
    for (what, published, ours) in rows {
        let _ = writeln!(out, "| {what} | {published} | {ours} |");
    }
    if gone > 8 {
        out.push('\n');
        paragraph(
            out,
            &format!(
                "Ours differs in one place, and the other figures force it: A resends every \
                 refusal until the harness cuts it at {A_CUT}, so each action after the quota is \
                 gone costs {A_CUT} refused requests, and {} = 7 + 11 × 8 refused requests put \
                 the last unit on the first request of action {gone} of 20. Spent within the \
                 first 8 actions, with action 9 started after them, the quota would have left 12 actions and at least 96 refused \
                 requests.",
                a.refused
            ),
        );
    }
}

/// Appends `text` wrapped at 100 columns (as the rest of the README), then a newline.
fn paragraph(out: &mut String, text: &str) {
    let mut width = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if width > 0 && width + 1 + len > 100 {
            out.push('\n');
            width = 0;
        } else if width > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(word);
        width += len;
    }
    out.push('\n');
}

/// The row of `guard` in `rows`.
fn outage_row(rows: &[OutageRow], guard: Guard) -> &OutageRow {
    rows.iter()
        .find(|r| r.guard == guard)
        .expect("every guard has a row")
}

/// The row of `strategy` in `rows`.
fn row(rows: &[StormRow], strategy: Strategy) -> &StormRow {
    rows.iter()
        .find(|r| r.strategy == strategy)
        .expect("every table has the policy")
}

/// The Markdown block of `docs/why.md`, between the markers.
#[must_use]
pub fn report() -> String {
    let plain = storm_table(None);
    let hinted = storm_table(Some(RETRY_AFTER));
    let (a, b) = (policy_a(), policy_b());
    let immediate = row(&plain, Strategy::Immediate);
    let fixed = row(&plain, Strategy::Fixed);
    let exponential = row(&plain, Strategy::Exponential);
    let jitter = row(&plain, Strategy::Runtime);
    let budget = row(&plain, Strategy::RuntimeWithBudget);
    let default_budget = row(&plain, Strategy::RuntimeWithDefaultBudget);
    let outages = outage_table();
    let through = |r: &StormRow| CLIENTS - r.gave_up;
    let mut intro = format!(
        "The tables below are printed by `cargo run --example storm` \
         ([`examples/storm.rs`](../examples/storm.rs)), a simulation in virtual time (no network, no \
         real sleeping, fixed seeds) that drives the same runtime `#[retryable]` expands to; \
         `BLESS=1 cargo test --test storm` copies them here. When {CLIENTS} clients that failed \
         together retry against a server that accepts {CAPACITY} requests per 100 ms, immediate \
         retry sends {} requests in the first 100 ms and gets {} clients through; a fixed 1 s \
         and an exponential delay without jitter retry in waves and get {} and {} through; full \
         jitter, with the same {STORM_ATTEMPTS} attempts, gets {} through.",
        immediate.peak,
        through(immediate),
        through(fixed),
        through(exponential),
        through(jitter),
    );
    if jitter.peak > exponential.peak && jitter.peak_retries <= exponential.peak_retries {
        let _ = write!(
            intro,
            " Its first retry comes 0–100 ms after the failure, so its busiest window (the first) \
             holds more requests than with lock-step exponential backoff ({} against {}), while \
             its largest wave of retries is smaller ({} against {}).",
            jitter.peak, exponential.peak, jitter.peak_retries, exponential.peak_retries,
        );
    }
    let guarded = outage_row(&outages, Guard::BreakerAndFallback);
    let alone = outage_row(&outages, Guard::Nothing);
    let _ = write!(
        intro,
        " The budget `#[retryable]` draws from by default (20 % of the calls plus 10 retries \
         per second) sends {} requests and gets {} through; a tighter one (gRPC retry throttling, \
         100 tokens) sends the fewest ({}), but {} clients give up at once: a storm of `429`s \
         drains it as fast as an outage. When an upstream stays down for {} s, a breaker with a \
         fallback sends it {} requests instead of {} and answers every call. In the replay of a \
         published experiment, retrying every error at once spends a {QUOTA}-unit quota on a \
         permanent error and a rate-limited action, then has {} requests refused; the runtime \
         completes {} of the {} actions and saves no write twice.",
        default_budget.requests,
        through(default_budget),
        budget.requests,
        budget.gave_up,
        OUTAGE_UNTIL.as_secs(),
        guarded.requests_in_outage,
        alone.requests_in_outage,
        a.refused,
        b.completed(),
        SCRIPT.len(),
    );
    let mut out = String::new();
    paragraph(&mut out, &intro);
    out.push('\n');
    paragraph(
        &mut out,
        &format!(
            "**Storm.** {CLIENTS} clients send their first request at t = 0; the server accepts \
             {CAPACITY} requests per 100 ms window and answers `429` beyond it; a round trip \
             takes {} ms. Every policy makes at most {STORM_ATTEMPTS} attempts. Exponential: \
             100 ms × 2^n, capped at 5 s. Runtime: \
             `Policy::new().attempts({STORM_ATTEMPTS}).backoff(100ms, 5s).deadline(10s)`, one \
             seeded generator per client; the default budget is `RetryBudget::standard()` (what \
             `#[retryable]` uses when no `budget` is written: 20 % of the calls plus 10 retries \
             per second, 100 banked), the tighter one `RetryBudget::new({BUDGET_TOKENS})` (gRPC \
             retry throttling). `429` without `Retry-After`:",
            ROUND_TRIP.as_millis(),
        ),
    );
    out.push('\n');
    render_storm(&mut out, &plain);
    out.push('\n');
    paragraph(
        &mut out,
        &format!(
            "`429` with `Retry-After: {RETRY_AFTER}` (the loops written by hand ignore it, except \
             the one that sleeps exactly that long; the runtime waits that long plus a little \
             jitter):"
        ),
    );
    out.push('\n');
    render_storm(&mut out, &hinted);
    out.push('\n');
    paragraph(
        &mut out,
        &format!(
            "**Long outage.** {OUTAGE_CLIENTS} clients call an upstream once a second each, for \
             {} s; it answers `503` to everything for the first {} s, then `200`. Each call is \
             the runtime with the storm's policy ({STORM_ATTEMPTS} attempts, 100 ms to 5 s of \
             full jitter, 10 s deadline). The breaker is `CircuitBreaker::new()` (opens when more \
             than 50 % of at least 10 outcomes over 30 s fail, lets 3 probes out after 10 s); \
             the fallback answers from a cache without a request, once per call:",
            OUTAGE_CALLS,
            OUTAGE_UNTIL.as_secs(),
        ),
    );
    out.push('\n');
    render_outage(&mut out, &outages);
    out.push('\n');
    let budgeted = outage_row(&outages, Guard::DefaultBudget);
    let demand = f64::from(OUTAGE_CLIENTS);
    paragraph(
        &mut out,
        &format!(
            "While the upstream is down, the runtime alone sends {:.1} times the demand (every \
             attempt of every call); the default budget {:.1} times (every call, plus 20 % of \
             them and 10 retries per second), and answers no more calls; the breaker stops \
             calling after its first failures, sends one probe per cool-down, and the fallback \
             answers every call, {} of them after the upstream came back, until a probe closed \
             the breaker.",
            f64::from(alone.requests_in_outage) / OUTAGE_UNTIL.as_secs_f64() / demand,
            f64::from(budgeted.requests_in_outage) / OUTAGE_UNTIL.as_secs_f64() / demand,
            guarded.degraded_after_recovery,
        ),
    );
    out.push('\n');
    paragraph(
        &mut out,
        &format!(
            "**Replay of a published experiment.** An operator write-up replayed two client \
             policies against a fake server with a quota of {QUOTA} units that never refills: \
             every accepted request costs 1 (errors, lost replies and key replays too), requests \
             after it is gone are refused free of charge; a reply takes {} ms, and a lost one \
             is given up after {} s. A retries every error at once and is \
             cut at {A_CUT} requests per action. B is the runtime (`Retry::run_sync` on the \
             virtual clock) with `attempts({B_ATTEMPTS})`, `deadline(20s)` and \
             `backoff(500ms, 5s)` per action, `idempotent(true)` for reads and for writes \
             sent with an `IdempotencyKey`, drawing from the default budget (as `#[retryable]` \
             does; it never refuses one of B's retries); its caps over the whole session \
             ({B_SESSION_REQUESTS} requests, {B_SESSION_RETRIES} retries, 300 s), its reuse of \
             successful reads and its sharing of an identical read in flight are a small layer \
             in the example around the runtime, which bounds one call at a time (none of the \
             session caps was reached: {} requests, {} retries, {}).",
            REPLY.as_millis(),
            TIMEOUT.as_secs(),
            b.requests,
            b.retries,
            secs(b.time),
        ),
    );
    out.push('\n');
    render_replay(&mut out, &a, &b);
    out.push_str("\n<details><summary>The 20 scripted actions and how each ended</summary>\n\n");
    paragraph(
        &mut out,
        "The write-up does not give its script; this one is ours, built to be consistent with \
         every fact it states.",
    );
    out.push('\n');
    render_actions(&mut out, &a, &b);
    out.push_str("\n</details>\n\nPublished figures against ours:\n\n");
    render_comparison(&mut out, &a, &b);
    out
}
