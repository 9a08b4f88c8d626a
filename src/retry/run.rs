//! The retry loop itself: [`Retry`] decides after each attempt (retry after a delay, or stop with a
//! [`StopReason`]); [`Retry::run_sync`] drives it for blocking code and [`AsyncRetry`] for async
//! code. `#[retryable]` expands to a call of one of them.

use std::fmt;
use std::future::{poll_fn, Future};
use std::ops::ControlFlow;
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::{Duration, Instant};

use super::breaker::{BreakerTicket, CircuitBreaker};
use super::budget::RetryBudget;
use super::bulkhead::{Bulkhead, BulkheadPermit};
use super::decision::{Decision, Transient};
use super::error::{AttemptTimedOut, Rejected, Report, Retried, RetryError, StopReason};
use super::policy::{Jitter, Policy};
use super::sleep::{AsyncSleeper, Sleeper};

/// How late a timer may wake: waits end at least this long before the deadline.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// Called before each wait with the number of the attempt that failed (1-based), the delay about
/// to be slept, and the error.
pub type OnRetry<E> = fn(u32, Duration, &E);

/// Called once when the operation stops with an error, with the reason and the attempt count.
pub type OnStop<E> = fn(&RetryError<E>);

/// The attempt about to run, as seen by the body of [`Retry::run_sync`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    number: u32,
    time_left: Duration,
}

impl Attempt {
    /// The attempt number, 1 for the first.
    #[must_use]
    pub const fn number(self) -> u32 {
        self.number
    }

    /// The time left before the deadline: cap the attempt's own timeouts at it (domain.md §3).
    #[must_use]
    pub const fn time_left(self) -> Duration {
        self.time_left
    }
}

/// One retried operation in progress: the policy, how errors are classified, the hooks, and the
/// count and clock of the attempts made so far.
///
/// ```
/// use std::time::Duration;
/// use retry_audit::retry::{Policy, Retry, StopReason};
///
/// let mut calls = 0;
/// let no_wait = |_delay: Duration| {}; // a sleeper that does not sleep (for the example)
/// let result: Result<(), _> = Retry::new(Policy::new().attempts(2)).run_sync(&no_wait, |_attempt| {
///     calls += 1;
///     Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
/// });
/// assert_eq!(calls, 2);
/// assert_eq!(result.unwrap_err().reason(), StopReason::AttemptsExhausted);
/// ```
#[derive(Debug)]
pub struct Retry<'a, E> {
    policy: Policy,
    classify: fn(&E) -> Decision,
    status: fn(&E) -> Option<u16>,
    budget: Option<&'a RetryBudget>,
    breaker: Option<&'a CircuitBreaker>,
    bulkhead: Option<&'a Bulkhead>,
    /// The error of a call whose first attempt the breaker or the bulkhead refused.
    rejected: Option<fn(Rejected) -> E>,
    on_retry_hook: Option<OnRetry<E>>,
    on_stop_hook: Option<OnStop<E>>,
    /// A fallback answers when the retry gives up: the give-up is not the warning, the fallback is.
    fallback_follows: bool,
    rng: fastrand::Rng,
    start: Option<Instant>,
    attempts: u32,
    waits: u32,
    waited: Duration,
    previous_delay: Duration,
    /// The breaker's ticket and the bulkhead's permit of the attempt in flight.
    ticket: Option<BreakerTicket<'a>>,
    permit: Option<BulkheadPermit<'a>>,
    /// How long the next attempt has waited in the bulkhead's queue.
    queued: Duration,
}

/// What to do after an attempt.
enum Step<T, E> {
    Done(Result<Retried<T>, RetryError<E>>),
    /// Wait, then try again; the error is kept in case the next attempt is refused.
    Wait(Duration, E),
}

fn no_status<E>(_: &E) -> Option<u16> {
    None
}

impl<'a, E> Retry<'a, E> {
    /// A retry whose errors classify themselves through [`Transient`].
    ///
    /// The jitter comes from a `fastrand` generator forked from this thread's: call
    /// `fastrand::seed(n)` first to make the delays reproducible, or use [`Retry::with_rng`].
    #[must_use]
    pub fn new(policy: Policy) -> Self
    where
        E: Transient,
    {
        Self::build(policy, E::decision, E::status)
    }

    /// A retry whose errors are classified by `classify` (and not by [`Transient`]). The policy's
    /// `retry_on` set is ignored: the classifier has the last word.
    #[must_use]
    pub fn with_classifier(policy: Policy, classify: fn(&E) -> Decision) -> Self {
        Self::build(policy, classify, no_status)
    }

    fn build(policy: Policy, classify: fn(&E) -> Decision, status: fn(&E) -> Option<u16>) -> Self {
        Retry {
            policy,
            classify,
            status,
            budget: None,
            breaker: None,
            bulkhead: None,
            rejected: None,
            on_retry_hook: None,
            on_stop_hook: None,
            fallback_follows: false,
            rng: fastrand::Rng::new(),
            start: None,
            attempts: 0,
            waits: 0,
            waited: Duration::ZERO,
            previous_delay: policy.base(),
            ticket: None,
            permit: None,
            queued: Duration::ZERO,
        }
    }

    /// Draws every retry from a shared budget (for example the upstream's
    /// [`shared_budget`](super::shared_budget), which `#[retryable]` uses by default). A retry
    /// the budget refuses is not sent: the call stops with [`StopReason::BudgetExhausted`].
    #[must_use]
    pub fn budget(mut self, budget: &'a RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Sends each attempt only when `breaker` lets it through, and tells it how each went. A
    /// refused attempt is not sent: the call stops with [`StopReason::BreakerOpen`] (with the last
    /// error, or `E::from(Rejected)` when no attempt went out).
    #[must_use]
    pub fn breaker(self, breaker: &'a CircuitBreaker) -> Self
    where
        E: From<Rejected>,
    {
        self.breaker_with(breaker, E::from)
    }

    /// [`Retry::breaker`], with the error of a call refused before any attempt made by
    /// `rejected`.
    #[must_use]
    pub fn breaker_with(
        mut self,
        breaker: &'a CircuitBreaker,
        rejected: fn(Rejected) -> E,
    ) -> Self {
        self.breaker = Some(breaker);
        self.rejected = Some(rejected);
        self
    }

    /// Sends each attempt only with a permit of `bulkhead` (given back when its answer is in).
    /// Without one the attempt is not sent: the call stops with [`StopReason::BulkheadFull`].
    #[must_use]
    pub fn bulkhead(self, bulkhead: &'a Bulkhead) -> Self
    where
        E: From<Rejected>,
    {
        self.bulkhead_with(bulkhead, E::from)
    }

    /// [`Retry::bulkhead`], with the error of a call refused before any attempt made by
    /// `rejected`.
    #[must_use]
    pub fn bulkhead_with(mut self, bulkhead: &'a Bulkhead, rejected: fn(Rejected) -> E) -> Self {
        self.bulkhead = Some(bulkhead);
        self.rejected = Some(rejected);
        self
    }

    /// Says that a fallback answers when this retry gives up ([`RetryError::degrade`]): with the
    /// `tracing` feature the give-up is then a DEBUG event, and the fallback's answer the one
    /// WARN event of the call.
    #[must_use]
    pub fn fallback_follows(mut self) -> Self {
        self.fallback_follows = true;
        self
    }

    /// Calls `hook` before each wait.
    #[must_use]
    pub fn on_retry(mut self, hook: OnRetry<E>) -> Self {
        self.on_retry_hook = Some(hook);
        self
    }

    /// Calls `hook` when the operation stops with an error.
    #[must_use]
    pub fn on_stop(mut self, hook: OnStop<E>) -> Self {
        self.on_stop_hook = Some(hook);
        self
    }

    /// Uses `rng` for the jitter (for reproducible tests).
    #[must_use]
    pub fn with_rng(mut self, rng: fastrand::Rng) -> Self {
        self.rng = rng;
        self
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Runs `op` until it succeeds or the policy says stop, waiting with `sleeper` in between. The
    /// deadline is measured from now, on the sleeper's clock.
    ///
    /// The clock is read once before the first attempt (the deadline's start), then only after a
    /// failure and after a wait: a first attempt that succeeds costs one clock read.
    pub fn run_sync<T, S, F>(self, sleeper: &S, op: F) -> Result<T, RetryError<E>>
    where
        S: Sleeper + ?Sized,
        F: FnMut(Attempt) -> Result<T, E>,
    {
        self.run_sync_with_report(sleeper, op)
            .map(Retried::into_value)
    }

    /// [`Retry::run_sync`], with the [`Report`] of the call on a success too (attempts, waits):
    /// what `#[retryable]` runs.
    pub fn run_sync_with_report<T, S, F>(
        mut self,
        sleeper: &S,
        mut op: F,
    ) -> Result<Retried<T>, RetryError<E>>
    where
        S: Sleeper + ?Sized,
        F: FnMut(Attempt) -> Result<T, E>,
    {
        let mut now = sleeper.now();
        self.start = Some(now);
        let mut last_error = None;
        loop {
            let attempt = match self.begin_attempt(now) {
                Ok(attempt) => attempt,
                Err(reason) => match self.queue_step(reason, now) {
                    Some(step) => {
                        sleeper.sleep(step);
                        now = sleeper.now();
                        continue;
                    }
                    None => return Err(self.refused(reason, last_error.take())),
                },
            };
            let outcome = op(attempt);
            match self.after_attempt(outcome, false, || sleeper.now()) {
                Step::Done(result) => return result,
                Step::Wait(delay, error) => {
                    last_error = Some(error);
                    sleeper.sleep(delay);
                    now = sleeper.now();
                }
            }
        }
    }

    /// What the call did so far (attempts, waits), without a stop reason.
    #[must_use]
    pub fn report(&self) -> Report {
        Report::new(self.attempts, self.waits, self.waited)
    }

    /// Drives this retry from async code, waiting with `sleeper`; the deadline is measured from
    /// the first attempt, on the sleeper's clock.
    ///
    /// The sleeper is shared (`Sync`) and its future `Send`, so that the retry's own future is
    /// `Send` whenever the attempts are; it is checked here, once, and then used through a trait
    /// object (one allocation per wait), so that a wrong sleeper is one compile error, not one per
    /// use.
    pub fn start_async<S>(self, sleeper: &'a S) -> AsyncRetry<'a, E>
    where
        S: AsyncSleeper + Sync,
        S::Sleep: Send + 'a,
    {
        AsyncRetry {
            retry: self,
            sleeper,
            last_error: None,
        }
    }

    fn time_left(&self, now: Instant) -> Duration {
        let start = self.start.unwrap_or(now);
        self.policy
            .overall_deadline()
            .saturating_sub(now.saturating_duration_since(start))
    }

    /// Lets the next attempt out, or says why not (the breaker or the bulkhead refused it).
    fn begin_attempt(&mut self, now: Instant) -> Result<Attempt, StopReason> {
        let start = *self.start.get_or_insert(now);
        if let Some(breaker) = self.breaker {
            self.ticket = Some(breaker.admit(now).map_err(|r| r.reason())?);
        }
        if let Some(bulkhead) = self.bulkhead {
            let Some(permit) = bulkhead.try_acquire() else {
                // The breaker's probe, if it was one, goes to another caller.
                self.ticket = None;
                return Err(StopReason::BulkheadFull);
            };
            self.permit = Some(permit);
        }
        self.queued = Duration::ZERO;
        if self.attempts == 0 {
            if let Some(budget) = self.budget {
                budget.record_request(now);
            }
        }
        self.attempts += 1;
        // At the start (the first attempt) the whole deadline is left: no clock arithmetic.
        let time_left = if now == start {
            self.policy.overall_deadline()
        } else {
            self.time_left(now)
        };
        Ok(Attempt {
            number: self.attempts,
            time_left,
        })
    }

    /// How long to wait before asking the bulkhead again, when it is full and its queue has room
    /// (in its length and before the deadline); `None` to stop.
    fn queue_step(&mut self, reason: StopReason, now: Instant) -> Option<Duration> {
        let bulkhead = self.bulkhead?;
        let room = bulkhead.max_wait().saturating_sub(self.queued);
        let step = Bulkhead::QUEUE_STEP.min(room);
        let left = self.time_left(now).saturating_sub(TIMER_SLACK);
        if reason != StopReason::BulkheadFull || step.is_zero() || step >= left {
            return None;
        }
        self.queued += step;
        Some(step)
    }

    /// The error of a call stopped because its next attempt was refused: the last error, or the
    /// rejection as `E` when no attempt went out.
    fn refused(&mut self, reason: StopReason, last_error: Option<E>) -> RetryError<E> {
        let error = last_error.unwrap_or_else(|| {
            let rejected = self
                .rejected
                .expect("a breaker or a bulkhead comes with its rejection");
            rejected(Rejected::new(reason))
        });
        self.stop(error, reason)
    }

    /// Stops the call: the event, the hook, the error.
    fn stop(&mut self, error: E, reason: StopReason) -> RetryError<E> {
        #[cfg(feature = "tracing")]
        {
            let quiet = reason == StopReason::Permanent
                || (self.fallback_follows && reason.allows_fallback());
            if quiet {
                tracing::debug!(
                    attempts = self.attempts,
                    reason = reason.as_str(),
                    "retry stopped"
                );
            } else {
                tracing::warn!(
                    attempts = self.attempts,
                    waited_ms = u64::try_from(self.waited.as_millis()).unwrap_or(u64::MAX),
                    reason = reason.as_str(),
                    "retry gave up"
                );
            }
        }
        let error = RetryError::with_report(error, reason, self.report());
        if let Some(hook) = self.on_stop_hook {
            hook(&error);
        }
        error
    }

    fn classify(&self, error: &E) -> Decision {
        let decision = (self.classify)(error);
        match (self.policy.status_set(), (self.status)(error)) {
            (Some(set), Some(status)) if !set.contains(&status) => Decision::Stop,
            (Some(_), Some(_)) if decision == Decision::Stop => Decision::RETRY,
            _ => decision,
        }
    }

    /// The step after an attempt; `now` reads the clock, which a success does not need.
    fn after_attempt<T>(
        &mut self,
        outcome: Result<T, E>,
        timed_out: bool,
        now: impl FnOnce() -> Instant,
    ) -> Step<T, E> {
        // The answer is in: the permit goes back before any wait.
        self.permit = None;
        let error = match outcome {
            Ok(value) => {
                if let Some(budget) = self.budget {
                    budget.record_success();
                }
                if let Some(ticket) = self.ticket.take() {
                    ticket.success();
                }
                #[cfg(feature = "tracing")]
                if self.attempts > 1 {
                    tracing::debug!(attempts = self.attempts, "succeeded after retrying");
                }
                return Step::Done(Ok(Retried::new(value, self.report())));
            }
            Err(error) => error,
        };
        let decision = if timed_out {
            Decision::Ambiguous
        } else {
            self.classify(&error)
        };
        let now = now();
        if let Some(ticket) = self.ticket.take() {
            // A permanent error is an answer from a healthy upstream.
            if decision == Decision::Stop {
                ticket.success();
            } else {
                ticket.failure(now);
            }
        }
        match self.plan(decision, now) {
            Ok(delay) => {
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    attempt = self.attempts,
                    delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    decision = ?decision,
                    "retrying after a transient failure"
                );
                if let Some(hook) = self.on_retry_hook {
                    hook(self.attempts, delay, &error);
                }
                self.waits += 1;
                self.waited += delay;
                Step::Wait(delay, error)
            }
            Err(reason) => Step::Done(Err(self.stop(error, reason))),
        }
    }

    /// The delay before the next attempt, or why there is none.
    fn plan(&mut self, decision: Decision, now: Instant) -> Result<Duration, StopReason> {
        let server_wait = match decision {
            Decision::Stop => return Err(StopReason::Permanent),
            Decision::Ambiguous => None,
            Decision::Retry { after } => after,
        };
        if let Some(budget) = self.budget {
            budget.record_failure();
        }
        if decision == Decision::Ambiguous && !self.policy.is_idempotent() {
            return Err(StopReason::WriteNotConfirmed);
        }
        if self.attempts >= self.policy.max_attempts() {
            return Err(StopReason::AttemptsExhausted);
        }
        // Timers wake up to a millisecond late (tokio's resolution): a wait must end at least
        // that long before the deadline to be sure to end before it.
        let left = self.time_left(now).saturating_sub(TIMER_SLACK);
        if left.is_zero() {
            return Err(StopReason::DeadlineExceeded);
        }
        let delay = if let Some(wait) = server_wait {
            if wait >= left {
                return Err(StopReason::ServerWaitTooLong { wait });
            }
            // A little jitter on top of the server's wait, so that clients told the same date do
            // not all come back in the same instant; never shorter than asked, never at the
            // deadline.
            let room = left
                .saturating_sub(wait)
                .saturating_sub(Duration::from_nanos(1));
            let extra = (wait / 10).max(self.policy.base()).min(room);
            wait + self.random_up_to(extra)
        } else {
            let delay = self.backoff_delay();
            if delay >= left {
                return Err(StopReason::DeadlineExceeded);
            }
            delay
        };
        // An open breaker that will still be open when the wait ends: do not wait for nothing.
        if let Some(breaker) = self.breaker {
            if !breaker.would_admit(now + delay) {
                return Err(StopReason::BreakerOpen);
            }
        }
        // Last, so that a retry stopped for another reason takes nothing from the budget.
        if let Some(budget) = self.budget {
            if !budget.try_retry(now) {
                return Err(StopReason::BudgetExhausted);
            }
        }
        Ok(delay)
    }

    fn backoff_delay(&mut self) -> Duration {
        match self.policy.jitter_kind() {
            Jitter::Full => {
                let ceiling = self.policy.backoff_ceiling(self.attempts - 1);
                self.random_up_to(ceiling)
            }
            Jitter::Decorrelated => {
                let base = self.policy.base();
                let upper = self.previous_delay.saturating_mul(3).max(base);
                let delay =
                    (base + self.random_up_to(upper.saturating_sub(base))).min(self.policy.cap());
                self.previous_delay = delay;
                delay
            }
        }
    }

    /// A uniformly random duration in `[0, max]`, at nanosecond resolution.
    fn random_up_to(&mut self, max: Duration) -> Duration {
        let max = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(self.rng.u64(0..=max))
    }
}

/// An async retry in progress, created by [`Retry::start_async`]. Each round runs one attempt and,
/// when the policy allows another, waits before returning:
///
/// ```
/// # async fn example() -> std::io::Result<u32> {
/// use std::ops::ControlFlow;
/// use std::time::Duration;
/// use retry_audit::retry::{Policy, Retry};
///
/// // Any `Fn(Duration) -> impl Future<Output = ()>` waits (here tokio's; with the `tokio`
/// // feature, `retry_audit::retry::TokioSleeper` also reads tokio's clock).
/// let sleep = |delay: Duration| tokio::time::sleep(delay);
/// let mut retry = Retry::new(Policy::new()).start_async(&sleep);
/// loop {
///     let attempt = async { Ok::<_, std::io::Error>(42) };
///     if let ControlFlow::Break(done) = retry.attempt(attempt).await {
///         break done.map_err(|e| e.into_error());
///     }
/// }
/// # }
/// ```
pub struct AsyncRetry<'a, E> {
    retry: Retry<'a, E>,
    sleeper: &'a dyn ErasedSleeper<'a>,
    /// The error of the attempt before the wait, in case the next attempt is refused.
    last_error: Option<E>,
}

/// An [`AsyncSleeper`] behind a trait object.
trait ErasedSleeper<'a>: Sync {
    fn now(&self) -> Instant;
    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

impl<'a, S> ErasedSleeper<'a> for S
where
    S: AsyncSleeper + Sync + ?Sized,
    S::Sleep: Send + 'a,
{
    fn now(&self) -> Instant {
        AsyncSleeper::now(self)
    }

    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(AsyncSleeper::sleep(self, delay))
    }
}

impl<E> fmt::Debug for AsyncRetry<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncRetry")
            .field("policy", &self.retry.policy)
            .field("attempts", &self.retry.attempts)
            .finish_non_exhaustive()
    }
}

impl<E> AsyncRetry<'_, E> {
    /// What the call did so far (attempts, waits): after a `Break(Ok(_))`, the report of the
    /// success.
    #[must_use]
    pub fn report(&self) -> Report {
        self.retry.report()
    }

    /// Runs one attempt; then either returns its final result (`Break`), or waits the delay and
    /// returns `Continue` for the caller to run the next attempt. When the breaker or the
    /// bulkhead refuses the attempt, `attempt` is dropped unpolled and the call stops.
    pub async fn attempt<T, F>(&mut self, attempt: F) -> ControlFlow<Result<T, RetryError<E>>>
    where
        F: Future<Output = Result<T, E>>,
    {
        if let Err(error) = self.admit().await {
            return ControlFlow::Break(Err(error));
        }
        let outcome = attempt.await;
        self.settle(outcome, false).await
    }

    // retry-audit: allow(unbounded-retry, missing-jitter, reason = "a wait in the bulkhead's queue, not a retry: `queue_step` ends it at the queue's limit and the deadline, in steps it chooses")
    /// Lets the next attempt out (after a brief wait in the bulkhead's queue, if it has one), or
    /// stops the call.
    async fn admit(&mut self) -> Result<Attempt, RetryError<E>> {
        loop {
            let now = self.sleeper.now();
            match self.retry.begin_attempt(now) {
                Ok(attempt) => return Ok(attempt),
                Err(reason) => match self.retry.queue_step(reason, now) {
                    Some(step) => self.sleeper.sleep(step).await,
                    None => return Err(self.retry.refused(reason, self.last_error.take())),
                },
            }
        }
    }

    /// Like [`AsyncRetry::attempt`], and cuts the attempt at the policy's `attempt_timeout` and
    /// never later than the time left. A cut attempt fails with `timed_out(AttemptTimedOut)`
    /// (usually `From::from`) and counts as ambiguous: the request may have been received.
    pub async fn attempt_with_timeout<T, F>(
        &mut self,
        attempt: F,
        timed_out: fn(AttemptTimedOut) -> E,
    ) -> ControlFlow<Result<T, RetryError<E>>>
    where
        F: Future<Output = Result<T, E>>,
    {
        let left = match self.admit().await {
            Ok(attempt) => attempt.time_left(),
            Err(error) => return ControlFlow::Break(Err(error)),
        };
        let limit = self
            .retry
            .policy
            .per_attempt_timeout()
            .map_or(left, |timeout| timeout.min(left));
        let mut attempt = pin!(attempt);
        let mut timer = self.sleeper.sleep(limit);
        let outcome = poll_fn(|cx| {
            if let Poll::Ready(outcome) = attempt.as_mut().poll(cx) {
                return Poll::Ready(Some(outcome));
            }
            timer.as_mut().poll(cx).map(|()| None)
        })
        .await;
        if let Some(outcome) = outcome {
            self.settle(outcome, false).await
        } else {
            let error = timed_out(AttemptTimedOut { limit });
            self.settle(Err(error), true).await
        }
    }

    async fn settle<T>(
        &mut self,
        outcome: Result<T, E>,
        timed_out: bool,
    ) -> ControlFlow<Result<T, RetryError<E>>> {
        let sleeper = self.sleeper;
        match self
            .retry
            .after_attempt(outcome, timed_out, || sleeper.now())
        {
            Step::Done(result) => ControlFlow::Break(result.map(Retried::into_value)),
            Step::Wait(delay, error) => {
                self.last_error = Some(error);
                self.sleeper.sleep(delay).await;
                ControlFlow::Continue(())
            }
        }
    }
}
