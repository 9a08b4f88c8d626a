//! The rules: each one a small pure check over a [`RetrySite`], in its own file. Detection only:
//! the message and help come from `rules/*.toml`, printing from the front ends.

mod blocking_sleep_in_async;
pub mod diagnostic;
pub mod registry;
mod settings;

pub use settings::Settings;
mod fixed_delay;
mod ignores_retry_after;
mod key_in_loop;
mod missing_jitter;
pub(crate) mod nested_retry;
mod no_delay;
mod retries_client_error;
mod unbounded_retry;
mod uncapped_backoff;

/// Whether a wait this long, growing without a cap, is RA007's (see `uncapped_backoff`).
pub use uncapped_backoff::past_limit as uncapped_wait_past_limit;
mod unsafe_write_retry;

use crate::analysis::{Evidence, Facts, FileModel, Place, RetrySite, SiteKind};
use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::{Level, Rule};
use crate::source::Fix;
use crate::source::Span;

/// Collects the findings of one file.
pub(crate) struct Context<'s> {
    settings: &'s Settings,
    out: Vec<Diagnostic>,
    /// The file's functions that retry by themselves (for nested retries), sorted by name.
    retrying: Vec<nested_retry::Retrying>,
}

impl Context<'_> {
    fn enabled(&self, rule: Rule) -> bool {
        self.settings.level(rule) != Level::Allow
    }

    /// Reports `rule` at `primary`, with context labels and notes; message and help from the
    /// rule's TOML.
    pub(crate) fn report(
        &mut self,
        rule: Rule,
        primary: Label,
        secondary: Vec<Label>,
        notes: Vec<String>,
    ) {
        let level = self.settings.level(rule);
        if level == Level::Allow {
            return;
        }
        let meta = rule.meta();
        let secondary = secondary
            .into_iter()
            .filter(|l| l.span != primary.span)
            .collect();
        self.out.push(Diagnostic {
            rule,
            level,
            message: meta.summary.clone(),
            primary,
            secondary,
            help: (!meta.help.is_empty()).then(|| meta.help.clone()),
            notes,
            fix: None,
            elsewhere: Vec::new(),
        });
    }

    /// Attaches a fix to the finding just reported (if it was: an allowed rule reports nothing).
    pub(crate) fn with_fix(&mut self, rule: Rule, fix: Option<Fix>) {
        if let Some(last) = self.out.last_mut().filter(|d| d.rule == rule) {
            last.fix = fix;
        }
    }
}

/// A label.
pub(crate) fn label(span: Span, message: impl Into<String>) -> Label {
    Label {
        span,
        message: message.into(),
    }
}

/// The "retry loop here" label of a site.
pub(crate) fn site_label(site: &RetrySite) -> Label {
    match site.kind {
        SiteKind::Loop => label(site.head, "retry loop here"),
        SiteKind::Recursion => label(site.head, "retried by calling itself here"),
        SiteKind::Helper => label(site.head, "each call of this runs once per attempt"),
        SiteKind::Policy => label(site.head, "retry policy built here"),
    }
}

type Check = fn(&RetrySite, &mut Context<'_>);

/// Every rule with the facts of a site it reads (whose definitions its findings show) and its
/// check.
const CHECKS: &[(Rule, Facts, Check)] = &[
    (Rule::UnboundedRetry, Facts::BOUND, unbounded_retry::check),
    (Rule::FixedDelay, Facts::WAIT, fixed_delay::check),
    (Rule::MissingJitter, Facts::WAIT, missing_jitter::check),
    (
        Rule::RetriesClientError,
        Facts::ERRORS,
        retries_client_error::check,
    ),
    (Rule::KeyInLoop, Facts::KEY, key_in_loop::check),
    (
        Rule::IgnoresRetryAfter,
        Facts::ERRORS,
        ignores_retry_after::check,
    ),
    (Rule::UncappedBackoff, Facts::WAIT, uncapped_backoff::check),
    (
        Rule::BlockingSleepInAsync,
        Facts::WAIT,
        blocking_sleep_in_async::check,
    ),
    (
        Rule::UnsafeWriteRetry,
        Facts::WRITE,
        unsafe_write_retry::check,
    ),
    // The inner retry's place is the finding's own label (or, in another file, its note).
    (Rule::NestedRetry, Facts::NONE, nested_retry::check),
    // A way round without a wait has no wait to point at.
    (Rule::NoDelay, Facts::NONE, no_delay::check),
];

/// The rules about a site's pauses: all that applies to a supervisor, which restarts its
/// operation for ever by design.
const PACING: &[Rule] = &[
    Rule::FixedDelay,
    Rule::MissingJitter,
    Rule::UncappedBackoff,
    Rule::BlockingSleepInAsync,
    Rule::NoDelay,
];

/// RA010 for a call to a function that retries in another file.
#[must_use]
pub fn nested_retry_across(
    call: &crate::analysis::SiteCall,
    elsewhere: (&str, usize, usize),
    settings: &Settings,
) -> Diagnostic {
    let mut cx = Context {
        settings,
        out: Vec::new(),
        retrying: Vec::new(),
    };
    nested_retry::report_call(
        &call.callee,
        call.call,
        call.head,
        None,
        Some(elsewhere),
        &mut cx,
    );
    cx.out
        .pop()
        .unwrap_or_else(|| unreachable_finding(call.call))
}

/// Only reached if RA010 is allowed, which the caller checks first.
fn unreachable_finding(span: Span) -> Diagnostic {
    Diagnostic {
        rule: Rule::NestedRetry,
        level: Level::Warning,
        message: Rule::NestedRetry.meta().summary.clone(),
        primary: label(span, ""),
        secondary: Vec::new(),
        help: None,
        notes: Vec::new(),
        fix: None,
        elsewhere: Vec::new(),
    }
}

/// Runs every enabled rule over the model of one file.
#[must_use]
pub fn run(model: &FileModel, settings: &Settings) -> Vec<Diagnostic> {
    let mut retrying: Vec<_> = model
        .retrying_fns
        .iter()
        .map(|(name, owner, at)| nested_retry::Retrying {
            name: name.clone(),
            owner: owner.clone(),
            inner: Some(*at),
        })
        .collect();
    retrying.sort_by(|a, b| a.name.cmp(&b.name));
    let mut cx = Context {
        settings,
        out: Vec::new(),
        retrying,
    };
    for site in &model.sites {
        for (rule, reads, check) in CHECKS {
            if site.supervisor && !PACING.contains(rule) {
                continue;
            }
            if !cx.enabled(*rule) {
                continue;
            }
            let first = cx.out.len();
            check(site, &mut cx);
            for d in &mut cx.out[first..] {
                // A default of a field elsewhere in this file the site's strategy comes from.
                for (span, field) in &site.origins {
                    d.secondary
                        .push(label(*span, format!("`{field}` holds this by default")));
                }
                show_evidence(d, &site.evidence, *reads);
            }
        }
    }
    // A key that two retry sites make per attempt (a loop inside a function that also retries
    // by calling itself) is still made per attempt once hoisted out of the loop: no fix then.
    let mut keys: std::collections::HashMap<crate::source::Span, usize> =
        std::collections::HashMap::new();
    for d in cx.out.iter().filter(|d| d.rule == Rule::KeyInLoop) {
        *keys.entry(d.primary.span).or_default() += 1;
    }
    for d in &mut cx.out {
        if d.rule == Rule::KeyInLoop && keys.get(&d.primary.span).is_some_and(|n| *n > 1) {
            d.fix = None;
        }
    }
    cx.out
}

/// At most this many definitions are pointed at per finding; the rest are named in a note.
const SHOWN: usize = 3;

/// Points a finding at the definitions the facts it `reads` were read from: a label on one
/// of this file, a note with `path:line` (and a place for the formats that can point there)
/// for one of another file. Definitions consulted for other facts are left out.
fn show_evidence(d: &mut Diagnostic, evidence: &[Evidence], reads: Facts) {
    let mut shown: Vec<&Evidence> = Vec::new();
    let mut more: Vec<String> = Vec::new();
    for e in evidence.iter().filter(|e| e.facts.meets(reads)) {
        if shown.iter().any(|s| s.name == e.name && s.place == e.place)
            || more.iter().any(|m| *m == format!("`{}`", e.name))
        {
            continue;
        }
        if let Place::Here(span) = &e.place {
            if d.primary.span == *span || d.secondary.iter().any(|l| l.span == *span) {
                continue;
            }
        }
        if shown.len() == SHOWN {
            more.push(format!("`{}`", e.name));
            continue;
        }
        let what = format!("`{}` {}", e.name, decides(e.facts, reads));
        match &e.place {
            Place::Here(span) => d.secondary.push(label(*span, what)),
            Place::There { path, line, column } => {
                d.notes.push(format!(
                    "`{}`, defined at {path}:{line}:{column}, {}",
                    e.name,
                    decides(e.facts, reads)
                ));
                d.elsewhere.push(crate::checks::diagnostic::Elsewhere {
                    path: path.clone(),
                    line: *line,
                    column: *column,
                    message: what,
                    note: d.notes.len() - 1,
                });
            }
        }
        shown.push(e);
    }
    if !more.is_empty() {
        d.notes.push(format!("also read from {}", more.join(", ")));
    }
}

/// What a definition decided, said for the first of the facts a rule reads that it decided.
fn decides(facts: Facts, reads: Facts) -> &'static str {
    [
        (Facts::BOUND, "sets how many attempts are made"),
        (Facts::WAIT, "decides the wait"),
        (Facts::ERRORS, "decides which errors are retried"),
        (Facts::KEY, "makes the key"),
        (Facts::WRITE, "makes the write"),
    ]
    .into_iter()
    .find(|(f, _)| f.meets(facts) && f.meets(reads))
    .map_or("is read", |(_, what)| what)
}

#[cfg(test)]
mod tests {
    use super::{show_evidence, unreachable_finding, CHECKS, SHOWN};
    use crate::analysis::{Evidence, Facts, Place};
    use crate::checks::registry::Rule;
    use crate::source::Span;

    fn there(name: &str, facts: Facts) -> Evidence {
        Evidence {
            name: name.to_owned(),
            place: Place::There {
                path: "src/lib.rs".to_owned(),
                line: 3,
                column: 8,
            },
            facts,
        }
    }

    #[test]
    fn a_finding_shows_the_evidence_of_its_facts_only_and_names_what_is_over_the_limit() {
        let mut evidence = vec![there("is_retryable", Facts::ERRORS)];
        for name in ["a", "b", "c", "d", "e"] {
            evidence.push(there(name, Facts::WAIT.and(Facts::BOUND)));
        }
        evidence.push(there("a", Facts::WAIT));
        let mut d = unreachable_finding(Span::elsewhere());
        show_evidence(&mut d, &evidence, Facts::WAIT);
        assert_eq!(d.elsewhere.len(), SHOWN);
        assert_eq!(
            d.notes,
            [
                "`a`, defined at src/lib.rs:3:8, decides the wait",
                "`b`, defined at src/lib.rs:3:8, decides the wait",
                "`c`, defined at src/lib.rs:3:8, decides the wait",
                "also read from `d`, `e`",
            ]
        );
        // Each place is said by its note.
        for (i, e) in d.elsewhere.iter().enumerate() {
            assert_eq!(e.note, i);
            assert!(d.notes[i].starts_with(&e.message[..3]));
        }
        let mut d = unreachable_finding(Span::elsewhere());
        show_evidence(&mut d, &evidence, Facts::BOUND);
        assert_eq!(
            d.notes[0],
            "`a`, defined at src/lib.rs:3:8, sets how many attempts are made"
        );
        let mut d = unreachable_finding(Span::elsewhere());
        show_evidence(&mut d, &evidence, Facts::KEY);
        assert!(d.notes.is_empty() && d.elsewhere.is_empty());
    }

    #[test]
    fn every_rule_has_exactly_one_check() {
        // RA100 is reported by the suppression pass (src/suppress.rs), RA000 by the scan for a
        // file that does not parse (src/scan.rs), not by a check.
        for rule in Rule::ALL
            .iter()
            .filter(|r| !matches!(r, Rule::UnusedSuppression | Rule::SyntaxError))
        {
            assert_eq!(
                CHECKS.iter().filter(|(r, _, _)| r == rule).count(),
                1,
                "{rule} must have one check"
            );
        }
    }
}
