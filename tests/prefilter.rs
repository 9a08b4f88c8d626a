//! The pre-filter (`src/analysis/prefilter.rs`) is sound: a file checked with the function bodies that cannot
//! matter blanked gives exactly the findings, and the crate-wide facts, of a full parse.
//!
//! The same holds for a file parsed a window of function bodies at a time (a very large file).
//!
//! Every fixture and adversarial input is compared here; the ignored test does the same on a
//! whole corpus and reports how much was blanked:
//! `RETRY_AUDIT_CORPUS=DIR cargo test --release --test prefilter -- --ignored --nocapture`
//! (`DIR` made by `../shared/corpus/fetch.sh DIR --all`).

#![cfg(feature = "analysis")]

use std::path::{Path, PathBuf};

use retry_audit::analysis::prefilter;
use retry_audit::analysis::Extensions;
use retry_audit::checks::Settings;
use retry_audit::pipeline::engine;

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// What a check produced, printed: the findings with their spans, labels and messages, the
/// crate-wide facts, or the error.
fn outcome(text: &str, full_parse: bool) -> String {
    let mut settings = Settings::preview();
    settings.full_parse = full_parse;
    format!(
        "{:#?}",
        engine::analyse(text, &settings, None, &mut engine::PhaseTimes::default()).map(|a| (
            a.diagnostics.clone(),
            format!("{:?}", (a.retrying, a.calls))
        ))
    )
}

/// Compares both modes on `text`; returns (bytes blanked, whether the pruned text parsed).
fn compare(path: &Path, text: &str) -> (usize, bool) {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let pruned = prefilter::pruned(body, &Extensions::default());
    if let Some(pruned) = &pruned {
        assert_eq!(pruned.len(), body.len(), "{}: length kept", path.display());
        let lines = |s: &str| s.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>();
        assert_eq!(lines(pruned), lines(body), "{}: lines kept", path.display());
    }
    let full = outcome(text, true);
    let fast = outcome(text, false);
    assert!(
        full == fast,
        "{}: the pre-filter changed the outcome\n--- full parse\n{full}\n--- pruned\n{fast}",
        path.display()
    );
    proc_macro2::extra::invalidate_current_thread_spans();
    match pruned {
        Some(p) => {
            let blanked = p.bytes().zip(body.bytes()).filter(|(a, b)| a != b).count();
            let parsed = syn::parse_file(&p).is_ok();
            proc_macro2::extra::invalidate_current_thread_spans();
            (blanked, parsed)
        }
        None => (0, true),
    }
}

/// Runs `f` on a thread with the parser's large stack (deeply nested inputs recurse deeply).
fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(engine::PARSE_STACK)
            .spawn_scoped(s, f)
            .expect("a thread")
            .join()
            .expect("no panic")
    })
}

/// Every fixture and adversarial input, the storm example and the pre-filter's own source.
fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = rust_files(&root.join("fixtures"));
    files.extend(rust_files(&root.join("tests/adversarial")));
    files.push(root.join("examples/storm.rs"));
    files.push(root.join("src/analysis/prefilter.rs"));
    assert!(files.len() > 50, "the fixtures are found: {}", files.len());
    files
}

#[test]
fn pruned_and_full_parses_agree_on_every_fixture_and_adversarial_input() {
    let files = inputs();
    let blanked = on_big_stack(|| {
        let mut blanked = 0;
        for path in &files {
            let bytes = std::fs::read(path).expect("readable");
            let text = String::from_utf8_lossy(&bytes);
            blanked += compare(path, &text).0;
        }
        blanked
    });
    // The fixtures have helpers the pre-filter drops: the comparison is not vacuous.
    assert!(blanked > 0);
}

/// What a check produced with every function body that keeps itself parsed in a window of its
/// own (and the bodies it names): the findings, and the crate-wide facts in source order.
fn outcome_in_windows(text: &str, window: Option<usize>) -> (String, usize) {
    let mut settings = Settings::preview();
    settings.parse_window = window;
    let mut times = engine::PhaseTimes::default();
    let result = engine::analyse(text, &settings, None, &mut times).map(|mut a| {
        a.retrying
            .sort_by_key(|(name, owner, at)| (at.line, at.column, name.clone(), owner.clone()));
        a.calls.sort_by_key(|c| (c.head.start, c.call.start));
        (a.diagnostics, format!("{:?}", (a.retrying, a.calls)))
    });
    (format!("{result:#?}"), times.windows)
}

/// Compares a whole parse of `text` with one in windows of `budget` bytes of bodies; returns
/// the number of windows.
fn compare_windows(path: &Path, text: &str, budget: usize) -> usize {
    let (whole, none) = outcome_in_windows(text, None);
    assert_eq!(
        none,
        0,
        "{}: an ordinary file is parsed whole",
        path.display()
    );
    let (parts, windows) = outcome_in_windows(text, Some(budget));
    assert!(
        whole == parts,
        "{}: windows changed the outcome\n--- whole\n{whole}\n--- in {windows} windows\n{parts}",
        path.display()
    );
    windows
}

#[test]
fn a_file_parsed_a_window_of_bodies_at_a_time_gives_the_findings_of_a_whole_parse() {
    // A very large file is parsed a window of function bodies at a time (the engine's
    // WINDOW_BYTES); here every window is one body, the most a window can leave out.
    let files = inputs();
    let windowed = on_big_stack(|| {
        let mut windowed = 0;
        for path in &files {
            let bytes = std::fs::read(path).expect("readable");
            let text = String::from_utf8_lossy(&bytes);
            windowed += usize::from(compare_windows(path, &text, 1) > 1);
        }
        windowed
    });
    // Most fixtures have several retry functions: the comparison is not vacuous.
    assert!(windowed > 40, "{windowed} files parsed in windows");
}

/// The windows of the corpus comparison: small enough that many real files are parsed in
/// several.
const WINDOW: usize = 16 << 10;

#[test]
#[ignore = "minutes: a whole corpus; RETRY_AUDIT_CORPUS=DIR cargo test --release --test prefilter -- --ignored --nocapture"]
fn pruned_and_full_parses_agree_on_a_corpus() {
    let dir = std::env::var_os("RETRY_AUDIT_CORPUS")
        .map(PathBuf::from)
        .expect("RETRY_AUDIT_CORPUS=DIR (made by ../shared/corpus/fetch.sh DIR --all)");
    let files = rust_files(&dir);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunks: Vec<&[PathBuf]> = files.chunks(files.len().div_ceil(threads).max(1)).collect();
    let totals = std::thread::scope(|s| {
        let workers: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                std::thread::Builder::new()
                    .stack_size(engine::PARSE_STACK)
                    .spawn_scoped(s, move || {
                        let (mut bytes, mut blanked, mut pruned_files, mut fell_back) =
                            (0, 0, 0, 0);
                        let mut windowed = 0;
                        for path in *chunk {
                            let Ok(raw) = std::fs::read(path) else {
                                continue;
                            };
                            let Ok(text) = String::from_utf8(raw) else {
                                continue;
                            };
                            let (b, parsed) = compare(path, &text);
                            windowed += usize::from(compare_windows(path, &text, WINDOW) > 1);
                            bytes += text.len();
                            blanked += b;
                            pruned_files += usize::from(b > 0);
                            fell_back += usize::from(!parsed);
                        }
                        (bytes, blanked, pruned_files, fell_back, windowed)
                    })
                    .expect("a thread")
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("no panic"))
            .fold((0, 0, 0, 0, 0), |a, b| {
                (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3, a.4 + b.4)
            })
    });
    let (bytes, blanked, pruned_files, fell_back, windowed) = totals;
    let permille = blanked * 1000 / bytes.max(1);
    println!(
        "{} files, {bytes} bytes: identical findings and facts; {blanked} bytes blanked \
         ({}.{} %) in {pruned_files} files; {fell_back} pruned texts did not parse (full parse used); \
         {windowed} files parsed in windows of {WINDOW} bytes of bodies gave the findings and facts of a whole parse",
        files.len(),
        permille / 10,
        permille % 10
    );
}
