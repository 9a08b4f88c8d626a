//! RA002 fixed-delay: the wait between attempts is the same every time.

use super::{label, site_label, Context};
use crate::analysis::{Delay, DelayKind, RetrySite};
use crate::checks::registry::Rule;

fn is_fixed(delay: &Delay) -> bool {
    delay.kind == DelayKind::Constant && !delay.jitter
}

/// A server hint whose fallback (no hint sent) is a fixed wait.
fn falls_back_to_fixed(delay: &Delay) -> bool {
    delay.kind == DelayKind::Server && delay.fallback == Some((DelayKind::Constant, false))
}

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    for delay in &site.delays {
        let text = if is_fixed(delay) {
            if delay.ceiling {
                continue;
            }
            site.policy
                .as_ref()
                .and_then(|a| a.fixed.as_deref())
                .unwrap_or("waits the same time before every attempt")
        } else if falls_back_to_fixed(delay) {
            "when the server sends no wait hint, waits the same time before every attempt"
        } else {
            continue;
        };
        cx.report(
            Rule::FixedDelay,
            label(delay.span, text),
            vec![site_label(site)],
            Vec::new(),
        );
    }
}
