//! The runtime is light: with `default-features = false` the library pulls in only `fastrand`,
//! `httpdate` and the `#[retryable]` proc-macro (whose `syn`/`quote`/`proc-macro2` run at build
//! time only); no CLI or analysis dependency. Checked with `cargo tree`.

use std::collections::BTreeSet;
use std::process::Command;

fn normal_dependencies(features: &[&str]) -> BTreeSet<String> {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--locked",
            "-p",
            "retry-audit",
            "--no-default-features",
        ])
        .args(["-e", "normal", "--prefix", "none", "--format", "{p}"]);
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn without_default_features_only_the_runtime_is_built() {
    let deps = normal_dependencies(&[]);
    let expected: BTreeSet<String> = [
        "retry-audit",
        "retry-audit-macros",
        "fastrand",
        "httpdate",
        // The proc-macro's own dependencies, at build time.
        "syn",
        "quote",
        "proc-macro2",
        "unicode-ident",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(deps, expected);
}

#[test]
fn the_tokio_feature_adds_only_tokio() {
    let deps = normal_dependencies(&["tokio"]);
    let extra: Vec<_> = deps
        .difference(&normal_dependencies(&[]))
        .cloned()
        .collect();
    assert!(extra.contains(&"tokio".to_owned()), "{extra:?}");
    for heavy in [
        "clap",
        "ignore",
        "toml",
        "serde",
        "rayon",
        "codespan-reporting",
    ] {
        assert!(!deps.contains(heavy), "{heavy} in {deps:?}");
    }
}
