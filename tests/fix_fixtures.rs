//! Fix fixtures, as clippy keeps them: a fixture `NAME.rs` with a `NAME.fixed` beside it holds
//! what `--fix` makes of it. For each, the fixes applied to the fixture give exactly the
//! `.fixed` text, and both files compile with `rustc --edition 2021 --crate-type lib` (the
//! fixtures are written to compile on their own, with stubs for the crates they stand for): a
//! machine-applicable fix must not break the build.
//!
//! `BLESS=1 cargo test --test fix_fixtures` rewrites the `.fixed` files instead of failing.

#![cfg(feature = "analysis")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use retry_audit::{fix, Settings};

/// Every `fixtures/**/NAME.rs` that has a `NAME.fixed` beside it.
fn fix_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).expect("fixtures are listable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.with_extension("fixed").is_file()
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut out,
    );
    out.sort();
    out
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
