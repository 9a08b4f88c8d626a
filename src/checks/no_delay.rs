//! RA011 no-delay: the site goes round again with no wait at all.

use super::{label, site_label, Context};
use crate::analysis::{RetrySite, SiteKind, Unpaced};
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    // A deliberate immediate re-run of one picked-out condition (a name collision, a stale
    // pooled connection) is not a storm; a blind resend is.
    if site.kind == SiteKind::Helper {
        return;
    }
    // One immediate second try (a race lost, a pooled connection found stale) is no storm.
    if site.second_try_only {
        return;
    }
    if let Some(unpaced) = site.unpaced {
        let primary = match unpaced {
            Unpaced::Skips(path) => {
                label(path, "this way round retries at once, skipping the wait")
            }
            Unpaced::Spent(test) => label(
                test,
                "once this fails, the loop goes round again at once, with no wait",
            ),
        };
        let mut secondary = vec![site_label(site)];
        secondary.extend(never_awaited(site));
        cx.report(Rule::NoDelay, primary, secondary, Vec::new());
        return;
    }
    if !site.delays.is_empty() || !site.blind || site.paced_inside {
        return;
    }
    let mut secondary = Vec::new();
    if let Some(path) = site.retry_path {
        secondary.push(label(path, "goes round again at once"));
    }
    secondary.extend(never_awaited(site));
    cx.report(
        Rule::NoDelay,
        label(
            site.head,
            site.policy
                .as_ref()
                .and_then(|a| a.immediate.as_deref())
                .unwrap_or("retries immediately, with no wait between attempts"),
        ),
        secondary,
        Vec::new(),
    );
}

/// The waits the site makes and never awaits: a future dropped unpolled waits nothing.
fn never_awaited(site: &RetrySite) -> impl Iterator<Item = crate::checks::diagnostic::Label> + '_ {
    site.unawaited.iter().map(|at| {
        label(
            *at,
            "this wait is never awaited: the future is dropped and waits nothing",
        )
    })
}
