//! `#[retryable]`: the proc-macro half of `retry-audit`. Use it through the library,
//! `use retry_audit::retryable;`, whose `retry` module is the runtime the macro expands to.
//!
//! Phases, one module each: `args` parses the arguments, `valid` checks them and the function
//! (collecting every error), `expand` writes the wrapper. On any error the output is
//! the errors plus the function as written, so no follow-on error hides the real one.

mod args;
mod expand;
mod valid;

use proc_macro::TokenStream;

/// Retries the body of a function that returns `Result` when it fails transiently, within bounds
/// that make the retry compliant by construction: at most `attempts` attempts **and** an overall
/// `deadline`, full-jitter exponential backoff, the server's `Retry-After` (or rate-limit reset)
/// honoured, only transient errors retried, ambiguous writes resent only with an idempotency key,
/// and a retry budget shared by every function of the same upstream, on by default. Optionally a
/// circuit breaker, a bulkhead and one fallback.
///
/// ```
/// use retry_audit::retryable;
///
/// #[retryable(attempts = 4, deadline = "10s", base = "200ms", cap = "5s")]
/// fn read_config(path: &str) -> std::io::Result<String> {
///     std::fs::read_to_string(path)
/// }
///
/// // `NotFound` is permanent: one attempt, no wait, the error as it was.
/// let err = read_config("/no/such/file").unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
/// ```
///
/// The signature is unchanged. The body runs again after a transient failure, at most `attempts`
/// times in total, never past `deadline` (measured from the first call), waiting
/// `random(0, min(cap, base * 2^n))` before retry `n` (n = 0 for the first retry). Synchronous
/// functions wait with `std::thread::sleep`; async functions with `tokio::time::sleep` (feature
/// `tokio` of `retry-audit`) or with the `sleep = path` you name.
///
/// # What is retried
///
/// The error type decides, through `retry_audit::retry::Transient`: it returns a `Decision` —
/// `Retry { after }` (transient; `after` is the server's wait, which replaces the backoff),
/// `Stop` (permanent), or `Ambiguous` (a write that may have been applied). `Transient` is
/// implemented for `std::io::Error` and, with features, for `http::StatusCode`, `http::Response`
/// and `reqwest::Error`: 408, 429 and 5xx retry, every other 4xx stops. For your own error type:
///
/// ```
/// use retry_audit::retry::{Decision, Transient};
///
/// #[derive(Debug)]
/// enum ApiError {
///     Status { code: u16, retry_after: Option<std::time::Duration> },
///     Network,
/// }
///
/// impl Transient for ApiError {
///     fn decision(&self) -> Decision {
///         match self {
///             ApiError::Status { code, retry_after } => match Decision::for_status(*code) {
///                 Decision::Retry { .. } => Decision::Retry { after: *retry_after },
///                 other => other,
///             },
///             ApiError::Network => Decision::RETRY,
///         }
///     }
///     fn status(&self) -> Option<u16> {
///         match self {
///             ApiError::Status { code, .. } => Some(*code),
///             ApiError::Network => None,
///         }
///     }
/// }
/// ```
///
/// The server's wait is `Retry-After` (or `retry-after-ms`), else for a `429` the provider's
/// rate-limit reset header (`x-ratelimit-reset-requests: 6m0s`, `anthropic-ratelimit-*-reset`,
/// `x-ratelimit-reset`), read by `Decision::for_response` and the `http`/`reqwest` decisions.
/// When it does not fit in the time left, the function returns at once (it does not sleep past the
/// deadline, and does not ignore the hint).
///
/// # What the caller gets
///
/// The function returns its own `Result<T, E>`: the value, or the **last** error. To know why it
/// stopped and after how many attempts, declare the error as `RetryError<E>`: the body still
/// fails with `E` (its `?` converts into `E`), and the wrapper adds the reason
/// (`StopReason::{Permanent, AttemptsExhausted, DeadlineExceeded, ServerWaitTooLong,
/// BudgetExhausted, WriteNotConfirmed, BreakerOpen, BulkheadFull}`), the attempt count and the
/// report of the call (waits, whether the fallback answered):
///
/// ```
/// use retry_audit::retry::{RetryError, StopReason};
/// use retry_audit::retryable;
///
/// #[retryable(attempts = 2, base = "1ms", cap = "1ms")]
/// fn connect() -> Result<(), RetryError<std::io::Error>> {
///     Err(std::io::ErrorKind::ConnectionRefused.into())
/// }
///
/// let err = connect().unwrap_err();
/// assert_eq!(err.reason(), StopReason::AttemptsExhausted);
/// assert_eq!(err.attempts(), 2);
/// assert_eq!(err.error().kind(), std::io::ErrorKind::ConnectionRefused);
/// ```
///
/// To know the same of a success (a value that took three attempts, or came from the fallback),
/// declare the value as `Retried<T>`: the body still returns `T`.
///
/// ```
/// use retry_audit::retry::Retried;
/// use retry_audit::retryable;
///
/// fn no_wait(_: std::time::Duration) {}
///
/// #[retryable(attempts = 3, sleep = no_wait)]
/// fn flaky(calls: &mut u32) -> Result<Retried<&'static str>, std::io::Error> {
///     *calls += 1;
///     if *calls < 3 {
///         return Err(std::io::ErrorKind::ConnectionRefused.into());
///     }
///     Ok("done")
/// }
///
/// let answer = flaky(&mut 0).unwrap();
/// assert_eq!(*answer.value(), "done");
/// assert_eq!(answer.attempts(), 3);
/// assert_eq!(answer.report().waits(), 2);
/// assert!(!answer.is_degraded());
/// ```
///
/// # What the body may do
///
/// The body runs once per attempt, so it must be runnable again: it may read its arguments, borrow
/// them, clone them, and mutate through `&mut` parameters (including `&mut self`: each attempt
/// re-borrows it, and sees what earlier attempts left), but it must not **move** an argument out —
/// clone it inside the body instead (`let body = payload.clone();`), or take it by reference. A
/// body that moves one fails to compile with rustc's "closure is `FnOnce` because it moves the
/// variable" (sync) or "value moved here, in previous iteration of loop" (async), pointing at the
/// move. For the same reason the `Ok` value cannot borrow from a `&mut` parameter (a compile error
/// says so). `return` inside the body ends the attempt, not the function; `?` fails the attempt.
/// Generic functions, `impl Trait` arguments, methods with `&self` or `&mut self` all work; an
/// async wrapper is `Send` when the body is.
///
/// ```
/// use retry_audit::retryable;
///
/// struct Counter { calls: u32 }
///
/// impl Counter {
///     #[retryable(attempts = 3, base = "1ms", cap = "1ms")]
///     fn flaky(&mut self, label: impl AsRef<str>) -> std::io::Result<String> {
///         self.calls += 1; // each attempt re-borrows `self`
///         if self.calls < 3 {
///             return Err(std::io::ErrorKind::Interrupted.into());
///         }
///         Ok(format!("{} after {} calls", label.as_ref(), self.calls))
///     }
/// }
///
/// let mut counter = Counter { calls: 0 };
/// assert_eq!(counter.flaky("done").unwrap(), "done after 3 calls");
/// ```
///
/// # Arguments
///
/// Every argument is optional and checked at compile time; each mistake gets its own error on the
/// offending tokens, all reported in one compile. There is no way to write an unbounded retry.
///
/// ## `attempts = 3`
/// Attempts in total, the first included: 1..=10. `0` and more than 10 are errors.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(attempts = 5)]
/// fn ping() -> std::io::Result<()> { Ok(()) }
/// # ping().unwrap();
/// ```
///
/// ## `deadline = "10s"`
/// The overall budget of time, waits included, measured from the call: no wait ends at or past it,
/// and the loop stops when the next wait would. Durations are written `"250ms"`, `"2s"` or
/// `"1m"`; the deadline is more than 0 and at most `"60m"`.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(deadline = "30s")]
/// fn export() -> std::io::Result<()> { Ok(()) }
/// # export().unwrap();
/// ```
///
/// ## `base = "100ms"`, `cap = "5s"`
/// The backoff: the wait before retry `n` is `random(0, min(cap, base * 2^n))`. `base` is more
/// than 0 (a retry without a wait is the worst storm amplifier), `cap` is at least `base` and at
/// most `"5m"`.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(base = "250ms", cap = "8s")]
/// fn upload() -> std::io::Result<()> { Ok(()) }
/// # upload().unwrap();
/// ```
///
/// ## `jitter = "full"`
/// `"full"` (the default) or `"decorrelated"` (`min(cap, random(base, previous * 3))`).
/// `"none"` is an error: clients that failed together would retry together.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(jitter = "decorrelated")]
/// fn poll() -> std::io::Result<()> { Ok(()) }
/// # poll().unwrap();
/// ```
///
/// ## `attempt_timeout = "2s"` (async only)
/// Cuts each attempt at this, and never later than the time left before the deadline. A cut
/// attempt fails with `E::from(AttemptTimedOut)` (so `E: From<retry_audit::retry::AttemptTimedOut>`,
/// as `std::io::Error` is) and counts as ambiguous: it is resent only with an idempotency key or
/// `idempotent = true`. A blocking call cannot be cut from outside, so on a sync `fn` this is an
/// error; set the client's own timeout there.
///
/// ```no_run
/// # use retry_audit::retryable;
/// #[retryable(attempt_timeout = "2s", idempotent = true)]
/// async fn fetch(url: &str) -> std::io::Result<Vec<u8>> {
///     # let _ = url;
///     Ok(Vec::new()) // e.g. an HTTP GET
/// }
/// ```
///
/// ## `retry_on = [429, 503]`
/// Retries only errors whose status (`Transient::status`) is in the set; other statuses stop,
/// errors without a status keep their own decision. A 4xx other than 408 and 429 in the set is an
/// error: the request itself is wrong, so resending it cannot succeed. Not combinable with
/// `classify`.
///
/// ```
/// # use retry_audit::retry::{Decision, Transient};
/// # #[derive(Debug)] struct HttpError(u16);
/// # impl Transient for HttpError {
/// #     fn decision(&self) -> Decision { Decision::for_status(self.0) }
/// #     fn status(&self) -> Option<u16> { Some(self.0) }
/// # }
/// # use retry_audit::retryable;
/// // Only 429 and 503 retry: a 500 from this API is a bug report, not a hiccup.
/// #[retryable(retry_on = [429, 503])]
/// fn quote_price() -> Result<u64, HttpError> {
///     Err(HttpError(500))
/// }
/// # assert_eq!(quote_price().unwrap_err().0, 500);
/// ```
///
/// ## `classify = path`
/// A `fn(&E) -> Decision` that classifies the errors instead of `Transient` (which `E` then need
/// not implement).
///
/// ```
/// # use retry_audit::retryable;
/// use retry_audit::retry::Decision;
///
/// fn classify(error: &String) -> Decision {
///     if error.starts_with("busy") { Decision::RETRY } else { Decision::Stop }
/// }
///
/// #[retryable(classify = classify)]
/// fn reserve(seat: u32) -> Result<u32, String> {
///     if seat == 0 { Err("no such seat".into()) } else { Ok(seat) }
/// }
/// # assert_eq!(reserve(0).unwrap_err(), "no such seat");
/// ```
///
/// ## `idempotency_key = key` or `idempotency_key = key = expr`
/// Creates an idempotency key **once, before the first attempt**, and binds `key` to it (as
/// `&retry_audit::retry::IdempotencyKey`, string-like: `Display`, `AsRef<str>`, `as_str()`) in
/// the body, so every attempt sends the same key: a random 128-bit UUID v4, or the value of
/// `expr` (anything `Into<String>`, such as a domain key `format!("order:{id}")`; keep personal
/// data out of it). A key makes ambiguous failures safe to resend.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(idempotency_key = key)]
/// fn charge(cents: u64) -> std::io::Result<String> {
///     Ok(format!("POST /charges amount={cents} Idempotency-Key: {key}"))
/// }
///
/// #[retryable(idempotency_key = key = format!("order:{order_id}"))]
/// fn place(order_id: u64) -> std::io::Result<String> {
///     Ok(key.to_string())
/// }
/// # assert!(charge(5).unwrap().contains("Idempotency-Key: "));
/// assert_eq!(place(7).unwrap(), "order:7");
/// ```
///
/// ## `idempotent = true`
/// Declares the operation idempotent in effect (a read, a `PUT` of a whole resource), so an
/// ambiguous failure (a timeout after sending, a reset connection) is resent. Without it — and
/// without a key — the loop stops with `StopReason::WriteNotConfirmed` (RFC 9110 §9.2.2: the
/// write may have been applied).
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(idempotent = true)]
/// fn get_profile(id: u64) -> std::io::Result<String> { Ok(format!("profile {id}")) }
/// # get_profile(1).unwrap();
/// ```
///
/// ## A budget by default; `budget = PATH`, `budget_key = "..."`, `budget = none`
/// Every function draws its retries from a process-wide budget shared by every function of the
/// same upstream: by default the functions of its module (`module_path!()`), or those that name
/// the same `budget_key`. It is `retry_audit::retry::RetryBudget::standard()`: retries up to 20 %
/// of the calls plus 10 per second (at most 100 banked), as reqwest, tower and Finagle do. A retry
/// it refuses is not sent and not counted as an attempt: the function stops with
/// `StopReason::BudgetExhausted`. The first attempt is never refused.
///
/// ```
/// # use retry_audit::retryable;
/// // `charge` and `refund` share one budget, wherever they are.
/// #[retryable(budget_key = "payments")]
/// fn charge(cents: u64) -> std::io::Result<u64> { Ok(cents) }
///
/// #[retryable(budget_key = "payments")]
/// fn refund(cents: u64) -> std::io::Result<u64> { Ok(cents) }
/// # charge(1).unwrap(); refund(1).unwrap();
/// ```
///
/// `budget = PATH` names a `static` `retry_audit::retry::RetryBudget` of your own instead (for
/// example gRPC retry throttling, `RetryBudget::new(100)`: failures cost a token, successes refund
/// a fraction, retries are refused while half the tokens or fewer are left). `budget = none` turns
/// the budget off, and has to be written out.
///
/// ```
/// # use retry_audit::retryable;
/// use retry_audit::retry::RetryBudget;
///
/// static SEARCH_API: RetryBudget = RetryBudget::new(100);
///
/// #[retryable(budget = SEARCH_API)]
/// fn search(q: &str) -> std::io::Result<Vec<String>> { Ok(vec![q.to_owned()]) }
///
/// #[retryable(budget = none)]
/// fn local_file() -> std::io::Result<String> { Ok(String::new()) }
/// # search("x").unwrap(); local_file().unwrap();
/// ```
///
/// ## `breaker = PATH`
/// A `static` `retry_audit::retry::CircuitBreaker` shared by every function that calls the
/// upstream: when more than half of at least 10 outcomes in the last 30 s are transient failures
/// it opens, and for 10 s attempts are not sent (the function stops with
/// `StopReason::BreakerOpen`, or the fallback answers at once); then 3 probes go out, and close it
/// when they succeed. A call refused before any attempt fails with `E::from(Rejected)`, so `E`
/// implements `From<retry_audit::retry::Rejected>` (as `std::io::Error` does).
///
/// ```
/// # use retry_audit::retryable;
/// use retry_audit::retry::CircuitBreaker;
///
/// static QUOTES: CircuitBreaker = CircuitBreaker::new();
///
/// #[retryable(breaker = QUOTES)]
/// fn quote(symbol: &str) -> std::io::Result<u64> { Ok(symbol.len() as u64) }
/// # quote("X").unwrap();
/// ```
///
/// ## `max_concurrent = N` or `bulkhead = PATH`
/// Caps the attempts in flight to the upstream: `max_concurrent = 20` shares one
/// `retry_audit::retry::Bulkhead` per upstream (the key of the budget), `bulkhead = PATH` names a
/// `static` one (which may have a brief queue: `Bulkhead::new(20).queue(Duration::from_millis(50))`).
/// An attempt without a permit is not sent: the function stops with `StopReason::BulkheadFull`
/// (or the fallback answers). `E: From<Rejected>`, as for `breaker`.
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(max_concurrent = 20)]
/// fn render(page: u32) -> std::io::Result<String> { Ok(page.to_string()) }
/// # render(1).unwrap();
/// ```
///
/// ## `fallback = path`
/// A function taking the same arguments and returning the same type (the body's own `Result<T, E>`
/// when the function declares `Retried<T>` or `RetryError<E>`), called **once** when the
/// retry gives up on a transient failure (attempts, deadline, server wait, budget), or the breaker
/// or the bulkhead refuses the call; never after a permanent error (a `404` is an answer, not an
/// outage) nor after a write that may have been applied. Its answer is returned as degraded: with
/// `Retried<T>`, `is_degraded()` says so. A fallback with another signature is an error on its
/// name. The fallback is not retried.
///
/// ```
/// # use retry_audit::retryable;
/// use retry_audit::retry::Retried;
///
/// fn no_wait(_: std::time::Duration) {}
///
/// fn cached_price(item: &str) -> Result<u64, std::io::Error> {
///     # let _ = item;
///     Ok(100) // a cache, a cheaper model, a rule
/// }
///
/// #[retryable(attempts = 2, fallback = cached_price, sleep = no_wait)]
/// fn price(item: &str) -> Result<Retried<u64>, std::io::Error> {
///     # let _ = item;
///     Err(std::io::ErrorKind::ConnectionRefused.into()) // the pricing service is down
/// }
///
/// let answer = price("book").unwrap();
/// assert_eq!(*answer.value(), 100);
/// assert!(answer.is_degraded());
/// assert_eq!(answer.attempts(), 2);
/// ```
///
/// ## `on_retry = path`, `on_stop = path`
/// Hooks: `on_retry` is called before each wait as `fn(attempt: u32, delay: Duration, error: &E)`
/// (the attempt that failed, 1-based); `on_stop` once when the function gives up, as
/// `fn(&RetryError<E>)` (reason, attempts, last error). With the `tracing` feature each call is a
/// span (`retryable`, with the function's name), each retry a DEBUG event, and giving up or
/// falling back a WARN event (a permanent error is an answer: DEBUG).
///
/// ```
/// # use retry_audit::retryable;
/// use std::time::Duration;
/// use retry_audit::retry::RetryError;
///
/// fn log_retry(attempt: u32, delay: Duration, error: &std::io::Error) {
///     eprintln!("attempt {attempt} failed ({error}); retrying in {delay:?}");
/// }
/// fn log_stop(error: &RetryError<std::io::Error>) {
///     eprintln!("gave up: {error}");
/// }
///
/// #[retryable(on_retry = log_retry, on_stop = log_stop)]
/// fn sync_inventory() -> std::io::Result<()> { Ok(()) }
/// # sync_inventory().unwrap();
/// ```
///
/// ## `sleep = path`
/// How to wait. For a sync fn: any `Fn(Duration)` (or a `retry_audit::retry::Sleeper`, which also
/// supplies the clock — a virtual clock in tests); the default is `std::thread::sleep`. For an
/// async fn: any `Fn(Duration) -> impl Future<Output = ()> + Send` (any runtime) or an
/// `AsyncSleeper` (which also supplies the clock); the default is tokio's timer and clock (feature
/// `tokio`), which honours a paused test clock. Without the feature and without `sleep`, an async
/// function does not compile, and the error says so.
///
/// ```no_run
/// # use retry_audit::retryable;
/// async fn my_runtime_sleep(delay: std::time::Duration) {
///     // e.g. async_std::task::sleep(delay).await
///     # let _ = delay;
/// }
///
/// #[retryable(sleep = my_runtime_sleep)]
/// async fn refresh() -> std::io::Result<()> { Ok(()) }
/// ```
///
/// An async function with the defaults (feature `tokio`):
///
/// ```
/// # use retry_audit::retryable;
/// #[retryable(attempts = 3, deadline = "5s", idempotent = true)]
/// async fn fetch_score(id: u64) -> std::io::Result<u64> {
///     Ok(id * 10)
/// }
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// assert_eq!(fetch_score(4).await.unwrap(), 40);
/// # });
/// ```
#[proc_macro_attribute]
pub fn retryable(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match retryable_impl(args.into(), item.clone()) {
        Ok(expanded) => expanded.into(),
        // The errors, and the function as written: no cascade of follow-on errors.
        Err(error) => {
            let mut out = error.to_compile_error();
            out.extend(item);
            out.into()
        }
    }
}

fn retryable_impl(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> syn::Result<proc_macro2::TokenStream> {
    let function: syn::ItemFn = syn::parse2(item).map_err(|error| {
        syn::Error::new(
            error.span(),
            "`#[retryable]` goes on a function with a body (a free function or a method)",
        )
    })?;
    let mut errors = valid::Errors::default();
    let args = match args::parse(args) {
        Ok(args) => args,
        Err(error) => {
            errors.extend(error);
            Vec::new()
        }
    };
    let shape = valid::shape(&function, &mut errors);
    let is_async = function.sig.asyncness.is_some();
    let config = valid::config(args, is_async, &mut errors);
    if let Some(shape) = &shape {
        valid::fallback(&config, shape, &mut errors);
    }
    errors.finish()?;
    let shape = shape.expect("no shape only with an error");
    Ok(expand::expand(function, &config, &shape))
}
