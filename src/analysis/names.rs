//! Vocabulary: which paths sleep, which produce randomness, which make keys, which name statuses.
//! Everything here looks at names only; [`super::scope`] resolves `use` aliases first.

use syn::{Expr, ExprPath, Path};

use super::known::{self, List};

/// A syntax node written out as text (tokens separated by spaces, as `quote` prints them), for
/// the analyses that read code by its words. Writing it costs its length, which is spent from
/// the file's work budget (see [`crate::analysis::limits::spend`]): text made again for every node of a
/// deep tree grows with the square of the file.
pub fn text(node: &impl quote::ToTokens) -> String {
    let text = node.to_token_stream().to_string();
    crate::analysis::limits::spend(text.len() as u64);
    text
}

/// The segments of a path as strings (`tokio::time::sleep` → `["tokio", "time", "sleep"]`).
pub fn segments(path: &Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// The last segment of a path, if any.
pub fn last(path: &Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// The path of a call's function, when it is a plain path.
pub fn callee_path(func: &Expr) -> Option<&Path> {
    let _guard = crate::analysis::limits::enter();
    match func {
        Expr::Path(ExprPath { path, .. }) => Some(path),
        Expr::Paren(p) => callee_path(&p.expr),
        Expr::Group(g) => callee_path(&g.expr),
        _ => None,
    }
}

/// Functions that wait for a duration given as their argument (by resolved path, last segments):
/// `sleep-fns` of the models.
pub fn is_sleep_path(full: &[String]) -> bool {
    known::builtin().path(List::SleepFns, full).is_some()
}

/// Methods named like a sleep (`runtime.sleep(d)`): `sleep-methods` of the models.
pub fn is_sleep_method(name: &str) -> bool {
    known::builtin().name(List::SleepMethods, name)
}

/// Functions of other files named for waiting (`sleep_for(secs)`, `exponential_backoff(..)`,
/// `wait_before_retry(..)`): taken as a wait of unknown length rather than no wait.
pub fn is_wait_like_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    // A name beginning with `wait` is a retry's wait only with a qualifier (`wait-qualifiers`):
    // a bare `wait` (a condvar, a child process, a parked thread) is not a retry's pause.
    let waits = n.starts_with("wait") && v.part_of(List::WaitQualifiers, &n);
    (v.part_of(List::WaitWords, &n) || waits)
        && !v.part_of(List::NotWaitWords, &n)
        && !v.prefix_of(List::NotWaitPrefixes, &n)
}

/// Paths and methods whose value is random.
pub fn is_random_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    v.part_of(List::RandomWords, &n)
        || v.suffix_of(List::RandomNameSuffixes, &n)
        || v.prefix_of(List::RandomNamePrefixes, &n)
        || v.name_any_case(List::RandomSources, name)
}

/// The receivers/roots of random numbers: a path segment naming a crate of randomness (rand,
/// fastrand, getrandom, oorandom, `rand_chacha`, turborand, ...: all named for it) is random. A
/// team's other crates are `random-crates` in `[extend]`.
pub fn is_random_root(seg: &str) -> bool {
    known::builtin().part_of_any_case(List::RandomRootWords, seg)
}

/// Names under which code usually holds a delay learnt from the server.
pub fn is_server_delay_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    known::builtin().part_of(List::ServerDelayWords, &n)
}

/// Names that say a variable counts attempts, or limits them.
pub fn is_counter_name(name: &str) -> bool {
    known::builtin().part_of(List::CounterWords, &name.to_ascii_lowercase())
}

/// Names that say a value is about time: a deadline check, an elapsed time.
pub fn is_time_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    v.part_of(List::TimeWords, &n) || v.word(List::TimeNames, &n)
}

/// Words that make a loop read as a retry even without a sleep or a counter.
pub fn is_retry_word(name: &str) -> bool {
    known::builtin().part_of(List::RetryWords, &name.to_ascii_lowercase())
}

/// Predicates that say a failure is worth another attempt: `should_retry(..)`,
/// `err.is_retryable()`, `is_transient(status)`.
pub fn is_retry_predicate(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    v.prefix_of(List::RetryPredicatePrefixes, &n)
        || v.part_of(List::RetryPredicateWords, &n)
        || v.word(List::RetryPredicates, &n)
}

/// A function that restores a lost connection (`reconnect`, `try_reconnect`,
/// `reconnect_with_backoff`): it tries for as long as the connection is wanted, by design.
pub fn is_reconnect_fn(name: &str) -> bool {
    let v = known::builtin();
    name.to_ascii_lowercase()
        .split('_')
        .any(|w| v.word(List::ReconnectWords, w))
}

/// An operation that establishes a connection (`connect`, `try_connect_tls`): `connect-words`.
pub fn is_connect_operation(name: &str) -> bool {
    known::builtin().part_of(List::ConnectWords, &name.to_ascii_lowercase())
}

/// An operation that asks whether something is up (`ping`, `health_check`, `wait_ready`):
/// `probe-words`.
pub fn is_probe_operation(name: &str) -> bool {
    known::builtin().part_of(List::ProbeWords, &name.to_ascii_lowercase())
}

/// A method whose value is a retry policy's decision (`decide_should_retry`, `retry_decision`):
/// a part of its name is one of the vocabulary's `decision-words`.
pub fn is_decision_method(name: &str) -> bool {
    known::builtin().part_of(List::DecisionWords, &name.to_ascii_lowercase())
}

/// An operation that runs a whole session until it ends (a connection's lifetime, a
/// reconciliation, a watch, a worker's main loop), which a supervisor starts again when it
/// ends: `run`, `serve`, `reconcile_loop`, `watch_nodes`. Not a single request, receive or poll.
pub fn is_session_operation(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    let words: Vec<&str> = n.split('_').filter(|w| !w.is_empty()).collect();
    let session =
        |w: &&str| v.word(List::SessionWords, w) || v.prefix_of(List::SessionWordStems, w);
    let single = |w: &&str| v.word(List::SingleExchangeWords, w);
    words.iter().any(session) && !words.iter().any(single)
}

/// A call that receives the next thing a peer sends (`stream.next().await`, `rx.recv()`,
/// `decode(&mut reader)?`, `listener.accept()`): a loop over it serves a session. `next` counts
/// only awaited (a stream's), not an iterator's.
pub fn is_receive_operation(name: &str, awaited: bool) -> bool {
    match name {
        // `StreamExt::next`, `TryStreamExt::try_next` (futures): a stream's receive when
        // awaited, an iterator's step when not. API of futures, not vocabulary.
        "next" | "try_next" => awaited,
        _ => known::builtin().word(List::ReceiveOperations, name),
    }
}

/// What an error variant's name says was used up, for a budget's verdict
/// (`Stop::AttemptsExhausted`, `BudgetError::DeadlineExceeded`): the attempts (a counter) or
/// the time (a deadline). `None`: it names something else.
pub fn exhaustion_kind(text: &str) -> Option<super::BoundKind> {
    let t = text.to_ascii_lowercase().replace('_', "");
    let v = known::builtin();
    if !v.part_of(List::UsedUpWords, &t) {
        return None;
    }
    if v.part_of(List::TimeUpWords, &t) {
        Some(super::BoundKind::Deadline)
    } else {
        Some(super::BoundKind::Counter)
    }
}

/// A method that hands out the next of a set of alternatives (an endpoint, a host, a slot):
/// `next`, `pick_next`, `next_endpoint`, `pop_front`.
pub fn is_next_alternative(name: &str) -> bool {
    let v = known::builtin();
    v.word(List::AlternativePickers, name) || v.prefix_of(List::AlternativePickerPrefixes, name)
}

/// A variable holding a classifier's verdict that the attempt failed and is worth another:
/// `should_retry`, `retryable`, `need_retry`.
pub fn is_retry_verdict_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    is_retry_predicate(&n) || known::builtin().word(List::RetryVerdictNames, &n)
}

/// Errors that mean "not ready yet, ask again" rather than "failed": loops over them are
/// readiness polls or EINTR restarts, not retries.
pub fn is_readiness_error(name: &str) -> bool {
    // A local resource not there yet: `ConnectionPoolEmpty`, `QueueFull`, `err.is_pool_empty()`.
    // The shape of a name (a resource's emptiness or fullness), not a list of words.
    let local = (name.len() > 5 && (name.ends_with("Empty") || name.ends_with("Full")))
        // Not a collection's own `is_empty()`: a named resource's (`is_pool_empty`).
        || name.strip_prefix("is_").is_some_and(|rest| {
            ["_empty", "_full"]
                .iter()
                .any(|s| rest.strip_suffix(s).is_some_and(|what| !what.is_empty()))
        })
        || name == "is_would_block";
    local || known::builtin().word(List::ReadinessErrors, name) || names_a_pending_state(name)
}

/// Whether an error's name (a variant's, in `CamelCase`) begins or ends with words that say the
/// thing asked for is not there or not done yet (`BlockNotFound`, `SnapshotPending`,
/// `UnprocessedBlock`): an answer about a state, which a loop asks again for, not a failure
/// (`readiness-error-parts` of the vocabulary).
fn names_a_pending_state(name: &str) -> bool {
    let camel = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.contains(|c: char| c.is_ascii_lowercase())
        && !name.contains('_');
    let v = known::builtin();
    camel
        && (v.suffix_of(List::ReadinessErrorParts, name)
            || v.prefix_of(List::ReadinessErrorParts, name))
}

/// Operations whose failure means contention or "not ready", looped over without being retries.
pub fn is_spin_operation(name: &str) -> bool {
    known::builtin().word(List::SpinOperations, name)
}

/// Operations that talk to another process: their failures are worth retrying.
pub fn is_io_operation(name: &str) -> bool {
    known::builtin().word(List::IoOperations, name)
}

/// The display name of a key constructor (`key-constructors` of the models), when `full` (a
/// resolved call path) is one.
pub fn key_constructor(full: &[String]) -> Option<String> {
    known::builtin()
        .path(List::KeyConstructors, full)
        .map(|entry| format!("{entry}()"))
}

/// Whether `full` (a resolved call path) is a retry crate's call that runs an operation again
/// after any error (`every-error-runners` of the models).
pub fn is_every_error_runner(full: &[String]) -> bool {
    known::builtin()
        .path(List::EveryErrorRunners, full)
        .is_some()
}

/// Whether some `every-error-runners` entry of the models ends with the segment `last`.
pub fn every_error_runner_ends_with(last: &str) -> bool {
    known::builtin()
        .entries(List::EveryErrorRunners)
        .iter()
        .any(|e| e.text.rsplit("::").next() == Some(last))
}

/// Macros that make a fresh unique id (`key-macros`; `uuid!("...")` is a literal, not one).
pub fn key_constructor_macro(name: &str) -> Option<String> {
    known::builtin()
        .name(List::KeyMacros, name)
        .then(|| format!("{name}!()"))
}

/// Methods on a random generator that produce a random string or number usable as a key.
pub fn is_random_key_method(name: &str) -> bool {
    known::builtin().name(List::RandomKeyMethods, name)
}

/// Whether a name says it holds an idempotency key beyond doubt (variables, headers). A
/// `request_id` alone is often a per-attempt trace id (`x-request-id`), so it counts only as a
/// field or builder argument of a request ([`is_key_name`]).
pub fn is_strong_key_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    known::builtin().part_of(List::StrongKeyWords, &n)
}

/// Whether a name (field, builder method) says it holds an idempotency or request key.
pub fn is_key_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    let n = n.trim_start_matches("x_");
    let v = known::builtin();
    v.part_of(List::KeyWords, n) || v.word(List::KeyNames, n)
}

/// The codes of the `http::StatusCode` associated constants, and of the same reason phrases
/// written as enum variants (`StatusCode::NotFound`, `StatusCode::TooManyRequests`: http-types,
/// typespec and others).
pub fn status_const(name: &str) -> Option<u16> {
    status_screaming(name).or_else(|| {
        let starts_upper = name.starts_with(|c: char| c.is_ascii_uppercase());
        let has_lower = name.bytes().any(|b| b.is_ascii_lowercase());
        if !starts_upper || !has_lower || name.contains('_') {
            return None;
        }
        let mut screaming = String::with_capacity(name.len() + 4);
        for (i, c) in name.char_indices() {
            if i > 0 && c.is_ascii_uppercase() {
                screaming.push('_');
            }
            screaming.push(c.to_ascii_uppercase());
        }
        status_screaming(&screaming)
    })
}

/// HTTP's status codes under their standard reason phrases (RFC 9110, as `http::StatusCode`
/// names them): a standard, not vocabulary; no team adds to it.
fn status_screaming(name: &str) -> Option<u16> {
    Some(match name {
        "CONTINUE" => 100,
        "SWITCHING_PROTOCOLS" => 101,
        "PROCESSING" => 102,
        "OK" => 200,
        "CREATED" => 201,
        "ACCEPTED" => 202,
        "NON_AUTHORITATIVE_INFORMATION" => 203,
        "NO_CONTENT" => 204,
        "RESET_CONTENT" => 205,
        "PARTIAL_CONTENT" => 206,
        "MULTI_STATUS" => 207,
        "ALREADY_REPORTED" => 208,
        "IM_USED" => 226,
        "MULTIPLE_CHOICES" => 300,
        "MOVED_PERMANENTLY" => 301,
        "FOUND" => 302,
        "SEE_OTHER" => 303,
        "NOT_MODIFIED" => 304,
        "USE_PROXY" => 305,
        "TEMPORARY_REDIRECT" => 307,
        "PERMANENT_REDIRECT" => 308,
        "BAD_REQUEST" => 400,
        "UNAUTHORIZED" => 401,
        "PAYMENT_REQUIRED" => 402,
        "FORBIDDEN" => 403,
        "NOT_FOUND" => 404,
        "METHOD_NOT_ALLOWED" => 405,
        "NOT_ACCEPTABLE" => 406,
        "PROXY_AUTHENTICATION_REQUIRED" => 407,
        "REQUEST_TIMEOUT" => 408,
        "CONFLICT" => 409,
        "GONE" => 410,
        "LENGTH_REQUIRED" => 411,
        "PRECONDITION_FAILED" => 412,
        "PAYLOAD_TOO_LARGE" => 413,
        "URI_TOO_LONG" => 414,
        "UNSUPPORTED_MEDIA_TYPE" => 415,
        "RANGE_NOT_SATISFIABLE" => 416,
        "EXPECTATION_FAILED" => 417,
        "IM_A_TEAPOT" => 418,
        "MISDIRECTED_REQUEST" => 421,
        "UNPROCESSABLE_ENTITY" => 422,
        "LOCKED" => 423,
        "FAILED_DEPENDENCY" => 424,
        "TOO_EARLY" => 425,
        "UPGRADE_REQUIRED" => 426,
        "PRECONDITION_REQUIRED" => 428,
        "TOO_MANY_REQUESTS" => 429,
        "REQUEST_HEADER_FIELDS_TOO_LARGE" => 431,
        "UNAVAILABLE_FOR_LEGAL_REASONS" => 451,
        "INTERNAL_SERVER_ERROR" => 500,
        "NOT_IMPLEMENTED" => 501,
        "BAD_GATEWAY" => 502,
        "SERVICE_UNAVAILABLE" => 503,
        "GATEWAY_TIMEOUT" => 504,
        "HTTP_VERSION_NOT_SUPPORTED" => 505,
        "VARIANT_ALSO_NEGOTIATES" => 506,
        "INSUFFICIENT_STORAGE" => 507,
        "LOOP_DETECTED" => 508,
        "NOT_EXTENDED" => 510,
        "NETWORK_AUTHENTICATION_REQUIRED" => 511,
        _ => return None,
    })
}

/// Whether an expression's text reads like an HTTP status (`resp.status()`, `status_code`,
/// `code.as_u16()`).
pub fn is_status_text(text: &str) -> bool {
    let v = known::builtin();
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| {
            let w = w.to_ascii_lowercase();
            v.word(List::StatusWords, &w)
                // The shape of a status's name (`status_line`, `grpc_status`), not a word list;
                // `status_text` and `error_for_status` (reqwest's) read no status.
                || (w.starts_with("status_") && !w.starts_with("status_text"))
                || (w.ends_with("_status") && !w.starts_with("error_for"))
        })
}

/// The name of the outermost call of an expression: `delays.next()` → `next`.
pub fn last_call(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::MethodCall(m) => Some(m.method.to_string()),
        Expr::Call(c) => callee_path(&c.func).and_then(last),
        Expr::Await(a) => last_call(&a.base),
        Expr::Try(t) => last_call(&t.expr),
        Expr::Paren(p) => last_call(&p.expr),
        _ => None,
    }
}

/// A backoff strategy type of a retry crate, by the resolved path of its constructor
/// (`fluvio_future::retry::ExponentialBackoffBuilder::default`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrategyType {
    /// Its waits grow (exponential, Fibonacci, decorrelated).
    pub growing: bool,
    /// The crate randomises its waits unless told not to (`backoff`'s randomization factor).
    pub jittered: bool,
    /// The crate caps its growing waits unless told not to (`backoff`'s 60 s `max_interval`).
    pub capped: bool,
}

/// The strategy type a resolved constructor path builds, if it names one of an external crate:
/// the path must be resolved to a crate (a type of this crate, or one whose origin is not known,
/// stays unknown), the type named for a strategy (`ExponentialBackoff`, `FixedInterval`,
/// `FibonacciBuilder`).
#[must_use]
pub fn strategy_type(full: &[String]) -> Option<StrategyType> {
    let n = full.len();
    // Rust's own path roots: a type of this crate.
    if n < 3 || matches!(full[0].as_str(), "crate" | "self" | "super" | "Self") {
        return None;
    }
    let ty = full[n - 2].to_ascii_lowercase();
    let v = known::builtin();
    if !v.part_of(List::StrategyTypeWords, &ty) {
        return None;
    }
    let decorrelated = v.part_of(List::JitteredStrategyWords, &ty);
    let growing = decorrelated || v.part_of(List::GrowingStrategyWords, &ty);
    let constant = v.part_of(List::ConstantStrategyWords, &ty);
    if !growing && !constant {
        return None;
    }
    Some(StrategyType {
        growing,
        jittered: decorrelated
            || (growing && known::builtin().name(List::JitteredCrates, &full[0])),
        capped: growing && known::builtin().name(List::CappedCrates, &full[0]),
    })
}

/// Asks a backoff strategy object for its next wait (`backoff.wait()`, `.next_backoff()`):
/// `next-wait-methods` of the models.
#[must_use]
pub fn is_next_wait_method(name: &str) -> bool {
    known::builtin().name(List::NextWaitMethods, name)
}

/// Paths of local operations: plain sockets, files, processes. They fail on the machine, not
/// on a service's verdict. Types of std (and their modules), not vocabulary: no team adds to
/// them (its own local operations are `local-operations`).
const REMOTE_LOCAL_PATHS: &[&str] = &[
    "TcpStream::",
    "TcpListener::",
    "TcpSocket::",
    "UdpSocket::",
    "UnixStream::",
    "UnixListener::",
    "UnixDatagram::",
    "fs::",
    "File::",
    "OpenOptions",
    "Command::",
    "Path::",
    "PathBuf::",
];

/// Whether a tested call is a request to another service (an HTTP or RPC call, a database
/// statement, a connection to a broker or a server that can refuse it): `Some(true)`; a local
/// operation (a file, a lock, a channel, a plain socket's bind, accept or connect):
/// `Some(false)`; nothing to tell by: `None`. `op` is the operation's name, `call` the text of
/// the call (receiver and arguments). The words are `local-operations`,
/// `remote-operation-words`, `remote-operations` and `client-words` of the vocabulary.
pub fn remote_request(op: &str, call: &str) -> Option<bool> {
    let squeezed: String = call.chars().filter(|c| !c.is_whitespace()).collect();
    if REMOTE_LOCAL_PATHS.iter().any(|p| squeezed.contains(p)) {
        return Some(false);
    }
    let op_l = op.to_ascii_lowercase();
    let v = known::builtin();
    if v.word(List::LocalOperations, &op_l) {
        return Some(false);
    }
    if op_l
        .split('_')
        .any(|w| v.word(List::RemoteOperationWords, w))
        || v.word(List::RemoteOperations, &op_l)
    {
        return Some(true);
    }
    names_a_client(call).then_some(true)
}

/// [`remote_request`] for a function of the workspace whose body was read and makes no request
/// it can tell: the function's own name is the workspace's word for its code, no evidence of
/// what it does; what the call's receiver and arguments name still is (`meta_client.get_tasks()`
/// asks a client of the workspace), and a local operation stays local.
#[must_use]
pub fn remote_request_of_own(op: &str, call: &str) -> Option<bool> {
    let squeezed: String = call.chars().filter(|c| !c.is_whitespace()).collect();
    if REMOTE_LOCAL_PATHS.iter().any(|p| squeezed.contains(p))
        || known::builtin().word(List::LocalOperations, &op.to_ascii_lowercase())
    {
        return Some(false);
    }
    // The callee's own name where the call names it (`op(` or `op::<`), not a receiver that
    // happens to contain it (`connect_pool.connect()`).
    let at = [format!("{op}("), format!("{op}::<")]
        .iter()
        .filter_map(|p| call.rfind(p.as_str()))
        .min();
    let rest = match at {
        Some(i) => format!("{} {}", &call[..i], &call[i + op.len()..]),
        None => call.to_owned(),
    };
    names_a_client(&rest).then_some(true)
}

/// Whether a call's text names a client of a service (`client-words`, split at non-letters and
/// at camel case).
fn names_a_client(call: &str) -> bool {
    let v = known::builtin();
    call.split(|c: char| !c.is_alphanumeric())
        .flat_map(camel_words)
        .any(|w| v.word(List::ClientWords, &w))
}

/// The lowercase words of an identifier written in camel case (`RpcRequest` → `rpc`,
/// `request`; `HTTPClient` → `httpclient`).
fn camel_words(ident: &str) -> impl Iterator<Item = String> + '_ {
    let mut starts = vec![0];
    let chars: Vec<(usize, char)> = ident.char_indices().collect();
    for w in chars.windows(2) {
        if w[0].1.is_lowercase() && w[1].1.is_uppercase() {
            starts.push(w[1].0);
        }
    }
    starts.push(ident.len());
    (0..starts.len() - 1).map(move |i| ident[starts[i]..starts[i + 1]].to_ascii_lowercase())
}

/// A comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`).
pub(crate) fn is_comparison(op: &syn::BinOp) -> bool {
    use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
    matches!(op, Eq(_) | Ne(_) | Lt(_) | Le(_) | Gt(_) | Ge(_))
}

/// A primitive integer type's name (`u64`, `i32`, `usize`, ...): all `Copy`. Rust's own.
pub(crate) fn is_integer_name(name: &str) -> bool {
    matches!(
        name,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    )
}

#[cfg(test)]
mod tests {
    use super::is_readiness_error;

    #[test]
    fn a_named_resource_not_there_yet_is_readiness_a_collection_is_not() {
        for yes in [
            "ConnectionPoolEmpty",
            "QueueFull",
            "is_pool_empty",
            "is_queue_full",
            "WouldBlock",
        ] {
            assert!(is_readiness_error(yes), "{yes}");
        }
        for no in ["is_empty", "is_full", "Empty2", "Successful", "is_timeout"] {
            assert!(!is_readiness_error(no), "{no}");
        }
    }

    #[test]
    fn remote_requests_are_told_by_their_words() {
        use super::remote_request;
        assert_eq!(
            remote_request("query_async", "cmd.query_async(&mut conn)"),
            Some(true)
        );
        assert_eq!(remote_request("get", "client.get(url)"), Some(true));
        assert_eq!(
            remote_request("send", "self.send(RpcRequest::GetBalance)"),
            Some(true)
        );
        assert_eq!(
            remote_request("connect", "TcpStream::connect(addr)"),
            Some(false)
        );
        assert_eq!(
            remote_request("write", "std::fs::write(path, body)"),
            Some(false)
        );
        assert_eq!(remote_request("bind", "listener.bind(addr)"), Some(false));
        assert_eq!(remote_request("latest", "cache.latest(key)"), None);
        // Camel case is split: `DbPool` is `db`, `pool`.
        assert_eq!(remote_request("run", "DbPool::run"), Some(true));
    }
}
