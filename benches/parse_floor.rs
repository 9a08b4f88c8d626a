//! The parse-only floor of the scan benchmark (`benches/scan.sh`): walks the same paths the way
//! `retry-audit` does (`.gitignore` honoured, hidden entries and `target` directories skipped),
//! then reads and `syn`-parses every `.rs` file on the same number of threads, and nothing else.
//! No analysis can be faster than this without skipping files.
//!
//! ```text
//! cargo run --release --example parse-floor -- [--jobs N] PATH...
//! ```
//!
//! Prints one line: files parsed, files that failed to parse or read, total bytes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

/// The stack of the worker threads, as `retry-audit` uses (deeply nested files recurse deeply).
const STACK: usize = 256 * 1024 * 1024;

fn main() {
    let mut jobs = std::thread::available_parallelism().map_or(1, usize::from);
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--jobs" || arg == "-j" {
            jobs = args
                .next()
                .and_then(|n| n.parse().ok())
                .expect("--jobs takes a number");
        } else {
            roots.push(PathBuf::from(arg));
        }
    }
    if roots.is_empty() {
        roots.push(PathBuf::from("."));
    }

    let mut files = Vec::new();
    for root in &roots {
        let walker = ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|entry| {
                !(entry.file_type().is_some_and(|t| t.is_dir()) && entry.file_name() == "target")
            })
            .build();
        for entry in walker.flatten() {
            let is_file = entry.file_type().is_some_and(|t| t.is_file());
            if is_file && entry.path().extension().is_some_and(|ext| ext == "rs") {
                files.push(entry.into_path());
            }
        }
    }

    let failed = AtomicUsize::new(0);
    let bytes = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(STACK)
        .build()
        .expect("worker threads");
    let parsed: usize = pool.install(|| {
        files
            .par_iter()
            .map(|path| {
                let parsed = std::fs::read(path).ok().and_then(|data| {
                    bytes.fetch_add(data.len(), Ordering::Relaxed);
                    let text = String::from_utf8(data).ok()?;
                    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                    syn::parse_file(text).ok().map(drop)
                });
                // With span locations on, the parser keeps each file's text in a per-thread map.
                proc_macro2::extra::invalidate_current_thread_spans();
                if parsed.is_none() {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                usize::from(parsed.is_some())
            })
            .sum()
    });
    println!(
        "parse-floor: {parsed} files parsed, {} failed, {} bytes, {jobs} threads",
        failed.into_inner(),
        bytes.into_inner()
    );
}
