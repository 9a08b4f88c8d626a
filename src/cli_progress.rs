//! The progress bar of a long scan: files checked / files found and the current rate, drawn by
//! `indicatif` on standard error, and only when a person is watching a report meant for people.
//! The scan itself ([`retry_audit::pipeline::scan`]) knows nothing of it: it is told of each file through
//! [`Progress`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use retry_audit::pipeline::scan::Progress;

use super::Format;

/// A scan that ends sooner shows no bar at all (it would only flicker).
const DELAY: Duration = Duration::from_millis(500);

/// The delay before the bar shows: [`DELAY`], or `RETRY_AUDIT_PROGRESS_DELAY_MS` milliseconds
/// (for tests, whose scans end sooner than a person would notice on a fast machine).
fn delay() -> Duration {
    std::env::var("RETRY_AUDIT_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}

/// Whether to show a bar: never for the machine formats (json, sarif, github, gitlab,
/// cargo-json), never when standard error is not a terminal, never with `--quiet`.
pub(crate) fn should_show(format: Format, stderr_is_terminal: bool, quiet: bool) -> bool {
    !super::cli_output::is_machine(format) && stderr_is_terminal && !quiet
}

/// The bar: hidden until the scan has run for [`delay`], cleared when dropped (before the report
/// is written).
pub(crate) struct Bar {
    inner: ProgressBar,
    started: Instant,
    delay: Duration,
    shown: AtomicBool,
}

impl Bar {
    pub(crate) fn new() -> Bar {
        let style = ProgressStyle::with_template("{bar:40} {pos}/{len} files, {rate}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "rate",
                |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = write!(out, "{:.0} files/s", state.per_sec());
                },
            )
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(style);
        Bar {
            inner: bar,
            started: Instant::now(),
            delay: delay(),
            shown: AtomicBool::new(false),
        }
    }
}

impl Progress for Bar {
    fn start(&self, files: usize) {
        self.inner.set_length(files as u64);
    }

    fn advance(&self) {
        self.inner.inc(1);
        if !self.shown.load(Ordering::Relaxed)
            && self.started.elapsed() >= self.delay
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.inner.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.inner.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_is_for_people_watching_a_terminal() {
        for format in [Format::Human, Format::Concise] {
            assert!(should_show(format, true, false), "{format:?}");
            assert!(
                !should_show(format, false, false),
                "{format:?}: not a terminal"
            );
            assert!(!should_show(format, true, true), "{format:?}: --quiet");
        }
        for format in [
            Format::Json,
            Format::Sarif,
            Format::Github,
            Format::Gitlab,
            Format::CargoJson,
        ] {
            for (tty, quiet) in [(true, false), (false, false), (true, true)] {
                assert!(!should_show(format, tty, quiet), "{format:?} {tty} {quiet}");
            }
        }
    }

    #[test]
    fn the_bar_counts_files_and_stays_hidden_at_first() {
        let bar = Bar::new();
        bar.start(3);
        bar.advance();
        bar.advance();
        assert_eq!(bar.inner.position(), 2);
        assert_eq!(bar.inner.length(), Some(3));
        assert!(!bar.shown.load(Ordering::Relaxed), "not before {DELAY:?}");
    }
}
