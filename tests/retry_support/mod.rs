//! Shared by the `retry_*` behaviour tests: a scripted fake service, its error type, and clocks
//! that run in virtual time (a thread-local clock for blocking code, tokio's paused clock for
//! async code), recording every wait.

#![allow(dead_code)] // each test binary uses a part of it

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use retry_audit::retry::{AsyncSleeper, AttemptTimedOut, Decision, Sleeper, Transient};

/// The error of the fake service: an HTTP status with its headers, or a transport failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiError {
    Status {
        code: u16,
        headers: Vec<(String, String)>,
    },
    /// The connection was refused: nothing was sent.
    Refused,
    /// The request went out and no answer came back: it may have been applied.
    Lost,
    /// The attempt was cut by `attempt_timeout`.
    Cut(Duration),
    /// The breaker or the bulkhead did not let the request out.
    NotSent,
}

impl ApiError {
    pub fn status(code: u16) -> Self {
        ApiError::Status {
            code,
            headers: Vec::new(),
        }
    }

    pub fn with_header(code: u16, name: &str, value: &str) -> Self {
        ApiError::Status {
            code,
            headers: vec![(name.to_owned(), value.to_owned())],
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl Transient for ApiError {
    fn decision(&self) -> Decision {
        match self {
            ApiError::Status { code, headers } => {
                Decision::for_response(*code, headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            }
            ApiError::Refused => Decision::RETRY,
            ApiError::Lost | ApiError::Cut(_) => Decision::Ambiguous,
            ApiError::NotSent => Decision::Stop,
        }
    }

    fn status(&self) -> Option<u16> {
        match self {
            ApiError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<retry_audit::retry::Rejected> for ApiError {
    fn from(_: retry_audit::retry::Rejected) -> Self {
        ApiError::NotSent
    }
}

impl From<AttemptTimedOut> for ApiError {
    fn from(timeout: AttemptTimedOut) -> Self {
        ApiError::Cut(timeout.limit)
    }
}

/// A fake service that answers from a script, one outcome per request, and keeps what it saw.
#[derive(Default)]
pub struct Service {
    script: RefCell<VecDeque<Result<u32, ApiError>>>,
    /// When the script runs out: this outcome for ever (a sustained outage, or health).
    then: RefCell<Option<Result<u32, ApiError>>>,
    pub calls: Cell<u32>,
    pub keys: RefCell<Vec<String>>,
    /// How long each request takes, in virtual time.
    pub latency: Cell<Duration>,
}

impl Service {
    pub fn new(script: impl IntoIterator<Item = Result<u32, ApiError>>) -> Self {
        Service {
            script: RefCell::new(script.into_iter().collect()),
            ..Service::default()
        }
    }

    pub fn always(outcome: Result<u32, ApiError>) -> Self {
        let service = Service::default();
        *service.then.borrow_mut() = Some(outcome);
        service
    }

    /// What the service answers once the script has run out.
    pub fn then_mut(&self) -> std::cell::RefMut<'_, Option<Result<u32, ApiError>>> {
        self.then.borrow_mut()
    }

    /// One request (blocking): advances the thread clock by the latency.
    pub fn request(&self, key: Option<&str>) -> Result<u32, ApiError> {
        VirtualClock::advance(self.latency.get());
        self.answer(key)
    }

    /// One request (async): takes the latency on tokio's clock.
    pub async fn request_async(&self, key: Option<&str>) -> Result<u32, ApiError> {
        tokio::time::sleep(self.latency.get()).await;
        self.answer(key)
    }

    fn answer(&self, key: Option<&str>) -> Result<u32, ApiError> {
        self.calls.set(self.calls.get() + 1);
        if let Some(key) = key {
            self.keys.borrow_mut().push(key.to_owned());
        }
        let next = self.script.borrow_mut().pop_front();
        next.or_else(|| self.then.borrow().clone())
            .expect("the script ran out")
    }
}

thread_local! {
    static ELAPSED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    static SLEEPS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
    static ORIGIN: Instant = Instant::now();
}

/// A virtual clock for blocking retries, one per thread (each `#[test]` runs on its own
/// thread): `sleep` advances it and records the wait, nothing really sleeps.
pub struct VirtualClock;

impl VirtualClock {
    pub fn reset() {
        ELAPSED.with(|e| e.set(Duration::ZERO));
        SLEEPS.with(|s| s.borrow_mut().clear());
    }

    pub fn advance(by: Duration) {
        ELAPSED.with(|e| e.set(e.get() + by));
    }

    pub fn elapsed() -> Duration {
        ELAPSED.with(Cell::get)
    }

    /// The waits since the last reset (blocking or async).
    pub fn sleeps() -> Vec<Duration> {
        SLEEPS.with(|s| s.borrow().clone())
    }
}

fn record(delay: Duration) {
    SLEEPS.with(|s| s.borrow_mut().push(delay));
}

impl Sleeper for VirtualClock {
    fn now(&self) -> Instant {
        ORIGIN.with(|origin| *origin + ELAPSED.with(Cell::get))
    }

    fn sleep(&self, delay: Duration) {
        record(delay);
        VirtualClock::advance(delay);
    }
}

/// Tokio's timer and clock (which tests pause), recording each wait on the thread's list: the
/// tests run on a current-thread runtime, so every task shares the list.
pub struct PausedTokio;

impl AsyncSleeper for PausedTokio {
    type Sleep = tokio::time::Sleep;

    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep(&self, delay: Duration) -> tokio::time::Sleep {
        record(delay);
        tokio::time::sleep(delay)
    }
}

/// An HTTP-date `secs` seconds from now.
pub fn http_date_in(secs: u64) -> String {
    httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs))
}

/// An HTTP-date `secs` seconds ago.
pub fn http_date_ago(secs: u64) -> String {
    httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(secs))
}

/// A virtual clock to share between tasks and threads: `sleep` records the wait, moves the clock
/// and returns at once. For middleware that needs a `Clone + Send + Sync` sleeper (tower,
/// reqwest-middleware).
#[derive(Clone)]
pub struct SharedClock(
    std::sync::Arc<std::sync::Mutex<(Duration, Vec<Duration>)>>,
    Instant,
);

impl Default for SharedClock {
    fn default() -> Self {
        SharedClock(std::sync::Arc::default(), Instant::now())
    }
}

impl SharedClock {
    /// The waits slept so far.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.0.lock().expect("not poisoned").1.clone()
    }

    /// Moves the clock on (time spent elsewhere).
    pub fn advance(&self, by: Duration) {
        self.0.lock().expect("not poisoned").0 += by;
    }

    pub fn elapsed(&self) -> Duration {
        self.0.lock().expect("not poisoned").0
    }
}

impl AsyncSleeper for SharedClock {
    type Sleep = std::future::Ready<()>;

    fn now(&self) -> Instant {
        self.1 + self.elapsed()
    }

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        let mut state = self.0.lock().expect("not poisoned");
        state.0 += delay;
        state.1.push(delay);
        std::future::ready(())
    }
}
