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

// ------------------------------------------------------------------- defect 9: paths printed

/// Paths print as ruff and clippy print them: relative, without `./`, whether the scan starts
/// at `.` (the default), at `./src` or at `src`.
#[test]
fn paths_print_without_a_leading_dot_slash() {
    let dir = temp();
    write(dir.path(), "src/lib.rs", UNBOUNDED_FIXED);
    for args in [&[][..], &["."], &["./src"], &["src"], &["./src/lib.rs"]] {
        let mut all = vec!["--format", "concise"];
        all.extend_from_slice(args);
        let run = run(dir.path(), &all);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(
            run.stdout.starts_with("src/lib.rs:6:5: RA001 "),
            "{args:?}:\n{}",
            run.stdout
        );
    }
}

/// `cargo retry-audit` prints paths relative to the workspace root from any directory of it,
/// as cargo and clippy do, never `../src/http.rs`.
#[test]
fn cargo_retry_audit_prints_paths_from_the_workspace_root() {
    let dir = temp();
    std::fs::create_dir(dir.path().join(".git")).expect("repository marker");
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\nmembers = [\"crates/client\"]\n",
    );
    write(dir.path(), "src/http.rs", UNBOUNDED_FIXED);
    write(
        dir.path(),
        "crates/client/Cargo.toml",
        "[package]\nname = \"client\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(dir.path(), "crates/client/src/lib.rs", UNBOUNDED_FIXED);
    for at in ["", "src", "crates/client/src"] {
        let output = Command::new(env!("CARGO_BIN_EXE_cargo-retry-audit"))
            .args(["retry-audit", "--format", "concise"])
            .current_dir(dir.path().join(at))
            .env("CARGO", dir.path().join("no-such-cargo"))
            .output()
            .expect("the binary runs");
        let run = Run::from(output);
        let paths: Vec<&str> = run
            .stdout
            .lines()
            .filter_map(|line| line.split_once(':').map(|(path, _)| path))
            .filter(|path| Path::new(path).extension().is_some_and(|e| e == "rs"))
            .collect();
        assert_eq!(
            paths,
            [
                "crates/client/src/lib.rs",
                "crates/client/src/lib.rs",
                "src/http.rs",
                "src/http.rs"
            ],
            "from {at:?}: {}",
            run.stderr
        );
    }
}
