//! Every shape of function `#[retryable]` takes, each argument of the attribute among them, in
//! code that is itself free of warnings: the crates that include this module deny warnings (and
//! clippy's pedantic group), so a warning the expansion causes, at the user's tokens or in the
//! generated code, fails the build. Included by `tests/ui/pass/warning_free.rs` (rustc, through
//! trybuild) and by `tests/warning_free.rs` (an integration test: rustc under `cargo test`, and
//! clippy under `cargo clippy --workspace --all-targets -- -D warnings`).

use std::fmt::Display;
use std::io;
use std::time::Duration;

use retry_audit::retry::{
    Bulkhead, CircuitBreaker, Decision, Retried, RetryBudget, RetryError, Transient,
};
use retry_audit::retryable;

// --- Sync bodies ---

/// One expression, over three lines as rustfmt writes it (on one line: `one_line` below).
#[retryable]
fn ping() -> io::Result<()> {
    Ok(())
}

/// Visibility and other attributes are kept.
#[retryable(attempts = 2)]
#[inline]
pub(crate) fn visible() -> io::Result<u8> {
    Ok(1)
}

/// One expression that is itself a block-like expression.
#[retryable]
fn pick(n: u8) -> io::Result<u8> {
    match n {
        0 => Err(io::ErrorKind::InvalidInput.into()),
        n => Ok(n),
    }
}

#[retryable]
fn pick_if(n: u8) -> io::Result<u8> {
    if n == 0 {
        Err(io::ErrorKind::InvalidInput.into())
    } else {
        Ok(n)
    }
}

/// A body whose one expression is a block of its own.
#[retryable]
fn nested() -> io::Result<u8> {
    {
        let n = 2;
        Ok(n)
    }
}

/// Statements, `?` and an early `return`.
#[retryable]
fn parse(text: &str) -> io::Result<u32> {
    if text.is_empty() {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    let n: u32 = text
        .parse()
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    Ok(n + 1)
}

/// A `mut` argument the body changes (each attempt sees what the previous one left).
#[retryable(attempts = 3, base = "1ms", cap = "1ms")]
fn count_down(mut left: u32) -> io::Result<u32> {
    left = left.saturating_sub(1);
    if left > 0 {
        return Err(io::ErrorKind::Interrupted.into());
    }
    Ok(left)
}

/// A pattern argument.
#[retryable]
fn sum((a, b): (u32, u32)) -> io::Result<u32> {
    Ok(a + b)
}

// --- Async bodies ---

#[retryable]
async fn ping_async() -> io::Result<()> {
    Ok(())
}

#[retryable]
async fn parse_async(text: &str) -> io::Result<u32> {
    tokio::task::yield_now().await;
    if text.is_empty() {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    let n: u32 = text
        .parse()
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    Ok(n)
}

#[retryable]
async fn pick_async(n: u8) -> io::Result<u8> {
    match n {
        0 => Err(io::ErrorKind::InvalidInput.into()),
        n => Ok(n),
    }
}

// --- Methods ---

pub struct Client {
    base: String,
    calls: u32,
}

impl Client {
    /// An associated function returning `Self`.
    #[retryable]
    fn new(base: &str) -> io::Result<Self> {
        Ok(Self {
            base: base.to_owned(),
            calls: 0,
        })
    }

    #[retryable]
    fn base(&self) -> io::Result<&str> {
        Ok(&self.base)
    }

    #[retryable(attempts = 2)]
    fn url(&self, path: &str) -> io::Result<String> {
        Ok(format!("{}/{path}", self.base))
    }

    #[retryable]
    fn bump(&mut self) -> io::Result<u32> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[retryable]
    async fn url_async(&self, path: &str) -> io::Result<String> {
        Ok(format!("{}/{path}", self.base))
    }

    #[retryable]
    async fn bump_async(&mut self) -> io::Result<u32> {
        self.calls += 1;
        Ok(self.calls)
    }
}

pub trait Fetch {
    fn fetch(&self, id: u32) -> io::Result<String>;
}

/// A trait method.
impl Fetch for Client {
    #[retryable]
    fn fetch(&self, id: u32) -> io::Result<String> {
        Ok(format!("{}/{id}", self.base))
    }
}

pub struct Labelled<T>(T);

/// A method of a generic type.
impl<T: Display> Labelled<T> {
    #[retryable]
    fn label(&self) -> io::Result<String> {
        Ok(self.0.to_string())
    }

    #[retryable]
    async fn label_async(&self) -> io::Result<String> {
        Ok(self.0.to_string())
    }
}

// --- `impl Trait` arguments and returns, generics ---

#[retryable]
fn join(parts: impl IntoIterator<Item = u32> + Clone) -> io::Result<u32> {
    Ok(parts.clone().into_iter().sum())
}

#[retryable]
async fn greet(name: impl AsRef<str> + Send) -> io::Result<String> {
    Ok(format!("hello {}", name.as_ref()))
}

#[retryable]
fn label() -> io::Result<impl Display> {
    Ok(42)
}

#[retryable]
async fn label_async() -> io::Result<impl Display> {
    Ok("forty-two")
}

#[retryable]
fn render<T: Display, E>(value: &T, check: fn(&T) -> Result<(), E>) -> Result<String, E>
where
    E: Transient,
{
    check(value)?;
    Ok(value.to_string())
}

#[retryable]
async fn render_async<'a, T>(value: &'a T) -> io::Result<&'a T>
where
    T: Display + Sync,
{
    Ok(value)
}

// --- The error with the reason: `RetryError<E>` ---

#[retryable(attempts = 2)]
fn detailed() -> Result<u32, RetryError<io::Error>> {
    Ok(1)
}

#[retryable(attempts = 2)]
async fn detailed_async(text: &str) -> Result<u32, RetryError<io::Error>> {
    let n = parse_async(text).await?;
    Ok(n * 2)
}

// --- Each argument ---

#[retryable(
    attempts = 4,
    deadline = "8s",
    base = "200ms",
    cap = "2s",
    jitter = "decorrelated"
)]
fn policy() -> io::Result<()> {
    Ok(())
}

#[retryable(idempotent = true)]
fn read() -> io::Result<()> {
    Ok(())
}

#[retryable(idempotency_key = key)]
fn charge() -> io::Result<String> {
    Ok(key.to_string())
}

#[retryable(idempotency_key = key = format!("order:{order_id}"))]
fn place(order_id: u64) -> io::Result<String> {
    let text = key.as_str();
    Ok(text.to_owned())
}

#[retryable(idempotency_key = key)]
async fn charge_async() -> io::Result<String> {
    Ok(key.to_string())
}

#[retryable(idempotency_key = key = format!("order:{order_id}"))]
async fn place_async(order_id: u64) -> io::Result<String> {
    Ok(key.as_str().to_owned())
}

#[retryable(attempt_timeout = "1s", idempotent = true)]
async fn timed() -> io::Result<()> {
    Ok(())
}

#[derive(Debug)]
pub struct HttpError(u16);

impl Transient for HttpError {
    fn decision(&self) -> Decision {
        Decision::for_status(self.0)
    }
    fn status(&self) -> Option<u16> {
        Some(self.0)
    }
}

#[retryable(retry_on = [429, 503])]
fn status() -> Result<(), HttpError> {
    Err(HttpError(500))
}

#[retryable(retry_on = [429, 503])]
async fn status_async() -> Result<(), HttpError> {
    Err(HttpError(404))
}

#[derive(Debug, PartialEq)]
pub struct Refused(&'static str);

fn classify_text(error: &Refused) -> Decision {
    if error.0 == "busy" {
        Decision::RETRY
    } else {
        Decision::Stop
    }
}

#[retryable(classify = classify_text)]
fn reserve(seat: u32) -> Result<u32, Refused> {
    if seat == 0 {
        Err(Refused("no such seat"))
    } else {
        Ok(seat)
    }
}

#[retryable(classify = classify_text)]
async fn reserve_async() -> Result<(), Refused> {
    Err(Refused("full"))
}

static BUDGET: RetryBudget = RetryBudget::new(50);

#[retryable(budget = BUDGET)]
fn budgeted() -> io::Result<()> {
    Ok(())
}

#[retryable(budget = BUDGET)]
async fn budgeted_async() -> io::Result<()> {
    Ok(())
}

fn on_retry(_: u32, _: Duration, _: &io::Error) {}
fn on_stop(_: &RetryError<io::Error>) {}

#[retryable(on_retry = on_retry, on_stop = on_stop)]
fn hooked() -> io::Result<()> {
    Ok(())
}

#[retryable(on_retry = on_retry, on_stop = on_stop)]
async fn hooked_async() -> io::Result<()> {
    Ok(())
}

fn no_wait(_: Duration) {}

fn no_wait_async(_: Duration) -> std::future::Ready<()> {
    std::future::ready(())
}

#[retryable(attempts = 3, sleep = no_wait)]
fn custom_sleep() -> io::Result<()> {
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 3, sleep = no_wait_async)]
async fn custom_sleep_async() -> io::Result<()> {
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[retryable(
    attempts = 4,
    deadline = "8s",
    base = "1ms",
    cap = "2ms",
    jitter = "decorrelated",
    idempotency_key = key = "fixed",
    budget = BUDGET,
    on_retry = on_retry,
    on_stop = on_stop,
    sleep = no_wait,
)]
fn everything() -> io::Result<String> {
    Ok(key.to_string())
}

#[retryable(
    attempts = 4,
    deadline = "8s",
    base = "1ms",
    cap = "2ms",
    jitter = "decorrelated",
    attempt_timeout = "1s",
    idempotency_key = key,
    idempotent = true,
    budget = BUDGET,
    on_retry = on_retry,
    on_stop = on_stop,
    sleep = tokio::time::sleep,
)]
async fn everything_async(name: &str) -> io::Result<String> {
    Ok(format!("{name}:{key}"))
}

// --- The upstream: budget, breaker, bulkhead, fallback; the report of a success ---

#[retryable(budget = none)]
fn unbudgeted() -> io::Result<()> {
    Ok(())
}

#[retryable(budget_key = "shapes::payments")]
async fn keyed_async() -> io::Result<()> {
    Ok(())
}

static BREAKER: CircuitBreaker = CircuitBreaker::new();
static BULKHEAD: Bulkhead = Bulkhead::new(8);

#[retryable(breaker = BREAKER, max_concurrent = 20)]
fn isolated() -> io::Result<u8> {
    Ok(1)
}

#[retryable(breaker = BREAKER, bulkhead = BULKHEAD, budget_key = "shapes::isolated")]
async fn isolated_async() -> io::Result<u8> {
    Ok(1)
}

#[allow(clippy::unnecessary_wraps)] // a fallback returns what the function returns
fn stale(id: u32, label: &str) -> io::Result<String> {
    Ok(format!("stale {label} {id}"))
}

async fn stale_async(id: u32, label: &str) -> io::Result<String> {
    tokio::task::yield_now().await;
    Ok(format!("stale {label} {id}"))
}

#[retryable(attempts = 2, fallback = stale, sleep = no_wait)]
fn degraded(id: u32, label: &str) -> Result<Retried<String>, RetryError<io::Error>> {
    let _ = (id, label);
    Err(io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 2, fallback = stale_async, sleep = no_wait_async)]
async fn degraded_async(id: u32, label: &str) -> io::Result<Retried<String>> {
    let _ = (id, label);
    Err(io::ErrorKind::ConnectionRefused.into())
}

impl Client {
    #[allow(clippy::unnecessary_wraps)] // a fallback returns what the function returns
    fn cached(&self, path: &str) -> io::Result<String> {
        Ok(format!("{}/{path} (cached)", self.base))
    }

    #[retryable(attempts = 2, fallback = Self::cached, sleep = no_wait)]
    fn fresh(&self, path: &str) -> io::Result<String> {
        let _ = path;
        Err(io::ErrorKind::ConnectionRefused.into())
    }
}

/// Bodies of one expression on one line, as the issue reported them: rustc's `unused_braces` only
/// looks at braces that open and close on one line. Kept so by `rustfmt::skip`.
#[rustfmt::skip]
mod one_line {
    use std::fmt::Display;
    use std::io;

    use retry_audit::retry::{RetryError, Transient};
    use retry_audit::retryable;

    use super::{classify_text, no_wait, no_wait_async, on_retry, on_stop, stale, HttpError, Refused, BREAKER, BUDGET};

    #[retryable]
    pub fn ping() -> io::Result<()> { Ok(()) }

    #[retryable]
    pub fn double(n: u32) -> io::Result<u32> { Ok(n * 2) }

    #[retryable]
    pub async fn ping_async() -> io::Result<()> { Ok(()) }

    #[retryable]
    pub async fn double_async(n: u32) -> io::Result<u32> { Ok(n * 2) }

    pub struct Counter { pub calls: u32 }

    pub trait Peek { fn peek(&self) -> io::Result<u32>; }

    impl Counter {
        #[retryable]
        pub fn new() -> io::Result<Self> { Ok(Self { calls: 0 }) }

        #[retryable]
        pub fn calls(&self) -> io::Result<u32> { Ok(self.calls) }

        #[retryable]
        pub fn bump(&mut self) -> io::Result<u32> { self.calls += 1; Ok(self.calls) }

        #[retryable]
        pub fn take(&mut self) -> io::Result<u32> { Ok(std::mem::take(&mut self.calls)) }

        #[retryable]
        pub async fn calls_async(&self) -> io::Result<u32> { Ok(self.calls) }

        #[retryable]
        pub async fn bump_async(&mut self) -> io::Result<u32> { self.calls += 1; Ok(self.calls) }
    }

    impl Peek for Counter {
        #[retryable]
        fn peek(&self) -> io::Result<u32> { Ok(self.calls) }
    }

    #[retryable]
    pub fn join(parts: impl IntoIterator<Item = u32> + Clone) -> io::Result<u32> { Ok(parts.clone().into_iter().sum()) }

    #[retryable]
    pub async fn greet(name: impl AsRef<str> + Send) -> io::Result<usize> { Ok(name.as_ref().len()) }

    #[retryable]
    pub fn label() -> io::Result<impl Display> { Ok(42) }

    #[retryable]
    pub async fn label_async() -> io::Result<impl Display> { Ok(42) }

    #[retryable]
    pub fn render<T: Display>(value: &T) -> io::Result<String> { Ok(value.to_string()) }

    #[retryable]
    pub fn check<T, E>(value: &T, check: fn(&T) -> Result<(), E>) -> Result<(), E> where E: Transient { check(value) }

    #[retryable]
    pub async fn render_async<'a, T: Display + Sync>(value: &'a T) -> io::Result<&'a T> { Ok(value) }

    #[retryable]
    pub fn detailed() -> Result<u32, RetryError<io::Error>> { Ok(1) }

    #[retryable]
    pub async fn detailed_async() -> Result<u32, RetryError<io::Error>> { Ok(1) }

    #[retryable]
    pub fn stub() -> io::Result<u32> { todo!() }

    #[retryable]
    pub async fn stub_async() -> io::Result<u32> { todo!() }

    #[retryable(idempotency_key = key)]
    pub fn charge() -> io::Result<String> { Ok(key.to_string()) }

    #[retryable(idempotency_key = key = format!("order:{order_id}"))]
    pub fn place(order_id: u64) -> io::Result<String> { Ok(key.to_string()) }

    #[retryable(idempotency_key = key)]
    pub async fn charge_async() -> io::Result<String> { Ok(key.to_string()) }

    #[retryable(attempts = 4, deadline = "8s", base = "200ms", cap = "2s", jitter = "decorrelated", idempotent = true)]
    pub fn policy() -> io::Result<()> { Ok(()) }

    #[retryable(attempt_timeout = "1s", idempotent = true)]
    pub async fn timed() -> io::Result<()> { Ok(()) }

    #[retryable(retry_on = [429, 503])]
    pub fn status() -> Result<(), HttpError> { Err(HttpError(500)) }

    #[retryable(classify = classify_text)]
    pub fn reserve() -> Result<(), Refused> { Err(Refused("full")) }

    #[retryable(budget = BUDGET, on_retry = on_retry, on_stop = on_stop, sleep = no_wait)]
    pub fn hooked() -> io::Result<()> { Ok(()) }

    #[retryable(budget = BUDGET, on_retry = on_retry, on_stop = on_stop, sleep = no_wait_async)]
    pub async fn hooked_async() -> io::Result<()> { Ok(()) }

    #[retryable(budget = none, breaker = BREAKER, max_concurrent = 4, fallback = stale)]
    pub fn guarded(id: u32, label: &str) -> io::Result<String> { Ok(format!("{label}{id}")) }

    #[retryable]
    pub fn reported() -> io::Result<retry_audit::retry::Retried<u8>> { Ok(1) }
}

/// The functions of the upstream's arguments (budget, breaker, bulkhead, fallback, report).
fn run_upstream(client: &Client) {
    unbudgeted().unwrap();
    assert_eq!(isolated().unwrap(), 1);
    let answer = degraded(1, "a").unwrap();
    assert_eq!(
        (answer.value().as_str(), answer.is_degraded()),
        ("stale a 1", true)
    );
    assert_eq!(client.fresh("x").unwrap(), "https://api/x (cached)");
    assert_eq!(one_line::guarded(1, "g").unwrap(), "g1");
    assert_eq!(one_line::reported().unwrap().attempts(), 1);
}

/// Calls every function once, and checks what it returns.
pub fn run() {
    ping().unwrap();
    assert_eq!(visible().unwrap(), 1);
    assert_eq!(pick(3).unwrap(), 3);
    assert_eq!(pick_if(0).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    assert_eq!(nested().unwrap(), 2);
    assert_eq!(parse("41").unwrap(), 42);
    assert_eq!(count_down(3).unwrap(), 0);
    assert_eq!(sum((1, 2)).unwrap(), 3);

    let mut client = Client::new("https://api").unwrap();
    assert_eq!(client.base().unwrap(), "https://api");
    assert_eq!(client.url("items").unwrap(), "https://api/items");
    assert_eq!(client.bump().unwrap(), 1);
    assert_eq!(client.fetch(7).unwrap(), "https://api/7");
    let labelled = Labelled(5);
    assert_eq!(labelled.label().unwrap(), "5");

    assert_eq!(join(vec![1, 2, 3]).unwrap(), 6);
    assert_eq!(label().unwrap().to_string(), "42");
    let ok = |_: &u32| Ok::<(), io::Error>(());
    assert_eq!(render(&5, ok).unwrap(), "5");
    assert_eq!(detailed().unwrap(), 1);

    policy().unwrap();
    read().unwrap();
    assert_eq!(charge().unwrap().len(), 36);
    assert_eq!(place(9).unwrap(), "order:9");
    assert_eq!(status().unwrap_err().0, 500);
    assert_eq!(reserve(0).unwrap_err(), Refused("no such seat"));
    assert_eq!(reserve(2).unwrap(), 2);
    budgeted().unwrap();
    hooked().unwrap();
    custom_sleep().unwrap_err();
    assert_eq!(everything().unwrap(), "fixed");

    one_line::ping().unwrap();
    assert_eq!(one_line::double(2).unwrap(), 4);
    let mut counter = one_line::Counter::new().unwrap();
    assert_eq!(counter.bump().unwrap(), 1);
    assert_eq!(counter.bump().unwrap(), 2);
    assert_eq!(counter.take().unwrap(), 2);
    assert_eq!(counter.bump().unwrap(), 1);
    assert_eq!(counter.calls().unwrap(), 1);
    assert_eq!(one_line::Peek::peek(&counter).unwrap(), 1);
    assert_eq!(one_line::join([1, 2]).unwrap(), 3);
    assert_eq!(one_line::label().unwrap().to_string(), "42");
    assert_eq!(one_line::render(&1).unwrap(), "1");
    one_line::check(&1, ok).unwrap();
    assert_eq!(one_line::detailed().unwrap(), 1);
    assert_eq!(one_line::charge().unwrap().len(), 36);
    assert_eq!(one_line::place(4).unwrap(), "order:4");
    one_line::policy().unwrap();
    assert_eq!(one_line::status().unwrap_err().0, 500);
    assert_eq!(one_line::reserve().unwrap_err(), Refused("full"));
    one_line::hooked().unwrap();
    run_upstream(&client);
    // Bodies that never return: compiled, not called.
    let _ = (one_line::stub, one_line::stub_async);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        ping_async().await.unwrap();
        assert_eq!(parse_async("7").await.unwrap(), 7);
        assert_eq!(pick_async(1).await.unwrap(), 1);
        assert_eq!(client.url_async("x").await.unwrap(), "https://api/x");
        assert_eq!(client.bump_async().await.unwrap(), 2);
        assert_eq!(labelled.label_async().await.unwrap(), "5");
        assert_eq!(greet("you").await.unwrap(), "hello you");
        assert_eq!(label_async().await.unwrap().to_string(), "forty-two");
        assert_eq!(*render_async(&"x").await.unwrap(), "x");
        assert_eq!(detailed_async("x").await.unwrap_err().attempts(), 1);
        assert_eq!(charge_async().await.unwrap().len(), 36);
        assert_eq!(place_async(3).await.unwrap(), "order:3");
        timed().await.unwrap();
        assert_eq!(status_async().await.unwrap_err().0, 404);
        assert_eq!(reserve_async().await.unwrap_err(), Refused("full"));
        budgeted_async().await.unwrap();
        hooked_async().await.unwrap();
        custom_sleep_async().await.unwrap_err();
        assert!(everything_async("a").await.unwrap().starts_with("a:"));

        one_line::ping_async().await.unwrap();
        assert_eq!(one_line::double_async(3).await.unwrap(), 6);
        assert_eq!(counter.calls_async().await.unwrap(), 1);
        assert_eq!(counter.bump_async().await.unwrap(), 2);
        assert_eq!(one_line::greet("abc").await.unwrap(), 3);
        assert_eq!(one_line::label_async().await.unwrap().to_string(), "42");
        assert_eq!(*one_line::render_async(&2).await.unwrap(), 2);
        assert_eq!(one_line::detailed_async().await.unwrap(), 1);
        assert_eq!(one_line::charge_async().await.unwrap().len(), 36);
        one_line::timed().await.unwrap();
        one_line::hooked_async().await.unwrap();
        keyed_async().await.unwrap();
        assert_eq!(isolated_async().await.unwrap(), 1);
        assert!(degraded_async(2, "b").await.unwrap().is_degraded());
    });
}
