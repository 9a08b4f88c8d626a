//! What a ruff or clippy user meets on first use (issue 32): the defects found trying every
//! documented feature from a fresh clone, and the conventions of ruff's command line. Each test
//! runs the binary in a temporary directory, as `tests/cli.rs` does.

#![cfg(feature = "cli")]

use std::path::Path;
use std::process::{Command, Stdio};

mod support;

use support::{temp, write, Run, UNBOUNDED_FIXED};

/// The binary run in `dir` with `args`, colour variables unset.
fn run(dir: &Path, args: &[&str]) -> Run {
    Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .output()
        .expect("the retry-audit binary runs")
        .into()
}

// ------------------------------------------------------------ defect 6: --diff --write-baseline

/// `--diff` writes no baseline: asking for both is a usage error, as `--statistics --diff` is,
/// and no file is written.
#[test]
fn diff_with_write_baseline_is_a_usage_error() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(
        dir.path(),
        &["--diff", "--write-baseline", "base.json", "."],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("--write-baseline") && run.stderr.contains("--diff"),
        "{}",
        run.stderr
    );
    assert!(
        !dir.path().join("base.json").exists(),
        "no baseline written"
    );
}

// ------------------------------------------------------------- defect 7: stale temporary files

/// A `kill -9` during `--fix` leaves the temporary file of the file being written. The next
/// `--fix` that writes into that directory removes such files of processes that are gone, and
/// leaves those of a running process (this test's) alone.
#[test]
fn fix_removes_the_temporary_files_a_killed_fix_left() {
    let dir = temp();
    write(dir.path(), "pay.rs", support::KEY_IN_LOOP);
    // A process id above Linux's largest (2^22): no such process runs.
    let stale = ".pay.rs.retry-audit-4294967-0.tmp";
    let running = format!(".pay.rs.retry-audit-{}-0.tmp", std::process::id());
    let other = ".pay.rs.retry-audit-notes.tmp";
    for name in [stale, running.as_str(), other] {
        write(dir.path(), name, "half a file");
    }
    let run = run(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("listable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut kept = vec![other.to_owned(), running, "pay.rs".to_owned()];
    kept.sort();
    assert_eq!(names, kept);
}
