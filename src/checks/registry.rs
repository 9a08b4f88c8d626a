//! The rule registry: one `rules/<name>.toml` per rule, embedded with `include_str!`.
//!
//! The enum [`Rule`] is the only place rule identities exist in code; prose, levels and examples
//! live in the TOML files and are read through [`Rule::meta`]. `tests/rules.rs` checks that both
//! agree.

use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;

/// How loudly a rule reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The rule does not run.
    Allow,
    /// Reported; does not fail the run.
    Warning,
    /// Reported; the run exits with status 1.
    Error,
}

impl Level {
    /// The word used in output: `allow`, `warning`, `error`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Allow => "allow",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a rule runs by default (as ruff's preview and clippy's nursery): a rule is stable only
/// while its precision on judged findings in code not used for tuning is at least
/// [`STABLE_PRECISION`], over at least [`STABLE_JUDGED`] findings; otherwise it runs only with
/// `--preview` (or `preview = true`, or when selected by name). `tests/rules.rs` checks each
/// rule's tier against the verdicts in `tests/realcode/census.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Stable,
    Preview,
}

impl Tier {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Stable => "stable",
            Tier::Preview => "preview",
        }
    }
}

/// The precision a rule must keep on judged findings to be stable.
pub const STABLE_PRECISION: f64 = 0.90;

/// The fewest judged findings that establish a rule's precision.
pub const STABLE_JUDGED: u32 = 5;

/// The verdicts on a rule's findings in code not used for tuning: right, wrong (not a retry, or
/// a retry whose stated fact is false), and arguable (counted neither way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judged {
    pub right: u32,
    pub wrong: u32,
    pub arguable: u32,
}

impl Judged {
    /// Right over right and wrong; `None` with nothing judged.
    #[must_use]
    pub fn precision(self) -> Option<f64> {
        let n = self.right + self.wrong;
        (n > 0).then(|| f64::from(self.right) / f64::from(n))
    }

    /// The tier these verdicts earn a rule of the analysis.
    #[must_use]
    pub fn earned_tier(self) -> Tier {
        match self.precision() {
            Some(p) if self.right + self.wrong >= STABLE_JUDGED && p >= STABLE_PRECISION => {
                Tier::Stable
            }
            _ => Tier::Preview,
        }
    }
}

/// The documentation and default of one rule, as written in `rules/<name>.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleMeta {
    pub id: String,
    pub name: String,
    pub level: Level,
    /// Whether it runs by default ([`Tier`]).
    pub tier: Tier,
    /// The verdicts behind the tier (none for the rules that are not about retries: RA000,
    /// RA100, which are stable by nature).
    #[serde(default)]
    pub judged: Judged,
    /// One line, lower-case, no period: the default message.
    pub summary: String,
    /// One line, lower-case, no period: what to do instead (the `help:` line).
    pub help: String,
    pub what_it_does: String,
    pub why_bad: String,
    pub example: String,
    pub use_instead: String,
    pub known_limitations: String,
    pub references: Vec<String>,
}

macro_rules! rules {
    ($($variant:ident => $id:literal, $name:literal;)*) => {
        /// Every rule retry-audit knows. Ids are stable; names read as "allow `<name>`".
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $($variant,)*
        }

        impl Rule {
            /// All rules, in id order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The stable code, e.g. `RA002`.
            #[must_use]
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// The kebab-case name, e.g. `fixed-delay`.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $(Rule::$variant => $name,)* }
            }

            /// The TOML source this rule's documentation is read from.
            #[must_use]
            pub fn toml_source(self) -> &'static str {
                match self { $(Rule::$variant => include_str!(concat!("../../rules/", $name, ".toml")),)* }
            }
        }
    };
}

rules! {
    SyntaxError => "RA000", "syntax-error";
    UnboundedRetry => "RA001", "unbounded-retry";
    FixedDelay => "RA002", "fixed-delay";
    MissingJitter => "RA003", "missing-jitter";
    RetriesClientError => "RA004", "retries-client-error";
    KeyInLoop => "RA005", "key-in-loop";
    IgnoresRetryAfter => "RA006", "ignores-retry-after";
    UncappedBackoff => "RA007", "uncapped-backoff";
    BlockingSleepInAsync => "RA008", "blocking-sleep-in-async";
    UnsafeWriteRetry => "RA009", "unsafe-write-retry";
    NestedRetry => "RA010", "nested-retry";
    NoDelay => "RA011", "no-delay";
    UnusedSuppression => "RA100", "unused-suppression";
}

impl Rule {
    /// Finds a rule by id (`RA002`, any case) or name (`fixed-delay`).
    #[must_use]
    pub fn from_code(code: &str) -> Option<Rule> {
        let code = code.trim();
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.id().eq_ignore_ascii_case(code) || r.name() == code)
    }

    /// The rule's documentation.
    ///
    /// The TOML files are checked by `tests/rules.rs`; should one still fail to parse, the
    /// metadata degrades to the id and name rather than aborting a scan.
    #[must_use]
    pub fn meta(self) -> &'static RuleMeta {
        static METAS: OnceLock<Vec<RuleMeta>> = OnceLock::new();
        let metas = METAS.get_or_init(|| {
            Rule::ALL
                .iter()
                .map(|r| {
                    r.parse_meta().unwrap_or_else(|e| RuleMeta {
                        id: r.id().to_owned(),
                        name: r.name().to_owned(),
                        level: Level::Warning,
                        tier: Tier::Preview,
                        judged: Judged::default(),
                        summary: format!("{} (rule metadata failed to load: {e})", r.name()),
                        help: String::new(),
                        what_it_does: String::new(),
                        why_bad: String::new(),
                        example: String::new(),
                        use_instead: String::new(),
                        known_limitations: String::new(),
                        references: Vec::new(),
                    })
                })
                .collect()
        });
        &metas[self.index()]
    }

    /// Parses this rule's TOML (used by [`Rule::meta`] and by the meta-tests).
    pub fn parse_meta(self) -> Result<RuleMeta, toml::de::Error> {
        toml::from_str(self.toml_source())
    }

    /// The default level, from the TOML.
    #[must_use]
    pub fn default_level(self) -> Level {
        self.meta().level
    }

    /// Whether the rule runs by default, from the TOML ([`Tier`]).
    #[must_use]
    pub fn tier(self) -> Tier {
        self.meta().tier
    }

    fn index(self) -> usize {
        Rule::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
