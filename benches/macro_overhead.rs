//! What `#[retryable]` costs when the first attempt succeeds: each function below is timed against
//! the same body without the attribute. Run with `cargo bench --bench macro_overhead`.
//!
//! `sync/Instant::now` is there for scale: a call reads the clock once, before the first attempt, to
//! start its deadline.
//!
//! Every function is `#[inline(never)]`, so each variant is one real call whose body cannot be
//! folded into the benchmark loop, and its argument and result go through `black_box`. Async
//! functions are polled once with a no-op waker: they finish on the first poll, so no executor cost
//! is measured.

use std::future::Future;
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use retry_audit::retry::RetryBudget;
use retry_audit::retryable;

static API: RetryBudget = RetryBudget::new(100);

/// The body shared by every variant: a little arithmetic on an opaque input.
#[inline]
fn work(x: u64) -> u64 {
    black_box(x)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

#[inline(never)]
#[allow(clippy::unnecessary_wraps)] // The baseline: the same signature and body, no attribute.
fn plain(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

/// The default policy, and the module's shared budget (the default).
#[inline(never)]
#[retryable]
fn retried(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(budget = none)]
fn retried_no_budget(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(budget = API)]
fn retried_budget(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(idempotency_key = key = "order:42")]
fn retried_key(x: u64) -> std::io::Result<u64> {
    black_box(key);
    Ok(work(x))
}

/// The async sleeper: never called on the success path, but an async function needs one (the
/// default, tokio's, needs the `tokio` feature).
async fn no_wait(_: Duration) {}

#[inline(never)]
#[allow(clippy::unused_async)] // The baseline: the same signature and body, no attribute.
async fn plain_async(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(sleep = no_wait)]
async fn retried_async(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(sleep = no_wait, budget = none)]
async fn retried_async_no_budget(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

#[inline(never)]
#[retryable(sleep = no_wait, budget = API)]
async fn retried_async_budget(x: u64) -> std::io::Result<u64> {
    Ok(work(x))
}

struct NoopWaker;

impl Wake for NoopWaker {
    fn wake(self: Arc<Self>) {}
}

/// Polls `future` once: every future here is ready on its first poll.
fn ready<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> F::Output {
    match future.poll(cx) {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("the body never waits and the first attempt succeeds"),
    }
}

fn sync(c: &mut Criterion) {
    let mut group = c.benchmark_group("sync");
    group.bench_function("plain", |b| b.iter(|| plain(black_box(41))));
    group.bench_function("retryable", |b| b.iter(|| retried(black_box(41))));
    group.bench_function("retryable+no-budget", |b| {
        b.iter(|| retried_no_budget(black_box(41)));
    });
    group.bench_function("retryable+budget", |b| {
        b.iter(|| retried_budget(black_box(41)));
    });
    group.bench_function("retryable+key", |b| b.iter(|| retried_key(black_box(41))));
    // For scale: the one clock read a call makes (the start of its deadline).
    group.bench_function("Instant::now", |b| b.iter(Instant::now));
    group.finish();
}

fn r#async(c: &mut Criterion) {
    let waker = Waker::from(Arc::new(NoopWaker));
    let mut cx = Context::from_waker(&waker);
    let mut group = c.benchmark_group("async");
    group.bench_function("plain", |b| {
        b.iter(|| ready(pin!(plain_async(black_box(41))), &mut cx));
    });
    group.bench_function("retryable", |b| {
        b.iter(|| ready(pin!(retried_async(black_box(41))), &mut cx));
    });
    group.bench_function("retryable+no-budget", |b| {
        b.iter(|| ready(pin!(retried_async_no_budget(black_box(41))), &mut cx));
    });
    group.bench_function("retryable+budget", |b| {
        b.iter(|| ready(pin!(retried_async_budget(black_box(41))), &mut cx));
    });
    group.finish();
}

criterion_group!(benches, sync, r#async);
criterion_main!(benches);
