//! RA005 key-in-loop: an idempotency/request/dedup key is made per attempt.

use super::{label, site_label, Context};
use crate::analysis::RetrySite;
use crate::checks::registry::Rule;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    for key in &site.keys {
        let mut secondary = vec![site_label(site)];
        if let Some(via) = key.via {
            secondary.push(label(via, format!("`{}` is called here", key.constructor)));
        }
        cx.report(
            Rule::KeyInLoop,
            label(
                key.span,
                format!(
                    "`{}` makes a new key for every attempt, sent as {}",
                    key.constructor, key.used_as
                ),
            ),
            secondary,
            Vec::new(),
        );
        cx.with_fix(Rule::KeyInLoop, key.hoist.clone());
    }
}
