//! `cargo retry-audit`: the `cargo-retry-audit` binary run the way cargo runs it
//! (`cargo-retry-audit retry-audit [ARGS]...`) in a temporary workspace, with the members read
//! by `cargo metadata` and, when cargo cannot be started, from the manifests.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

mod support;

use support::{write, Run};

/// One RA002 finding (bounded retry of transient errors, fixed pause) on line 4.
const FIXED: &str = "\
pub fn fetch(client: &Client) -> Option<Body> {
    for _ in 0..3 {
        match client.get() { Ok(body) => return Some(body), Err(e) if !e.is_transient() => return None, Err(_) => {} }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    None
}
";

fn package(dir: &Path, at: &str, name: &str, extra: &str) {
    let manifest =
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}");
    let prefix = if at.is_empty() {
        String::new()
    } else {
        format!("{at}/")
    };
    write(dir, &format!("{prefix}Cargo.toml"), &manifest);
    write(dir, &format!("{prefix}src/lib.rs"), FIXED);
}

/// A workspace whose root is a package too, with members by glob and by path, an excluded
/// member directory and a nested package that belongs to no workspace member list.
fn workspace() -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    fs::create_dir(root.join(".git")).expect("repository marker");
    package(
        root,
        "",
        "app",
        "\n[workspace]\nmembers = [\"crates/*\", \"tools/gen\"]\nexclude = [\"crates/old\"]\n",
    );
    package(root, "crates/client", "client", "");
    package(root, "crates/store", "store", "");
    package(root, "crates/old", "old", "");
    package(root, "tools/gen", "gen", "");
    // Not a member: its own workspace, as cargo-fuzz makes them.
    package(root, "fuzz", "fuzz", "\n[workspace]\n");
    write(root, "examples/demo.rs", FIXED);
    dir
}

impl Run {
    /// The paths with an RA002 finding, in output order.
    fn paths(&self) -> Vec<String> {
        self.stdout
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
            .filter(|f| f["rule"] == "RA002")
            .map(|f| f["path"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// Runs `cargo-retry-audit` in `dir` with `args` (the first is `retry-audit`, as cargo passes
/// it), and with `CARGO` set to `cargo` (`Some`) or to a program that does not exist (`None`).
fn run(dir: &Path, args: &[&str], cargo: Option<&str>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-retry-audit"));
    command.env("RETRY_AUDIT_PREVIEW", "1");
    command.args(args).current_dir(dir);
    match cargo {
        Some(cargo) => command.env("CARGO", cargo),
        None => command.env("CARGO", dir.join("no-such-cargo")),
    };
    let output = command.output().expect("the binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The cargo running these tests (cargo sets `CARGO` for the test process).
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

const EVERY_MEMBER: [&str; 5] = [
    "crates/client/src/lib.rs",
    "crates/store/src/lib.rs",
    "examples/demo.rs",
    "src/lib.rs",
    "tools/gen/src/lib.rs",
];

#[test]
fn every_member_is_scanned_and_nothing_else() {
    let dir = workspace();
    let run = run(
        dir.path(),
        &["retry-audit", "--format", "json"],
        Some(&cargo()),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.paths(), EVERY_MEMBER, "{}", run.stderr);
}

#[test]
fn without_cargo_the_manifests_give_the_same_members() {
    let dir = workspace();
    let run = run(dir.path(), &["retry-audit", "--format", "json"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.paths(), EVERY_MEMBER);
}

/// From any directory of the workspace, paths are relative to its root, as cargo prints them.
#[test]
fn from_a_member_directory_the_whole_workspace_is_scanned() {
    let dir = workspace();
    let member = dir.path().join("crates/client");
    let expected = EVERY_MEMBER;
    for cargo in [Some(cargo()), None] {
        let run = run(
            &member,
            &["retry-audit", "--format", "json"],
            cargo.as_deref(),
        );
        let mut paths = run.paths();
        paths.sort();
        assert_eq!(paths, expected, "CARGO={cargo:?}: {}", run.stderr);
    }
}

#[test]
fn a_virtual_manifest_lists_only_its_members() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "Cargo.toml",
        "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n",
    );
    package(dir.path(), "a", "a", "");
    package(dir.path(), "b", "b", "");
    write(dir.path(), "scratch/notes.rs", FIXED);
    for cargo in [Some(cargo()), None] {
        let run = run(
            dir.path(),
            &["retry-audit", "--format", "json"],
            cargo.as_deref(),
        );
        assert_eq!(
            run.paths(),
            ["a/src/lib.rs", "b/src/lib.rs"],
            "CARGO={cargo:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn paths_given_are_scanned_instead_of_the_members() {
    let dir = workspace();
    let run = run(
        dir.path(),
        &["retry-audit", "--format", "json", "crates/old"],
        Some(&cargo()),
    );
    assert_eq!(run.paths(), ["crates/old/src/lib.rs"]);
}

#[test]
fn the_flags_and_the_configuration_work_as_for_retry_audit() {
    let dir = workspace();
    let deny = run(
        dir.path(),
        &["retry-audit", "--format", "json", "--deny", "fixed-delay"],
        Some(&cargo()),
    );
    assert_eq!(deny.code, Some(1));
    fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\nmembers = [\"crates/*\", \"tools/gen\"]\nexclude = [\"crates/old\"]\n\n\
         [workspace.metadata.retry-audit]\nexclude = [\"tools\"]\n\n\
         [workspace.metadata.retry-audit.rules]\nfixed-delay = \"deny\"\n",
    )
    .expect("write");
    let configured = run(
        dir.path(),
        &["retry-audit", "--format", "json"],
        Some(&cargo()),
    );
    assert_eq!(configured.code, Some(1), "{}", configured.stderr);
    assert!(!configured.paths().iter().any(|p| p.starts_with("tools")));
    let rules = run(dir.path(), &["retry-audit", "rules"], None);
    assert_eq!(rules.code, Some(0));
    assert!(rules.stdout.starts_with("RA000"), "{}", rules.stdout);
}

#[test]
fn help_names_the_cargo_form() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run(dir.path(), &["retry-audit", "--help"], None);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.contains("Usage: cargo retry-audit"),
        "{}",
        run.stdout
    );
}

#[test]
fn no_manifest_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).expect("repository marker");
    for cargo in [Some(cargo()), None] {
        let run = run(dir.path(), &["retry-audit"], cargo.as_deref());
        assert_eq!(run.code, Some(2), "CARGO={cargo:?}");
        assert!(
            run.stderr.contains("could not find `Cargo.toml`"),
            "CARGO={cargo:?}: {}",
            run.stderr
        );
    }
}
