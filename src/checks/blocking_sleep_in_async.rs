//! RA008 blocking-sleep-in-async: `std::thread::sleep` in an async retry.

use super::{label, site_label, Context};
use crate::analysis::RetrySite;
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    if !site.in_async {
        return;
    }
    for delay in site.delays.iter().filter(|d| d.blocking) {
        cx.report(
            Rule::BlockingSleepInAsync,
            label(
                delay.span,
                "blocks the executor's thread, and every task on it, for the whole wait",
            ),
            vec![site_label(site)],
            Vec::new(),
        );
    }
}
