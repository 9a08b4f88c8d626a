//! Configuration files: discovery, `--config`, `Cargo.toml` metadata, every key, precedence
//! against the command line, and errors with `file:line:col` (exit status 2).
//!
//! Each test builds a small tree in a temporary directory whose root holds `.git`, so that the
//! upward search never leaves it, and runs the binary there.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::Command;

use retry_audit::config::{self, RunConfig};
use retry_audit::{Level, Rule, Settings};
use tempfile::TempDir;

mod support;

use support::{write, Run};

/// Bounded retry, fixed pause: RA002 (warning) only, on line 5.
const FIXED: &str = "\
fn fetch(client: &Client) -> Option<Body> {
    for _ in 0..3 {
        if let Ok(body) = client.get() { return Some(body); }
        let _ = 0;
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    None
}
";

/// Unbounded retry, fixed pause: RA001 (error) and RA002 (warning).
const UNBOUNDED: &str = "\
fn fetch(client: &Client) -> Body {
    loop {
        if let Ok(body) = client.get() { return body; }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
";

/// A bounded retry that waits through a team's own wrapper: nothing, unless the wrapper is
/// taught as a sleep function.
const WRAPPED: &str = "\
fn sync(store: &Store) -> Result<(), Error> {
    for _ in 0..5 {
        if store.sync().is_ok() { return Ok(()); }
        crate::clock::pause(Duration::from_secs(1));
    }
    Err(Error::GaveUp)
}
";

impl Run {
    /// `(path, rule)` of every finding of the rules these tests use, in output order.
    fn findings(&self) -> Vec<(String, String)> {
        self.stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
            .filter(|f| ["RA001", "RA002"].iter().any(|id| f["rule"] == *id))
            .map(|f| {
                (
                    f["path"].as_str().unwrap_or_default().to_owned(),
                    format!(
                        "{}:{}",
                        f["rule"].as_str().unwrap_or_default(),
                        f["level"].as_str().unwrap_or_default()
                    ),
                )
            })
            .collect()
    }
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--format", "json"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A temporary repository (its root holds `.git`).
fn repo() -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).expect("repository marker");
    dir
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn rule_levels_by_name_and_id() {
    let dir = repo();
    write(dir.path(), "src/a.rs", UNBOUNDED);
    assert_eq!(
        run(dir.path(), &["src"]).findings(),
        pairs(&[("src/a.rs", "RA001:error"), ("src/a.rs", "RA002:warning")])
    );
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nunbounded-retry = \"warn\"\nRA002 = \"deny\"\n",
    );
    let run = run(dir.path(), &["src"]);
    assert_eq!(
        run.findings(),
        pairs(&[("src/a.rs", "RA001:warning"), ("src/a.rs", "RA002:error")])
    );
    assert_eq!(run.code, Some(1));
}

#[test]
fn allow_turns_a_rule_off_and_the_exit_status_follows() {
    let dir = repo();
    write(dir.path(), "src/a.rs", UNBOUNDED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA001 = \"allow\"\nfixed-delay = \"warning\"\n",
    );
    let run = run(dir.path(), &["src"]);
    assert_eq!(run.findings(), pairs(&[("src/a.rs", "RA002:warning")]));
    assert!(!run.stdout.contains("\"RA001\""), "{}", run.stdout);
}

#[test]
fn the_file_is_found_from_a_subdirectory() {
    let dir = repo();
    write(dir.path(), "crates/x/src/a.rs", FIXED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"deny\"\n",
    );
    let run = run(&dir.path().join("crates/x"), &["src"]);
    assert_eq!(run.findings(), pairs(&[("src/a.rs", "RA002:error")]));
}

#[test]
fn the_nearest_file_wins_and_the_dot_file_first() {
    let dir = repo();
    write(dir.path(), "sub/a.rs", FIXED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"allow\"\n",
    );
    write(
        dir.path(),
        "sub/retry-audit.toml",
        "[rules]\nRA002 = \"deny\"\n",
    );
    let sub = dir.path().join("sub");
    assert_eq!(
        run(&sub, &["a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:error")])
    );
    write(
        dir.path(),
        "sub/.retry-audit.toml",
        "[rules]\nRA002 = \"allow\"\n",
    );
    assert_eq!(run(&sub, &["a.rs"]).findings(), pairs(&[]));
}

#[test]
fn the_search_stops_at_the_repository_root() {
    let outer = tempfile::tempdir().expect("temp dir");
    write(
        outer.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"allow\"\n",
    );
    fs::create_dir_all(outer.path().join("checkout/.git")).expect("repository marker");
    write(outer.path(), "checkout/a.rs", FIXED);
    let checkout = outer.path().join("checkout");
    assert_eq!(
        run(&checkout, &["a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
    // Without the marker, the file above is found.
    fs::remove_dir(checkout.join(".git")).expect("remove marker");
    assert_eq!(run(&checkout, &["a.rs"]).findings(), pairs(&[]));
}

/// `(path, rule:level)` pairs with the paths as `format!`ed strings.
fn owned_pairs(items: &[(String, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.clone(), (*b).to_owned()))
        .collect()
}

#[test]
fn the_configuration_is_found_from_each_scanned_file_not_the_current_directory() {
    let project = repo();
    write(
        project.path(),
        "retry-audit.toml",
        "exclude = [\"gen\"]\n\n[rules]\nRA002 = \"deny\"\n\n\
         [[per-path]]\npaths = [\"tests\"]\nrules = { RA002 = \"allow\" }\n\n\
         [extend]\nsleep-fns = [\"clock::pause\"]\n",
    );
    write(project.path(), "src/a.rs", FIXED);
    write(project.path(), "src/wrapped.rs", WRAPPED);
    write(project.path(), "gen/b.rs", FIXED);
    write(project.path(), "tests/t.rs", FIXED);
    // The directory the tool runs in has a configuration of its own, which must not apply.
    let elsewhere = repo();
    write(
        elsewhere.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"allow\"\n",
    );
    let root = project.path().to_string_lossy().into_owned();
    assert_eq!(
        run(elsewhere.path(), &[&root]).findings(),
        owned_pairs(&[
            (format!("{root}/src/a.rs"), "RA002:error"),
            (format!("{root}/src/wrapped.rs"), "RA002:error"),
        ]),
        "levels, exclude, per-path and extensions of {root}/retry-audit.toml"
    );
    let file = format!("{root}/tests/t.rs");
    assert_eq!(run(elsewhere.path(), &[&file]).findings(), pairs(&[]));
}

#[test]
fn each_file_gets_the_nearest_configuration_above_it() {
    let dir = repo();
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"deny\"\n",
    );
    write(
        dir.path(),
        "sub/retry-audit.toml",
        "exclude = [\"skip\"]\n\n[rules]\nRA002 = \"warn\"\n\n\
         [[per-path]]\npaths = [\"legacy\"]\nrules = { RA002 = \"allow\" }\n\n\
         [extend]\nsleep-fns = [\"clock::pause\"]\n",
    );
    for file in [
        "a.rs",
        "legacy/e.rs",
        "sub/b.rs",
        "sub/skip/c.rs",
        "sub/legacy/d.rs",
    ] {
        write(dir.path(), file, FIXED);
    }
    write(dir.path(), "w.rs", WRAPPED);
    write(dir.path(), "sub/w.rs", WRAPPED);
    assert_eq!(
        run(dir.path(), &["."]).findings(),
        pairs(&[
            ("a.rs", "RA002:error"),
            ("legacy/e.rs", "RA002:error"),
            ("sub/b.rs", "RA002:warning"),
            ("sub/w.rs", "RA002:warning"),
        ])
    );
    // From inside `sub` the same files get the same configurations.
    assert_eq!(
        run(&dir.path().join("sub"), &["../a.rs", "../legacy", "."]).findings(),
        pairs(&[
            ("../a.rs", "RA002:error"),
            ("../legacy/e.rs", "RA002:error"),
            ("b.rs", "RA002:warning"),
            ("w.rs", "RA002:warning"),
        ])
    );
    // `--config` names one file for every file scanned.
    assert_eq!(
        run(dir.path(), &["--config", "retry-audit.toml", "."]).findings(),
        pairs(&[
            ("a.rs", "RA002:error"),
            ("legacy/e.rs", "RA002:error"),
            ("sub/b.rs", "RA002:error"),
            ("sub/legacy/d.rs", "RA002:error"),
            ("sub/skip/c.rs", "RA002:error"),
        ])
    );
}

#[test]
fn an_invalid_configuration_above_a_scanned_path_stops_the_run() {
    let project = repo();
    write(project.path(), "a.rs", FIXED);
    write(
        project.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"loud\"\n",
    );
    let elsewhere = repo();
    let path = project.path().join("a.rs");
    let run = run(elsewhere.path(), &[&path.to_string_lossy()]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.starts_with("error: ")
            && run
                .stderr
                .contains("retry-audit.toml:2:9: invalid level `loud` for `RA002`"),
        "{}",
        run.stderr
    );
}

#[test]
fn per_path_levels_apply_to_ra010_found_across_files() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/nested-retry/retry_in_another_file/src");
    let dir = repo();
    for file in ["lib.rs", "report.rs"] {
        let text = fs::read_to_string(fixture.join(file)).expect("fixture");
        write(dir.path(), &format!("src/{file}"), text);
    }
    let nested = |run: &Run| -> Vec<String> {
        run.stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
            .filter(|f| f["rule"] == "RA010")
            .map(|f| format!("{}:{}", f["path"].as_str().unwrap_or_default(), f["level"]))
            .collect()
    };
    assert_eq!(
        nested(&run(dir.path(), &["."])),
        ["src/report.rs:\"warning\""]
    );
    write(
        dir.path(),
        "retry-audit.toml",
        "[[per-path]]\npaths = [\"src/report.rs\"]\nrules = { nested-retry = \"deny\" }\n",
    );
    assert_eq!(
        nested(&run(dir.path(), &["."])),
        ["src/report.rs:\"error\""]
    );
    write(
        dir.path(),
        "retry-audit.toml",
        "[[per-path]]\npaths = [\"src/report.rs\"]\nrules = { nested-retry = \"allow\" }\n",
    );
    assert_eq!(nested(&run(dir.path(), &["."])), Vec::<String>::new());
}

#[test]
fn cargo_toml_metadata_configures_too() {
    let dir = repo();
    write(dir.path(), "src/a.rs", FIXED);
    let package = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n\
                   [package.metadata.retry-audit.rules]\nfixed-delay = \"deny\"\n";
    write(dir.path(), "Cargo.toml", package);
    assert_eq!(
        run(dir.path(), &["src"]).findings(),
        pairs(&[("src/a.rs", "RA002:error")])
    );

    let workspace = "[workspace]\nmembers = []\n\n[workspace.metadata.retry-audit]\n\
                     exclude = [\"src\"]\n";
    write(dir.path(), "Cargo.toml", workspace);
    assert_eq!(run(dir.path(), &["."]).findings(), pairs(&[]));

    // A manifest without the tables is no configuration: the search goes on upward.
    write(
        dir.path(),
        "member/Cargo.toml",
        "[package]\nname = \"m\"\nversion = \"0.1.0\"\n",
    );
    write(dir.path(), "member/src/a.rs", FIXED);
    assert_eq!(
        run(&dir.path().join("member"), &["."]).findings(),
        pairs(&[])
    );
}

#[test]
fn both_metadata_tables_in_one_manifest_are_an_error() {
    let dir = repo();
    write(dir.path(), "a.rs", FIXED);
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"x\"\n\n[package.metadata.retry-audit]\nexclude = []\n\n\
         [workspace.metadata.retry-audit]\nexclude = []\n",
    );
    let run = run(dir.path(), &["a.rs"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .starts_with("error: Cargo.toml:7:1: both [package.metadata.retry-audit]"),
        "{}",
        run.stderr
    );
}

#[test]
fn config_flag_names_the_file_and_isolated_ignores_them_all() {
    let dir = repo();
    write(dir.path(), "a.rs", FIXED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"allow\"\n",
    );
    write(dir.path(), "ci/strict.toml", "[rules]\nRA002 = \"deny\"\n");
    write(
        dir.path(),
        "ci/Cargo.toml",
        "[workspace.metadata.retry-audit.rules]\nRA002 = \"warn\"\n",
    );
    assert_eq!(run(dir.path(), &["a.rs"]).findings(), pairs(&[]));
    assert_eq!(
        run(dir.path(), &["--config", "ci/strict.toml", "a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:error")])
    );
    assert_eq!(
        run(dir.path(), &["--config", "ci/Cargo.toml", "a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
    assert_eq!(
        run(dir.path(), &["--isolated", "a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
    let missing = run(dir.path(), &["--config", "nope.toml", "a.rs"]);
    assert_eq!(missing.code, Some(2));
    assert!(
        missing.stderr.starts_with("error: nope.toml: cannot read"),
        "{}",
        missing.stderr
    );
    let no_table = run(dir.path(), &["--config", "Cargo.toml", "a.rs"]);
    assert_eq!(no_table.code, Some(2), "{}", no_table.stderr);
}

#[test]
fn the_command_line_overrides_the_file_including_per_path_levels() {
    let dir = repo();
    write(dir.path(), "tests/a.rs", FIXED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"deny\"\n\n[[per-path]]\npaths = [\"tests\"]\nrules = { RA002 = \"deny\" }\n",
    );
    assert_eq!(
        run(dir.path(), &["--allow", "RA002", "tests"]).findings(),
        pairs(&[])
    );
    assert_eq!(
        run(dir.path(), &["--warn", "fixed-delay", "tests"]).findings(),
        pairs(&[("tests/a.rs", "RA002:warning")])
    );
}

#[test]
fn per_path_levels_apply_to_matching_files_in_order() {
    let dir = repo();
    for file in [
        "src/a.rs",
        "tests/it.rs",
        "tests/slow/b.rs",
        "src/api_generated.rs",
    ] {
        write(dir.path(), file, FIXED);
    }
    write(
        dir.path(),
        "retry-audit.toml",
        "[[per-path]]\npaths = [\"tests/**\"]\nrules = { fixed-delay = \"allow\" }\n\n\
         [[per-path]]\npaths = [\"tests/slow\", \"*_generated.rs\"]\nrules = { RA002 = \"deny\" }\n",
    );
    assert_eq!(
        run(dir.path(), &["."]).findings(),
        pairs(&[
            ("src/a.rs", "RA002:warning"),
            ("src/api_generated.rs", "RA002:error"),
            ("tests/slow/b.rs", "RA002:error"),
        ])
    );
}

#[test]
fn exclude_prunes_the_walk_but_not_files_named_explicitly() {
    let dir = repo();
    for file in [
        "src/a.rs",
        "src/gen/b.rs",
        "vendor/c.rs",
        "deep/vendor/d.rs",
        "legacy/e.rs",
    ] {
        write(dir.path(), file, FIXED);
    }
    write(
        dir.path(),
        "retry-audit.toml",
        "exclude = [\"vendor\", \"src/gen\", \"/legacy/*.rs\"]\n",
    );
    assert_eq!(
        run(dir.path(), &["."]).findings(),
        pairs(&[("src/a.rs", "RA002:warning")])
    );
    assert_eq!(
        run(dir.path(), &["vendor/c.rs"]).findings(),
        pairs(&[("vendor/c.rs", "RA002:warning")])
    );
    // Patterns are relative to the file's directory, wherever the scan starts.
    assert_eq!(
        run(&dir.path().join("src"), &["."]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
}

#[test]
fn extension_lists_teach_the_analysis() {
    let dir = repo();
    write(dir.path(), "a.rs", WRAPPED);
    assert_eq!(run(dir.path(), &["a.rs"]).findings(), pairs(&[]));
    write(
        dir.path(),
        "retry-audit.toml",
        "[extend]\nsleep-fns = [\"clock::pause\"]\nrandom-sources = []\nkey-constructors = [\"crate::ids::new\"]\nstatus-accessors = [\"http_status\"]\n",
    );
    assert_eq!(
        run(dir.path(), &["a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
}

#[test]
fn a_vocabulary_list_in_extend_teaches_the_analysis() {
    // A supervisor restarting `pump` after a pause: a session once `pump` is a session's word.
    let session = "pub async fn outer(d: D) {\n    loop {\n        if let Err(e) = d.pump().await {\n            \
                   tracing::error!(%e);\n            sleep(Duration::from_secs(10)).await;\n        }\n    }\n}\n";
    let dir = repo();
    write(dir.path(), "a.rs", session);
    assert_eq!(run(dir.path(), &["a.rs"]).findings(), pairs(&[]));
    write(
        dir.path(),
        "retry-audit.toml",
        "[extend]\nsession-words = [\"pump\"]\n",
    );
    assert_eq!(
        run(dir.path(), &["a.rs"]).findings(),
        pairs(&[("a.rs", "RA002:warning")])
    );
}

/// Writes `config`, runs, and returns stderr after checking the exit status is 2.
fn config_error(config: &str) -> String {
    let dir = repo();
    write(dir.path(), "a.rs", FIXED);
    write(dir.path(), "retry-audit.toml", config);
    let run = run(dir.path(), &["a.rs"]);
    assert_eq!(run.code, Some(2), "{config:?}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    run.stderr
}

#[test]
fn errors_name_the_file_line_and_column() {
    let cases = [
        (
            "exclude = []\nexclud = []\n",
            "retry-audit.toml:2:1: unknown field `exclud`",
        ),
        (
            "[rules]\nfixd-delay = \"allow\"\n",
            "retry-audit.toml:2:1: unknown rule `fixd-delay`",
        ),
        (
            "[rules]\nRA002 = \"loud\"\n",
            "retry-audit.toml:2:9: invalid level `loud` for `RA002`",
        ),
        (
            "[rules]\nRA002 = 2\n",
            "retry-audit.toml:2:9: invalid type: integer `2`",
        ),
        (
            "[rules]\nfixed-delay = \"allow\"\nRA002 = \"deny\"\n",
            "retry-audit.toml:3:1: `RA002` names the same rule as `fixed-delay`",
        ),
        (
            "exclude = [\"ok\", \"[bad\"]\n",
            "retry-audit.toml:1:18: invalid glob `[bad`",
        ),
        (
            "exclude = [\"\"]\n",
            "retry-audit.toml:1:12: empty path pattern",
        ),
        (
            "[[per-path]]\npaths = [\"t\"]\nrules = { RA002 = \"allow\", speed = \"deny\" }\n",
            "retry-audit.toml:3:28: unknown rule `speed`",
        ),
        (
            "[[per-path]]\npaths = []\nrules = {}\n",
            "retry-audit.toml:2:9: `paths` is empty",
        ),
        (
            "[[per-path]]\nrules = {}\n",
            "retry-audit.toml:1:1: missing field `paths`",
        ),
        (
            "[extend]\nsleep-fn = []\n",
            "retry-audit.toml:2:1: unknown field `sleep-fn`",
        ),
        (
            "[extend]\nsleep-fns = [\"ok\", \"not a path\"]\n",
            "retry-audit.toml:2:20: `not a path` is not a Rust path",
        ),
        ("[rules\n", "retry-audit.toml:1:7: "),
    ];
    for (config, want) in cases {
        let stderr = config_error(config);
        assert!(
            stderr.starts_with(&format!("error: {want}")),
            "{config:?}\n  want: error: {want}\n  got:  {stderr}"
        );
    }
}

#[test]
fn an_error_in_a_parent_directory_names_the_file_relative_to_here() {
    let dir = repo();
    write(dir.path(), "sub/a.rs", FIXED);
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nRA002 = \"loud\"\n",
    );
    let run = run(&dir.path().join("sub"), &["a.rs"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.starts_with("error: ../retry-audit.toml:2:9: "),
        "{}",
        run.stderr
    );
}

#[test]
fn run_config_layers_defaults_rules_per_path_and_command_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("retry-audit.toml");
    let text = "[rules]\nRA001 = \"warn\"\nRA003 = \"deny\"\n\n\
                [[per-path]]\npaths = [\"tests/**\"]\nrules = { RA001 = \"allow\", RA002 = \"deny\" }\n\n\
                [[per-path]]\npaths = [\"tests/slow/**\"]\nrules = { RA002 = \"warn\" }\n\n\
                [extend]\nsleep-fns = [\"pause\"]\n";
    let config = config::parse(text, &path).expect("valid");
    let mut command_line = Settings::preview();
    command_line.set_level(Rule::MissingJitter, Level::Warning);
    let run = RunConfig::new(config, &command_line);
    let level = |file: &str, rule: Rule| run.settings_for(&dir.path().join(file)).level(rule);

    assert_eq!(level("src/a.rs", Rule::UnboundedRetry), Level::Warning);
    assert_eq!(
        level("src/a.rs", Rule::FixedDelay),
        Rule::FixedDelay.default_level()
    );
    assert_eq!(level("src/a.rs", Rule::MissingJitter), Level::Warning);
    assert_eq!(level("tests/a.rs", Rule::UnboundedRetry), Level::Allow);
    assert_eq!(level("tests/a.rs", Rule::FixedDelay), Level::Error);
    assert_eq!(level("tests/slow/a.rs", Rule::FixedDelay), Level::Warning);
    assert_eq!(
        level("tests/slow/a.rs", Rule::MissingJitter),
        Level::Warning
    );
    assert_eq!(
        run.settings_for(&dir.path().join("tests/a.rs"))
            .extensions
            .sleep_fns,
        ["pause"]
    );
    assert!(!run.is_excluded(&dir.path().join("tests/a.rs")));
}

/// The body of the fenced code block between `<!-- NAME:start -->` and `<!-- NAME:end -->`.
fn readme_block(name: &str) -> String {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"))
            .expect("docs/configuration.md");
    let start = format!("<!-- {name}:start -->");
    let end = format!("<!-- {name}:end -->");
    let from = readme.find(&start).expect("start marker") + start.len();
    let section = &readme[from..from + readme[from..].find(&end).expect("end marker")];
    let body = &section[section.find("```").expect("a fence")..];
    let body = &body[body.find('\n').expect("fence line") + 1..];
    body[..body.find("```").expect("closing fence")].to_owned()
}

#[test]
fn the_readme_examples_are_valid_and_its_error_is_real() {
    let dir = tempfile::tempdir().expect("temp dir");
    let example = readme_block("config-example");
    let config = config::parse(&example, &dir.path().join("retry-audit.toml"))
        .unwrap_or_else(|e| panic!("README example: {e}"));
    assert!(config.rules.contains(&(Rule::FixedDelay, Level::Error)));
    assert_eq!(config.per_path.len(), 2);
    assert_eq!(config.extensions.sleep_fns, ["crate::time::pause"]);
    assert_eq!(config.extensions.status_accessors, ["http_status"]);

    let manifest = readme_block("manifest-example");
    let config = config::parse_manifest(&manifest, &dir.path().join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("README manifest example: {e}"))
        .expect("a metadata table");
    assert_eq!(config.exclude.patterns(), ["fuzz"]);
    assert_eq!(config.per_path.len(), 1);

    let broken = example.replace("fixed-delay = \"deny\"", "fixed-delay = \"loud\"");
    assert_ne!(broken, example);
    let error = config::parse(&broken, Path::new("retry-audit.toml")).expect_err("invalid");
    assert_eq!(
        format!("error: {error}\n"),
        readme_block("config-error"),
        "the README shows the error as printed"
    );
}

/// The README's `[[extend.policies]]` example: a team's own retry builder is read like a retry
/// crate's, with general advice where the entry gives none, and without the entry it is silent.
#[test]
fn a_teams_retry_builder_is_described_in_extend_policies() {
    let dir = repo();
    let entry = "[[extend.policies]]\ncrate = \"our-retry\"\nwithin = [\"our_retry\"]\n\
                 roots = [\"Backoff::exponential\"]\ndelay = \"growing\"\njitter = false\n\
                 capped = false\nlimited = false\nadvice.cap = \"call `.max_delay(..)`\"\n\
                 [extend.policies.steps]\nmax_delay = { capped = true }\n\
                 attempts = { limited = true, attempts = \"arg\" }\n\
                 with_jitter = { jitter = true }\n";
    let readme = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .expect("docs/configuration.md");
    assert!(
        readme.contains(entry),
        "docs/configuration.md shows this entry"
    );
    write(
        dir.path(),
        "src/lib.rs",
        "use our_retry::Backoff;\n\
         \n\
         pub async fn forever(client: &Client) -> Result<Body, Error> {\n\
         \x20   Backoff::exponential(Duration::from_millis(100)).run(|| client.get(\"/x\")).await\n\
         }\n\
         \n\
         pub async fn tamed(client: &Client) -> Result<Body, Error> {\n\
         \x20   Backoff::exponential(Duration::from_millis(100))\n\
         \x20       .attempts(5)\n\
         \x20       .max_delay(Duration::from_secs(10))\n\
         \x20       .with_jitter()\n\
         \x20       .run(|| client.get(\"/x\"))\n\
         \x20       .await\n\
         }\n",
    );
    let found = |run: &Run| -> Vec<String> {
        run.stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
            .map(|f| {
                format!(
                    "{} {} {}",
                    f["line"],
                    f["rule"].as_str().unwrap_or_default(),
                    f["notes"]
                )
            })
            .collect()
    };
    assert_eq!(found(&run(dir.path(), &["src"])), Vec::<String>::new());
    write(dir.path(), "retry-audit.toml", entry);
    let run = run(dir.path(), &["src"]);
    let found = found(&run);
    let rules: Vec<&str> = found.iter().map(|f| &f[..7]).collect();
    assert_eq!(rules, ["4 RA001", "4 RA003", "4 RA007"], "{found:#?}");
    assert!(found[2].contains("call `.max_delay(..)`"), "{}", found[2]);
}

/// A preview rule runs with `preview = true` or when set by name, not by default; a stable rule
/// runs either way.
#[test]
fn preview_rules_run_only_when_asked_for() {
    use retry_audit::checks::registry::Tier;
    let preview = Rule::ALL
        .iter()
        .copied()
        .find(|r| r.tier() == Tier::Preview)
        .expect("a preview rule");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("retry-audit.toml");
    let run = |text: &str| {
        let config = config::parse(text, &path).expect("valid");
        RunConfig::new(config, &Settings::default())
    };
    let off = run("");
    assert_eq!(off.settings().level(preview), Level::Allow);
    assert_eq!(
        off.settings().level(Rule::UnusedSuppression),
        Rule::UnusedSuppression.default_level()
    );
    let on = run("preview = true\n");
    assert_eq!(on.settings().level(preview), preview.default_level());
    let named = run(&format!("[rules]\n{} = \"warn\"\n", preview.id()));
    assert_eq!(named.settings().level(preview), Level::Warning);
    let mut command_line = Settings::default();
    command_line.preview = true;
    let config = config::parse("", &path).expect("valid");
    assert_eq!(
        RunConfig::new(config, &command_line)
            .settings()
            .level(preview),
        preview.default_level()
    );
}
