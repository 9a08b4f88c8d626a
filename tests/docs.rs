//! The documentation, as ruff and clippy ship theirs: a short README whose two set-up commands
//! are the first thing a reader meets, the rest in `docs/` and `CONTRIBUTING.md`, and every
//! relative link between them leading somewhere. The rule pages and the README's rule table are
//! kept current by `tests/rules.rs`; the samples by `tests/readme.rs`, `tests/formats.rs` and
//! `tests/config.rs`.

#![cfg(feature = "cli")]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use retry_audit::retry::{Decision, Transient};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The README, `CONTRIBUTING.md` and every Markdown page under `docs/`.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).expect("docs is listable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The lines of `text` outside fenced code blocks, with their inline code removed.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
            } else {
                kept.push_str("code");
            }
        }
        out.push(kept);
    }
    out
}

/// The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks; inline code keeps its text).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            let heading = line.trim_start_matches('#');
            if heading.starts_with(' ') {
                out.insert(anchor(heading));
            }
        }
    }
    out
}

/// The targets of the inline links and images of `line`: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_owned());
        rest = &after[end..];
    }
    out
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let name = page
            .strip_prefix(root())
            .unwrap_or(&page)
            .display()
            .to_string();
        for line in prose(&text) {
            for target in link_targets(&line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, fragment) = match target.split_once('#') {
                    Some((path, fragment)) => (path, Some(fragment)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().expect("a directory").join(path)
                };
                if !file.exists() {
                    broken.push(format!("{name}: {target}: no such file"));
                    continue;
                }
                if let Some(fragment) = fragment {
                    let is_markdown = file.extension().is_some_and(|e| e == "md");
                    if !is_markdown || !anchors(&read(&file)).contains(fragment) {
                        broken.push(format!("{name}: {target}: no such heading"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The README stays short, and its two set-up commands, which work with nothing but Rust
/// installed (build and run the auditor; run the tests), are the first thing a reader meets: in
/// its first section and first code block.
#[test]
fn the_readme_is_short_and_starts_with_its_two_set_up_commands() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; keep it at 300 or fewer"
    );
    let first_heading = readme
        .lines()
        .find(|l| l.starts_with("## "))
        .expect("a section");
    assert_eq!(first_heading, "## Quick start");
    let open = readme.find("```").expect("a code block");
    // The end of the first section: the second `## ` heading.
    let first = readme.find("\n## ").expect("a section");
    let second = readme[first + 1..]
        .find("\n## ")
        .map_or(readme.len(), |n| first + 1 + n);
    assert!(
        open < second,
        "the first code block is in the first section"
    );
    let body_start = open + readme[open..].find('\n').expect("a fence line") + 1;
    let body = &readme[body_start..body_start + readme[body_start..].find("```").expect("closed")];
    let commands: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        commands,
        ["cargo run --release -- fixtures/", "cargo test --workspace"],
        "the set-up commands"
    );
    let before = &readme[..open];
    assert!(
        before.contains("only Rust"),
        "what the commands need is said"
    );
}

/// The Rust examples of the README parse and are clean (the README shows the fix, not defects).
#[test]
fn the_readme_s_rust_examples_are_clean() {
    let readme = read(&root().join("README.md"));
    let mut rest = readme.as_str();
    let mut seen = 0;
    while let Some(at) = rest.find("```rust\n") {
        let body = &rest[at + "```rust\n".len()..];
        let end = body.find("```").expect("a closing fence");
        let found = retry_audit::check_source(&body[..end], &retry_audit::Settings::preview())
            .expect("the example parses");
        assert!(found.is_empty(), "{found:?}");
        seen += 1;
        rest = &body[end..];
    }
    assert!(seen > 0, "the README shows `#[retryable]`");
}

/// Every page of `docs/` is listed in the index, `docs/README.md`: each page of the folder
/// itself, and each subfolder (`rules/`), whose pages its own index or listing presents.
#[test]
fn the_docs_index_links_every_page() {
    let index = read(&root().join("docs/README.md"));
    for page in pages() {
        let Ok(relative) = page.strip_prefix(root().join("docs")) else {
            continue;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        if relative == "README.md" {
            continue;
        }
        let linked = match relative.split_once('/') {
            Some((folder, _)) => index.contains(&format!("]({folder}/")),
            None => index.contains(&format!("]({relative})")),
        };
        assert!(linked, "docs/README.md does not link {relative}");
    }
}

// ------------------------------------------------------- what the runtime retries (defect 11)

/// The `io::ErrorKind` named in a row of the table.
fn kind(name: &str) -> Option<std::io::ErrorKind> {
    use std::io::ErrorKind as K;
    Some(match name {
        "ConnectionRefused" => K::ConnectionRefused,
        "ConnectionAborted" => K::ConnectionAborted,
        "NotConnected" => K::NotConnected,
        "Interrupted" => K::Interrupted,
        "WouldBlock" => K::WouldBlock,
        "TimedOut" => K::TimedOut,
        "ConnectionReset" => K::ConnectionReset,
        "NotFound" => K::NotFound,
        "PermissionDenied" => K::PermissionDenied,
        "InvalidInput" => K::InvalidInput,
        "InvalidData" => K::InvalidData,
        "UnexpectedEof" => K::UnexpectedEof,
        _ => return None,
    })
}

/// The decision a row's second cell names.
fn decision(cell: &str) -> Option<&'static str> {
    let word = cell
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| !c.is_alphabetic());
    match word {
        "retried" => Some("retry"),
        "stops" => Some("stop"),
        "ambiguous" => Some("ambiguous"),
        _ => None,
    }
}

fn name_of(d: Decision) -> &'static str {
    match d {
        Decision::Retry { .. } => "retry",
        Decision::Stop => "stop",
        Decision::Ambiguous => "ambiguous",
    }
}

/// docs/macro.md says what the runtime retries, in a table: each HTTP status and
/// `io::ErrorKind` it names gets the decision it gives (the README once said connection failures
/// were retried, while a timeout or a reset connection is retried only when resending is safe).
#[test]
fn what_is_retried_is_what_the_runtime_decides() {
    let page = read(&root().join("docs/macro.md"));
    let mut statuses = 0;
    let mut kinds = 0;
    for row in page.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(&failure), Some(&said)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(said) = decision(said) else {
            continue;
        };
        // What follows "but" is the exception, said in another row.
        let listed = failure.split(" but ").next().unwrap_or(failure);
        let codes: Vec<&str> = listed
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, code)| code)
            .collect();
        if failure.starts_with("HTTP status") {
            for status in codes.iter().filter_map(|c| c.parse::<u16>().ok()) {
                assert_eq!(
                    name_of(Decision::for_status(status)),
                    said,
                    "{status}: {row}"
                );
                statuses += 1;
            }
            if failure.contains("every other `5xx`") {
                for status in (500..600).filter(|s| ![501, 505].contains(s)) {
                    assert_eq!(name_of(Decision::for_status(status)), said, "{status}");
                }
            }
        } else if failure.contains("io::ErrorKind") {
            for kind in codes.iter().filter_map(|c| kind(c)) {
                let error = std::io::Error::from(kind);
                assert_eq!(name_of(error.decision()), said, "{kind:?}: {row}");
                kinds += 1;
            }
        }
    }
    assert!(
        statuses >= 10 && kinds >= 10,
        "the table names statuses and kinds"
    );
    assert!(
        !page.contains("connection failures)"),
        "a timeout or a reset connection is not retried like a refused one"
    );
}
