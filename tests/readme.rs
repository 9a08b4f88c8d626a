//! The documentation's sample output is real: this test runs the binary on the sample input shown
//! in docs/usage.md and compares what it prints with the page's text; the macro's before and
//! after examples (docs/macro.md) are what they say.
//!
//! `BLESS=1 cargo test --test readme` rewrites the sample output instead of failing.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::Command;

const INPUT: (&str, &str) = ("<!-- sample-input:start -->", "<!-- sample-input:end -->");
const OUTPUT: (&str, &str) = ("<!-- sample-output:start -->", "<!-- sample-output:end -->");

/// The text between two markers, and its byte range in `text`.
fn section<'t>(text: &'t str, (start, end): (&str, &str)) -> (&'t str, usize, usize) {
    let a = text
        .find(start)
        .unwrap_or_else(|| panic!("README.md lacks {start}"))
        + start.len();
    let b = a + text[a..]
        .find(end)
        .unwrap_or_else(|| panic!("README.md lacks {end}"));
    (&text[a..b], a, b)
}

/// The body of the single fenced code block in `section`.
fn code_block(section: &str) -> &str {
    let open = section.find("```").expect("a fenced code block");
    let body_start = open + section[open..].find('\n').expect("a fence line") + 1;
    let close = body_start + section[body_start..].find("```").expect("a closing fence");
    &section[body_start..close]
}

#[test]
fn readme_sample_output_is_what_the_binary_prints() {
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/usage.md");
    let readme = fs::read_to_string(&readme_path).expect("docs/usage.md is readable");
    let (input_section, _, _) = section(&readme, INPUT);
    let input = code_block(input_section);

    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("src")).expect("src dir");
    fs::write(dir.path().join("src/payments.rs"), input).expect("sample written");
    let out = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .args(["--color", "never", "src/"])
        .current_dir(dir.path())
        .output()
        .expect("binary runs");
    assert_eq!(out.status.code(), Some(1), "the sample has errors");
    let printed = String::from_utf8(out.stdout).expect("UTF-8 output");

    let (output_section, a, b) = section(&readme, OUTPUT);
    let shown = code_block(output_section);
    if shown != printed {
        if std::env::var_os("BLESS").is_some() {
            let new = format!("{}\n```text\n{printed}```\n{}", &readme[..a], &readme[b..]);
            fs::write(&readme_path, new).expect("docs/usage.md rewritten");
            return;
        }
        panic!(
            "docs/usage.md's sample output is stale; run `BLESS=1 cargo test --test readme`.\n\
             --- README ---\n{shown}\n--- binary ---\n{printed}"
        );
    }
}

/// The first fenced `rust` block after `heading` in the README.
fn rust_block_after<'t>(readme: &'t str, heading: &str) -> &'t str {
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README.md lacks {heading}"));
    let rest = &readme[at..];
    let open = rest.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let close = open + rest[open..].find("```").expect("a closing fence");
    &rest[open..close]
}

#[test]
fn readme_before_is_reported_and_after_is_clean() {
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/macro.md"))
        .expect("docs/macro.md is readable");
    let settings = retry_audit::Settings::default();
    let rules = |src: &str| -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = retry_audit::check_source(src, &settings)
            .expect("README example parses")
            .iter()
            .map(|d| d.rule.id())
            .collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(
        rules(rust_block_after(&readme, "## Before")),
        ["RA001", "RA002", "RA004", "RA005"],
        "the README's `Before` example is said to break these four rules"
    );
    assert_eq!(
        rules(rust_block_after(&readme, "## After")),
        Vec::<&str>::new(),
        "the README's `After` example is said to be clean"
    );
}
