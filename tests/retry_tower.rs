//! `retry_audit::tower::RetryLayer` (feature `tower`) over a scripted `http` service, on a virtual
//! clock: the reset headers, the default budget per host, the breaker with its fallback, the
//! bulkhead, what is never retried, and the report every response carries.

#![cfg(feature = "tower")]

mod retry_support;

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use retry_audit::retry::{CircuitBreaker, Policy, Report, StopReason};
use retry_audit::tower::{ReplayBody, RetryLayer, STOP_HEADER};
use retry_support::SharedClock;
use tower::{Layer, Service, ServiceExt};

/// One answer of the upstream.
#[derive(Clone, Debug)]
enum Answer {
    Status(u16, Vec<(&'static str, &'static str)>),
    Error(io::ErrorKind),
}

fn status(code: u16) -> Answer {
    Answer::Status(code, Vec::new())
}

/// A scripted upstream: answers in order, then `then` for ever. Clones share the script and the
/// counters (a tower service is cloned per request).
#[derive(Clone)]
struct Upstream {
    script: Arc<Mutex<VecDeque<Answer>>>,
    then: Answer,
    calls: Arc<AtomicU32>,
    /// While set, every request waits until it is cleared (to hold requests in flight).
    hold: Arc<AtomicBool>,
}

impl Upstream {
    fn new(script: impl IntoIterator<Item = Answer>, then: Answer) -> Self {
        Upstream {
            script: Arc::new(Mutex::new(script.into_iter().collect())),
            then,
            calls: Arc::default(),
            hold: Arc::default(),
        }
    }

    fn always(answer: Answer) -> Self {
        Upstream::new([], answer)
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl<B> Service<Request<B>> for Upstream {
    type Response = Response<String>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Response<String>>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<B>) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let next = self.script.lock().unwrap().pop_front();
        let answer = next.unwrap_or_else(|| self.then.clone());
        let hold = Arc::clone(&self.hold);
        Box::pin(async move {
            while hold.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
            match answer {
                Answer::Status(code, headers) => {
                    let mut response = Response::builder().status(code);
                    for (name, value) in headers {
                        response = response.header(name, value);
                    }
                    Ok(response.body(format!("upstream {code}")).unwrap())
                }
                Answer::Error(kind) => Err(kind.into()),
            }
        })
    }
}

/// A fallback that answers `200 cached` and counts its calls.
fn cached(
    calls: &Arc<AtomicU32>,
) -> impl Service<
    Request<String>,
    Response = Response<String>,
    Error = io::Error,
    Future = impl Future<Output = io::Result<Response<String>>> + Send,
> + Clone
       + Send {
    let calls = Arc::clone(calls);
    tower::service_fn(move |request: Request<String>| {
        calls.fetch_add(1, Ordering::SeqCst);
        let path = request.uri().path().to_owned();
        async move { Ok(Response::new(format!("cached {path}"))) }
    })
}

fn get(url: &str) -> Request<String> {
    Request::get(url).body(String::new()).unwrap()
}

fn report<B>(response: &Response<B>) -> Report {
    *response
        .extensions()
        .get::<Report>()
        .expect("every response carries its report")
}

const POLICY: Policy = Policy::new()
    .attempts(4)
    .deadline(Duration::from_secs(10))
    .backoff(Duration::from_millis(100), Duration::from_secs(1));

#[tokio::test]
async fn a_429_waits_for_the_rate_limit_reset() {
    let clock = SharedClock::default();
    let upstream = Upstream::new(
        [Answer::Status(
            429,
            vec![
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "2s"),
                ("x-ratelimit-remaining-tokens", "90000"),
                ("x-ratelimit-reset-tokens", "6m0s"),
            ],
        )],
        status(200),
    );
    let service = RetryLayer::new(POLICY)
        .sleeper(clock.clone())
        .layer(upstream.clone());
    let response = service
        .oneshot(get("http://reset.example/a"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let waits = clock.sleeps();
    assert_eq!(waits.len(), 1);
    // The request limit's reset (the one at 0), with at most max(wait / 10, base) of jitter.
    assert!(
        waits[0] >= Duration::from_secs(2) && waits[0] <= Duration::from_millis(2200),
        "{waits:?}"
    );
    let report = report(&response);
    assert_eq!((report.attempts(), report.waits()), (2, 1));
    assert_eq!(report.waited(), waits[0]);
}

#[tokio::test]
async fn a_reset_past_the_deadline_stops_at_once_with_the_server_wait_reason() {
    let clock = SharedClock::default();
    let upstream = Upstream::always(Answer::Status(
        429,
        vec![("x-ratelimit-reset-tokens", "1m0s")],
    ));
    let service = RetryLayer::new(POLICY)
        .sleeper(clock.clone())
        .layer(upstream.clone());
    let response = service
        .oneshot(get("http://reset.example/b"))
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the last answer"
    );
    assert_eq!(
        report(&response).stop_reason(),
        Some(StopReason::ServerWaitTooLong {
            wait: Duration::from_secs(60)
        })
    );
    assert!(clock.sleeps().is_empty(), "nothing slept");
    assert_eq!(upstream.calls(), 1);
}

/// 200 calls to a host that is down, 5 attempts each: without a budget 1 000 requests; with the
/// host's default budget, the 100 banked retries, 20 % of the calls and the floor.
#[tokio::test]
async fn each_host_has_a_budget_by_default_and_refused_retries_are_not_attempts() {
    let clock = SharedClock::default();
    let policy = Policy::new()
        .attempts(5)
        .deadline(Duration::from_secs(60))
        .backoff(Duration::from_millis(1), Duration::from_millis(1));
    let upstream = Upstream::always(status(503));
    let service = RetryLayer::new(policy)
        .sleeper(clock.clone())
        .layer(upstream.clone());
    let mut refused = 0;
    let mut attempts = 0;
    for _ in 0..200 {
        let response = service
            .clone()
            .oneshot(get("http://outage.example/"))
            .await
            .unwrap();
        let report = report(&response);
        attempts += report.attempts();
        match report.stop_reason() {
            Some(StopReason::BudgetExhausted) => refused += 1,
            Some(StopReason::AttemptsExhausted) => assert_eq!(report.attempts(), 5),
            other => panic!("{other:?}"),
        }
    }
    // Every attempt counted was sent: the refused retries were not.
    assert_eq!(attempts, upstream.calls());
    let retries = upstream.calls() - 200;
    assert!((100..=150).contains(&retries), "{retries} retries");
    assert!(refused >= 150, "{refused} calls refused a retry");

    // Another host has a budget of its own; `no_budget` has none.
    let other = Upstream::always(status(503));
    let service = RetryLayer::new(policy)
        .sleeper(clock.clone())
        .layer(other.clone());
    let response = service.oneshot(get("http://other.example/")).await.unwrap();
    assert_eq!(report(&response).attempts(), 5);
    let unbudgeted = Upstream::always(status(503));
    let service = RetryLayer::new(policy)
        .no_budget()
        .sleeper(clock.clone())
        .layer(unbudgeted.clone());
    for _ in 0..50 {
        service
            .clone()
            .oneshot(get("http://outage.example/"))
            .await
            .unwrap();
    }
    assert_eq!(unbudgeted.calls(), 250);
}

static BREAKER: CircuitBreaker = CircuitBreaker::new().min_calls(2);

#[tokio::test]
async fn an_open_breaker_answers_from_the_fallback_at_once_and_probes_after_the_cool_down() {
    let clock = SharedClock::default();
    let fallback_calls = Arc::new(AtomicU32::new(0));
    let upstream = Upstream::new([status(503), status(503)], status(200));
    let service = RetryLayer::new(POLICY)
        .breaker(&BREAKER)
        .fallback(cached(&fallback_calls))
        .sleeper(clock.clone())
        .layer(upstream.clone());

    // Two failures of two calls open the breaker: the retry stops, the fallback answers.
    let response = service
        .clone()
        .oneshot(get("http://breaker.example/price"))
        .await
        .unwrap();
    assert_eq!(response.body(), "cached /price");
    let first = report(&response);
    assert!(first.is_degraded());
    assert_eq!(
        (first.attempts(), first.stop_reason()),
        (2, Some(StopReason::BreakerOpen))
    );
    // While it is open nothing is sent: the fallback answers at once, once per call.
    let response = service
        .clone()
        .oneshot(get("http://breaker.example/price"))
        .await
        .unwrap();
    assert_eq!(response.body(), "cached /price");
    assert_eq!(report(&response).attempts(), 0);
    assert_eq!(
        (upstream.calls(), fallback_calls.load(Ordering::SeqCst)),
        (2, 2)
    );

    // After the cool-down a probe goes out; it succeeds, the answer is the upstream's.
    clock.advance(Duration::from_secs(10));
    let response = service
        .oneshot(get("http://breaker.example/price"))
        .await
        .unwrap();
    assert_eq!(response.body(), "upstream 200");
    assert!(!report(&response).is_degraded());
    assert_eq!(fallback_calls.load(Ordering::SeqCst), 2);
}

static LONELY_BREAKER: CircuitBreaker = CircuitBreaker::new().min_calls(1);

#[tokio::test]
async fn without_a_fallback_a_refused_request_is_answered_503_by_the_layer() {
    let clock = SharedClock::default();
    let upstream = Upstream::always(status(503));
    let service = RetryLayer::new(POLICY.attempts(1))
        .breaker(&LONELY_BREAKER)
        .sleeper(clock.clone())
        .layer(upstream.clone());
    let response = service
        .clone()
        .oneshot(get("http://lonely.example/"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        response.headers().get(STOP_HEADER).is_none(),
        "the upstream's own 503"
    );
    let response = service
        .oneshot(get("http://lonely.example/"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()[STOP_HEADER], "breaker open");
    assert_eq!(
        report(&response).stop_reason(),
        Some(StopReason::BreakerOpen)
    );
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test]
async fn a_full_bulkhead_refuses_without_sending() {
    let clock = SharedClock::default();
    let fallback_calls = Arc::new(AtomicU32::new(0));
    let upstream = Upstream::always(status(200));
    upstream.hold.store(true, Ordering::SeqCst);
    let service = RetryLayer::new(POLICY)
        .max_concurrent(2)
        .fallback(cached(&fallback_calls))
        .sleeper(clock.clone())
        .layer(upstream.clone());
    let in_flight: Vec<_> = (0..2)
        .map(|_| tokio::spawn(service.clone().oneshot(get("http://bulkhead.example/a"))))
        .collect();
    while upstream.calls() < 2 {
        tokio::task::yield_now().await;
    }
    // Two requests hold the two permits: the third is not sent.
    let response = service
        .clone()
        .oneshot(get("http://bulkhead.example/b"))
        .await
        .unwrap();
    assert_eq!(response.body(), "cached /b");
    let third = report(&response);
    assert_eq!(
        (third.attempts(), third.stop_reason()),
        (0, Some(StopReason::BulkheadFull))
    );
    assert!(third.is_degraded());
    upstream.hold.store(false, Ordering::SeqCst);
    for request in in_flight {
        assert_eq!(request.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    assert_eq!(
        (upstream.calls(), fallback_calls.load(Ordering::SeqCst)),
        (2, 1)
    );
    // The permits are back.
    let response = service
        .oneshot(get("http://bulkhead.example/c"))
        .await
        .unwrap();
    assert_eq!(response.body(), "upstream 200");
}

#[tokio::test]
async fn a_permanent_answer_is_returned_as_it_is_and_never_falls_back() {
    let fallback_calls = Arc::new(AtomicU32::new(0));
    let upstream = Upstream::always(status(404));
    let service = RetryLayer::new(POLICY)
        .fallback(cached(&fallback_calls))
        .sleeper(SharedClock::default())
        .layer(upstream.clone());
    let response = service
        .oneshot(get("http://permanent.example/"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(report(&response).stop_reason(), Some(StopReason::Permanent));
    assert_eq!(
        (upstream.calls(), fallback_calls.load(Ordering::SeqCst)),
        (1, 0)
    );
}

/// A body that cannot be copied (a stream, say).
struct Streamed;

impl ReplayBody for Streamed {
    fn replay(&self) -> Option<Self> {
        None
    }
}

#[tokio::test]
async fn a_request_that_cannot_be_copied_is_sent_once() {
    let upstream = Upstream::always(status(503));
    let service = RetryLayer::new(POLICY)
        .sleeper(SharedClock::default())
        .layer(upstream.clone());
    let request = Request::put("http://stream.example/")
        .body(Streamed)
        .unwrap();
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(report(&response).attempts(), 1);
    assert_eq!(upstream.calls(), 1);
}

#[tokio::test]
async fn an_ambiguous_failure_is_resent_only_for_an_idempotent_request() {
    let timeout = || Upstream::new([Answer::Error(io::ErrorKind::TimedOut)], status(201));
    let send = |upstream: &Upstream, request: Request<String>| {
        RetryLayer::new(POLICY)
            .sleeper(SharedClock::default())
            .layer(upstream.clone())
            .oneshot(request)
    };
    // A POST without a key: "may have been applied", not resent; the error is returned.
    let post = timeout();
    let error = send(
        &post,
        Request::post("http://write.example/")
            .body(String::new())
            .unwrap(),
    )
    .await
    .unwrap_err();
    assert_eq!((error.kind(), post.calls()), (io::ErrorKind::TimedOut, 1));
    // With an idempotency key, or an idempotent method, it is resent.
    let keyed = timeout();
    let request = Request::post("http://write.example/")
        .header("Idempotency-Key", "order-7")
        .body(String::new())
        .unwrap();
    assert_eq!(
        send(&keyed, request).await.unwrap().status(),
        StatusCode::CREATED
    );
    assert_eq!(keyed.calls(), 2);
    let put = timeout();
    let request = Request::put("http://write.example/")
        .body(String::new())
        .unwrap();
    assert_eq!(
        send(&put, request).await.unwrap().status(),
        StatusCode::CREATED
    );
}

/// A classifier for an error type without `Transient`.
fn refused_retries(error: &tower::BoxError) -> retry_audit::retry::Decision {
    if error.to_string().contains("refused") {
        retry_audit::retry::Decision::RETRY
    } else {
        retry_audit::retry::Decision::Stop
    }
}

/// Errors without `Transient` (`tower::BoxError`, say) are classified by a function.
#[tokio::test]
async fn errors_of_any_type_with_a_classifier() {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let upstream = tower::service_fn(move |_: Request<String>| {
        let n = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                Err::<Response<String>, tower::BoxError>("connection refused".into())
            } else {
                Ok(Response::new(String::new()))
            }
        }
    });
    let service = RetryLayer::new(POLICY)
        .classify_errors(refused_retries)
        .sleeper(SharedClock::default())
        .layer(upstream);
    let response = service.oneshot(get("http://boxed.example/")).await.unwrap();
    assert_eq!(report(&response).attempts(), 2);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
