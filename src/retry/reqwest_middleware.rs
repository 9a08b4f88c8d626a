//! [`RetryMiddleware`] (feature `reqwest-middleware`): the runtime of `#[retryable]` as a
//! `reqwest_middleware::Middleware`, from the same [`Policy`], with every guarantee of the
//! attribute: the server's wait (`Retry-After`, then the rate-limit reset headers) clamped to the
//! deadline, full jitter, only transient failures retried, ambiguous failures resent only for
//! idempotent requests, a retry budget per host by default, and optionally a circuit breaker, a
//! bulkhead and one fallback.
//!
//! Re-exported as `retry_audit::reqwest_middleware`.
//!
//! ```no_run
//! use std::time::Duration;
//! use retry_audit::reqwest_middleware::RetryMiddleware;
//! use retry_audit::retry::{CircuitBreaker, Policy};
//!
//! static PRICES: CircuitBreaker = CircuitBreaker::new();
//!
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(
//!         RetryMiddleware::new(Policy::new().attempts(4).deadline(Duration::from_secs(15)))
//!             .breaker(&PRICES)
//!             .max_concurrent(20),
//!     )
//!     .build();
//! # let _ = client;
//! ```

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;

use http::{Extensions, HeaderValue, StatusCode};
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next};

use super::{__private::call_span, client, AsyncSleeper};
use super::{
    Decision, Policy, Rejected, Report, Retried, RetryError, StopReason, TokioSleeper, Transient,
};

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The header of a response the middleware makes itself: the breaker or the bulkhead did not let
/// the request out (and there was no fallback), so it answers `503 Service Unavailable` without
/// sending it, with the stop reason here.
pub const STOP_HEADER: &str = "retry-audit-stop";

type FallbackFn =
    dyn Fn(Request) -> BoxFuture<'static, reqwest_middleware::Result<Response>> + Send + Sync;

/// A `reqwest_middleware::Middleware` that retries requests with a [`Policy`].
///
/// - **Responses**: `408`, `429` and `5xx` (but `501`, `505`) retry; the server's wait
///   (`Retry-After`, `retry-after-ms`, then for a `429` the rate-limit reset headers) replaces the
///   backoff, and one that does not fit in the deadline stops at once. Every other status is an
///   answer. The last response is returned when the retry gives up.
/// - **Errors**: a connection that could not be made retries; a timeout or a failure after the
///   request went out is ambiguous; other errors stop (`Transient` for `reqwest::Error`).
/// - **Idempotency**: an ambiguous failure is resent only when the policy says the operation is
///   idempotent, the method is idempotent or the request carries an `Idempotency-Key`.
/// - **Replay**: a request whose body cannot be copied (a stream) is sent once.
/// - **Budget**: by default each host has a process-wide `RetryBudget::standard` (retries up to
///   20 % of the requests plus 10 per second); [`RetryMiddleware::budget_key`],
///   [`RetryMiddleware::budget`], [`RetryMiddleware::no_budget`] change it.
/// - **Breaker, bulkhead**: [`RetryMiddleware::breaker`], [`RetryMiddleware::max_concurrent`],
///   [`RetryMiddleware::bulkhead`]. A request they refuse is not sent; without a fallback the
///   middleware answers `503` itself, with a [`STOP_HEADER`] header.
/// - **Fallback**: [`RetryMiddleware::fallback`], called once when the retry gives up on a
///   transient failure or is refused; never after a permanent answer.
/// - **Report**: every response it returns carries the call's [`Report`] in its extensions.
#[derive(Clone)]
pub struct RetryMiddleware<Sl = TokioSleeper> {
    settings: Arc<client::Settings>,
    fallback: Option<Arc<FallbackFn>>,
    sleeper: Sl,
}

impl<Sl> fmt::Debug for RetryMiddleware<Sl> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryMiddleware")
            .field("settings", &self.settings)
            .field("fallback", &self.fallback.is_some())
            .finish_non_exhaustive()
    }
}

impl RetryMiddleware {
    /// A middleware retrying with `policy`, each host's default budget, tokio's timer.
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        RetryMiddleware {
            settings: Arc::new(client::Settings::new(policy)),
            fallback: None,
            sleeper: TokioSleeper,
        }
    }
}

impl<Sl> RetryMiddleware<Sl> {
    fn change(mut self, change: impl FnOnce(&mut client::Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    client::upstream_builders!();

    /// Answers with `fallback`, once, when the retry gives up on a transient failure or the
    /// breaker or the bulkhead refuses the request: it gets a copy of the request (or the request
    /// itself when it was never sent). The response is marked degraded in its [`Report`].
    #[must_use]
    pub fn fallback<F, Fut>(mut self, fallback: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = reqwest_middleware::Result<Response>> + Send + 'static,
    {
        self.fallback = Some(Arc::new(move |request| Box::pin(fallback(request))));
        self
    }

    /// Waits with `sleeper` (a virtual clock in tests) instead of tokio's timer.
    #[must_use]
    pub fn sleeper<S2>(self, sleeper: S2) -> RetryMiddleware<S2> {
        RetryMiddleware {
            settings: self.settings,
            fallback: self.fallback,
            sleeper,
        }
    }
}

/// One failed attempt, with its decision.
struct Failed {
    failure: Failure,
    decision: Decision,
    status: Option<u16>,
}

enum Failure {
    /// Boxed: a response is large, and is kept only until the next attempt.
    Response(Box<Response>),
    Error(reqwest_middleware::Error),
    Rejected,
}

impl Transient for Failed {
    fn decision(&self) -> Decision {
        self.decision
    }
    fn status(&self) -> Option<u16> {
        self.status
    }
}

impl From<Rejected> for Failed {
    fn from(_: Rejected) -> Self {
        Failed {
            failure: Failure::Rejected,
            decision: Decision::Stop,
            status: None,
        }
    }
}

fn error_decision(error: &reqwest_middleware::Error) -> Decision {
    match error {
        reqwest_middleware::Error::Reqwest(error) => error.decision(),
        reqwest_middleware::Error::Middleware(_) => Decision::Stop,
    }
}

/// The key of the request's upstream: `host[:port]`.
fn upstream_key(request: &Request) -> String {
    let url = request.url();
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    }
}

fn with_report(mut response: Response, report: Report) -> Response {
    response.extensions_mut().insert(report);
    response
}

fn finish(
    done: Result<Retried<Response>, RetryError<Failed>>,
) -> reqwest_middleware::Result<Response> {
    match done {
        Ok(retried) => {
            let (response, report) = retried.into_parts();
            Ok(with_report(response, report))
        }
        Err(stopped) => {
            let (reason, report) = (stopped.reason(), *stopped.report());
            match stopped.into_error().failure {
                Failure::Response(response) => Ok(with_report(*response, report)),
                Failure::Error(error) => Err(error),
                Failure::Rejected => Ok(refused(reason, report)),
            }
        }
    }
}

/// The response the middleware makes for a request it did not send.
fn refused(reason: StopReason, report: Report) -> Response {
    let mut response = http::Response::new(Vec::<u8>::new());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
        .headers_mut()
        .insert(STOP_HEADER, HeaderValue::from_static(reason.as_str()));
    with_report(Response::from(response), report)
}

#[async_trait::async_trait]
impl<Sl> Middleware for RetryMiddleware<Sl>
where
    Sl: AsyncSleeper + Send + Sync + 'static,
    Sl::Sleep: Send,
{
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let host = upstream_key(&request);
        let idempotent = client::idempotent_request(request.method(), request.headers());
        // A copy for every later attempt and for the fallback; none for a streamed body.
        let master = request.try_clone();
        let mut retry = self
            .settings
            .retry::<Failed>(&host, idempotent, master.is_some());
        if self.fallback.is_some() {
            retry = retry.fallback_follows();
        }
        let mut unsent = Some(request);
        let copy = |master: &Option<Request>| master.as_ref().and_then(Request::try_clone);
        let span = call_span("reqwest_middleware::RetryMiddleware");
        let mut retry = retry.start_async(&self.sleeper);
        let done = loop {
            // The request of the next attempt: the original, then copies. It stays here until
            // the attempt takes it (a refused attempt leaves it for the fallback).
            if unsent.is_none() {
                unsent = copy(&master);
            }
            let attempt = async {
                let request = unsent
                    .take()
                    .expect("a request without a copy is sent once");
                let response = next
                    .clone()
                    .run(request, extensions)
                    .await
                    .map_err(|error| Failed {
                        decision: error_decision(&error),
                        failure: Failure::Error(error),
                        status: None,
                    })?;
                let status = response.status();
                if status.as_u16() < 400 {
                    return Ok(response);
                }
                Err(Failed {
                    decision: super::http::decision(status, response.headers()),
                    status: Some(status.as_u16()),
                    failure: Failure::Response(Box::new(response)),
                })
            };
            if let ControlFlow::Break(done) = span.instrument(retry.attempt(attempt)).await {
                break done.map(|response| Retried::new(response, retry.report()));
            }
        };
        let done = match (done, &self.fallback) {
            (Err(stopped), Some(fallback)) if stopped.allows_fallback() => {
                match unsent.take().or_else(|| copy(&master)) {
                    Some(request) => {
                        let answer =
                            span.instrument(fallback(request))
                                .await
                                .map_err(|error| Failed {
                                    failure: Failure::Error(error),
                                    decision: Decision::Stop,
                                    status: None,
                                });
                        span.in_scope(|| stopped.degrade(answer))
                    }
                    None => Err(stopped),
                }
            }
            (done, _) => done,
        };
        finish(done)
    }
}
