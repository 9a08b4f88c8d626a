//! [`RetryLayer`] (feature `tower`): the runtime of `#[retryable]` as tower middleware for `http`
//! services, from the same [`Policy`], with every guarantee of the attribute: the server's wait
//! (`Retry-After`, then the rate-limit reset headers) clamped to the deadline, full jitter, only
//! transient failures retried, ambiguous failures resent only for idempotent requests, a retry
//! budget per upstream by default, and optionally a circuit breaker, a bulkhead and one fallback.
//!
//! Re-exported as `retry_audit::tower`.
//!
//! ```
//! use std::convert::Infallible;
//! use std::time::Duration;
//! use http::{Request, Response, StatusCode};
//! use retry_audit::retry::{Policy, Report};
//! use retry_audit::tower::RetryLayer;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let mut calls = 0;
//! let upstream = tower::service_fn(move |_: Request<String>| {
//!     calls += 1;
//!     let status = if calls < 3 { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
//!     async move { Ok::<_, std::io::Error>(Response::builder().status(status).body(String::new()).unwrap()) }
//! });
//! let client = ServiceBuilder::new()
//!     .layer(RetryLayer::new(Policy::new().attempts(4).deadline(Duration::from_secs(10))))
//!     .service(upstream);
//! let request = Request::get("http://inventory.example/items/7").body(String::new()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(response.extensions().get::<Report>().unwrap().attempts(), 3);
//! # }
//! ```

use std::fmt;
use std::future::{poll_fn, Future};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderValue, Request, Response, StatusCode};
use tower_layer::Layer;
use tower_service::Service;

use super::{__private::call_span, client, AsyncSleeper};
use super::{
    Decision, Policy, Rejected, Report, Retried, RetryError, StopReason, TokioSleeper, Transient,
};

/// A boxed, `Send` future (what [`Retrying`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The header a response made by the layer itself carries: the breaker or the bulkhead did not
/// let the request out (and there was no fallback), so the layer answers `503` without sending
/// it, with the stop reason here (`breaker open`, `bulkhead full`).
pub const STOP_HEADER: &str = "retry-audit-stop";

/// A request body that can be sent again: a request whose body cannot ([`ReplayBody::replay`]
/// returns `None`, such as a stream) is sent once, never retried, and not handed to the fallback
/// once sent.
pub trait ReplayBody: Sized {
    /// A copy of the body for another attempt, if it can be made.
    fn replay(&self) -> Option<Self>;
}

macro_rules! replay_by_clone {
    ($($ty:ty),*) => {$(
        impl ReplayBody for $ty {
            fn replay(&self) -> Option<Self> {
                Some(self.clone())
            }
        }
    )*};
}

replay_by_clone!(
    (),
    String,
    Vec<u8>,
    &'static str,
    &'static [u8],
    bytes::Bytes
);

impl<B: ReplayBody> ReplayBody for Option<B> {
    fn replay(&self) -> Option<Self> {
        match self {
            Some(body) => body.replay().map(Some),
            None => Some(None),
        }
    }
}

/// A `reqwest::Body` made from bytes can be sent again (copied), one made from a stream cannot.
#[cfg(feature = "reqwest")]
impl ReplayBody for reqwest::Body {
    fn replay(&self) -> Option<Self> {
        self.as_bytes()
            .map(|bytes| reqwest::Body::from(bytes.to_vec()))
    }
}

/// How the errors of the inner service are classified (its responses are classified by status
/// and headers).
pub trait ClassifyError<E> {
    /// What to do after `error`.
    fn decision(&self, error: &E) -> Decision;
}

/// The error type's own [`Transient`] (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct UseTransient;

impl<E: Transient> ClassifyError<E> for UseTransient {
    fn decision(&self, error: &E) -> Decision {
        error.decision()
    }
}

impl<E> ClassifyError<E> for fn(&E) -> Decision {
    fn decision(&self, error: &E) -> Decision {
        self(error)
    }
}

/// The answer when the retry gives up: none ([`NoFallback`]) or a service ([`WithFallback`]).
pub trait Fallback<Req, Res, E> {
    /// Whether there is a fallback at all.
    const IS_SOME: bool;
    /// The fallback's answer to `request`.
    fn answer(&mut self, request: Req) -> Option<BoxFuture<'static, Result<Res, E>>>;
}

/// No fallback (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFallback;

impl<Req, Res, E> Fallback<Req, Res, E> for NoFallback {
    const IS_SOME: bool = false;
    fn answer(&mut self, _: Req) -> Option<BoxFuture<'static, Result<Res, E>>> {
        None
    }
}

/// A fallback service ([`RetryLayer::fallback`]).
#[derive(Clone, Debug)]
pub struct WithFallback<S>(S);

impl<S, Req, Res, E> Fallback<Req, Res, E> for WithFallback<S>
where
    S: Service<Req, Response = Res, Error = E> + Clone + Send + 'static,
    S::Future: Send + 'static,
    Req: Send + 'static,
{
    const IS_SOME: bool = true;
    fn answer(&mut self, request: Req) -> Option<BoxFuture<'static, Result<Res, E>>> {
        let mut service = self.0.clone();
        Some(Box::pin(async move {
            poll_fn(|cx| service.poll_ready(cx)).await?;
            service.call(request).await
        }))
    }
}

/// A [`tower_layer::Layer`] that retries `http` requests with a [`Policy`].
///
/// - **Responses**: `408`, `429` and `5xx` (but `501`, `505`) retry; the server's wait
///   (`Retry-After`, `retry-after-ms`, then for a `429` the rate-limit reset headers) replaces
///   the backoff, and one that does not fit in the deadline stops at once. Every other status is
///   an answer, returned as it is. The last response is returned when the retry gives up.
/// - **Errors** of the inner service are classified by their [`Transient`] implementation, or by
///   [`RetryLayer::classify_errors`].
/// - **Idempotency**: an ambiguous failure is resent only when the policy says the operation is
///   idempotent, the method is idempotent (`GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`)
///   or the request carries an `Idempotency-Key`.
/// - **Replay**: a request whose body cannot be copied ([`ReplayBody`]) is sent once.
/// - **Budget**: by default each upstream (the request's host, or [`RetryLayer::budget_key`]) has
///   a process-wide [`RetryBudget::standard`](super::RetryBudget::standard)
///   ([`shared_budget`](super::shared_budget)); [`RetryLayer::budget`] names
///   another, [`RetryLayer::no_budget`] turns it off.
/// - **Breaker, bulkhead**: [`RetryLayer::breaker`], [`RetryLayer::max_concurrent`],
///   [`RetryLayer::bulkhead`]. A request they refuse is not sent; without a fallback the layer
///   answers `503 Service Unavailable` itself, with a [`STOP_HEADER`] header.
/// - **Fallback**: [`RetryLayer::fallback`], a service called once when the retry gives up on a
///   transient failure or is refused; never after a permanent answer.
/// - **Report**: every response it returns carries the call's [`Report`] in its extensions
///   (attempts, waits, stop reason, degraded).
#[derive(Clone)]
pub struct RetryLayer<C = UseTransient, F = NoFallback, Sl = TokioSleeper> {
    settings: Arc<client::Settings>,
    classify: C,
    fallback: F,
    sleeper: Sl,
}

impl<C, F, Sl> fmt::Debug for RetryLayer<C, F, Sl> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryLayer")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl RetryLayer {
    /// A layer retrying with `policy`, the upstream's default budget, tokio's timer.
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        RetryLayer {
            settings: Arc::new(client::Settings::new(policy)),
            classify: UseTransient,
            fallback: NoFallback,
            sleeper: TokioSleeper,
        }
    }
}

impl<C, F, Sl> RetryLayer<C, F, Sl> {
    fn change(mut self, change: impl FnOnce(&mut client::Settings)) -> Self {
        change(Arc::make_mut(&mut self.settings));
        self
    }

    client::upstream_builders!();

    /// Classifies the inner service's errors with `classify` (for error types without
    /// [`Transient`], such as `tower::BoxError`).
    #[must_use]
    pub fn classify_errors<E>(
        self,
        classify: fn(&E) -> Decision,
    ) -> RetryLayer<fn(&E) -> Decision, F, Sl> {
        RetryLayer {
            settings: self.settings,
            classify,
            fallback: self.fallback,
            sleeper: self.sleeper,
        }
    }

    /// Answers with `service`, once, when the retry gives up on a transient failure or the
    /// breaker or the bulkhead refuses the request: it gets a copy of the request (or the request
    /// itself when it was never sent). The response is marked degraded in its [`Report`].
    #[must_use]
    pub fn fallback<S>(self, service: S) -> RetryLayer<C, WithFallback<S>, Sl> {
        RetryLayer {
            settings: self.settings,
            classify: self.classify,
            fallback: WithFallback(service),
            sleeper: self.sleeper,
        }
    }

    /// Waits with `sleeper` (a virtual clock in tests) instead of tokio's timer.
    #[must_use]
    pub fn sleeper<S2>(self, sleeper: S2) -> RetryLayer<C, F, S2> {
        RetryLayer {
            settings: self.settings,
            classify: self.classify,
            fallback: self.fallback,
            sleeper,
        }
    }
}

impl<S, C: Clone, F: Clone, Sl: Clone> Layer<S> for RetryLayer<C, F, Sl> {
    type Service = Retrying<S, C, F, Sl>;

    fn layer(&self, inner: S) -> Self::Service {
        Retrying {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`RetryLayer`] makes.
#[derive(Clone)]
pub struct Retrying<S, C = UseTransient, F = NoFallback, Sl = TokioSleeper> {
    inner: S,
    layer: RetryLayer<C, F, Sl>,
}

impl<S: fmt::Debug, C, F, Sl> fmt::Debug for Retrying<S, C, F, Sl> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retrying")
            .field("inner", &self.inner)
            .field("layer", &self.layer)
            .finish()
    }
}

/// One failed attempt: a response with an error status, an error of the inner service, or a
/// refusal; with its decision, made when it happened.
struct Failed<RB, E> {
    failure: Failure<RB, E>,
    decision: Decision,
    status: Option<u16>,
}

enum Failure<RB, E> {
    /// Boxed: a response is large, and is kept only until the next attempt.
    Response(Box<Response<RB>>),
    Error(E),
    Rejected,
}

impl<RB, E> Transient for Failed<RB, E> {
    fn decision(&self) -> Decision {
        self.decision
    }
    fn status(&self) -> Option<u16> {
        self.status
    }
}

impl<RB, E> From<Rejected> for Failed<RB, E> {
    fn from(_: Rejected) -> Self {
        Failed {
            failure: Failure::Rejected,
            decision: Decision::Stop,
            status: None,
        }
    }
}

/// The key of the request's upstream: its authority (`host:port`), else its `Host` header.
fn upstream_key<B>(request: &Request<B>) -> String {
    if let Some(authority) = request.uri().authority() {
        return authority.as_str().to_owned();
    }
    request
        .headers()
        .get(http::header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// The response the layer makes for a request it did not send.
fn refused<RB: Default>(reason: StopReason, report: Report) -> Response<RB> {
    let mut response = Response::new(RB::default());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
        .headers_mut()
        .insert(STOP_HEADER, HeaderValue::from_static(reason.as_str()));
    response.extensions_mut().insert(report);
    response
}

fn finish<RB: Default, E>(
    done: Result<Retried<Response<RB>>, RetryError<Failed<RB, E>>>,
) -> Result<Response<RB>, E> {
    match done {
        Ok(retried) => {
            let (mut response, report) = retried.into_parts();
            response.extensions_mut().insert(report);
            Ok(response)
        }
        Err(stopped) => {
            let (reason, report) = (stopped.reason(), *stopped.report());
            match stopped.into_error().failure {
                Failure::Response(mut response) => {
                    response.extensions_mut().insert(report);
                    Ok(*response)
                }
                Failure::Error(error) => Err(error),
                Failure::Rejected => Ok(refused(reason, report)),
            }
        }
    }
}

impl<S, C, F, Sl, B, RB> Service<Request<B>> for Retrying<S, C, F, Sl>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send + 'static,
    C: ClassifyError<S::Error> + Clone + Send + Sync + 'static,
    F: Fallback<Request<B>, Response<RB>, S::Error> + Clone + Send + 'static,
    Sl: AsyncSleeper + Clone + Send + Sync + 'static,
    Sl::Sleep: Send,
    B: ReplayBody + Send + 'static,
    RB: Default + Send + 'static,
{
    type Response = Response<RB>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<RB>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service made ready goes with the request; a clone stays for the next one.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(run(inner, request, self.layer.clone()))
    }
}

async fn run<S, C, F, Sl, B, RB>(
    mut inner: S,
    request: Request<B>,
    layer: RetryLayer<C, F, Sl>,
) -> Result<Response<RB>, S::Error>
where
    S: Service<Request<B>, Response = Response<RB>> + Send,
    S::Future: Send,
    C: ClassifyError<S::Error>,
    F: Fallback<Request<B>, Response<RB>, S::Error>,
    Sl: AsyncSleeper + Sync,
    Sl::Sleep: Send,
    B: ReplayBody,
    RB: Default,
{
    let RetryLayer {
        settings,
        classify,
        mut fallback,
        sleeper,
    } = layer;
    let host = upstream_key(&request);
    let (parts, body) = request.into_parts();
    let replay = body.replay();
    let idempotent = client::idempotent_request(&parts.method, &parts.headers);
    let mut retry = settings.retry::<Failed<RB, S::Error>>(&host, idempotent, replay.is_some());
    if F::IS_SOME {
        retry = retry.fallback_follows();
    }
    let master = replay.map(|body| (parts.clone(), body));
    let mut unsent = Some(Request::from_parts(parts, body));
    let copy = |master: &Option<(http::request::Parts, B)>| {
        let (parts, body) = master.as_ref()?;
        Some(Request::from_parts(parts.clone(), body.replay()?))
    };
    let span = call_span("tower::RetryLayer");
    let mut retry = retry.start_async(&sleeper);
    let done = loop {
        // The request of the next attempt: the original, then copies. It stays here until the
        // attempt takes it (a refused attempt leaves it for the fallback).
        if unsent.is_none() {
            unsent = copy(&master);
        }
        let attempt = async {
            let request = unsent
                .take()
                .expect("a request without a copy is sent once");
            let failed = |error: S::Error| Failed {
                decision: classify.decision(&error),
                failure: Failure::Error(error),
                status: None,
            };
            poll_fn(|cx| inner.poll_ready(cx)).await.map_err(failed)?;
            let response = inner.call(request).await.map_err(failed)?;
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
    let done = match done {
        Err(stopped) if F::IS_SOME && stopped.allows_fallback() => {
            // The request itself if it was never sent, else a copy.
            match unsent.take().or_else(|| copy(&master)) {
                Some(request) => {
                    let answer = match fallback.answer(request) {
                        Some(answer) => span.instrument(answer).await,
                        None => unreachable!("IS_SOME"),
                    };
                    let answer = answer.map_err(|error| Failed {
                        failure: Failure::Error(error),
                        decision: Decision::Stop,
                        status: None,
                    });
                    span.in_scope(|| stopped.degrade(answer))
                }
                None => Err(stopped),
            }
        }
        done => done,
    };
    finish(done)
}
