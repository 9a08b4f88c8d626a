//! RA009 unsafe-write-retry: a non-idempotent request is resent with no idempotency key.

use super::{label, site_label, Context};
use crate::model::RetrySite;
use crate::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    if site.sends_key || site.resend_safe {
        return;
    }
    if let Some(write) = site.writes.first() {
        cx.report(
            Rule::UnsafeWriteRetry,
            label(
                *write,
                "a write resent without an idempotency key may be applied twice",
            ),
            vec![site_label(site)],
            Vec::new(),
        );
    }
}
