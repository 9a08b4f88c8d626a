//! What the analysis knows about code outside the workspace, as data: `models/*.toml`, embedded
//! in the binary like `rules/`. Timers and sleeps, sources of randomness, key constructors,
//! backoff strategy objects: each a list of paths or names under the same keys as a team's
//! `[extend]` table in `retry-audit.toml`, read by the same code ([`RawExtensions`]). Adding a
//! crate's timer or random source is a change of a TOML file.
//!
//! Each entry records when it decides something (a match), so that `tests/models.rs` can check
//! that every entry is exercised by a fixture, and that the fixtures' findings change without it.

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
];

/// One list of a model or of `[extend]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum List {
    /// Functions (by path) that wait for the duration given as their first argument.
    SleepFns,
    /// Methods that wait for the duration given as their first argument.
    SleepMethods,
    /// Waits that block the thread.
    BlockingSleeps,
    /// Awaited methods that resolve after a wait of the callee's choosing.
    WaitHandlers,
    /// Crates whose every path is random.
    RandomCrates,
    /// Functions, methods and types whose value is random (by name, any case).
    RandomSources,
    /// Methods of a random generator that give a value usable as a key.
    RandomKeyMethods,
    /// Functions that make a fresh unique value.
    KeyConstructors,
    /// Macros that make a fresh unique value.
    KeyMacros,
    /// Methods or fields that hold an HTTP status.
    StatusAccessors,
    /// Crates whose growing backoff strategies are jittered by default.
    JitteredCrates,
    /// Methods that ask a backoff strategy object for its next wait.
    NextWaitMethods,
    /// Functions of retry crates that run an operation again after any error it returns (no
    /// classifier given).
    EveryErrorRunners,
    /// Macros whose body is a block of statements run as async code (`stream! { .. }`).
    BlockMacros,
    /// Awaited calls that resume without waiting for anything (`tokio::task::yield_now`): on a
    /// retry's path they leave no doubt that it goes round at once.
    NoWaits,
    /// Crates of message brokers: a publish on a value whose type resolves to one of them sends
    /// a message again when resent.
    MessagingCrates,
    /// Calls (by crate and method) whose `Err` carries every HTTP status from 400: retrying each
    /// of their errors retries client errors.
    StatusErrorCalls,
    /// Attribute macros of other crates that make a function retry its body.
    RetryAttributes,
    /// Constructors of this project's own retry wrappers (`RetryLayer::new`), compliant by
    /// construction like `#[retryable]`: a function that makes one retries.
    CompliantRetries,
    /// Types whose connections reach only this machine (Unix-domain sockets, named pipes): a
    /// loop that waits for one to connect waits for something local.
    LocalEndpoints,
}

impl List {
    /// Every list, in the order of [`Extensions::list`].
    pub const ALL: [List; 20] = [
        List::SleepFns,
        List::SleepMethods,
        List::BlockingSleeps,
        List::WaitHandlers,
        List::RandomCrates,
        List::RandomSources,
        List::RandomKeyMethods,
        List::KeyConstructors,
        List::KeyMacros,
        List::StatusAccessors,
        List::JitteredCrates,
        List::NextWaitMethods,
        List::EveryErrorRunners,
        List::BlockMacros,
        List::NoWaits,
        List::MessagingCrates,
        List::StatusErrorCalls,
        List::RetryAttributes,
        List::CompliantRetries,
        List::LocalEndpoints,
    ];

    /// Its key in a model file and in `[extend]`.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            List::SleepFns => "sleep-fns",
            List::SleepMethods => "sleep-methods",
            List::BlockingSleeps => "blocking-sleeps",
            List::WaitHandlers => "wait-handlers",
            List::RandomCrates => "random-crates",
            List::RandomSources => "random-sources",
            List::RandomKeyMethods => "random-key-methods",
            List::KeyConstructors => "key-constructors",
            List::KeyMacros => "key-macros",
            List::StatusAccessors => "status-accessors",
            List::JitteredCrates => "jittered-crates",
            List::NextWaitMethods => "next-wait-methods",
            List::EveryErrorRunners => "every-error-runners",
            List::BlockMacros => "block-macros",
            List::NoWaits => "no-waits",
            List::MessagingCrates => "messaging-crates",
            List::StatusErrorCalls => "status-error-calls",
            List::RetryAttributes => "retry-attributes",
            List::CompliantRetries => "compliant-retries",
            List::LocalEndpoints => "local-endpoints",
        }
    }

    fn index(self) -> usize {
        List::ALL.iter().position(|l| *l == self).unwrap_or(0)
    }
}

/// A model file or an `[extend]` table as written: every list optional, no other key.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExtensions {
    #[serde(default)]
    sleep_fns: Vec<Spanned<String>>,
    #[serde(default)]
    sleep_methods: Vec<Spanned<String>>,
    #[serde(default)]
    blocking_sleeps: Vec<Spanned<String>>,
    #[serde(default)]
    wait_handlers: Vec<Spanned<String>>,
    #[serde(default)]
    random_crates: Vec<Spanned<String>>,
    #[serde(default)]
    random_sources: Vec<Spanned<String>>,
    #[serde(default)]
    random_key_methods: Vec<Spanned<String>>,
    #[serde(default)]
    key_constructors: Vec<Spanned<String>>,
    #[serde(default)]
    key_macros: Vec<Spanned<String>>,
    #[serde(default)]
    status_accessors: Vec<Spanned<String>>,
    #[serde(default)]
    jittered_crates: Vec<Spanned<String>>,
    #[serde(default)]
    next_wait_methods: Vec<Spanned<String>>,
    #[serde(default)]
    every_error_runners: Vec<Spanned<String>>,
    #[serde(default)]
    block_macros: Vec<Spanned<String>>,
    #[serde(default)]
    no_waits: Vec<Spanned<String>>,
    #[serde(default)]
    messaging_crates: Vec<Spanned<String>>,
    #[serde(default)]
    status_error_calls: Vec<Spanned<String>>,
    #[serde(default)]
    retry_attributes: Vec<Spanned<String>>,
    #[serde(default)]
    compliant_retries: Vec<Spanned<String>>,
    #[serde(default)]
    local_endpoints: Vec<Spanned<String>>,
    /// Retry crates' policies (`[[policies]]`).
    #[serde(default)]
    policies: Vec<super::policy_model::RawPolicy>,
}

impl RawExtensions {
    fn raw(&self, list: List) -> &[Spanned<String>] {
        match list {
            List::SleepFns => &self.sleep_fns,
            List::SleepMethods => &self.sleep_methods,
            List::BlockingSleeps => &self.blocking_sleeps,
            List::WaitHandlers => &self.wait_handlers,
            List::RandomCrates => &self.random_crates,
            List::RandomSources => &self.random_sources,
            List::RandomKeyMethods => &self.random_key_methods,
            List::KeyConstructors => &self.key_constructors,
            List::KeyMacros => &self.key_macros,
            List::StatusAccessors => &self.status_accessors,
            List::JitteredCrates => &self.jittered_crates,
            List::NextWaitMethods => &self.next_wait_methods,
            List::EveryErrorRunners => &self.every_error_runners,
            List::BlockMacros => &self.block_macros,
            List::NoWaits => &self.no_waits,
            List::MessagingCrates => &self.messaging_crates,
            List::StatusErrorCalls => &self.status_error_calls,
            List::RetryAttributes => &self.retry_attributes,
            List::CompliantRetries => &self.compliant_retries,
            List::LocalEndpoints => &self.local_endpoints,
        }
    }

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
                if !is_rust_path(entry.get_ref()) {
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
            *ext.list_mut(list) = entries;
        }
        for policy in &self.policies {
            ext.policies.push(policy.to_model()?);
        }
        Ok(ext)
    }
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
        Ok(Models { lists, policies })
    }

    /// The entries of one list.
    #[must_use]
    pub fn entries(&self, list: List) -> &[Entry] {
        &self.lists[list.index()]
    }

    /// The first entry of `list` that `found` accepts and is not disabled; it is recorded as
    /// used.
    fn find(&self, list: List, found: impl Fn(&Entry) -> bool) -> Option<&Entry> {
        let (_, entry) = self.entries(list).iter().enumerate().find(|(i, e)| {
            found(e) && DISABLED.load(Ordering::Relaxed) != disabled_code(list, *i)
        })?;
        entry.hit.store(true, Ordering::Relaxed);
        Some(entry)
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
        let err = Models::load(&[("models/y.toml", "sleepfns = []\n")]).unwrap_err();
        assert!(err.starts_with("models/y.toml: "), "{err}");
        assert!(err.contains("unknown field `sleepfns`"), "{err}");
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
