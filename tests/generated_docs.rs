//! The documentation's generated blocks that no other test writes: each is the output a program
//! of this repository wrote, so that no figure or claim in them is typed by hand.
//!
//! - `overhead` and `bench`: the last blessed outputs of the benchmarks, kept in
//!   `benches/results/` with the date, the commit and the machine they were measured on
//!   (`benches/overhead.py --bless`, `BLESS=1 benches/scan.sh`, which write both the file and
//!   the block). CI does not measure again; it checks the block is the file.
//! - `ci-steps`: the steps of `.ci/run` and what it says it does not run, read from the script.
//!
//! `BLESS=1 cargo test --test generated_docs` rewrites a block from its source instead of
//! failing. Blocks are found by their markers in `README.md` or any `docs/**/*.md`.

mod blocks;

use std::fmt::Write as _;
use std::fs;

use blocks::{root, Block};

/// The block `name` is the blessed output `file` (relative to the crate's root).
fn block_is_blessed_file(name: &str, file: &str, bless: &str) {
    let path = root().join(file);
    let blessed =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {file}: {e} ({bless})"));
    let words = blessed.split_whitespace().collect::<Vec<_>>().join(" ");
    for what in ["at commit ", " on 20", " cores", "rustc "] {
        assert!(
            words.contains(what),
            "{file} does not say where and when it was measured ({what:?})"
        );
    }
    Block::find(name).expect(
        &format!("\n{blessed}"),
        &format!("{bless}, or BLESS=1 cargo test --test generated_docs to copy {file}"),
    );
}

#[test]
fn the_overhead_block_is_the_blessed_benchmark_output() {
    block_is_blessed_file(
        "overhead",
        "benches/results/macro_overhead.md",
        "benches/overhead.py --bless",
    );
}

#[test]
fn the_bench_block_is_the_blessed_benchmark_output() {
    block_is_blessed_file(
        "bench",
        "benches/results/scan.md",
        "BLESS=1 benches/scan.sh",
    );
}

/// The quoted argument of a `step "..."` or `not_run "..."` line of `.ci/run`, unescaped.
fn quoted(line: &str, command: &str) -> Option<String> {
    let rest = line.trim().strip_prefix(command)?.strip_prefix(" \"")?;
    let text = rest.strip_suffix('"')?;
    Some(text.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// The block `ci-steps`: the steps of `.ci/run` in order, then what it does not run.
fn ci_steps() -> String {
    let script = fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let steps: Vec<String> = script
        .lines()
        .filter_map(|line| quoted(line, "step"))
        .filter(|step| step != "all checks passed")
        .collect();
    let not_run: Vec<String> = script
        .lines()
        .filter_map(|line| quoted(line, "not_run"))
        .collect();
    assert!(steps.len() > 5, "the steps of .ci/run are read: {steps:?}");
    let mut out = String::from(
        "What `.ci/run` runs, in order (read from the script by `tests/generated_docs.rs`):\n\n",
    );
    for (i, step) in steps.iter().enumerate() {
        let _ = writeln!(out, "{}. {step}", i + 1);
    }
    if !not_run.is_empty() {
        out.push_str("\nWhat it does not run:\n\n");
        for item in &not_run {
            let _ = writeln!(out, "- {item}");
        }
    }
    out
}

#[test]
fn the_ci_steps_block_is_read_from_ci_run() {
    Block::find("ci-steps").expect(
        &format!("\n{}", ci_steps()),
        "BLESS=1 cargo test --test generated_docs",
    );
}
