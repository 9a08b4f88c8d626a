//! RA009 unsafe-write-retry: a non-idempotent request is resent with no idempotency key.

use super::{label, site_label, Context};
use crate::analysis::{RetrySite, SiteKind};
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    if site.sends_key || site.resend_safe {
        return;
    }
    let Some(write) = site.writes.first() else {
        return;
    };
    // A runner handed an operation written elsewhere (`let action = || client.send(..);
    // Retry::start(strategy, action)`): reported at the runner, which does the resending,
    // pointing at the write.
    let outside = write.start < site.head.start || write.end > site.head.end;
    if site.kind == SiteKind::Helper && outside {
        cx.report(
            Rule::UnsafeWriteRetry,
            label(
                site.head,
                "this resends a write without an idempotency key on each attempt: it may be applied twice",
            ),
            vec![label(*write, "the write, made on each attempt")],
            Vec::new(),
        );
        return;
    }
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
