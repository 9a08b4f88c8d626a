//! The documentation's sample output is real: this test runs the binary on the sample input shown
//! in docs/usage.md and compares what it prints with the page's text; the macro's before and
//! after examples (docs/macro.md) are what they say.
//!
//! `BLESS=1 cargo test --test readme` rewrites the sample output instead of failing (`BLESS` must
//! be `1`). The blocks are found by their markers in `README.md` or any `docs/**/*.md`.

#![cfg(feature = "cli")]

mod blocks;

use std::fs;
use std::process::Command;

use blocks::Block;

/// The body of the single fenced code block in `section`.
fn code_block(section: &str) -> &str {
    let open = section.find("```").expect("a fenced code block");
    let body_start = open + section[open..].find('\n').expect("a fence line") + 1;
    let close = body_start + section[body_start..].find("```").expect("a closing fence");
    &section[body_start..close]
}

#[test]
fn readme_sample_output_is_what_the_binary_prints() {
    let input_block = Block::find("sample-input");
    let input = code_block(input_block.body());

    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("src")).expect("src dir");
    fs::write(dir.path().join("src/payments.rs"), input).expect("sample written");
    let out = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--color", "never", "src/"])
        .current_dir(dir.path())
        .output()
        .expect("binary runs");
    assert_eq!(out.status.code(), Some(1), "the sample has errors");
    let printed = String::from_utf8(out.stdout).expect("UTF-8 output");

    let output_block = Block::find("sample-output");
    let shown = code_block(output_block.body());
    if shown != printed {
        if blocks::blessing() {
            let new = output_block.with_body(&format!("\n```text\n{printed}```\n"));
            fs::write(&output_block.path, new).expect("the sample output rewritten");
            return;
        }
        panic!(
            "{}'s sample output is stale; run `BLESS=1 cargo test --test readme`.\n\
             --- README ---\n{shown}\n--- binary ---\n{printed}",
            output_block.path.display()
        );
    }
}

/// The first fenced `rust` block after `heading` in the README or a page of `docs/`.
fn rust_block_after(heading: &str) -> String {
    let doc = blocks::doc_files()
        .into_iter()
        .map(|path| blocks::read(&path))
        .find(|text| text.contains(heading))
        .unwrap_or_else(|| panic!("README.md and docs/**/*.md lack {heading}"));
    let rest = &doc[doc.find(heading).expect("found")..];
    let open = rest.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let close = open + rest[open..].find("```").expect("a closing fence");
    rest[open..close].to_owned()
}

#[test]
fn readme_before_is_reported_and_after_is_clean() {
    let settings = retry_audit::Settings::preview();
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
        rules(&rust_block_after("\n## Before\n")),
        ["RA001", "RA002", "RA004", "RA005"],
        "the README's `Before` example is said to break these four rules"
    );
    assert_eq!(
        rules(&rust_block_after("\n## After\n")),
        Vec::<&str>::new(),
        "the README's `After` example is said to be clean"
    );
}
