//! Fix fixtures, as clippy keeps them: a fixture `NAME.rs` with a `NAME.fixed` beside it holds
//! what `--fix` makes of it. For each, the fixes applied to the fixture give exactly the
//! `.fixed` text, and both files compile with `rustc --edition 2021 --crate-type lib` (the
//! fixtures are written to compile on their own, with stubs for the crates they stand for): a
//! machine-applicable fix must not break the build.
//!
//! `BLESS=1 cargo test --test fix_fixtures` rewrites the `.fixed` files instead of failing.
//! A fixture that gets a fix but has no `.fixed` fails
//! `every_fixture_with_a_fix_has_a_fixed_file`: to add one, create an empty `NAME.fixed` and
//! bless.

#![cfg(feature = "analysis")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use retry_audit::{fix, Settings};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every `fixtures/**/*.rs`, sorted.
fn fixture_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).expect("fixtures are listable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixtures_root(), &mut out);
    out.sort();
    out
}

/// Every `fixtures/**/NAME.rs` that has a `NAME.fixed` beside it.
fn fix_fixtures() -> Vec<PathBuf> {
    fixture_files()
        .into_iter()
        .filter(|path| path.with_extension("fixed").is_file())
        .collect()
}

/// Compiles `path` as a library crate; the compiler's errors when it fails.
fn compile(path: &Path) -> Result<(), String> {
    let out = tempfile::tempdir().expect("temp dir");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["--edition", "2021", "--crate-type", "lib", "--crate-name"])
        .arg("fix_fixture")
        .arg("--out-dir")
        .arg(out.path())
        .arg(path)
        .output()
        .expect("rustc runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn fixed_files_are_what_the_fixes_make_and_compile() {
    let fixtures = fix_fixtures();
    assert!(!fixtures.is_empty(), "no fixture has a .fixed beside it");
    let mut failures = Vec::new();
    for path in &fixtures {
        let name = path.display();
        let source = fs::read_to_string(path).expect("fixture readable");
        let outcome =
            fix::fix_source(&source, None, &Settings::preview()).expect("the fixture parses");
        assert!(outcome.applied > 0, "{name}: nothing to fix");
        assert!(
            outcome.remaining.iter().all(|d| d.fix.is_none()),
            "{name}: a fix is left after fixing"
        );
        let fixed_path = path.with_extension("fixed");
        let fixed = fs::read_to_string(&fixed_path).unwrap_or_default();
        if fixed != outcome.text {
            if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
                fs::write(&fixed_path, &outcome.text).expect(".fixed written");
            } else {
                failures.push(format!(
                    "{}: not what the fixes make; run `BLESS=1 cargo test --test fix_fixtures`",
                    fixed_path.display()
                ));
                continue;
            }
        }
        for file in [path.clone(), fixed_path] {
            if let Err(errors) = compile(&file) {
                failures.push(format!("{} does not compile:\n{errors}", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A fixture that gets a machine-applicable fix has a `.fixed` beside it, so that the test
/// above compiles what the fix makes of it: no fix fixture escapes the check. Each file is
/// checked alone (as `fix::fix_source` fixes it) and, for the files of a crate fixture, also as
/// the scan of its folder sees them (as `retry-audit --fix` does).
#[test]
fn every_fixture_with_a_fix_has_a_fixed_file() {
    let mut with_fix: Vec<PathBuf> = fixture_files()
        .into_iter()
        .filter(|path| {
            let source = fs::read_to_string(path).expect("fixture readable");
            let found = retry_audit::check_source(&source, &Settings::preview())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            found.iter().any(|d| d.fix.is_some())
        })
        .collect();
    with_fix.extend(crate_fixture_files_with_a_fix());
    with_fix.sort();
    with_fix.dedup();
    let missing: Vec<String> = with_fix
        .iter()
        .filter(|path| !path.with_extension("fixed").is_file())
        .map(|path| {
            let name = path
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap_or(path)
                .display();
            format!("{name} gets a fix but has no .fixed beside it")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{}\n(make the fixture compile on its own, create the empty .fixed and run `BLESS=1 cargo test --test fix_fixtures`)",
        missing.join("\n")
    );
}

/// The files of crate fixtures (folders with a `Cargo.toml`) that get a fix in the scan of
/// their folder.
#[cfg(feature = "cli")]
fn crate_fixture_files_with_a_fix() -> Vec<PathBuf> {
    use retry_audit::pipeline::scan::{scan, ScanOptions};
    use retry_audit::report::Outcome;

    let mut dirs: Vec<PathBuf> = fixture_files()
        .iter()
        .filter_map(|path| {
            path.ancestors()
                .skip(1)
                .take_while(|dir| *dir != fixtures_root())
                .find(|dir| dir.join("Cargo.toml").is_file())
                .map(Path::to_path_buf)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut out = Vec::new();
    for dir in dirs {
        let options = ScanOptions {
            paths: vec![dir.clone()],
            settings: Settings::preview(),
            ..ScanOptions::default()
        };
        let report =
            scan(&options).unwrap_or_else(|e| panic!("cannot scan {}: {e}", dir.display()));
        for file in report.files {
            if let Outcome::Checked { diagnostics, .. } = &file.outcome {
                if diagnostics.iter().any(|d| d.fix.is_some()) {
                    out.push(file.path);
                }
            }
        }
    }
    out
}

#[cfg(not(feature = "cli"))]
fn crate_fixture_files_with_a_fix() -> Vec<PathBuf> {
    Vec::new()
}
