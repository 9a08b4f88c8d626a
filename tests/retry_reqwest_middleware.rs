//! `retry_audit::reqwest_middleware::RetryMiddleware` (feature `reqwest-middleware`) in a
//! `reqwest_middleware` client, against a scripted HTTP server on the loopback interface; waits
//! on a virtual clock: the reset headers, the default budget per host, the breaker with its
//! fallback, the bulkhead, a body that cannot be sent twice, an ambiguous write.

#![cfg(feature = "reqwest-middleware")]

mod retry_support;
#[path = "retry_support/server.rs"]
mod server;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use retry_audit::reqwest_middleware::{RetryMiddleware, STOP_HEADER};
use retry_audit::retry::{CircuitBreaker, Policy, Report, StopReason};
use retry_support::SharedClock;
use server::{status, Reply, Server};

const POLICY: Policy = Policy::new()
    .attempts(4)
    .deadline(Duration::from_secs(10))
    .backoff(Duration::from_millis(100), Duration::from_secs(1));

fn client(middleware: RetryMiddleware<SharedClock>) -> ClientWithMiddleware {
    ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build()
}

fn report(response: &reqwest::Response) -> Report {
    *response
        .extensions()
        .get::<Report>()
        .expect("every response carries its report")
}

#[tokio::test]
async fn a_429_waits_for_the_rate_limit_reset() {
    let server = Server::start(
        [Reply::Status(
            429,
            vec![
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "2s"),
            ],
        )],
        status(200),
    )
    .await;
    let clock = SharedClock::default();
    let client = client(RetryMiddleware::new(POLICY).sleeper(clock.clone()));
    let response = client.get(server.url("/quota")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let waits = clock.sleeps();
    assert_eq!(waits.len(), 1);
    assert!(
        waits[0] >= Duration::from_secs(2) && waits[0] <= Duration::from_millis(2200),
        "{waits:?}"
    );
    assert_eq!(report(&response).attempts(), 2);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_reset_past_the_deadline_is_not_slept() {
    let server = Server::start([], Reply::Status(429, vec![("ratelimit-reset", "30")])).await;
    let clock = SharedClock::default();
    let client = client(RetryMiddleware::new(POLICY).sleeper(clock.clone()));
    let response = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        report(&response).stop_reason(),
        Some(StopReason::ServerWaitTooLong {
            wait: Duration::from_secs(30)
        })
    );
    assert!(clock.sleeps().is_empty());
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn each_host_has_a_budget_by_default() {
    let server = Server::start([], status(503)).await;
    let policy = Policy::new()
        .attempts(5)
        .deadline(Duration::from_secs(60))
        .backoff(Duration::from_millis(1), Duration::from_millis(1));
    let client = client(RetryMiddleware::new(policy).sleeper(SharedClock::default()));
    let (mut refused, mut attempts) = (0, 0);
    for _ in 0..150 {
        let response = client.get(server.url("/")).send().await.unwrap();
        let report = report(&response);
        attempts += report.attempts();
        if report.stop_reason() == Some(StopReason::BudgetExhausted) {
            refused += 1;
        }
    }
    // The attempts reported are the requests the server saw: refused retries were not sent.
    assert_eq!(attempts, server.requests());
    let retries = server.requests() - 150;
    assert!((100..=140).contains(&retries), "{retries} retries");
    assert!(refused >= 100, "{refused}");
}

static PRICES: CircuitBreaker = CircuitBreaker::new().min_calls(2);

#[tokio::test]
async fn an_open_breaker_answers_from_the_fallback_once_per_call() {
    let server = Server::start([], status(503)).await;
    let fallbacks = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&fallbacks);
    let client = client(
        RetryMiddleware::new(POLICY)
            .breaker(&PRICES)
            .fallback(move |request| {
                counted.fetch_add(1, Ordering::SeqCst);
                let path = request.url().path().to_owned();
                async move {
                    Ok(reqwest::Response::from(http::Response::new(format!(
                        "cached {path}"
                    ))))
                }
            })
            .sleeper(SharedClock::default()),
    );
    let response = client.get(server.url("/price")).send().await.unwrap();
    let first = report(&response);
    assert_eq!(response.text().await.unwrap(), "cached /price");
    assert!(first.is_degraded());
    assert_eq!(
        (first.attempts(), first.stop_reason()),
        (2, Some(StopReason::BreakerOpen))
    );
    let response = client.get(server.url("/price")).send().await.unwrap();
    assert_eq!(report(&response).attempts(), 0, "not sent");
    assert_eq!(response.text().await.unwrap(), "cached /price");
    assert_eq!(
        (server.requests(), fallbacks.load(Ordering::SeqCst)),
        (2, 2)
    );
}

#[tokio::test]
async fn a_full_bulkhead_answers_503_without_sending() {
    let server = Server::start([], status(200)).await;
    server.hold.store(true, Ordering::SeqCst);
    let client = client(
        RetryMiddleware::new(POLICY)
            .max_concurrent(1)
            .sleeper(SharedClock::default()),
    );
    let first = tokio::spawn({
        let (client, url) = (client.clone(), server.url("/slow"));
        async move { client.get(url).send().await }
    });
    while server.requests() < 1 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let response = client.get(server.url("/fast")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()[STOP_HEADER], "bulkhead full");
    assert_eq!(report(&response).attempts(), 0);
    server.hold.store(false, Ordering::SeqCst);
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_streamed_body_is_sent_once() {
    let server = Server::start([], status(503)).await;
    let client = client(RetryMiddleware::new(POLICY).sleeper(SharedClock::default()));
    let body = reqwest::Body::wrap(String::from("a stream, as far as reqwest knows"));
    let response = client
        .put(server.url("/upload"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(report(&response).attempts(), 1);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_write_whose_reply_was_lost_is_resent_only_with_a_key() {
    let server = Server::start([Reply::Drop], status(201)).await;
    let client = client(RetryMiddleware::new(POLICY).sleeper(SharedClock::default()));
    let error = client.post(server.url("/comments")).body("hi").send().await;
    assert!(
        error.is_err(),
        "may have been applied: not resent, the error returned"
    );
    assert_eq!(server.requests(), 1);
    let response = client
        .post(server.url("/comments"))
        .header("Idempotency-Key", "comment-1")
        .body("hi")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(server.requests(), 2, "the keyed write was answered at once");

    // A lost reply to a keyed write is resent.
    let server = Server::start([Reply::Drop], status(201)).await;
    let response = client
        .post(server.url("/comments"))
        .header("Idempotency-Key", "comment-2")
        .body("hi")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!((server.requests(), report(&response).attempts()), (2, 2));
}
