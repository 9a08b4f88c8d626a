//! RA010 nested-retry: a retry site's operation calls a function that retries by itself.
//!
//! Within one file this check runs with the others; across files the front end gathers every
//! file's retrying functions first (see [`crate::pipeline::engine::nested_retries`]).

use super::{label, Context};
use crate::analysis::{RetrySite, SiteKind};
use crate::checks::registry::Rule;
use crate::source::Span;

pub(super) fn check(site: &RetrySite, cx: &mut Context<'_>) {
    let retrying = std::mem::take(&mut cx.retrying);
    check_against(site, &retrying, cx);
    cx.retrying = retrying;
}

/// A function of the file that retries by itself.
pub(super) struct Retrying {
    pub name: String,
    /// The type or trait whose method it is; `None` for a free function.
    pub owner: Option<String>,
    /// Where it retries.
    pub inner: Option<Span>,
}

/// Reports the calls of `site` to functions of `retrying` that the call reaches. `retrying` is
/// sorted by name (stably, so the first of a name is the first in the file): a file of many
/// retrying functions is looked up, not scanned, for every call.
pub(super) fn check_against(site: &RetrySite, retrying: &[Retrying], cx: &mut Context<'_>) {
    if site.kind == SiteKind::Policy {
        return;
    }
    for call in &site.calls {
        if call.name == site.function {
            continue;
        }
        let first = retrying.partition_point(|f| f.name < call.name);
        let Some(callee) = retrying[first..]
            .iter()
            .take_while(|f| f.name == call.name)
            .find(|f| call.via.reaches(f.owner.as_deref()))
        else {
            continue;
        };
        report_call(&call.name, call.span, site.head, callee.inner, None, cx);
    }
}

/// One RA010 finding: the call, the site's head, and where the callee retries (in this file, or
/// the path, line and column of its name in another).
pub(super) fn report_call(
    callee: &str,
    call: Span,
    head: Span,
    inner: Option<Span>,
    elsewhere: Option<(&str, usize, usize)>,
    cx: &mut Context<'_>,
) {
    let mut secondary = vec![label(head, "retry loop here")];
    if let Some(inner) = inner {
        secondary.push(label(inner, format!("`{callee}` retries here too")));
    }
    let notes = elsewhere
        .iter()
        .map(|(path, line, column)| {
            format!("`{callee}` retries by itself at {path}:{line}:{column}")
        })
        .collect();
    let first = cx.out.len();
    cx.report(
        Rule::NestedRetry,
        label(
            call,
            format!("`{callee}` retries by itself: the attempts multiply"),
        ),
        secondary,
        notes,
    );
    // The other file's retry, for the formats that can point there.
    let place = elsewhere.map(
        |(path, line, column)| crate::checks::diagnostic::Elsewhere {
            path: path.to_owned(),
            line,
            column,
            message: format!("`{callee}` retries here too"),
            note: 0,
        },
    );
    if let (Some(d), Some(place)) = (cx.out.get_mut(first..).and_then(<[_]>::first_mut), place) {
        d.elsewhere.push(place);
    }
}
