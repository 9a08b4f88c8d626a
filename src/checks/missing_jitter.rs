//! RA003 missing-jitter: the wait grows but no randomness enters it.

use super::{label, site_label, Context};
use crate::analysis::{Delay, DelayKind, RetrySite};
use crate::checks::registry::Rule;

fn grows_without_jitter(delay: &Delay) -> bool {
    delay.kind == DelayKind::Growing && !delay.jitter
}

/// A server hint whose fallback (no hint sent) grows without jitter.
fn falls_back_without_jitter(delay: &Delay) -> bool {
    delay.kind == DelayKind::Server && delay.fallback == Some((DelayKind::Growing, false))
}

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    for delay in &site.delays {
        let text = if grows_without_jitter(delay) {
            site.policy
                .as_ref()
                .and_then(|a| a.jitter.as_deref())
                .unwrap_or(
                    "the wait grows, but clients that failed together still wait exactly as long",
                )
        } else if falls_back_without_jitter(delay) {
            "without a server hint the wait grows, but clients that failed together still wait exactly as long"
        } else {
            continue;
        };
        cx.report(
            Rule::MissingJitter,
            label(delay.span, text),
            vec![site_label(site)],
            Vec::new(),
        );
    }
}
