//! [`CircuitBreaker`]: stop calling an upstream whose recent calls mostly fail, and go to the
//! fallback at once; after a cool-down let a few probe calls through (domain.md §6).

use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The window is counted in this many buckets (a 30 s window: buckets of 3 s).
const BUCKETS: usize = 10;

/// The state of a [`CircuitBreaker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go out; their outcomes are counted.
    Closed,
    /// Calls are refused until the cool-down ends.
    Open,
    /// The cool-down is over: a few probe calls go out; their success closes the breaker, a
    /// failure opens it again.
    HalfOpen,
}

#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    /// Which bucket of time this is (`time / bucket length`).
    epoch: u64,
    successes: u32,
    failures: u32,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Closed,
    /// Until this time (in milliseconds on the breaker's clock).
    Open {
        until: u64,
    },
    HalfOpen {
        in_flight: u32,
        successes: u32,
    },
}

#[derive(Debug)]
struct Inner {
    mode: Mode,
    /// Bumped at every change of mode: an outcome of a call let in under an older mode is not
    /// counted (a straggler from before the breaker opened says nothing about now).
    generation: u64,
    buckets: [Bucket; BUCKETS],
}

/// A circuit breaker shared by every call to one upstream: `#[retryable(breaker = NAME)]` with a
/// `static`, the tower and reqwest integrations, or by hand ([`CircuitBreaker::admit`]).
///
/// - **Closed**: every attempt goes out. Its outcome is counted over a sliding `window` (30 s):
///   a transient or ambiguous failure is a failure; a success, and a permanent error (a `404` is
///   an answer from a healthy upstream), is a success. When at least `min_calls` (10) outcomes are
///   in the window and more than `failure_rate` % (50 %) of them are failures, the breaker opens.
/// - **Open**: attempts are refused for `cool_down` (10 s): the retry stops with
///   [`StopReason::BreakerOpen`](super::StopReason::BreakerOpen) without sending anything, and
///   the fallback answers at once. A retry whose wait would end before the cool-down does is not
///   slept either.
/// - **Half-open**: after the cool-down, `probes` (3) attempts go out, one after the other or at
///   once; the others are refused. When all of them succeed the breaker closes (with a fresh
///   window); the first failure opens it again for another cool-down.
///
/// Time is read from the retry's clock (a virtual one in tests). Every setting is checked when
/// the `const` is evaluated:
///
/// ```
/// use std::time::Duration;
/// use retry_audit::retry::{BreakerState, CircuitBreaker};
///
/// static QUOTES: CircuitBreaker = CircuitBreaker::new()
///     .failure_rate(50)
///     .window(Duration::from_secs(30))
///     .cool_down(Duration::from_secs(10))
///     .probes(3)
///     .min_calls(10);
///
/// let now = std::time::Instant::now();
/// for _ in 0..10 {
///     QUOTES.admit(now).expect("closed").failure(now);
/// }
/// assert_eq!(QUOTES.state(now), BreakerState::Open);
/// assert!(QUOTES.admit(now).is_err());
/// let later = now + Duration::from_secs(10);
/// QUOTES.admit(later).expect("a probe").success();
/// assert_eq!(QUOTES.state(later), BreakerState::HalfOpen);
/// ```
pub struct CircuitBreaker {
    failure_rate: u32,
    window: Duration,
    cool_down: Duration,
    probes: u32,
    min_calls: u32,
    inner: Mutex<Inner>,
    origin: OnceLock<Instant>,
}

impl fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("failure_rate", &self.failure_rate)
            .field("window", &self.window)
            .field("cool_down", &self.cool_down)
            .field("probes", &self.probes)
            .field("min_calls", &self.min_calls)
            .finish_non_exhaustive()
    }
}

impl Default for CircuitBreaker {
    fn default() -> Self {
        CircuitBreaker::new()
    }
}

const fn millis(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl CircuitBreaker {
    /// A closed breaker with the defaults: opens when more than 50 % of at least 10 outcomes in
    /// the last 30 s are failures, stays open 10 s, then lets 3 probes through.
    #[must_use]
    pub const fn new() -> Self {
        CircuitBreaker {
            failure_rate: 50,
            window: Duration::from_secs(30),
            cool_down: Duration::from_secs(10),
            probes: 3,
            min_calls: 10,
            inner: Mutex::new(Inner {
                mode: Mode::Closed,
                generation: 0,
                buckets: [Bucket {
                    epoch: 0,
                    successes: 0,
                    failures: 0,
                }; BUCKETS],
            }),
            origin: OnceLock::new(),
        }
    }

    /// Opens when more than `percent` % of the outcomes in the window are failures (1..=99).
    ///
    /// # Panics
    /// When `percent` is 0 (it would open on a single failure among successes) or 100 or more.
    #[must_use]
    pub const fn failure_rate(mut self, percent: u32) -> Self {
        assert!(
            percent >= 1 && percent <= 99,
            "CircuitBreaker::failure_rate must be 1..=99 percent"
        );
        self.failure_rate = percent;
        self
    }

    /// How far back outcomes are counted (1 s..=10 min).
    ///
    /// # Panics
    /// Outside 1 s..=10 min.
    #[must_use]
    pub const fn window(mut self, window: Duration) -> Self {
        assert!(
            millis(window) >= 1000 && millis(window) <= 600_000,
            "CircuitBreaker::window must be 1 s..=10 min"
        );
        self.window = window;
        self
    }

    /// How long the breaker stays open before it lets probes through (more than 0, at most
    /// 10 min).
    ///
    /// # Panics
    /// When `cool_down` is zero or longer than 10 min.
    #[must_use]
    pub const fn cool_down(mut self, cool_down: Duration) -> Self {
        assert!(
            millis(cool_down) >= 1 && millis(cool_down) <= 600_000,
            "CircuitBreaker::cool_down must be more than 0 and at most 10 min"
        );
        self.cool_down = cool_down;
        self
    }

    /// How many probes must succeed, half-open, to close the breaker (1..=100).
    ///
    /// # Panics
    /// Outside 1..=100.
    #[must_use]
    pub const fn probes(mut self, probes: u32) -> Self {
        assert!(
            probes >= 1 && probes <= 100,
            "CircuitBreaker::probes must be 1..=100"
        );
        self.probes = probes;
        self
    }

    /// How many outcomes the window needs before the rate is trusted (1..=10 000).
    ///
    /// # Panics
    /// Outside 1..=10 000.
    #[must_use]
    pub const fn min_calls(mut self, min_calls: u32) -> Self {
        assert!(
            min_calls >= 1 && min_calls <= 10_000,
            "CircuitBreaker::min_calls must be 1..=10000"
        );
        self.min_calls = min_calls;
        self
    }

    /// The cool-down.
    #[must_use]
    pub const fn cool_down_period(&self) -> Duration {
        self.cool_down
    }

    /// The number of probes.
    #[must_use]
    pub const fn probe_count(&self) -> u32 {
        self.probes
    }

    fn now_ms(&self, now: Instant) -> u64 {
        let origin = *self.origin.get_or_init(|| now);
        u64::try_from(now.saturating_duration_since(origin).as_millis()).unwrap_or(u64::MAX)
    }

    fn bucket_ms(&self) -> u64 {
        (millis(self.window) / BUCKETS as u64).max(1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every update leaves the state whole: a panic elsewhere while it was held does not
        // matter.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state at `now` (an open breaker whose cool-down is over reads as half-open).
    #[must_use]
    pub fn state(&self, now: Instant) -> BreakerState {
        let now = self.now_ms(now);
        match self.lock().mode {
            Mode::Closed => BreakerState::Closed,
            Mode::Open { until } if now < until => BreakerState::Open,
            Mode::Open { .. } | Mode::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// Whether an attempt at `at` would be let through (without taking a probe).
    #[must_use]
    pub fn would_admit(&self, at: Instant) -> bool {
        let at = self.now_ms(at);
        match self.lock().mode {
            Mode::Closed => true,
            Mode::Open { until } => at >= until,
            Mode::HalfOpen {
                in_flight,
                successes,
            } => in_flight + successes < self.probes,
        }
    }

    /// Lets one attempt through at `now`, or refuses it. The ticket says how it went
    /// ([`BreakerTicket::success`], [`BreakerTicket::failure`]); dropped without a word (a
    /// cancelled or panicking attempt) it counts for nothing and frees its probe.
    pub fn admit(&self, now: Instant) -> Result<BreakerTicket<'_>, super::Rejected> {
        let now_ms = self.now_ms(now);
        let mut inner = self.lock();
        let probe = match inner.mode {
            Mode::Closed => false,
            Mode::Open { until } if now_ms < until => {
                return Err(super::Rejected::new(super::StopReason::BreakerOpen));
            }
            Mode::Open { .. } => {
                inner.mode = Mode::HalfOpen {
                    in_flight: 1,
                    successes: 0,
                };
                inner.generation += 1;
                true
            }
            Mode::HalfOpen {
                in_flight,
                successes,
            } => {
                if in_flight + successes >= self.probes {
                    return Err(super::Rejected::new(super::StopReason::BreakerOpen));
                }
                inner.mode = Mode::HalfOpen {
                    in_flight: in_flight + 1,
                    successes,
                };
                true
            }
        };
        Ok(BreakerTicket {
            breaker: self,
            generation: inner.generation,
            probe,
            admitted_ms: now_ms,
            settled: false,
        })
    }

    fn settle(&self, ticket: &BreakerTicket<'_>, outcome: Option<(bool, u64)>) {
        let mut inner = self.lock();
        if inner.generation != ticket.generation {
            return;
        }
        match (inner.mode, outcome) {
            (Mode::Closed, Some((failed, at))) => {
                let bucket_ms = self.bucket_ms();
                let epoch = at / bucket_ms;
                let slot = &mut inner.buckets[(epoch % BUCKETS as u64) as usize];
                if slot.epoch != epoch {
                    *slot = Bucket {
                        epoch,
                        successes: 0,
                        failures: 0,
                    };
                }
                if failed {
                    slot.failures += 1;
                } else {
                    slot.successes += 1;
                    return;
                }
                let live = |b: &&Bucket| b.epoch + BUCKETS as u64 > epoch && b.epoch <= epoch;
                let (calls, failures) =
                    inner
                        .buckets
                        .iter()
                        .filter(live)
                        .fold((0u64, 0u64), |(c, f), b| {
                            (
                                c + u64::from(b.successes) + u64::from(b.failures),
                                f + u64::from(b.failures),
                            )
                        });
                if calls >= u64::from(self.min_calls)
                    && failures * 100 > u64::from(self.failure_rate) * calls
                {
                    self.open(&mut inner, at);
                }
            }
            (
                Mode::HalfOpen {
                    in_flight,
                    successes,
                },
                outcome,
            ) if ticket.probe => {
                let in_flight = in_flight.saturating_sub(1);
                match outcome {
                    Some((true, at)) => self.open(&mut inner, at),
                    Some((false, _)) if successes + 1 >= self.probes => {
                        inner.mode = Mode::Closed;
                        inner.generation += 1;
                        inner.buckets = [Bucket::default(); BUCKETS];
                    }
                    Some((false, _)) => {
                        inner.mode = Mode::HalfOpen {
                            in_flight,
                            successes: successes + 1,
                        };
                    }
                    None => {
                        inner.mode = Mode::HalfOpen {
                            in_flight,
                            successes,
                        };
                    }
                }
            }
            _ => {}
        }
    }

    fn open(&self, inner: &mut Inner, at: u64) {
        inner.mode = Mode::Open {
            until: at.saturating_add(millis(self.cool_down)),
        };
        inner.generation += 1;
        inner.buckets = [Bucket::default(); BUCKETS];
    }
}

/// One attempt let through by a [`CircuitBreaker`]; say how it went.
#[must_use = "a ticket dropped without an outcome counts for nothing"]
pub struct BreakerTicket<'a> {
    breaker: &'a CircuitBreaker,
    generation: u64,
    probe: bool,
    admitted_ms: u64,
    settled: bool,
}

impl BreakerTicket<'_> {
    /// Whether this attempt is a half-open probe.
    #[must_use]
    pub fn is_probe(&self) -> bool {
        self.probe
    }

    /// The upstream answered: a success, or a permanent error (an answer all the same). Counted
    /// at the time the attempt was let through.
    pub fn success(mut self) {
        self.settled = true;
        self.breaker.settle(&self, Some((false, self.admitted_ms)));
    }

    /// The attempt failed transiently (or ambiguously) at `now`.
    pub fn failure(mut self, now: Instant) {
        self.settled = true;
        let at = self.breaker.now_ms(now);
        self.breaker.settle(&self, Some((true, at)));
    }
}

impl fmt::Debug for BreakerTicket<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerTicket")
            .field("probe", &self.probe)
            .finish_non_exhaustive()
    }
}

impl Drop for BreakerTicket<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.breaker.settle(self, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn opens_on_more_than_half_failures_of_enough_calls() {
        let breaker = CircuitBreaker::new();
        let t0 = Instant::now();
        // 9 failures: not enough calls yet.
        for _ in 0..9 {
            breaker.admit(t0).unwrap().failure(t0);
        }
        assert_eq!(breaker.state(t0), BreakerState::Closed);
        // 9 failures of 18: exactly half is not more than half.
        for _ in 0..9 {
            breaker.admit(t0).unwrap().success();
        }
        assert_eq!(breaker.state(t0), BreakerState::Closed);
        breaker.admit(t0).unwrap().failure(t0);
        assert_eq!(breaker.state(t0), BreakerState::Open);
        assert!(breaker.admit(at(t0, 9_999)).is_err());
        assert!(!breaker.would_admit(at(t0, 9_999)));
        assert!(breaker.would_admit(at(t0, 10_000)));
    }

    #[test]
    fn old_outcomes_leave_the_window() {
        let breaker = CircuitBreaker::new();
        let t0 = Instant::now();
        for _ in 0..9 {
            breaker.admit(t0).unwrap().failure(t0);
        }
        // 30 s later those nine are out of the window: one more failure is 1 of 1 call.
        let later = at(t0, 30_000);
        breaker.admit(later).unwrap().failure(later);
        assert_eq!(breaker.state(later), BreakerState::Closed);
    }

    #[test]
    fn half_open_lets_the_probes_through_and_closes_on_their_success() {
        let breaker = CircuitBreaker::new().min_calls(1);
        let t0 = Instant::now();
        breaker.admit(t0).unwrap().failure(t0);
        let t1 = at(t0, 10_000);
        let probes: Vec<_> = (0..3).map(|_| breaker.admit(t1).unwrap()).collect();
        assert!(probes.iter().all(BreakerTicket::is_probe));
        assert!(breaker.admit(t1).is_err(), "three probes at most");
        for probe in probes {
            assert_eq!(breaker.state(t1), BreakerState::HalfOpen);
            probe.success();
        }
        assert_eq!(breaker.state(t1), BreakerState::Closed);
    }

    #[test]
    fn a_failed_probe_opens_again_and_a_dropped_one_frees_its_place() {
        let breaker = CircuitBreaker::new().min_calls(1).probes(1);
        let t0 = Instant::now();
        breaker.admit(t0).unwrap().failure(t0);
        let t1 = at(t0, 10_000);
        drop(breaker.admit(t1).unwrap());
        let probe = breaker
            .admit(t1)
            .expect("the dropped probe freed its place");
        probe.failure(t1);
        assert_eq!(breaker.state(t1), BreakerState::Open);
        assert!(breaker.admit(at(t1, 9_999)).is_err());
        breaker.admit(at(t1, 10_000)).unwrap().success();
        assert_eq!(breaker.state(at(t1, 10_000)), BreakerState::Closed);
    }

    #[test]
    fn a_straggler_from_before_the_opening_is_not_counted() {
        let breaker = CircuitBreaker::new().min_calls(1).probes(1);
        let t0 = Instant::now();
        let straggler = breaker.admit(t0).unwrap();
        breaker.admit(t0).unwrap().failure(t0);
        straggler.success();
        assert_eq!(breaker.state(t0), BreakerState::Open);
    }
}
