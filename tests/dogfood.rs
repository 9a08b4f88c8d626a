//! The project scans its own code with no finding, as clippy's `tests/dogfood.rs` lints clippy:
//! the library, the runtime and the command line, the macro, the examples, the benchmarks, the
//! fuzz harness and the tests, every function body parsed (`--strict`). Where the analysis
//! cannot see what makes the code right, a suppression says why, next to the code.
//!
//! Not scanned: the inputs that are wrong on purpose: `fixtures/` (the rules' cases),
//! `tests/adversarial/` (hostile files for the hardening tests), and the programs the macro's
//! compile tests build, `macros/tests/ui/` and `macros/tests/shapes/` (every shape of function
//! `#[retryable]` takes, one retrying function calling another among them).

#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

/// The project's own code, relative to its root.
fn own_code(root: &Path) -> Vec<String> {
    let mut paths: Vec<String> = [
        "src",
        "macros/src",
        "examples",
        "benches",
        "fuzz/src",
        "fuzz/fuzz_targets",
        "fuzz/tests",
        "tests/support",
        "tests/retry_support",
    ]
    .iter()
    .map(|p| (*p).to_owned())
    .collect();
    for dir in ["tests", "macros/tests"] {
        let entries = std::fs::read_dir(root.join(dir)).expect("the tests are listable");
        for entry in entries {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "rs") {
                let name = path.file_name().expect("a name").to_string_lossy();
                paths.push(format!("{dir}/{name}"));
            }
        }
    }
    paths.sort();
    paths
}

#[test]
fn the_project_s_own_code_has_no_finding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = own_code(root);
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--strict", "--format", "concise", "--color", "never"])
        .args(&paths)
        .current_dir(root)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let findings: Vec<&str> = stdout
        .lines()
        .filter(|line| !line.starts_with("retry-audit: "))
        .collect();
    assert!(
        findings.is_empty() && output.status.success(),
        "retry-audit reports its own code ({:?}):\n{}\n{stderr}",
        output.status.code(),
        findings.join("\n")
    );
    assert!(
        stdout.contains(" 0 skipped, 0 errors, 0 warnings"),
        "{stdout}"
    );
}
