//! The retry-site model: what each retry in a file retries, how it is bounded, how its delay
//! evolves, where randomness enters, which statuses it retries and what it creates per attempt.
//!
//! [`extract`] builds it from a parsed file; the rules in [`crate::checks`] only read it.

mod attempts;
mod bound;
pub mod crate_values;
mod estimate;
mod flow;
mod keys;
pub mod known;
pub mod limits;
mod names;
mod policies;
pub mod policy_model;
mod policy_values;
pub mod prefilter;
mod rewrite;
mod scope;
mod select;
mod site;
mod span;
mod status;
mod strategy;
pub mod test_code;
mod tower_policy;
mod values;
mod verdicts;

pub use attempts::{param_source, strip_conversions};
pub(crate) use names::is_retry_word;
pub use policies::may_have_policies;
pub use policy_model::PolicyAdvice;
pub use scope::Facts;
pub use site::{extract, extract_in};
pub use span::LineIndex;

use crate::source::Span;

/// Names a team teaches the analysis (`[extend]` in `retry-audit.toml`), and the built-in
/// models (`models/*.toml`, [`known`]) read by the same code: its own wrappers around sleeps,
/// randomness, key constructors and status accessors. Entries are paths (`crate::time::pause`,
/// `pause`); a call matches when its resolved path ends with the entry's segments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extensions {
    /// Functions or methods that wait for the duration given as their first argument.
    pub sleep_fns: Vec<String>,
    /// Methods that wait for the duration given as their first argument.
    pub sleep_methods: Vec<String>,
    /// Waits that block the thread.
    pub blocking_sleeps: Vec<String>,
    /// Waits that return a future, which wait only when it is awaited.
    pub future_sleeps: Vec<String>,
    /// Functions that run the future they are given for at most a time they are given.
    pub timeouts: Vec<String>,
    /// Awaited methods that resolve only after a wait of the callee's choosing.
    pub wait_handlers: Vec<String>,
    /// Crates whose every path is random.
    pub random_crates: Vec<String>,
    /// Functions or methods whose result is random.
    pub random_sources: Vec<String>,
    /// Methods of a random generator whose result is usable as a key.
    pub random_key_methods: Vec<String>,
    /// Functions that make a fresh unique id (a key when sent as one).
    pub key_constructors: Vec<String>,
    /// Macros that make a fresh unique id.
    pub key_macros: Vec<String>,
    /// Methods or fields that hold an HTTP status (`resp.http_status()`).
    pub status_accessors: Vec<String>,
    /// Crates whose growing backoff strategies are jittered by default.
    pub jittered_crates: Vec<String>,
    /// Crates whose growing backoff strategies cap their waits by default.
    pub capped_crates: Vec<String>,
    /// Methods that ask a backoff strategy object for its next wait.
    pub next_wait_methods: Vec<String>,
    /// Functions that run an operation again after any error it returns.
    pub every_error_runners: Vec<String>,
    /// Values a retry crate's operation returns to be run again.
    pub again_values: Vec<String>,
    /// Values a retry crate's operation returns to stop with its error.
    pub final_values: Vec<String>,
    /// Macros whose body is a block of statements run as async code.
    pub block_macros: Vec<String>,
    /// Awaited calls that resume without waiting for anything.
    pub no_waits: Vec<String>,
    /// Crates of message brokers (a publish through one of their types is a write).
    pub messaging_crates: Vec<String>,
    /// Calls (`crate::method`) whose `Err` carries every HTTP status from 400.
    pub status_error_calls: Vec<String>,
    /// Calls (`crate::method`) that fail on transport only (a response of any status is `Ok`).
    pub transport_error_calls: Vec<String>,
    /// Attribute macros that make a function retry its body.
    pub retry_attributes: Vec<String>,
    /// Constructors of retry wrappers compliant by construction (a function making one retries).
    pub compliant_retries: Vec<String>,
    /// Types whose connections reach only this machine (Unix-domain sockets, named pipes).
    pub local_endpoints: Vec<String>,
    /// Modules of in-process channels (a value or error of one reaches no service).
    pub in_process_channels: Vec<String>,
    /// Modules of embedded stores (a database kept in this process's files).
    pub local_stores: Vec<String>,
    /// Modules of terminal prompts and dialogs (a loop calling one asks a person).
    pub prompt_crates: Vec<String>,
    /// Types of a child process (a function returning one started a process on this machine).
    pub process_handles: Vec<String>,
    /// Calls that make a request that changes nothing (HTTP `GET`, `HEAD`).
    pub safe_request_calls: Vec<String>,
    /// Calls (`crate::method`) that wait a timer's fixed period (tokio's `Interval::tick`).
    pub period_ticks: Vec<String>,
    /// Retry crates' policies (`[[extend.policies]]`), tried before the built-in ones.
    pub policies: Vec<policy_model::PolicyModel>,
    /// Words added to the vocabulary lists (`models/vocabulary.toml`: `retry-words`,
    /// `remote-operation-words`, ...), by list; only lists with words.
    pub vocabulary: std::collections::BTreeMap<known::List, Vec<String>>,
}

impl Extensions {
    /// One of the lists.
    #[must_use]
    pub fn list(&self, list: known::List) -> &[String] {
        use known::List as L;
        match list {
            L::SleepFns => &self.sleep_fns,
            L::SleepMethods => &self.sleep_methods,
            L::BlockingSleeps => &self.blocking_sleeps,
            L::FutureSleeps => &self.future_sleeps,
            L::Timeouts => &self.timeouts,
            L::WaitHandlers => &self.wait_handlers,
            L::RandomCrates => &self.random_crates,
            L::RandomSources => &self.random_sources,
            L::RandomKeyMethods => &self.random_key_methods,
            L::KeyConstructors => &self.key_constructors,
            L::KeyMacros => &self.key_macros,
            L::StatusAccessors => &self.status_accessors,
            L::JitteredCrates => &self.jittered_crates,
            L::CappedCrates => &self.capped_crates,
            L::NextWaitMethods => &self.next_wait_methods,
            L::EveryErrorRunners => &self.every_error_runners,
            L::AgainValues => &self.again_values,
            L::FinalValues => &self.final_values,
            L::BlockMacros => &self.block_macros,
            L::NoWaits => &self.no_waits,
            L::MessagingCrates => &self.messaging_crates,
            L::StatusErrorCalls => &self.status_error_calls,
            L::TransportErrorCalls => &self.transport_error_calls,
            L::RetryAttributes => &self.retry_attributes,
            L::CompliantRetries => &self.compliant_retries,
            L::LocalEndpoints => &self.local_endpoints,
            L::InProcessChannels => &self.in_process_channels,
            L::LocalStores => &self.local_stores,
            L::PromptCrates => &self.prompt_crates,
            L::ProcessHandles => &self.process_handles,
            L::SafeRequestCalls => &self.safe_request_calls,
            L::PeriodTicks => &self.period_ticks,
            _ => self.vocabulary.get(&list).map_or(&[], Vec::as_slice),
        }
    }

    /// One of the lists, to fill.
    pub fn list_mut(&mut self, list: known::List) -> &mut Vec<String> {
        use known::List as L;
        match list {
            L::SleepFns => &mut self.sleep_fns,
            L::SleepMethods => &mut self.sleep_methods,
            L::BlockingSleeps => &mut self.blocking_sleeps,
            L::FutureSleeps => &mut self.future_sleeps,
            L::Timeouts => &mut self.timeouts,
            L::WaitHandlers => &mut self.wait_handlers,
            L::RandomCrates => &mut self.random_crates,
            L::RandomSources => &mut self.random_sources,
            L::RandomKeyMethods => &mut self.random_key_methods,
            L::KeyConstructors => &mut self.key_constructors,
            L::KeyMacros => &mut self.key_macros,
            L::StatusAccessors => &mut self.status_accessors,
            L::JitteredCrates => &mut self.jittered_crates,
            L::CappedCrates => &mut self.capped_crates,
            L::NextWaitMethods => &mut self.next_wait_methods,
            L::EveryErrorRunners => &mut self.every_error_runners,
            L::AgainValues => &mut self.again_values,
            L::FinalValues => &mut self.final_values,
            L::BlockMacros => &mut self.block_macros,
            L::NoWaits => &mut self.no_waits,
            L::MessagingCrates => &mut self.messaging_crates,
            L::StatusErrorCalls => &mut self.status_error_calls,
            L::TransportErrorCalls => &mut self.transport_error_calls,
            L::RetryAttributes => &mut self.retry_attributes,
            L::CompliantRetries => &mut self.compliant_retries,
            L::LocalEndpoints => &mut self.local_endpoints,
            L::InProcessChannels => &mut self.in_process_channels,
            L::LocalStores => &mut self.local_stores,
            L::PromptCrates => &mut self.prompt_crates,
            L::ProcessHandles => &mut self.process_handles,
            L::SafeRequestCalls => &mut self.safe_request_calls,
            L::PeriodTicks => &mut self.period_ticks,
            _ => self.vocabulary.entry(list).or_default(),
        }
    }

    /// Whether `full` (a resolved call path) ends with one of `entries`.
    #[must_use]
    pub fn matches(entries: &[String], full: &[String]) -> bool {
        entries.iter().any(|e| {
            let segs: Vec<&str> = e.split("::").filter(|s| !s.is_empty()).collect();
            !segs.is_empty()
                && full.len() >= segs.len()
                && full[full.len() - segs.len()..]
                    .iter()
                    .zip(&segs)
                    .all(|(a, b)| a == b)
        })
    }

    /// Whether a single name (a method, a field) is one of `entries`' last segments.
    #[must_use]
    pub fn names(entries: &[String], name: &str) -> bool {
        entries.iter().any(|e| e.rsplit("::").next() == Some(name))
    }
}

/// The key of a function or constant name in the crate's index (the workspace index's names): a
/// hash, so two names may share one, which costs a useless second look at a file, never a
/// wrong fact (the definitions are then looked up by name).
#[must_use]
pub fn name_key(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

/// Everything the rules need to know about one file.
#[derive(Clone, Debug, Default)]
pub struct FileModel {
    pub sites: Vec<RetrySite>,
    /// Functions of this file that retry by themselves (a retry site inside, or
    /// `#[retryable]`): their name, the type or trait whose method each is (`None` for a free
    /// function) and where they retry.
    pub retrying_fns: Vec<(String, Option<String>, Span)>,
    /// Every function and method name the file defines (sorted).
    pub defined_fns: Vec<(String, Option<String>)>,
    /// Every function, method, `const` and `static` name the file defines, as
    /// [`name_key`]s (sorted, without duplicates).
    pub defined_keys: Vec<u64>,
    /// Functions and constants the analysis looked for and found neither in the file nor in
    /// the imported definitions: what other files of the crate may define (sorted).
    pub unresolved: Vec<String>,
}

/// A call of a function by name, made on each attempt of a retry site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The function's name (the last segment).
    pub name: String,
    /// How the call names it.
    pub via: Via,
    /// The call.
    pub span: Span,
}

/// How a call names its callee: what a function of the crate must be for the call to reach it.
/// Names are resolved through `use`, `Self` and paths, never guessed from the last segment
/// alone: `Vec::new()` never reaches a retrying `StoreClient::new`, `Duration::from_millis`
/// never a type of the crate's `from_millis`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// `self.name(..)`, `value.name(..)`: a method.
    Method,
    /// `name(..)`, `crate::net::name(..)`, `net::name(..)`: a free function.
    Free,
    /// `Type::name(..)`, `Self::name(..)` (the enclosing impl's type): an associated function
    /// or method of that type.
    Type(String),
    /// `self.field.name(..)`: a method of the field's type, once the enclosing type's fields
    /// are known (see [`Via::in_impl_of`]); a field of a type not known reaches nothing.
    Field(String),
}

impl Via {
    /// Whether a call named this way may reach a function of `owner` (the type or trait of a
    /// method, `None` for a free function).
    #[must_use]
    pub fn reaches(&self, owner: Option<&str>) -> bool {
        match self {
            Via::Method => owner.is_some(),
            Via::Field(_) => false,
            Via::Free => owner.is_none(),
            // `Self::name` outside a known impl: any method or associated function.
            Via::Type(ty) if ty == "Self" => owner.is_some(),
            Via::Type(ty) => owner == Some(ty.as_str()),
        }
    }

    /// [`Via::reaches`] for a function whose owner is an identifier.
    #[must_use]
    pub fn reaches_ident(&self, owner: Option<&syn::Ident>) -> bool {
        match self {
            Via::Method => owner.is_some(),
            Via::Field(_) => false,
            Via::Free => owner.is_none(),
            Via::Type(ty) if ty == "Self" => owner.is_some(),
            Via::Type(ty) => owner.is_some_and(|o| o == ty),
        }
    }

    /// `Self::name` and `self.field.name` read in a method of `owner`; `field_type` gives the
    /// type of one of `owner`'s fields (`None`: not known, the call stays any method).
    #[must_use]
    pub fn in_impl_of(
        self,
        owner: Option<&str>,
        field_type: impl Fn(&str) -> Option<String>,
    ) -> Via {
        match (self, owner) {
            (Via::Type(ty), Some(o)) if ty == "Self" => Via::Type(o.to_owned()),
            (Via::Field(field), Some(_)) => match field_type(&field) {
                Some(ty) => Via::Type(ty),
                None => Via::Field(field),
            },
            (via, _) => via,
        }
    }

    /// How a call of `full` (a path resolved through `use`; `owner` the enclosing impl's type)
    /// names its callee: by the type before the name (`Duration::from_millis` reaches only a
    /// `Duration` of the crate), or as a free function of a module.
    #[must_use]
    pub fn of_path(full: &[String], owner: Option<&str>) -> Via {
        let n = full.len();
        if n < 2 {
            return Via::Free;
        }
        let qualifier = full[n - 2].as_str();
        match qualifier {
            // Without the enclosing type, `Self` stays (see [`Via::in_impl_of`]).
            "Self" => Via::Type(owner.unwrap_or("Self").to_owned()),
            "crate" | "self" | "super" => Via::Free,
            // A module (`net::with_retries`).
            q if q.chars().next().is_some_and(char::is_lowercase) => Via::Free,
            q => Via::Type(q.to_owned()),
        }
    }
}

/// One place that runs an operation again after it failed.
#[derive(Clone, Debug)]
pub struct RetrySite {
    pub kind: SiteKind,
    /// The loop head (`loop`, `while cond`, `for pat in expr`) or the recursive call.
    pub head: Span,
    pub bound: Bound,
    pub delays: Vec<Delay>,
    /// Statuses that lead to another attempt, where the site tests statuses.
    pub statuses: Vec<StatusRetry>,
    /// Keys created per attempt.
    pub keys: Vec<PerAttemptKey>,
    /// Where the failure path goes round again (for labels).
    pub retry_path: Option<Span>,
    /// The site runs in async code (an `async fn`, an `async` block), where a blocking sleep
    /// stalls the executor's thread.
    pub in_async: bool,
    /// The site reads the server's wait hint (`Retry-After`, `retry-after-ms`,
    /// `x-ratelimit-reset*`), itself or in a function of this file it calls.
    pub reads_retry_after: bool,
    /// Non-idempotent requests made on each attempt (`.post(`, `Method::PATCH`, an `INSERT`, a
    /// queue publish).
    pub writes: Vec<Span>,
    /// An idempotency key goes with the request (made inside or outside the loop).
    pub sends_key: bool,
    /// Functions called by name on each attempt, for nested retries.
    pub calls: Vec<Call>,
    /// The function the site is in.
    pub function: String,
    /// For a crate's policy: how to fix it in that crate's terms.
    pub policy: Option<std::sync::Arc<PolicyAdvice>>,
    /// Some failure goes round again without being picked out as one kind of error (any `Err`,
    /// or a status): a blind resend, not a deliberate re-run of one condition (a name collision,
    /// a stale pooled connection).
    pub blind: bool,
    /// Every resend follows a failure the server did not process (a 429, a refused
    /// connection, a rolled-back transaction): resending a write cannot apply it twice.
    pub resend_safe: bool,
    /// The definitions (functions, constants) of this file or another file of the crate the
    /// site's facts were read from, and which facts each decided.
    pub evidence: Vec<Evidence>,
    /// A supervisor: it restarts a long-running operation for ever by design, pausing after a
    /// failure. Only the rules about its pauses apply.
    pub supervisor: bool,
    /// A way round after a failure that skips every wait the site has elsewhere.
    pub unpaced: Option<Unpaced>,
    /// A loop nested in the site waits (the way round through it is paced), or a callee
    /// retries with waits of its own.
    pub paced_inside: bool,
    /// The site makes at most two attempts, by a literal range (`for attempt in 0..2`).
    pub second_try_only: bool,
    /// The statements a loop runs for their effect alone after every operation its attempt
    /// tests, on its way round (a clean-up): a write made inside one is not the attempt's (see
    /// [`RetrySite::writes`]).
    pub cleanups: Vec<Span>,
    /// The attempt limit is a parameter or a field: what the crate passes there by default
    /// decides whether the loop goes round at all ([`crate::analysis::crate_values`]).
    pub limit_from: Option<LimitFrom>,
    /// With the attempt limit of [`RetrySite::limit_from`] at `n`, the longest wait of its
    /// growing waits without a cap, in seconds, at index `n` (empty: not worked out).
    pub longest_by_limit: Vec<f64>,
    /// The site's one wait is a constant read from a parameter or a field: what the crate
    /// passes there by default says whether it waits at all ([`crate::analysis::crate_values`]).
    pub delay_from: Option<ValueSource>,
    /// Every failure of this remote request (an HTTP or RPC call, a database statement, a
    /// connection to a service) goes round again, and nothing tests which error it was: a
    /// rejected login or a bad request is retried like a timeout.
    pub unclassified: Option<Unclassified>,
    /// Defaults elsewhere in the site's file its facts come from: the value a field holds by
    /// default (the strategy a runner is given from that field), and the field's name.
    pub origins: Vec<(Span, String)>,
    /// Waits made between attempts and never awaited (`tokio::time::sleep(d);`): they wait
    /// nothing.
    pub unawaited: Vec<Span>,
}

/// A definition a site's facts were read from (the model keeps one when following it answered
/// a question about a fact).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The function's or constant's name.
    pub name: String,
    pub place: Place,
    /// The facts it decided.
    pub facts: Facts,
}

/// Where a definition is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// In the site's file: where it is named.
    Here(Span),
    /// In another file of the crate: its path (as the scan names it), and the 1-based line and
    /// column (in characters) of its name.
    There {
        path: String,
        line: usize,
        column: usize,
    },
}

/// A remote request whose every error the site retries without looking at it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unclassified {
    /// The operation's name (`query_async`, `connect_spu`).
    pub op: String,
    /// The call that makes the request.
    pub span: Span,
}

/// Where a loop's attempt limit is read from, and what a limit of zero means for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitFrom {
    pub source: ValueSource,
    pub zero: ZeroMeans,
}

/// A value the crate passes in: a function's parameter, a field (by name, of any type), or a
/// constant it names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueSource {
    /// Parameter `index` of `function` (counted without the receiver), a method of `owner`
    /// when it has one; `arity` parameters besides the receiver, if `receiver`.
    Param {
        function: String,
        owner: Option<String>,
        index: usize,
        receiver: bool,
        arity: usize,
    },
    /// A field of this name.
    Field(String),
    /// A constant of this name (`const MAX_RETRIES: u32 = 3;`), in the crate's items or impls.
    Const(String),
}

/// What the loop does when its limit is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroMeans {
    /// It gives up at the first failure (`if tries >= limit { return Err(..) }`).
    NoRetry,
    /// It tries once more at most (`if tries > limit`).
    OneRetry,
}

/// How a way round after a failure skips the waits the site has elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpaced {
    /// A `continue` (or recursive call) that no path to it waits before.
    Skips(Span),
    /// The attempts were found used up by this test, and the loop goes round anyway, at once.
    Spent(Span),
}

impl RetrySite {
    /// A policy site (a retry crate's policy, a policy value, a backoff function): only its bound
    /// and its waits are facts; it reads no status, makes no key and sends nothing itself.
    /// `blind`: it goes round again on any failure (a policy with no wait is then RA011).
    #[must_use]
    pub(crate) fn policy(
        head: Span,
        bound: Bound,
        delays: Vec<Delay>,
        function: String,
        advice: Option<std::sync::Arc<PolicyAdvice>>,
        blind: bool,
    ) -> Self {
        RetrySite {
            kind: SiteKind::Policy,
            head,
            bound,
            delays,
            statuses: Vec::new(),
            keys: Vec::new(),
            retry_path: None,
            in_async: false,
            reads_retry_after: true,
            writes: Vec::new(),
            sends_key: true,
            calls: Vec::new(),
            function,
            policy: advice,
            blind,
            unclassified: None,
            resend_safe: true,
            evidence: Vec::new(),
            supervisor: false,
            unpaced: None,
            paced_inside: false,
            second_try_only: false,
            cleanups: Vec::new(),
            limit_from: None,
            longest_by_limit: Vec::new(),
            delay_from: None,
            origins: Vec::new(),
            unawaited: Vec::new(),
        }
    }
}

impl Delay {
    /// For a policy whose callers choose the number of attempts: a growth without a cap has no
    /// end.
    pub(crate) fn uncapped_for_callers(mut self) -> Self {
        if self.kind == DelayKind::Growing && !self.capped {
            self.longest_secs = Some(f64::INFINITY);
        }
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// A `loop`, `while` or `for`.
    Loop,
    /// A function calling itself from its error path.
    Recursion,
    /// Code run once per attempt by someone else's loop: a closure passed to a retry helper, or
    /// the body of a `#[retryable]` function. Only its per-attempt facts (keys) are recorded.
    Helper,
    /// A policy built with a retry crate (backon, backoff, tokio-retry, ...): its bound and delay.
    Policy,
}

/// How the site stops retrying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Nothing stops it but success.
    Unbounded,
    /// An attempt counter, a finite range or `.take(n)`, a deadline or a finite schedule.
    Bounded(BoundKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundKind {
    Counter,
    Range,
    Take,
    Deadline,
    Schedule,
    /// A backoff function's callers decide how many attempts there are.
    Caller,
    /// A retry policy object decides each way round (`match session.decide_should_retry(..)
    /// { RetryDecision::RetrySameTarget(_) => continue, .. }`): the limit is the policy's.
    Policy,
    /// An exit the analysis does not read: after the failure, a `?` on a call that decides
    /// whether to go round (`self.on_read_error(err, &mut retries).await?`). Unknown is not "no
    /// limit".
    Unread,
}

/// One wait on the retry path.
#[derive(Clone, Debug)]
pub struct Delay {
    /// The sleep call.
    pub span: Span,
    pub kind: DelayKind,
    /// Randomness flows into the duration.
    pub jitter: bool,
    /// A `min`/`clamp` bounds the duration.
    pub capped: bool,
    /// For a server-provided wait: what is waited when the server gives no hint
    /// (`retry_after.unwrap_or(Duration::from_secs(1))`), and whether it is random.
    pub fallback: Option<(DelayKind, bool)>,
    /// `std::thread::sleep` (or an alias): blocks the thread.
    pub blocking: bool,
    /// The longest single wait the bound allows, in seconds, when it can be worked out
    /// (`f64::INFINITY` when the growth has no cap and the site no bound).
    pub longest_secs: Option<f64>,
    /// A constant wait given the very value that caps a growing wait of the same loop
    /// (`sleep(from_secs(MAX))` beside `backoff = min(backoff * 2, MAX)`): the backoff's
    /// ceiling, reached at once by some failure, not a wait that never grows.
    pub ceiling: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayKind {
    /// The same duration every attempt.
    Constant,
    /// Grows with the attempt (multiplied, shifted, `pow`, computed from the counter).
    Growing,
    /// Taken from the server's answer (`Retry-After`).
    Server,
    /// Cannot be told from the file.
    Unknown,
}

/// A set of HTTP statuses 100..=599 that leads to another attempt, and the condition admitting it.
#[derive(Clone, Debug)]
pub struct StatusRetry {
    /// The condition (or `else`, or `Err(_)` arm) that admits these statuses.
    pub span: Span,
    pub statuses: StatusSet,
    /// How the condition reads, for the message (e.g. "`!status.is_success()`").
    pub reason: String,
    /// The condition names 429 or 503 itself (`StatusCode::TOO_MANY_REQUESTS`, `429 | 503`):
    /// the code means to handle throttling.
    pub names_throttling: bool,
}

/// A bit set over the statuses 100..=599.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusSet([u64; 8]);

impl StatusSet {
    pub const MIN: u16 = 100;
    pub const MAX: u16 = 599;

    #[must_use]
    pub fn empty() -> Self {
        StatusSet([0; 8])
    }

    #[must_use]
    pub fn all() -> Self {
        Self::range(Self::MIN, Self::MAX)
    }

    /// `lo..=hi`, clipped to 100..=599.
    #[must_use]
    pub fn range(lo: u16, hi: u16) -> Self {
        let mut s = Self::empty();
        for c in lo.max(Self::MIN)..=hi.min(Self::MAX) {
            s.insert(c);
        }
        s
    }

    #[must_use]
    pub fn single(code: u16) -> Self {
        let mut s = Self::empty();
        s.insert(code);
        s
    }

    pub fn insert(&mut self, code: u16) {
        if (Self::MIN..=Self::MAX).contains(&code) {
            let i = usize::from(code - Self::MIN);
            self.0[i / 64] |= 1 << (i % 64);
        }
    }

    #[must_use]
    pub fn contains(&self, code: u16) -> bool {
        let _guard = crate::analysis::limits::enter();
        if !(Self::MIN..=Self::MAX).contains(&code) {
            return false;
        }
        let i = usize::from(code - Self::MIN);
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    #[must_use]
    pub fn union(self, other: Self) -> Self {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }

    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= b;
        }
        out
    }

    #[must_use]
    pub fn complement(self) -> Self {
        let mut out = Self::empty();
        for c in Self::MIN..=Self::MAX {
            if !self.contains(c) {
                out.insert(c);
            }
        }
        out
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (Self::MIN..=Self::MAX).filter(|c| self.contains(*c))
    }

    /// The permanent client errors in the set: 4xx other than 408 and 429.
    #[must_use]
    pub fn permanent_client_errors(self) -> Self {
        let client = self.intersect(Self::range(400, 499));
        let mut out = Self::empty();
        for c in client.iter() {
            if c != 408 && c != 429 {
                out.insert(c);
            }
        }
        out
    }

    /// Compact text: `400..=407, 409..=428, 430..=499`.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let codes: Vec<u16> = self.iter().collect();
        let mut i = 0;
        while i < codes.len() {
            let start = codes[i];
            let mut end = start;
            while i + 1 < codes.len() && codes[i + 1] == end + 1 {
                i += 1;
                end = codes[i];
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}..={end}")
            });
            i += 1;
        }
        parts.join(", ")
    }
}

impl std::fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{{}}}", self.describe())
    }
}

/// A key (idempotency/request/dedup) created inside the retry loop.
#[derive(Clone, Debug)]
pub struct PerAttemptKey {
    /// The constructor call (`Uuid::new_v4()`), or the call of a local fn that makes one.
    pub span: Span,
    /// `Uuid::new_v4()`, `Utc::now()`, ...
    pub constructor: String,
    /// Where the key goes (`Idempotency-Key` header, field `request_id`, ...).
    pub used_as: String,
    /// The constructor inside a local helper, when the key is made one call away.
    pub via: Option<Span>,
    /// How to move the key's creation above the loop, when that is mechanical.
    pub hoist: Option<crate::source::Fix>,
}

/// A call made on each attempt of a retry site.
#[derive(Clone, Debug)]
pub struct SiteCall {
    pub callee: String,
    /// How the call names it (which functions of that name it may reach).
    pub via: Via,
    /// The call.
    pub call: Span,
    /// The site's head (for the "retry loop here" label).
    pub head: Span,
    /// The function the site is in.
    pub function: String,
}
