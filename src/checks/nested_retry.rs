//! RA010 nested-retry: a retry site's operation calls a function that retries by itself.
//!
//! Within one file this check runs with the others; across files the front end gathers every
//! file's retrying functions first (see [`crate::engine::nested_retries`]).

use super::{label, site_label, Context};
use crate::diagnostic::Span;
use crate::model::{RetrySite, SiteKind};
use crate::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    let retrying = std::mem::take(&mut cx.retrying);
    check_against(site, &retrying, cx);
    cx.retrying = retrying;
}

/// Reports the calls of `site` to functions of `retrying` (name, where it retries in this file,
/// or where it is in another file, for the note).
pub(super) fn check_against(
    site: &RetrySite,
    retrying: &[(String, Option<Span>, Option<String>)],
    cx: &mut Context<'_>,
) {
    if site.kind == SiteKind::Policy {
        return;
    }
    for (callee, call) in &site.calls {
        if *callee == site.function {
            continue;
        }
        let Some((_, inner, elsewhere)) = retrying.iter().find(|(n, _, _)| n == callee) else {
            continue;
        };
        let mut secondary = vec![site_label(site)];
        if let Some(inner) = inner {
            secondary.push(label(*inner, format!("`{callee}` retries here too")));
        }
        let notes = elsewhere
            .iter()
            .map(|at| format!("`{callee}` retries by itself at {at}"))
            .collect();
        cx.report(
            Rule::NestedRetry,
            label(
                *call,
                format!("`{callee}` retries by itself: the attempts multiply"),
            ),
            secondary,
            notes,
        );
    }
}
