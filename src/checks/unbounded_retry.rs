//! RA001 unbounded-retry: the site can retry forever.

use super::{label, Context};
use crate::analysis::{Bound, RetrySite, SiteKind};
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    if site.kind == SiteKind::Helper || site.bound != Bound::Unbounded {
        return;
    }
    let advice = site.policy.as_ref().and_then(|a| a.bound.as_deref());
    let primary = match site.kind {
        SiteKind::Policy => label(
            site.head,
            advice.unwrap_or(
                "this policy never runs out: nothing limits its attempts or the time they take",
            ),
        ),
        SiteKind::Recursion => label(site.head, "calls itself again on failure, with no limit"),
        _ => label(site.head, "nothing but success ends this loop"),
    };
    let mut secondary = Vec::new();
    if let Some(path) = site.retry_path {
        secondary.push(label(path, "goes round again on failure"));
    }
    cx.report(Rule::UnboundedRetry, primary, secondary, Vec::new());
}
