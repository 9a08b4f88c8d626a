//! What `#[retryable]` tells `tracing` (feature `tracing`): one span per call, named `retryable`
//! with the function's name; a DEBUG event per retry; a WARN event only when the call gives up
//! or the fallback answers (once); nothing at all for a call whose first attempt succeeds.
//! Recorded with a small subscriber of the test's own.

#![cfg(all(feature = "tracing", feature = "tokio"))]

mod retry_support;

use std::sync::{Arc, Mutex};

use retry_audit::retry::{Retried, RetryError, StopReason};
use retry_audit::retryable;
use retry_support::{ApiError, PausedTokio, Service, VirtualClock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event: its level, its message, and the function of the span it happened in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    level: Level,
    message: String,
    span: Option<String>,
}

#[derive(Default)]
struct Log {
    next_id: u64,
    /// The span of each id: its name and its `function` field.
    spans: Vec<(u64, String, String)>,
    /// Entered spans, innermost last (the tests run on one thread).
    stack: Vec<u64>,
    events: Vec<Seen>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Log>>);

struct Fields<'a>(&'a mut String, &'a str);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == self.1 {
            format!("{value:?}").trim_matches('"').clone_into(self.0);
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.1 {
            value.clone_into(self.0);
        }
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut function = String::new();
        attributes.record(&mut Fields(&mut function, "function"));
        let mut log = self.0.lock().unwrap();
        log.next_id += 1;
        let id = log.next_id;
        log.spans
            .push((id, attributes.metadata().name().to_owned(), function));
        Id::from_u64(id)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut message = String::new();
        event.record(&mut Fields(&mut message, "message"));
        let mut log = self.0.lock().unwrap();
        let current = log.stack.last().copied();
        let span = current.and_then(|id| {
            log.spans
                .iter()
                .find(|(s, _, _)| *s == id)
                .map(|(_, _, function)| function.clone())
        });
        log.events.push(Seen {
            level: *event.metadata().level(),
            message,
            span,
        });
    }

    fn enter(&self, id: &Id) {
        self.0.lock().unwrap().stack.push(id.into_u64());
    }

    fn exit(&self, _: &Id) {
        self.0.lock().unwrap().stack.pop();
    }
}

/// Runs `call` under a fresh recorder; the spans made and the events seen.
fn record(call: impl FnOnce()) -> (Vec<(String, String)>, Vec<Seen>) {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), call);
    let log = recorder.0.lock().unwrap();
    let spans = log
        .spans
        .iter()
        .map(|(_, name, function)| (name.clone(), function.clone()))
        .collect();
    (spans, log.events.clone())
}

fn levels(events: &[Seen], level: Level) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.level == level)
        .map(|e| e.message.as_str())
        .collect()
}

#[retryable(attempts = 3, budget = none, sleep = VirtualClock)]
fn fetch(service: &Service) -> Result<u32, RetryError<ApiError>> {
    service.request(None)
}

#[test]
fn a_first_attempt_that_succeeds_is_one_span_and_no_event() {
    VirtualClock::reset();
    let service = Service::new([Ok(1)]);
    let (spans, events) = record(|| assert_eq!(fetch(&service).unwrap(), 1));
    assert_eq!(spans, [("retryable".to_owned(), "fetch".to_owned())]);
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn each_retry_is_a_debug_event_in_the_calls_span() {
    VirtualClock::reset();
    let service = Service::new([Err(ApiError::Refused), Err(ApiError::status(503)), Ok(3)]);
    let (spans, events) = record(|| assert_eq!(fetch(&service).unwrap(), 3));
    assert_eq!(spans.len(), 1);
    assert_eq!(
        levels(&events, Level::DEBUG),
        [
            "retrying after a transient failure",
            "retrying after a transient failure",
            "succeeded after retrying"
        ]
    );
    assert!(levels(&events, Level::WARN).is_empty());
    assert!(events.iter().all(|e| e.span.as_deref() == Some("fetch")));
}

#[test]
fn giving_up_is_the_one_warning_and_a_permanent_error_is_none() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(503)));
    let (_, events) = record(|| {
        let err = fetch(&service).unwrap_err();
        assert_eq!(err.reason(), StopReason::AttemptsExhausted);
    });
    assert_eq!(levels(&events, Level::WARN), ["retry gave up"]);
    assert_eq!(levels(&events, Level::DEBUG).len(), 2);
    assert_eq!(events.last().unwrap().span.as_deref(), Some("fetch"));

    let service = Service::always(Err(ApiError::status(404)));
    let (_, events) = record(|| {
        assert_eq!(fetch(&service).unwrap_err().reason(), StopReason::Permanent);
    });
    assert!(levels(&events, Level::WARN).is_empty(), "{events:?}");
    assert_eq!(levels(&events, Level::DEBUG), ["retry stopped"]);
}

#[allow(clippy::unnecessary_wraps)] // a fallback returns what the function returns
fn stale(service: &Service) -> Result<u32, ApiError> {
    let _ = service;
    Ok(0)
}

#[retryable(attempts = 2, budget = none, fallback = stale, sleep = VirtualClock)]
fn fetch_or_stale(service: &Service) -> Result<Retried<u32>, ApiError> {
    service.request(None)
}

#[test]
fn falling_back_is_the_one_warning() {
    VirtualClock::reset();
    let service = Service::always(Err(ApiError::status(503)));
    let (_, events) = record(|| assert!(fetch_or_stale(&service).unwrap().is_degraded()));
    assert_eq!(levels(&events, Level::WARN), ["answered by the fallback"]);
    assert_eq!(
        levels(&events, Level::DEBUG),
        ["retrying after a transient failure", "retry stopped"]
    );
    assert!(events
        .iter()
        .all(|e| e.span.as_deref() == Some("fetch_or_stale")));
}

async fn stale_async(service: &Service) -> Result<u32, ApiError> {
    tokio::task::yield_now().await;
    stale(service)
}

#[retryable(attempts = 2, budget = none, fallback = stale_async, sleep = PausedTokio)]
async fn fetch_async(service: &Service) -> Result<Retried<u32>, ApiError> {
    service.request_async(None).await
}

#[test]
fn an_async_call_is_one_span_too() {
    VirtualClock::reset();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let service = Service::always(Err(ApiError::status(503)));
    let (spans, events) = record(|| {
        let answer = runtime.block_on(fetch_async(&service)).unwrap();
        assert!(answer.is_degraded());
    });
    assert_eq!(spans, [("retryable".to_owned(), "fetch_async".to_owned())]);
    assert_eq!(levels(&events, Level::WARN), ["answered by the fallback"]);
    assert!(
        events
            .iter()
            .all(|e| e.span.as_deref() == Some("fetch_async")),
        "{events:?}"
    );
}
