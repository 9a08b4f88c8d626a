//! RA006 ignores-retry-after: 429 or 503 is retried and the server's wait hint is never read.

use super::{label, site_label, Context};
use crate::analysis::{RetrySite, StatusRetry};
use crate::checks::registry::Rule;

/// A condition that picks out 429 or 503 by name and goes round again on it (not merely "any
/// failure", which RA004 is about).
fn retries_throttling(retry: &StatusRetry) -> bool {
    retry.names_throttling && (retry.statuses.contains(429) || retry.statuses.contains(503))
}

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    if site.reads_retry_after {
        return;
    }
    let Some(retry) = site.statuses.iter().find(|r| retries_throttling(r)) else {
        return;
    };
    let which: Vec<String> = [429, 503]
        .into_iter()
        .filter(|c| retry.statuses.contains(*c))
        .map(|c| c.to_string())
        .collect();
    cx.report(
        Rule::IgnoresRetryAfter,
        label(
            retry.span,
            format!(
                "retries {} without reading `Retry-After`",
                which.join(" and ")
            ),
        ),
        vec![site_label(site)],
        Vec::new(),
    );
}
