//! The rules: each one a small pure check over a [`RetrySite`], in its own file. Detection only:
//! the message and help come from `rules/*.toml`, printing from the front ends.

mod blocking_sleep_in_async;
mod fixed_delay;
mod ignores_retry_after;
mod key_in_loop;
mod missing_jitter;
pub(crate) mod nested_retry;
mod no_delay;
mod retries_client_error;
mod unbounded_retry;
mod uncapped_backoff;
mod unsafe_write_retry;

use crate::diagnostic::{Diagnostic, Fix, Label, Span};
use crate::engine::Settings;
use crate::model::{FileModel, RetrySite, SiteKind};
use crate::registry::{Level, Rule};

/// Collects the findings of one file.
pub(crate) struct Context<'s> {
    settings: &'s Settings,
    out: Vec<Diagnostic>,
    /// The file's functions that retry by themselves (for nested retries).
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

/// Every rule with its check.
const CHECKS: &[(Rule, Check)] = &[
    (Rule::UnboundedRetry, unbounded_retry::check),
    (Rule::FixedDelay, fixed_delay::check),
    (Rule::MissingJitter, missing_jitter::check),
    (Rule::RetriesClientError, retries_client_error::check),
    (Rule::KeyInLoop, key_in_loop::check),
    (Rule::IgnoresRetryAfter, ignores_retry_after::check),
    (Rule::UncappedBackoff, uncapped_backoff::check),
    (Rule::BlockingSleepInAsync, blocking_sleep_in_async::check),
    (Rule::UnsafeWriteRetry, unsafe_write_retry::check),
    (Rule::NestedRetry, nested_retry::check),
    (Rule::NoDelay, no_delay::check),
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
    call: &crate::engine::SiteCall,
    elsewhere: &str,
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
    let mut cx = Context {
        settings,
        out: Vec::new(),
        retrying: model
            .retrying_fns
            .iter()
            .map(|(name, owner, at)| nested_retry::Retrying {
                name: name.clone(),
                owner: owner.clone(),
                inner: Some(*at),
            })
            .collect(),
    };
    for site in &model.sites {
        let first = cx.out.len();
        for (rule, check) in CHECKS {
            if site.supervisor && !PACING.contains(rule) {
                continue;
            }
            if cx.enabled(*rule) {
                check(site, &mut cx);
            }
        }
        // Facts taken from another file say where they come from; from elsewhere in this
        // file, a label says it there.
        for d in &mut cx.out[first..] {
            for (span, field) in &site.origins {
                d.secondary
                    .push(label(*span, format!("`{field}` holds this by default")));
            }
            for (name, at) in &site.evidence {
                d.notes.push(format!("uses `{name}`, defined at {at}"));
                if let Some((path, line)) = at.rsplit_once(':') {
                    if let Ok(line) = line.parse() {
                        d.elsewhere.push(crate::diagnostic::Elsewhere {
                            path: path.to_owned(),
                            line,
                            message: format!("`{name}` is defined here"),
                        });
                    }
                }
            }
        }
    }
    // A key that two retry sites make per attempt (a loop inside a function that also retries
    // by calling itself) is still made per attempt once hoisted out of the loop: no fix then.
    let mut keys: std::collections::HashMap<crate::diagnostic::Span, usize> =
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

#[cfg(test)]
mod tests {
    use super::CHECKS;
    use crate::registry::Rule;

    #[test]
    fn every_rule_has_exactly_one_check() {
        // RA100 is reported by the suppression pass (src/suppress.rs), not by a check.
        for rule in Rule::ALL.iter().filter(|r| **r != Rule::UnusedSuppression) {
            assert_eq!(
                CHECKS.iter().filter(|(r, _)| r == rule).count(),
                1,
                "{rule} must have one check"
            );
        }
    }
}
