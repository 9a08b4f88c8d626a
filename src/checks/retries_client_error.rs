//! RA004 retries-client-error: the retry condition admits a 4xx other than 408 and 429, or the
//! site retries every error of a remote request without looking at it.

use super::{label, site_label, Context};
use crate::analysis::{RetrySite, SiteKind};
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    let mut reported = false;
    for retry in &site.statuses {
        let permanent = retry.statuses.permanent_client_errors();
        if permanent.is_empty() {
            continue;
        }
        reported = true;
        cx.report(
            Rule::RetriesClientError,
            label(
                retry.span,
                format!("{} leads to another attempt", retry.reason),
            ),
            vec![site_label(site)],
            vec![format!(
                "permanent client errors retried: {}",
                permanent.describe()
            )],
        );
    }
    // A site that tests statuses says what it retries through them (reported above or not).
    // One second try at most (`for _ in 0..2`, a stale pooled connection replaced) is a
    // protocol step more than a policy: left alone.
    if reported || !site.statuses.is_empty() || site.second_try_only {
        return;
    }
    if let Some(any) = &site.unclassified {
        let message = format!(
            "every error of `{}` leads to another attempt, whichever it is",
            any.op
        );
        // A retry crate's runner is the site: the finding goes there, the request it runs
        // (in a closure, perhaps bound lines before) is shown beside it.
        let (primary, secondary) = if site.kind == SiteKind::Helper {
            (
                label(site.head, message),
                label(any.span, "the request this runs"),
            )
        } else {
            (label(any.span, message), site_label(site))
        };
        cx.report(
            Rule::RetriesClientError,
            primary,
            vec![secondary],
            vec![
                "nothing tests the error before going round again: a refused login, a bad \
                 request or a missing resource is retried like a timeout"
                    .to_string(),
            ],
        );
    }
}
