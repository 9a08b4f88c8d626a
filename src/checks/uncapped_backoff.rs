//! RA007 uncapped-backoff: the wait grows with no maximum, past a minute within the bound.

use super::{label, site_label, Context};
use crate::analysis::{Bound, Delay, DelayKind, RetrySite};
use crate::checks::registry::Rule;

/// The longest wait a retry should ever make without a cap, in seconds.
const LIMIT_SECS: f64 = 60.0;

/// Whether a wait of `secs` is longer than a retry should ever wait without a cap.
#[must_use]
pub fn past_limit(secs: f64) -> bool {
    secs > LIMIT_SECS
}

fn grows_past_limit(delay: &Delay) -> bool {
    delay.kind == DelayKind::Growing && !delay.capped && delay.longest_secs.is_some_and(past_limit)
}

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    for delay in site.delays.iter().filter(|d| grows_past_limit(d)) {
        let how_long = match delay.longest_secs {
            Some(s) if s.is_finite() => format!("up to {}", human(s)),
            _ if site.bound == Bound::Unbounded => "without end".to_owned(),
            // The attempt limit is a setting of the callers (or theirs altogether).
            _ => "as far as the callers' attempt limit lets it".to_owned(),
        };
        cx.report(
            Rule::UncappedBackoff,
            label(
                delay.span,
                format!("the wait grows {how_long}, with no maximum"),
            ),
            vec![site_label(site)],
            site.policy.iter().filter_map(|a| a.cap.clone()).collect(),
        );
    }
}

/// `95 s`, `17 min`, `3.2 h`.
fn human(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}
