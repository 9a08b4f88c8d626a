//! The minimum supported Rust version is true of the locked dependencies (issue 32, defect 8):
//! `rust-version` in `Cargo.toml` is at least the `rust-version` of every package that
//! `cargo install --locked` builds (the normal and build dependencies of the workspace's
//! packages, every feature on), and `.ci/run` builds the workspace with that toolchain
//! (`cargo +VERSION check --locked`), so that a lock update that needs a newer compiler fails CI
//! instead of the users of an older one. The README's set-up names both versions: what the
//! auditor needs and what running the tests (their dev-dependencies) needs.

#![cfg(feature = "cli")]

use std::collections::{BTreeSet, HashMap};

use cargo_metadata::{DependencyKind, MetadataCommand, PackageId};

fn version(text: &str) -> (u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn rust_version_covers_the_locked_dependencies_and_ci_checks_it() {
    let root = env!("CARGO_MANIFEST_DIR");
    let metadata = MetadataCommand::new()
        .manifest_path(format!("{root}/Cargo.toml"))
        .features(cargo_metadata::CargoOpt::AllFeatures)
        .other_options(vec!["--locked".to_owned()])
        .exec()
        .expect("cargo metadata runs");
    let resolve = metadata.resolve.as_ref().expect("a resolved graph");
    let nodes: HashMap<&PackageId, _> = resolve.nodes.iter().map(|n| (&n.id, n)).collect();
    let packages: HashMap<&PackageId, _> = metadata.packages.iter().map(|p| (&p.id, p)).collect();
    // What a build of the workspace's libraries and binaries compiles: not dev-dependencies.
    let mut built: BTreeSet<&PackageId> = BTreeSet::new();
    let mut stack: Vec<&PackageId> = metadata.workspace_members.iter().collect();
    while let Some(id) = stack.pop() {
        if !built.insert(id) {
            continue;
        }
        for dep in &nodes[id].deps {
            if dep
                .dep_kinds
                .iter()
                .any(|k| k.kind != DependencyKind::Development)
            {
                stack.push(&dep.pkg);
            }
        }
    }
    let needed = built
        .iter()
        .filter_map(|id| {
            let package = packages[id];
            let rust = package.rust_version.as_ref()?;
            Some(((rust.major, rust.minor), package.name.to_string()))
        })
        .max()
        .expect("some dependency declares a rust-version");
    for member in &metadata.workspace_members {
        let package = packages[member];
        let declared = package
            .rust_version
            .as_ref()
            .map(|v| (v.major, v.minor))
            .unwrap_or_default();
        assert!(
            declared >= needed.0,
            "{} declares rust-version {}.{}, but the locked {} needs {}.{}",
            package.name,
            declared.0,
            declared.1,
            needed.1,
            needed.0 .0,
            needed.0 .1
        );
    }
    // Running the tests builds the dev-dependencies too: the README's set-up says what they need.
    let tests_need = metadata
        .packages
        .iter()
        .filter_map(|p| p.rust_version.as_ref().map(|v| (v.major, v.minor)))
        .max()
        .expect("a rust-version");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let quick_start = &readme[..readme.find("```").expect("the set-up commands")];
    assert!(
        quick_start.contains(&format!("{}.{} or later", tests_need.0, tests_need.1))
            && quick_start.contains(&format!("with {}.{}", needed.0 .0, needed.0 .1)),
        "the README's set-up says the Rust the tests need ({}.{}) and the auditor needs ({}.{})",
        tests_need.0,
        tests_need.1,
        needed.0 .0,
        needed.0 .1
    );
    let manifest = std::fs::read_to_string(format!("{root}/Cargo.toml")).expect("Cargo.toml");
    let msrv = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("a rust-version")
        .trim_matches('"');
    let ci = std::fs::read_to_string(format!("{root}/.ci/run")).expect(".ci/run");
    let (major, minor) = version(msrv);
    let check = format!("cargo \"+{major}.{minor}\" check --locked");
    assert!(
        ci.contains(&check) || ci.contains(&check.replace('"', "")),
        ".ci/run does not run `{check}`"
    );
}
