//! RA004 retries-client-error: the retry condition admits a 4xx other than 408 and 429.

use super::{label, site_label, Context};
use crate::model::RetrySite;
use crate::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    for retry in &site.statuses {
        let permanent = retry.statuses.permanent_client_errors();
        if permanent.is_empty() {
            continue;
        }
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
}
