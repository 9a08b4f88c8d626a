//! What the analysis knows about code outside the workspace, as data: `models/*.toml`, embedded
//! in the binary like `rules/`. Timers and sleeps, sources of randomness, key constructors,
//! backoff strategy objects: each a list of paths or names under the same keys as a team's
//! `[extend]` table in `retry-audit.toml`, read by the same code ([`RawExtensions`]). Adding a
//! crate's timer or random source is a change of a TOML file.
//!
//! Each entry records when it decides something (a match), so that `tests/models.rs` can check
//! that every entry is exercised by a fixture, and that the fixtures' findings change without it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use serde::Deserialize;
use toml::Spanned;

use super::policy_model::PolicyModel;
use super::Extensions;

/// The model files, with the name they are shown under.
pub const MODEL_FILES: &[(&str, &str)] = &[
    (
        "models/timers.toml",
        include_str!("../../models/timers.toml"),
    ),
    (
        "models/randomness.toml",
        include_str!("../../models/randomness.toml"),
    ),
    ("models/keys.toml", include_str!("../../models/keys.toml")),
    (
        "models/macros.toml",
        include_str!("../../models/macros.toml"),
    ),
    (
        "models/runners.toml",
        include_str!("../../models/runners.toml"),
    ),
    (
        "models/strategies.toml",
        include_str!("../../models/strategies.toml"),
    ),
    (
        "models/policies.toml",
        include_str!("../../models/policies.toml"),
    ),
    (
        "models/writes.toml",
        include_str!("../../models/writes.toml"),
    ),
    (
        "models/errors.toml",
        include_str!("../../models/errors.toml"),
    ),
    (
        "models/endpoints.toml",
        include_str!("../../models/endpoints.toml"),
    ),
    (
        "models/vocabulary.toml",
        include_str!("../../models/vocabulary.toml"),
    ),
];

/// Declares the lists: the [`List`] enum (in [`List::ALL`]'s order), each list's key, and
/// [`RawExtensions`], the lists as written in a model file or an `[extend]` table.
macro_rules! lists {
    (
        paths { $( $(#[$pdoc:meta])* $pvariant:ident = $pkey:literal, $pfield:ident; )* }
        vocabulary { $( $(#[$vdoc:meta])* $vvariant:ident = $vkey:literal, $vfield:ident; )* }
    ) => {
        /// One list of a model or of `[extend]`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum List {
            $( $(#[$pdoc])* $pvariant, )*
            $( $(#[$vdoc])* $vvariant, )*
        }

        impl List {
            /// Every list, in the order of declaration (each at its own index).
            pub const ALL: [List; [$($pkey,)* $($vkey,)*].len()] =
                [$(List::$pvariant,)* $(List::$vvariant,)*];

            /// How many lists are of paths (the first ones); the rest are vocabulary.
            const PATHS: usize = [$($pkey,)*].len();

            /// Its key in a model file and in `[extend]`.
            #[must_use]
            pub fn key(self) -> &'static str {
                match self {
                    $( List::$pvariant => $pkey, )*
                    $( List::$vvariant => $vkey, )*
                }
            }
        }

        /// A model file or an `[extend]` table as written: every list optional, no other key.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawExtensions {
            $( #[serde(default, rename = $pkey)] $pfield: Vec<Spanned<String>>, )*
            $( #[serde(default, rename = $vkey)] $vfield: Vec<Spanned<String>>, )*
            /// Retry crates' policies (`[[policies]]`).
            #[serde(default)]
            policies: Vec<super::policy_model::RawPolicy>,
        }

        impl RawExtensions {
            fn raw(&self, list: List) -> &[Spanned<String>] {
                match list {
                    $( List::$pvariant => &self.$pfield, )*
                    $( List::$vvariant => &self.$vfield, )*
                }
            }
        }
    };
}

lists! {
    paths {
        /// Functions (by path) that wait for the duration given as their first argument.
        SleepFns = "sleep-fns", sleep_fns;
        /// Methods that wait for the duration given as their first argument.
        SleepMethods = "sleep-methods", sleep_methods;
        /// Waits that block the thread.
        BlockingSleeps = "blocking-sleeps", blocking_sleeps;
        /// Waits that return a future: they wait only when the future is awaited.
        FutureSleeps = "future-sleeps", future_sleeps;
        /// Functions that run the future they are given for at most a time they are given.
        Timeouts = "timeouts", timeouts;
        /// Awaited methods that resolve after a wait of the callee's choosing.
        WaitHandlers = "wait-handlers", wait_handlers;
        /// Crates whose every path is random.
        RandomCrates = "random-crates", random_crates;
        /// Functions, methods and types whose value is random (by name, any case).
        RandomSources = "random-sources", random_sources;
        /// Methods of a random generator that give a value usable as a key.
        RandomKeyMethods = "random-key-methods", random_key_methods;
        /// Functions that make a fresh unique value.
        KeyConstructors = "key-constructors", key_constructors;
        /// Macros that make a fresh unique value.
        KeyMacros = "key-macros", key_macros;
        /// Methods or fields that hold an HTTP status.
        StatusAccessors = "status-accessors", status_accessors;
        /// Crates whose growing backoff strategies are jittered by default.
        JitteredCrates = "jittered-crates", jittered_crates;
        /// Crates whose growing backoff strategies cap their waits by default.
        CappedCrates = "capped-crates", capped_crates;
        /// Methods that ask a backoff strategy object for its next wait.
        NextWaitMethods = "next-wait-methods", next_wait_methods;
        /// Functions of retry crates that run an operation again after any error it returns (no
        /// classifier given).
        EveryErrorRunners = "every-error-runners", every_error_runners;
        /// Values a retry crate's operation returns to be run again (`OperationResult::Retry`,
        /// tokio-retry2's `RetryError::to_transient`); a plain `Err(..)` is one too.
        AgainValues = "again-values", again_values;
        /// Values a retry crate's operation returns to stop with its error
        /// (`backoff::Error::permanent`): an `Err(..)` wrapping one asks for no other round.
        FinalValues = "final-values", final_values;
        /// Macros whose body is a block of statements run as async code (`stream! { .. }`).
        BlockMacros = "block-macros", block_macros;
        /// Awaited calls that resume without waiting for anything (`tokio::task::yield_now`): on a
        /// retry's path they leave no doubt that it goes round at once.
        NoWaits = "no-waits", no_waits;
        /// Crates of message brokers: a publish on a value whose type resolves to one of them sends
        /// a message again when resent.
        MessagingCrates = "messaging-crates", messaging_crates;
        /// Calls (by crate and method) whose `Err` carries every HTTP status from 400: retrying each
        /// of their errors retries client errors.
        StatusErrorCalls = "status-error-calls", status_error_calls;
        /// Calls (by crate and method) that fail on transport only, a response of any status
        /// being `Ok`: retrying each of their errors retries no client error.
        TransportErrorCalls = "transport-error-calls", transport_error_calls;
        /// Attribute macros of other crates that make a function retry its body.
        RetryAttributes = "retry-attributes", retry_attributes;
        /// Constructors of this project's own retry wrappers (`RetryLayer::new`), compliant by
        /// construction like `#[retryable]`: a function that makes one retries.
        CompliantRetries = "compliant-retries", compliant_retries;
        /// Types whose connections reach only this machine (Unix-domain sockets, named pipes): a
        /// loop that waits for one to connect waits for something local.
        LocalEndpoints = "local-endpoints", local_endpoints;
        /// Modules of in-process channels: their values and errors hand work over in memory.
        InProcessChannels = "in-process-channels", in_process_channels;
        /// Modules of embedded stores (a database in this process, on this machine's files):
        /// their operations ask no service.
        LocalStores = "local-stores", local_stores;
        /// Modules of terminal prompts and dialogs: a loop calling one asks a person.
        PromptCrates = "prompt-crates", prompt_crates;
        /// Types of a child process: a function returning one started a process on this machine.
        ProcessHandles = "process-handles", process_handles;
        /// Calls (by crate and method) that make a request that changes nothing (HTTP `GET`,
        /// `HEAD`): a loop that drops all but its status asked whether the server answers.
        SafeRequestCalls = "safe-request-calls", safe_request_calls;
        /// Calls (by crate and method) that wait a timer's fixed period (tokio's
        /// `Interval::tick`), on a value the crate made: a `tick()` of anything else waits what
        /// its own code says.
        PeriodTicks = "period-ticks", period_ticks;
    }
    // Vocabulary (`models/vocabulary.toml`): words of project code's names, each list read by
    // one predicate of `names.rs` (which says how it is matched: a whole name, a word of it, a
    // part of it).
    vocabulary {
        /// Words of an operation's name that make it a request to a service.
        RemoteOperationWords = "remote-operation-words", remote_operation_words;
        /// Whole operation names that are requests to a service.
        RemoteOperations = "remote-operations", remote_operations;
        /// Operation names that act on the machine (a file, a lock, a channel), not a service.
        LocalOperations = "local-operations", local_operations;
        /// Words of a receiver or argument that name a client of a service.
        ClientWords = "client-words", client_words;
        /// Words of an operation's name that make it a whole session.
        SessionWords = "session-words", session_words;
        /// Beginnings of a word of an operation's name that make it a whole session.
        SessionWordStems = "session-word-stems", session_word_stems;
        /// Words of an operation's name that make it a single exchange, not a session.
        SingleExchangeWords = "single-exchange-words", single_exchange_words;
        /// Calls that receive the next thing a peer sends.
        ReceiveOperations = "receive-operations", receive_operations;
        /// Error names that mean "not ready yet, ask again".
        ReadinessErrors = "readiness-errors", readiness_errors;
        /// Words that begin or end an error's name when it says "not there or not done yet".
        ReadinessErrorParts = "readiness-error-parts", readiness_error_parts;
        /// Operations looped over for contention or readiness, not retried.
        SpinOperations = "spin-operations", spin_operations;
        /// Operations that talk to another process.
        IoOperations = "io-operations", io_operations;
        /// Parts of a variable's name that make it count or limit attempts.
        CounterWords = "counter-words", counter_words;
        /// Parts of a name that make it about time (a deadline, an elapsed time).
        TimeWords = "time-words", time_words;
        /// Whole names that are about time.
        TimeNames = "time-names", time_names;
        /// Parts of a name that make a loop read as a retry.
        RetryWords = "retry-words", retry_words;
        /// Parts of a predicate's name that say a failure is worth another attempt.
        RetryPredicateWords = "retry-predicate-words", retry_predicate_words;
        /// Beginnings of a predicate's name that say a failure is worth another attempt.
        RetryPredicatePrefixes = "retry-predicate-prefixes", retry_predicate_prefixes;
        /// Whole predicate names that say a failure is worth another attempt.
        RetryPredicates = "retry-predicates", retry_predicates;
        /// Variable names that hold a verdict that the attempt is worth another.
        RetryVerdictNames = "retry-verdict-names", retry_verdict_names;
        /// Words of a function's name that make it restore a lost connection.
        ReconnectWords = "reconnect-words", reconnect_words;
        /// Parts of an operation's name that make it establish a connection.
        ConnectWords = "connect-words", connect_words;
        /// Parts of an operation's name that make it probe whether something is up.
        ProbeWords = "probe-words", probe_words;
        /// Parts of an error variant's name that say a budget was used up.
        UsedUpWords = "used-up-words", used_up_words;
        /// Parts of a used-up error variant's name that say the budget was time.
        TimeUpWords = "time-up-words", time_up_words;
        /// Methods that hand out the next of a set of alternatives.
        AlternativePickers = "alternative-pickers", alternative_pickers;
        /// Beginnings of a method's name that hand out the next of a set of alternatives.
        AlternativePickerPrefixes = "alternative-picker-prefixes", alternative_picker_prefixes;
        /// Parts of a function's name that make it a wait of unknown length.
        WaitWords = "wait-words", wait_words;
        /// Parts of a name beginning with `wait` that make it a retry's wait.
        WaitQualifiers = "wait-qualifiers", wait_qualifiers;
        /// Parts of a function's name that make it compute a wait rather than wait.
        NotWaitWords = "not-wait-words", not_wait_words;
        /// Beginnings of a function's name that make it compute a wait rather than wait.
        NotWaitPrefixes = "not-wait-prefixes", not_wait_prefixes;
        /// Parts of a name that make its value random.
        RandomWords = "random-words", random_words;
        /// Beginnings of a name that make its value random.
        RandomNamePrefixes = "random-name-prefixes", random_name_prefixes;
        /// Ends of a name that make its value random.
        RandomNameSuffixes = "random-name-suffixes", random_name_suffixes;
        /// Parts of a path segment (any case) that make it a crate of randomness.
        RandomRootWords = "random-root-words", random_root_words;
        /// Parts of a name that make it hold a delay learnt from the server.
        ServerDelayWords = "server-delay-words", server_delay_words;
        /// Parts of a name that make it an idempotency key beyond doubt.
        StrongKeyWords = "strong-key-words", strong_key_words;
        /// Parts of a field's or builder method's name that make it an idempotency or request key.
        KeyWords = "key-words", key_words;
        /// Whole field or builder method names that are an idempotency key.
        KeyNames = "key-names", key_names;
        /// Words of an expression that make it read like an HTTP status.
        StatusWords = "status-words", status_words;
        /// Parts of a type's name that make it a backoff strategy.
        StrategyTypeWords = "strategy-type-words", strategy_type_words;
        /// Parts of a strategy type's name that make its waits jittered (and growing).
        JitteredStrategyWords = "jittered-strategy-words", jittered_strategy_words;
        /// Parts of a strategy type's name that make its waits grow.
        GrowingStrategyWords = "growing-strategy-words", growing_strategy_words;
        /// Parts of a strategy type's name that make its waits constant.
        ConstantStrategyWords = "constant-strategy-words", constant_strategy_words;
        /// Parts of a receiver's text that make it a queue or a log.
        QueueWords = "queue-words", queue_words;
        /// Methods that send a message whatever their receiver.
        SendingMethods = "sending-methods", sending_methods;
        /// Methods that send a message when called on a queue.
        PublishMethods = "publish-methods", publish_methods;
        /// Methods that send a message when called on a queue with something to send.
        QueueSendMethods = "queue-send-methods", queue_send_methods;
        /// Methods that run a SQL statement given as their first argument or at their chain's start.
        StatementMethods = "statement-methods", statement_methods;
        /// Functions that start a chain with a SQL statement.
        SqlQueryFns = "sql-query-fns", sql_query_fns;
        /// Parts of an error test's text that leave open whether the request was processed.
        AmbiguousErrorWords = "ambiguous-error-words", ambiguous_error_words;
        /// Parts of an error test's text that say the request was not processed.
        NotProcessedErrorWords = "not-processed-error-words", not_processed_error_words;
        /// Parts of an error test's text that say the failure is transient.
        TransientErrorWords = "transient-error-words", transient_error_words;
        /// Methods whose truth says the attempts are used up.
        ExhaustedChecks = "exhausted-checks", exhausted_checks;
        /// Methods whose truth says attempts are left.
        AttemptsLeftChecks = "attempts-left-checks", attempts_left_checks;
        /// Ends of a counter-like name that make it a time instead.
        NotCounterSuffixes = "not-counter-suffixes", not_counter_suffixes;
        /// Parts of a counter's name that make it count down.
        CountDownWords = "count-down-words", count_down_words;
        /// Macros that leave with a failure.
        FailingMacros = "failing-macros", failing_macros;
        /// Whole names of a variable that holds an error.
        ErrorNames = "error-names", error_names;
        /// Parts of a variable's name that make it hold an error.
        ErrorVariableWords = "error-variable-words", error_variable_words;
        /// Parts of a `match`'s scrutinee that make it an optional error or a reason to go again.
        OptionalErrorWords = "optional-error-words", optional_error_words;
        /// Beginnings of a word of a parameter's name that make it other than an attempt count.
        NotAttemptWordStems = "not-attempt-word-stems", not_attempt_word_stems;
        /// Whole parameter names of an attempt count.
        AttemptParamNames = "attempt-param-names", attempt_param_names;
        /// Parts of a parameter's name that make it an attempt count.
        AttemptParamWords = "attempt-param-words", attempt_param_words;
        /// Parts of a function's name that make it compute an attempt's or a thing's lifetime.
        LifetimeWords = "lifetime-words", lifetime_words;
        /// Parts of a function's name that make its number or time a wait.
        WaitFnWords = "wait-fn-words", wait_fn_words;
        /// Ends of a function's name that make its number or time a wait.
        WaitTimeSuffixes = "wait-time-suffixes", wait_time_suffixes;
        /// Words of a policy's field name that make it a wait.
        WaitFieldWords = "wait-field-words", wait_field_words;
        /// Words of a policy's field name that make it jitter.
        JitterFieldWords = "jitter-field-words", jitter_field_words;
        /// Words of a policy's field name that make it the growth.
        GrowthFieldWords = "growth-field-words", growth_field_words;
        /// Whole policy field names that are the growth.
        GrowthFieldNames = "growth-field-names", growth_field_names;
        /// Words of a policy's field name that make it a deadline.
        DeadlineFieldWords = "deadline-field-words", deadline_field_words;
        /// Words of a wait field's name that make it the cap.
        WaitCapFieldWords = "wait-cap-field-words", wait_cap_field_words;
        /// Whole policy field names that are the cap.
        CapFieldNames = "cap-field-names", cap_field_names;
        /// Words of a policy's field name that make it the attempt limit.
        AttemptLimitFieldWords = "attempt-limit-field-words", attempt_limit_field_words;
        /// Words of a policy's field name that make it a maximum (of attempts, with one below).
        MaxFieldWords = "max-field-words", max_field_words;
        /// Words of a maximum's field name that make it of attempts.
        AttemptFieldWords = "attempt-field-words", attempt_field_words;
        /// Words of a policy's field name that make it the strategy.
        StrategyFieldWords = "strategy-field-words", strategy_field_words;
        /// Whole policy field names that are the strategy.
        StrategyFieldNames = "strategy-field-names", strategy_field_names;
        /// Whole policy field names that are the first wait.
        DelayFieldNames = "delay-field-names", delay_field_names;
        /// Words of a policy's field name that make it the cap (of anything).
        CapFieldWords = "cap-field-words", cap_field_words;
        /// Words of a file that draw a random number in it.
        RandomFileWords = "random-file-words", random_file_words;
        /// Parts of a type's name that make it a retry policy.
        PolicyTypeWords = "policy-type-words", policy_type_words;
        /// Parts of a type's name that make it a retry's state or its errors, not a policy.
        NotPolicyTypeWords = "not-policy-type-words", not_policy_type_words;
        /// Parts of a variant's or type's name that make its waits grow.
        GrowingVariantWords = "growing-variant-words", growing_variant_words;
        /// Parts of a variant's or type's name that make its waits constant.
        ConstantVariantWords = "constant-variant-words", constant_variant_words;
        /// Methods that ask a clock whether time is up.
        ClockChecks = "clock-checks", clock_checks;
        /// Methods that ask a schedule for the next wait.
        ScheduleCalls = "schedule-calls", schedule_calls;
        /// Methods that ask an attempt budget whether another try is allowed.
        BudgetChecks = "budget-checks", budget_checks;
        /// Methods that set a request's header.
        HeaderMethods = "header-methods", header_methods;
        /// Parts of a receiver's text that make it a random generator.
        RngReceiverWords = "rng-receiver-words", rng_receiver_words;
        /// Whole operation names that log in again or refresh a token.
        ReauthOperations = "reauth-operations", reauth_operations;
        /// Parts of an operation's name that make it wait up to a given time.
        TimedOperationWords = "timed-operation-words", timed_operation_words;
        /// Parts of a collection's text that make it a set of statuses.
        StatusCollectionWords = "status-collection-words", status_collection_words;
        /// Parts of a method's name that make its value a retry policy's decision
        /// (`decide_should_retry`, `retry_decision`): a `match` on it classifies what goes round.
        DecisionWords = "decision-words", decision_words;
    }
}

impl List {
    fn index(self) -> usize {
        self as usize
    }

    /// Whether it is a list of the vocabulary (`models/vocabulary.toml`): words of project
    /// code's names, checked as a whole by `tests/models.rs`, rather than paths of other crates'
    /// items, checked entry by entry.
    #[must_use]
    pub fn is_vocabulary(self) -> bool {
        self.index() >= List::PATHS
    }
}

impl RawExtensions {
    /// The lists, each entry checked to be a Rust path (`crate::time::pause`, `pause`). The error
    /// is the byte range of the bad entry in its file and why.
    ///
    /// # Errors
    /// An entry that is not a Rust path, or a policy that is not valid.
    pub fn check(&self) -> Result<Extensions, (Range<usize>, String)> {
        let mut ext = Extensions::default();
        for list in List::ALL {
            let mut entries = Vec::new();
            for entry in self.raw(list) {
                if list.is_vocabulary() && !is_word(entry.get_ref()) {
                    return Err((
                        entry.span(),
                        format!(
                            "`{}` is not a word such as `retry` or `request_id` (letters, digits and `_`)",
                            entry.get_ref()
                        ),
                    ));
                }
                if !list.is_vocabulary() && !is_rust_path(entry.get_ref()) {
                    return Err((
                        entry.span(),
                        format!(
                            "`{}` is not a Rust path such as `crate::time::pause` or `pause`",
                            entry.get_ref()
                        ),
                    ));
                }
                entries.push(entry.get_ref().clone());
            }
            if !entries.is_empty() {
                *ext.list_mut(list) = entries;
            }
        }
        for policy in &self.policies {
            ext.policies.push(policy.to_model()?);
        }
        Ok(ext)
    }
}

/// A word of the vocabulary: letters, digits and `_` (`retry`, `next_`, `s3`, `40001`).
fn is_word(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// A path (`a::b::c`, `::a`, `c`) of identifiers.
pub(super) fn is_rust_path(text: &str) -> bool {
    let body = text.strip_prefix("::").unwrap_or(text);
    !body.is_empty()
        && body.split("::").all(|segment| {
            let mut chars = segment.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
                && segment != "_"
        })
}

/// One entry of the built-in models.
#[derive(Debug)]
pub struct Entry {
    /// As written (`Delay::new`).
    pub text: String,
    segments: Vec<String>,
    /// The model file it is written in.
    pub file: &'static str,
    hit: AtomicBool,
}

/// The built-in models: [`Extensions`] read from [`MODEL_FILES`], with a record of which entries
/// decided something.
#[derive(Debug)]
pub struct Models {
    lists: Vec<Vec<Entry>>,
    /// Each list's entries by their text (the first of equal ones): a vocabulary word is looked
    /// up, not searched for.
    by_text: Vec<HashMap<String, usize>>,
    /// Retry crates' policies, each with the file it is written in and a record of which of
    /// its parts (see [`PolicyModel::parts`]) decided something.
    policies: Vec<(PolicyModel, &'static str, Vec<AtomicBool>)>,
}

/// An entry the analysis must not see (see [`Models::without`]): `list << 32 | index`, plus
/// one; 0 for none.
static DISABLED: AtomicU64 = AtomicU64::new(0);

fn disabled_code(list: List, i: usize) -> u64 {
    ((list.index() as u64) << 32 | i as u64) + 1
}

/// The index that stands for every entry of a list in [`disabled_code`].
const WHOLE_LIST: usize = u32::MAX as usize;

/// Whether entry `i` of `list` is disabled (on its own, or with its whole list).
fn is_disabled(list: List, i: usize) -> bool {
    let disabled = DISABLED.load(Ordering::Relaxed);
    disabled != 0
        && (disabled == disabled_code(list, i) || disabled == disabled_code(list, WHOLE_LIST))
}

/// Records that an entry decided something (written once: the flag is read by every thread).
fn record(entry: &Entry) {
    if !entry.hit.load(Ordering::Relaxed) {
        entry.hit.store(true, Ordering::Relaxed);
    }
}

thread_local! {
    /// The vocabulary lists of the team's `[extend]` for the file analysed on this thread (see
    /// [`TeamVocabulary`]), by list index; empty for none.
    static TEAM: RefCell<Vec<Vec<String>>> = const { RefCell::new(Vec::new()) };
}

/// Whether a word of the team's own `list` is accepted by `found`.
fn team_has(list: List, found: impl Fn(&str) -> bool) -> bool {
    TEAM.with(|team| {
        team.borrow()
            .get(list.index())
            .is_some_and(|words| words.iter().any(|w| found(w)))
    })
}

/// The team's vocabulary (the vocabulary lists of its `[extend]`), known to the predicates of
/// this thread for as long as it is held: they are read by free functions that are not given
/// the configuration. Dropping it brings back what was known before.
#[must_use = "the team's vocabulary is known only while this is held"]
pub struct TeamVocabulary {
    before: Vec<Vec<String>>,
}

impl TeamVocabulary {
    /// Makes `ext`'s vocabulary lists known on this thread.
    pub fn enter(ext: &Extensions) -> Self {
        let lists: Vec<Vec<String>> = if ext.vocabulary.is_empty() {
            Vec::new()
        } else {
            List::ALL.iter().map(|&l| ext.list(l).to_vec()).collect()
        };
        TeamVocabulary {
            before: TEAM.with(|team| team.replace(lists)),
        }
    }
}

impl Drop for TeamVocabulary {
    fn drop(&mut self) {
        let before = std::mem::take(&mut self.before);
        TEAM.with(|team| *team.borrow_mut() = before);
    }
}

/// The code of part `part` of policy `i` (beyond every list's).
fn disabled_policy_code(i: usize, part: usize) -> u64 {
    ((List::ALL.len() as u64 + 1) << 32 | (i as u64) << 16 | part as u64) + 1
}

/// The built-in models, read once.
///
/// # Panics
/// If a model file is not valid (they are embedded, and checked by the tests).
#[must_use]
pub fn builtin() -> &'static Models {
    static MODELS: OnceLock<Models> = OnceLock::new();
    MODELS.get_or_init(|| match Models::load(MODEL_FILES) {
        Ok(models) => models,
        Err(e) => panic!("built-in model: {e}"),
    })
}

impl Models {
    /// Reads model files: (shown name, text).
    ///
    /// # Errors
    /// The file, line and reason of the first entry or key that is not valid.
    pub fn load(files: &[(&'static str, &str)]) -> Result<Models, String> {
        let mut lists: Vec<Vec<Entry>> = List::ALL.iter().map(|_| Vec::new()).collect();
        let mut policies = Vec::new();
        for (file, text) in files {
            let raw: RawExtensions = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
            let ext = raw.check().map_err(|(span, why)| {
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                format!("{file}:{line}: {why}")
            })?;
            for list in List::ALL {
                for text in ext.list(list) {
                    lists[list.index()].push(Entry {
                        segments: text
                            .split("::")
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned)
                            .collect(),
                        text: text.clone(),
                        file,
                        hit: AtomicBool::new(false),
                    });
                }
            }
            for mut policy in ext.policies {
                policy.anchor_to_crate();
                let hits = policy
                    .parts()
                    .iter()
                    .map(|_| AtomicBool::new(false))
                    .collect();
                policies.push((policy, *file, hits));
            }
        }
        let by_text = lists
            .iter()
            .map(|entries| {
                let mut by_text = HashMap::with_capacity(entries.len());
                for (i, e) in entries.iter().enumerate() {
                    by_text.entry(e.text.clone()).or_insert(i);
                }
                by_text
            })
            .collect();
        Ok(Models {
            lists,
            by_text,
            policies,
        })
    }

    /// The entries of one list.
    #[must_use]
    pub fn entries(&self, list: List) -> &[Entry] {
        &self.lists[list.index()]
    }

    /// The first entry of `list` that `found` accepts and is not disabled; it is recorded as
    /// used.
    fn find(&self, list: List, found: impl Fn(&Entry) -> bool) -> Option<&Entry> {
        let (_, entry) = self
            .entries(list)
            .iter()
            .enumerate()
            .find(|(i, e)| found(e) && !is_disabled(list, *i))?;
        record(entry);
        Some(entry)
    }

    /// Whether `name` is a word of the vocabulary list `list`, built in or the team's: a look-up.
    #[must_use]
    pub fn word(&self, list: List, name: &str) -> bool {
        if let Some(&i) = self.by_text[list.index()].get(name) {
            if !is_disabled(list, i) {
                record(&self.lists[list.index()][i]);
                return true;
            }
        }
        team_has(list, |w| w == name)
    }

    /// Whether a word of the vocabulary list `list` is part of `text`.
    #[must_use]
    pub fn part_of(&self, list: List, text: &str) -> bool {
        self.vocabulary_any(list, |w| text.contains(w))
    }

    /// Whether a word of the vocabulary list `list` is part of `text`, ignoring ASCII case.
    #[must_use]
    pub fn part_of_any_case(&self, list: List, text: &str) -> bool {
        self.vocabulary_any(list, |w| {
            !w.is_empty()
                && text
                    .as_bytes()
                    .windows(w.len())
                    .any(|t| t.eq_ignore_ascii_case(w.as_bytes()))
        })
    }

    /// Whether `text` begins with a word of the vocabulary list `list`.
    #[must_use]
    pub fn prefix_of(&self, list: List, text: &str) -> bool {
        self.vocabulary_any(list, |w| text.starts_with(w))
    }

    /// Whether `text` ends with a word of the vocabulary list `list`.
    #[must_use]
    pub fn suffix_of(&self, list: List, text: &str) -> bool {
        self.vocabulary_any(list, |w| text.ends_with(w))
    }

    /// Whether `found` accepts a word of `list` (the first, in order, is recorded), built in or
    /// the team's. The lists searched this way are short (a dozen words): as many comparisons
    /// as the chain of `contains` they replace.
    fn vocabulary_any(&self, list: List, found: impl Fn(&str) -> bool) -> bool {
        for (i, e) in self.entries(list).iter().enumerate() {
            if found(&e.text) && !is_disabled(list, i) {
                record(e);
                return true;
            }
        }
        team_has(list, found)
    }

    /// The entry of `list` that a resolved path ends with (`Delay::new` for
    /// `futures_timer::Delay::new`).
    #[must_use]
    pub fn path(&self, list: List, full: &[String]) -> Option<&str> {
        self.find(list, |e| {
            !e.segments.is_empty()
                && full.len() >= e.segments.len()
                && full[full.len() - e.segments.len()..] == e.segments[..]
        })
        .map(|e| e.text.as_str())
    }

    /// The entry of `list` (a module's path) that a resolved path starts with
    /// (`tokio::sync::mpsc` for `tokio::sync::mpsc::error::SendError`).
    #[must_use]
    pub fn module(&self, list: List, full: &[String]) -> Option<&str> {
        self.find(list, |e| {
            !e.segments.is_empty()
                && full.len() > e.segments.len()
                && full[..e.segments.len()] == e.segments[..]
        })
        .map(|e| e.text.as_str())
    }

    /// The entry of `list` (`crate::method`) whose last segment is `method` and whose crate
    /// `uses` accepts (the file uses it): `Some(crate)`.
    #[must_use]
    pub fn crate_method(
        &self,
        list: List,
        method: &str,
        uses: impl Fn(&str) -> bool,
    ) -> Option<&str> {
        self.find(list, |e| {
            e.segments.len() >= 2
                && e.segments.last().is_some_and(|m| m == method)
                && uses(&e.segments[0])
        })
        .map(|e| e.segments[0].as_str())
    }

    /// Whether `name` is an entry of `list`.
    #[must_use]
    pub fn name(&self, list: List, name: &str) -> bool {
        self.find(list, |e| e.text == name).is_some()
    }

    /// Whether `name` is an entry of `list`, ignoring ASCII case.
    #[must_use]
    pub fn name_any_case(&self, list: List, name: &str) -> bool {
        self.find(list, |e| e.text.eq_ignore_ascii_case(name))
            .is_some()
    }

    /// Whether entry `i` of `list` has decided something since the start (or [`Models::forget`]).
    #[must_use]
    pub fn was_used(&self, list: List, i: usize) -> bool {
        self.entries(list)
            .get(i)
            .is_some_and(|e| e.hit.load(Ordering::Relaxed))
    }

    /// The retry crates' policies, with the file each is written in.
    pub fn policies(&self) -> impl Iterator<Item = (&PolicyModel, &'static str)> {
        self.policies.iter().map(|(p, file, _)| (p, *file))
    }

    /// Whether part `part` of policy `i` may decide something (it is not disabled); if so, it
    /// is recorded as used.
    #[must_use]
    pub fn policy_gate(&self, i: usize, part: usize) -> bool {
        if DISABLED.load(Ordering::Relaxed) == disabled_policy_code(i, part) {
            return false;
        }
        if let Some(hit) = self.policies.get(i).and_then(|(_, _, h)| h.get(part)) {
            hit.store(true, Ordering::Relaxed);
        }
        true
    }

    /// Whether part `part` of policy `i` has decided something since the start (or
    /// [`Models::forget`]).
    #[must_use]
    pub fn policy_part_used(&self, i: usize, part: usize) -> bool {
        self.policies
            .get(i)
            .and_then(|(_, _, h)| h.get(part))
            .is_some_and(|h| h.load(Ordering::Relaxed))
    }

    /// Forgets which entries were used.
    pub fn forget(&self) {
        for entry in self.lists.iter().flatten() {
            entry.hit.store(false, Ordering::Relaxed);
        }
        for hit in self.policies.iter().flat_map(|(_, _, h)| h) {
            hit.store(false, Ordering::Relaxed);
        }
    }

    /// Runs `f` with part `part` of policy `i` unknown to the analysis (see
    /// [`Models::without`]).
    pub fn without_policy<R>(i: usize, part: usize, f: impl FnOnce() -> R) -> R {
        Self::without_code(disabled_policy_code(i, part), f)
    }

    /// Runs `f` with every entry of `list` unknown to the analysis, on every thread (for the
    /// test that each vocabulary list matters; not for concurrent use).
    pub fn without_list<R>(list: List, f: impl FnOnce() -> R) -> R {
        Self::without_code(disabled_code(list, WHOLE_LIST), f)
    }

    /// Runs `f` with entry `i` of `list` unknown to the analysis, on every thread (for the test
    /// that each entry matters; not for concurrent use).
    pub fn without<R>(list: List, i: usize, f: impl FnOnce() -> R) -> R {
        Self::without_code(disabled_code(list, i), f)
    }

    fn without_code<R>(code: u64, f: impl FnOnce() -> R) -> R {
        struct Restore(u64);
        impl Drop for Restore {
            fn drop(&mut self) {
                DISABLED.store(self.0, Ordering::Relaxed);
            }
        }
        let _restore = Restore(DISABLED.swap(code, Ordering::Relaxed));
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths_are_told_from_other_text() {
        for ok in [
            "pause",
            "crate::time::pause",
            "::tokio::time::sleep",
            "_private",
        ] {
            assert!(is_rust_path(ok), "{ok}");
        }
        for bad in [
            "",
            "::",
            "a::",
            "a b",
            "crate::time::",
            "1st",
            "_",
            "a.b",
            "a::::b",
        ] {
            assert!(!is_rust_path(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_built_in_models_load() {
        let models = Models::load(MODEL_FILES).unwrap();
        for (list, text, file) in [
            (List::SleepFns, "sleep", "timers"),
            (List::BlockingSleeps, "thread::sleep", "timers"),
            (List::KeyConstructors, "Uuid::new_v4", "keys"),
            (
                List::EveryErrorRunners,
                "tokio_retry::Retry::spawn",
                "runners",
            ),
            (List::BlockMacros, "stream", "macros"),
        ] {
            let file = format!("models/{file}.toml");
            let entries = models.entries(list);
            let found = entries.iter().any(|e| e.text == text && e.file == file);
            assert!(found, "{text} in {list:?} of {file}");
        }
        let crates: Vec<_> = models
            .policies()
            .map(|(p, _)| &p.advice.crate_name)
            .collect();
        assert!(crates.iter().any(|c| *c == "backon"), "{crates:?}");
    }

    #[test]
    fn a_bad_entry_is_reported_with_its_file_and_line() {
        let err = Models::load(&[(
            "models/x.toml",
            "sleep-fns = [\n  \"ok\",\n  \"not a path\",\n]\n",
        )])
        .unwrap_err();
        assert_eq!(
            err,
            "models/x.toml:3: `not a path` is not a Rust path such as `crate::time::pause` or `pause`"
        );
        let err = Models::load(&[("models/v.toml", "retry-words = [\"a::b\"]\n")]).unwrap_err();
        assert_eq!(
            err,
            "models/v.toml:1: `a::b` is not a word such as `retry` or `request_id` (letters, digits and `_`)"
        );
        let err = Models::load(&[("models/y.toml", "sleepfns = []\n")]).unwrap_err();
        assert!(err.starts_with("models/y.toml: "), "{err}");
        assert!(err.contains("unknown field `sleepfns`"), "{err}");
    }

    #[test]
    fn every_list_is_at_its_own_index_paths_first() {
        for (i, list) in List::ALL.iter().enumerate() {
            assert_eq!(list.index(), i, "{list:?}");
            assert_eq!(list.is_vocabulary(), i >= List::PATHS, "{list:?}");
        }
    }

    #[test]
    fn a_vocabulary_word_is_looked_up_and_the_team_adds_its_own() {
        let models = Models::load(&[(
            "models/v.toml",
            "client-words = [\"client\", \"pool\"]\nretry-words = [\"retr\"]\n",
        )])
        .unwrap();
        assert!(models.word(List::ClientWords, "pool"));
        assert!(models.was_used(List::ClientWords, 1));
        assert!(!models.word(List::ClientWords, "gateway"));
        assert!(models.part_of(List::RetryWords, "with_retries"));
        assert!(!models.prefix_of(List::RetryWords, "with_retries"));
        let mut ext = Extensions::default();
        *ext.list_mut(List::ClientWords) = vec!["gateway".to_owned()];
        {
            let _team = TeamVocabulary::enter(&ext);
            assert!(models.word(List::ClientWords, "gateway"));
            assert!(!models.word(List::RetryWords, "gateway"));
        }
        assert!(!models.word(List::ClientWords, "gateway"));
    }

    #[test]
    fn a_path_matches_on_its_last_segments_and_a_disabled_entry_is_skipped() {
        let models =
            Models::load(&[("models/t.toml", "sleep-fns = [\"Delay::new\", \"sleep\"]\n")])
                .unwrap();
        let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            models.path(List::SleepFns, &path("futures_timer::Delay::new")),
            Some("Delay::new")
        );
        assert_eq!(models.path(List::SleepFns, &path("Vec::new")), None);
        assert_eq!(models.path(List::SleepFns, &path("new")), None);
        assert!(models.was_used(List::SleepFns, 0));
        assert!(!models.was_used(List::SleepFns, 1));
        Models::without(List::SleepFns, 1, || {
            assert_eq!(
                models.path(List::SleepFns, &path("tokio::time::sleep")),
                None
            );
        });
        assert_eq!(
            models.path(List::SleepFns, &path("tokio::time::sleep")),
            Some("sleep")
        );
    }
}
