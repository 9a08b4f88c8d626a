//! The machine output formats end to end: `concise`, `sarif`, `github`, `gitlab` and
//! `cargo-json`, each run by the binary on the fixture corpus and on small crafted crates, and
//! checked against the `json` findings of the same run (the reference for rule, level, path
//! and positions) and against what each consumer expects.
//!
//! `cargo-json` is read with `cargo_metadata::Message`, as rust-analyzer reads it, and its
//! package ids and targets are compared with what `cargo metadata` says of the same crate.

#![cfg(feature = "cli")]

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use cargo_metadata::diagnostic::{Applicability, DiagnosticLevel};
use cargo_metadata::{Message, MetadataCommand};
use retry_audit::{Level, Rule};
use serde_json::Value;
use tempfile::TempDir;

mod support;

use support::{write, Run, KEY_IN_LOOP, UNBOUNDED_FIXED};

fn run(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the retry-audit binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The reference findings: `--format json` of the same paths, one object per finding.
fn json_findings(dir: &Path, paths: &[&str]) -> Vec<Value> {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(paths);
    let run = run(dir, &args);
    assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// Code without retries: nothing to report, whatever the rules.
const CLEAN: &str = "fn main() {\n    println!(\"hello\");\n}\n";

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` is a string in {value}"))
}

fn num_of(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is a number in {value}"))
}

// ---------------------------------------------------------------- concise

#[test]
fn concise_prints_one_line_per_finding_then_the_summary() {
    let findings = json_findings(crate_root(), &["fixtures/"]);
    assert!(findings.len() > 50, "the fixtures have findings");
    let run = run(crate_root(), &["--format", "concise", "fixtures/"]);
    assert_eq!(run.code, Some(1));
    let lines: Vec<&str> = run.stdout.lines().collect();
    let (summary, lines) = lines.split_last().expect("output");
    assert!(summary.starts_with("retry-audit: "), "{summary}");
    assert_eq!(lines.len(), findings.len());
    for (line, finding) in lines.iter().zip(&findings) {
        let expected = format!(
            "{}:{}:{}: {} {}",
            str_of(finding, "path"),
            num_of(finding, "line"),
            num_of(finding, "column"),
            str_of(finding, "rule"),
            str_of(finding, "message"),
        );
        assert_eq!(*line, expected);
    }
    // `short` is cargo's word for it; `--message-format` is cargo's name for the flag.
    let short = self::run(crate_root(), &["--message-format", "short", "fixtures/"]);
    assert_eq!(short.stdout, run.stdout);
}

// ---------------------------------------------------------------- sarif

fn sarif(dir: &Path, paths: &[&str]) -> Value {
    let mut args = vec!["--format", "sarif"];
    args.extend_from_slice(paths);
    let run = run(dir, &args);
    assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("SARIF is one JSON document")
}

fn sarif_level(level: &str) -> &str {
    match level {
        "error" => "error",
        "warning" => "warning",
        other => panic!("unexpected level {other}"),
    }
}

#[test]
fn sarif_describes_the_tool_and_every_rule() {
    let dir = TempDir::new().expect("temp dir");
    write(dir.path(), "clean.rs", CLEAN);
    let log = sarif(dir.path(), &["clean.rs"]);
    assert_eq!(log["version"], "2.1.0");
    assert!(str_of(&log, "$schema").ends_with("sarif-2.1.0.json"));
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "retry-audit");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    // Only a page that exists: the repository the manifest names, else none.
    match option_env!("CARGO_PKG_REPOSITORY").filter(|r| !r.is_empty()) {
        Some(repository) => assert_eq!(driver["informationUri"], repository),
        None => assert!(driver.get("informationUri").is_none(), "{driver}"),
    }
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), Rule::ALL.len());
    for (descriptor, rule) in rules.iter().zip(Rule::ALL) {
        let meta = rule.meta();
        assert_eq!(descriptor["id"], rule.id());
        assert_eq!(descriptor["name"], rule.name());
        assert_eq!(
            descriptor["shortDescription"]["text"],
            meta.summary.as_str()
        );
        assert_eq!(
            descriptor["fullDescription"]["text"],
            meta.what_it_does.trim()
        );
        let help = &descriptor["help"];
        assert!(str_of(help, "text").contains(meta.help.trim()), "{help}");
        assert!(
            str_of(help, "markdown").starts_with(&format!("# {} {}", rule.id(), rule.name())),
            "{help}"
        );
        let default_level = match rule.default_level() {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Allow => "none",
        };
        assert_eq!(descriptor["defaultConfiguration"]["level"], default_level);
        let precision = str_of(&descriptor["properties"], "precision");
        assert!(
            ["very-high", "high", "medium", "low"].contains(&precision),
            "{precision}"
        );
    }
    assert_eq!(
        runs[0]["results"],
        Value::Array(Vec::new()),
        "nothing to report"
    );
    assert_eq!(runs[0]["columnKind"], "unicodeCodePoints");
}

#[test]
fn sarif_results_match_the_findings() {
    let findings = json_findings(crate_root(), &["fixtures/"]);
    let log = sarif(crate_root(), &["fixtures/"]);
    let run = &log["runs"][0];
    let root_uri = str_of(&run["originalUriBaseIds"]["%SRCROOT%"], "uri");
    assert!(
        root_uri.starts_with("file:///") && root_uri.ends_with('/'),
        "{root_uri}"
    );
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), findings.len());
    let mut prints = HashSet::new();
    let mut fixes = 0;
    for (result, finding) in results.iter().zip(&findings) {
        assert_eq!(result["ruleId"], finding["rule"]);
        let index = usize::try_from(num_of(result, "ruleIndex")).expect("an index");
        assert_eq!(rules[index]["id"], finding["rule"]);
        assert_eq!(result["level"], sarif_level(str_of(finding, "level")));
        assert!(str_of(&result["message"], "text").starts_with(str_of(finding, "message")));
        let location = &result["locations"][0]["physicalLocation"];
        // Run from the repository root: the URI is the path as given, without `./`.
        assert_eq!(location["artifactLocation"]["uri"], finding["path"]);
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        let region = &location["region"];
        assert_eq!(region["startLine"], finding["line"]);
        assert_eq!(region["startColumn"], finding["column"]);
        assert_eq!(region["endLine"], finding["end_line"]);
        assert_eq!(region["endColumn"], finding["end_column"]);
        let related = result["relatedLocations"].as_array().map_or(0, Vec::len);
        let elsewhere = finding["elsewhere"].as_array().map_or(0, Vec::len);
        assert_eq!(
            related,
            finding["labels"].as_array().expect("labels").len() + elsewhere
        );
        let print = str_of(&result["partialFingerprints"], "retryAudit/v1");
        assert_eq!(print.len(), 16, "{print}");
        assert!(print.chars().all(|c| c.is_ascii_hexdigit()), "{print}");
        assert!(
            prints.insert(print.to_owned()),
            "duplicate fingerprint {print}"
        );
        if let Some(fix) = result["fixes"].as_array() {
            assert_eq!(result["ruleId"], "RA005");
            let replacements = &fix[0]["artifactChanges"][0]["replacements"];
            assert!(!replacements.as_array().expect("replacements").is_empty());
            fixes += 1;
        }
    }
    assert!(fixes > 0, "some RA005 fixture has a mechanical fix");
}

/// `(ruleId, startLine, fingerprint)` of every result.
fn sarif_prints(dir: &Path, path: &str) -> Vec<(String, u64, String)> {
    let log = sarif(dir, &[path]);
    log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                str_of(r, "ruleId").to_owned(),
                num_of(
                    &r["locations"][0]["physicalLocation"]["region"],
                    "startLine",
                ),
                str_of(&r["partialFingerprints"], "retryAudit/v1").to_owned(),
            )
        })
        .collect()
}

#[test]
fn sarif_fingerprints_survive_line_shifts_but_not_changes() {
    let dir = TempDir::new().expect("temp dir");
    let twice = format!("{UNBOUNDED_FIXED}\nmod again {{\n{UNBOUNDED_FIXED}}}\n");
    write(dir.path(), "retry.rs", &twice);
    let before = sarif_prints(dir.path(), "retry.rs");
    assert!(
        before.len() >= 4 && before.len().is_multiple_of(2),
        "{before:?}"
    );
    let unique: HashSet<&String> = before.iter().map(|(_, _, print)| print).collect();
    assert_eq!(
        unique.len(),
        before.len(),
        "the same code twice has distinct fingerprints"
    );

    let header = "// A comment added above.\n\nuse std::fmt;\n\nfn unrelated() {}\n\n";
    write(dir.path(), "retry.rs", format!("{header}{twice}"));
    let shifted = sarif_prints(dir.path(), "retry.rs");
    assert_eq!(shifted.len(), before.len());
    for (old, new) in before.iter().zip(&shifted) {
        assert_eq!(new.0, old.0);
        assert_eq!(new.1, old.1 + 6, "the finding moved down six lines");
        assert_eq!(new.2, old.2, "but kept its fingerprint");
    }

    // Re-indenting the code keeps the fingerprints too (whitespace is collapsed).
    let reindented = twice.replace("    ", "  ");
    write(dir.path(), "retry.rs", &reindented);
    let prints: Vec<String> = sarif_prints(dir.path(), "retry.rs")
        .into_iter()
        .map(|(_, _, print)| print)
        .collect();
    let expected: Vec<String> = before.iter().map(|(_, _, p)| p.clone()).collect();
    assert_eq!(prints, expected);

    // Editing the flagged line is a different finding.
    let edited = twice.replacen("from_secs(1)", "from_secs(2)", 1);
    write(dir.path(), "retry.rs", &edited);
    let after = sarif_prints(dir.path(), "retry.rs");
    let changed: Vec<bool> = before.iter().zip(&after).map(|(a, b)| a.2 != b.2).collect();
    let sleep_changed = before
        .iter()
        .zip(&changed)
        .any(|((rule, line, _), changed)| rule == "RA002" && *line == 9 && *changed);
    assert!(sleep_changed, "{before:?} {after:?}");
}

#[test]
fn sarif_paths_are_relative_to_the_repository_root() {
    let dir = TempDir::new().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).expect(".git");
    write(dir.path(), "crates/app/src/my retry.rs", UNBOUNDED_FIXED);
    let app = dir.path().join("crates/app");
    let log = sarif(&app, &["./src/../src"]);
    let run = &log["runs"][0];
    let location = &run["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "crates/app/src/my%20retry.rs"
    );
    // A file outside the repository keeps an absolute URI, without a base.
    let elsewhere = TempDir::new().expect("another temp dir");
    write(elsewhere.path(), "outside.rs", UNBOUNDED_FIXED);
    let outside = elsewhere.path().join("outside.rs");
    let log_outside = sarif(&app, &[outside.to_str().expect("UTF-8 path")]);
    let artifact = &log_outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        ["artifactLocation"];
    assert_eq!(artifact["uriBaseId"], Value::Null, "{artifact}");
    let uri = str_of(artifact, "uri");
    assert!(
        uri.starts_with("file:///") && uri.ends_with("/outside.rs"),
        "{uri}"
    );

    let root_uri = str_of(&run["originalUriBaseIds"]["%SRCROOT%"], "uri");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    assert!(
        root_uri.ends_with(&format!(
            "{}/",
            root.file_name().expect("a name").to_string_lossy()
        )),
        "{root_uri}"
    );
}

// ---------------------------------------------------------------- github

/// `::level props::message` split into its parts.
fn parse_command(line: &str) -> (String, Vec<(String, String)>, String) {
    let rest = line.strip_prefix("::").expect("starts with ::");
    let (head, message) = rest.split_once("::").expect("a :: before the message");
    let (level, props) = head.split_once(' ').expect("properties");
    let props = props
        .split(',')
        .map(|p| {
            let (k, v) = p.split_once('=').expect("key=value");
            (k.to_owned(), v.to_owned())
        })
        .collect();
    (level.to_owned(), props, message.to_owned())
}

fn prop<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn github_annotations_match_the_findings() {
    let findings = json_findings(crate_root(), &["fixtures/"]);
    let run = run(crate_root(), &["--format", "github", "fixtures/"]);
    assert_eq!(run.code, Some(1));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), findings.len());
    for (line, finding) in lines.iter().zip(&findings) {
        let (level, props, message) = parse_command(line);
        assert_eq!(level, str_of(finding, "level"));
        assert_eq!(prop(&props, "file"), Some(str_of(finding, "path")));
        assert_eq!(
            prop(&props, "line"),
            Some(&*num_of(finding, "line").to_string())
        );
        assert_eq!(
            prop(&props, "endLine"),
            Some(&*num_of(finding, "end_line").to_string())
        );
        if finding["line"] == finding["end_line"] {
            assert_eq!(
                prop(&props, "col"),
                Some(&*num_of(finding, "column").to_string())
            );
            assert_eq!(
                prop(&props, "endColumn"),
                Some(&*num_of(finding, "end_column").to_string())
            );
        } else {
            assert_eq!(prop(&props, "col"), None, "{line}");
            assert_eq!(prop(&props, "endColumn"), None, "{line}");
        }
        let rule = Rule::from_code(str_of(finding, "rule")).expect("a rule");
        assert_eq!(
            prop(&props, "title"),
            Some(&*format!("{} {}", rule.id(), rule.name()))
        );
        assert!(message.starts_with(str_of(finding, "message")), "{line}");
        assert!(!message.contains('\n') && !message.contains('\r'), "{line}");
    }
}

#[test]
fn github_escapes_commas_colons_and_newlines() {
    let dir = TempDir::new().expect("temp dir");
    write(dir.path(), "a,b:c%.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["--format", "github", "a,b:c%.rs"]);
    let first = run.stdout.lines().next().expect("an annotation");
    assert!(
        first.starts_with("::error file=a%2Cb%3Ac%25.rs,line="),
        "{first}"
    );
    let (_, props, message) = parse_command(first);
    assert_eq!(props.len(), 6, "{first}");
    assert!(message.contains("%0Ahelp: "), "{first}");
}

// ---------------------------------------------------------------- gitlab

#[test]
fn gitlab_code_quality_matches_the_findings() {
    let findings = json_findings(crate_root(), &["fixtures/"]);
    let run = run(crate_root(), &["--format", "gitlab", "fixtures/"]);
    assert_eq!(run.code, Some(1));
    let issues: Vec<Value> = serde_json::from_str(&run.stdout).expect("one JSON array");
    assert_eq!(issues.len(), findings.len());
    let mut prints = HashSet::new();
    for (issue, finding) in issues.iter().zip(&findings) {
        assert_eq!(issue["check_name"], finding["rule"]);
        assert!(str_of(issue, "description").contains(str_of(finding, "message")));
        let severity = match str_of(finding, "level") {
            "error" => "major",
            _ => "minor",
        };
        assert_eq!(issue["severity"], severity);
        assert_eq!(issue["location"]["path"], finding["path"]);
        assert_eq!(issue["location"]["lines"]["begin"], finding["line"]);
        assert!(prints.insert(str_of(issue, "fingerprint").to_owned()));
    }

    let dir = TempDir::new().expect("temp dir");
    write(dir.path(), "clean.rs", CLEAN);
    let clean = self::run(dir.path(), &["--format", "gitlab", "clean.rs"]);
    assert_eq!(clean.code, Some(0));
    assert_eq!(clean.stdout, "[]\n");
}

// ---------------------------------------------------------------- cargo-json

/// Every stdout line as a cargo message; fails on a line `cargo_metadata` cannot read.
fn cargo_messages(stdout: &str) -> Vec<Message> {
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str::<Message>(line)
                .unwrap_or_else(|e| panic!("not a cargo message ({e}): {line}"))
        })
        .collect()
}

#[test]
fn cargo_json_lines_are_cargo_messages_for_every_fixture() {
    let findings = json_findings(crate_root(), &["fixtures/"]);
    let run = run(crate_root(), &["--message-format=cargo-json", "fixtures/"]);
    assert_eq!(run.code, Some(1));
    let messages = cargo_messages(&run.stdout);
    let (last, compiler) = messages.split_last().expect("messages");
    assert!(
        matches!(last, Message::BuildFinished(f) if !f.success),
        "ends with a failed build-finished"
    );
    assert_eq!(compiler.len(), findings.len());
    for (message, finding) in compiler.iter().zip(&findings) {
        let Message::CompilerMessage(message) = message else {
            panic!("a compiler-message: {message:?}");
        };
        let rule = Rule::from_code(str_of(finding, "rule")).expect("a rule");
        let code = message.message.code.as_ref().expect("a code");
        assert_eq!(
            code.code,
            format!("retry_audit::{}", rule.name().replace('-', "_"))
        );
        let primary = &message.message.spans[0];
        assert!(primary.is_primary);
        assert_eq!(primary.file_name, str_of(finding, "path"));
        assert_eq!(primary.line_start as u64, num_of(finding, "line"));
        assert_eq!(primary.column_start as u64, num_of(finding, "column"));
        assert_eq!(primary.line_end as u64, num_of(finding, "end_line"));
        assert_eq!(primary.column_end as u64, num_of(finding, "end_column"));
        // The fixtures belong to no target: they count as the library's, but for crate
        // fixtures (a folder with its own `Cargo.toml`), which are their package's.
        assert_eq!(
            message.target.name,
            fixture_package(str_of(finding, "path")).unwrap_or_else(|| "retry_audit".to_owned())
        );
    }
}

/// The package (as a target name) of the crate fixture holding `path`, if it is in one.
fn fixture_package(path: &str) -> Option<String> {
    let path = Path::new(path);
    let manifest = path
        .ancestors()
        .skip(1)
        .take_while(|dir| !dir.ends_with("fixtures"))
        .map(|dir| dir.join("Cargo.toml"))
        .find(|m| m.is_file())?;
    let text = std::fs::read_to_string(manifest).ok()?;
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("name = "))?
        .trim_matches('"');
    Some(name.replace('-', "_"))
}

/// A workspace with two members (one named like its directory, one not) and a loose file.
fn workspace() -> TempDir {
    let dir = TempDir::new().expect("temp dir");
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/demo\", \"crates/other-dir\"]\nresolver = \"2\"\n\n\
         [workspace.package]\nversion = \"1.2.3\"\nedition = \"2021\"\n",
    );
    write(
        root,
        "crates/demo/Cargo.toml",
        "[package]\nname = \"demo\"\nversion.workspace = true\nedition.workspace = true\n\n\
         [[bin]]\nname = \"tool\"\npath = \"src/bin/tool.rs\"\nrequired-features = []\n",
    );
    write(root, "crates/demo/src/lib.rs", "pub mod helper;\n");
    write(root, "crates/demo/src/helper.rs", UNBOUNDED_FIXED);
    write(
        root,
        "crates/demo/src/bin/tool.rs",
        format!("{UNBOUNDED_FIXED}fn main() {{}}\n"),
    );
    write(
        root,
        "crates/demo/src/bin/extra/main.rs",
        format!("{UNBOUNDED_FIXED}fn main() {{}}\n"),
    );
    // An example target (integration tests are test code, which has no retry sites).
    write(root, "crates/demo/examples/it.rs", KEY_IN_LOOP);
    write(
        root,
        "crates/other-dir/Cargo.toml",
        "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2018\"\n",
    );
    write(
        root,
        "crates/other-dir/src/main.rs",
        format!("{UNBOUNDED_FIXED}fn main() {{}}\n"),
    );
    write(
        root,
        "crates/other-dir/build.rs",
        format!("{UNBOUNDED_FIXED}fn main() {{}}\n"),
    );
    write(root, "scripts/loose.rs", UNBOUNDED_FIXED);
    dir
}

#[test]
fn cargo_json_packages_and_targets_are_cargos() {
    let dir = workspace();
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let metadata = MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .other_options(vec!["--offline".to_owned()])
        .exec()
        .expect("cargo metadata runs on the temp workspace");
    let run = run(&root, &["--format", "cargo-json", "crates", "scripts"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let messages = cargo_messages(&run.stdout);
    let mut seen = HashSet::new();
    for (message, line) in messages.iter().zip(run.stdout.lines()) {
        let Message::CompilerMessage(message) = message else {
            continue;
        };
        // cargo_metadata does not keep `manifest_path`; read it from the line.
        let raw: Value = serde_json::from_str(line).expect("JSON");
        let file_name = message.message.spans[0].file_name.clone();
        seen.insert(file_name.clone());
        if file_name.starts_with("scripts/") || file_name.ends_with("loose.rs") {
            // Outside every package: a stand-in, still a valid message, naming no manifest.
            assert!(raw.get("manifest_path").is_none(), "{line}");
            continue;
        }
        let package = metadata
            .packages
            .iter()
            .find(|p| p.id == message.package_id)
            .unwrap_or_else(|| panic!("{} is a package id of cargo's", message.package_id));
        assert_eq!(raw["manifest_path"], package.manifest_path.as_str());
        let expected_target = match file_name.as_str() {
            "crates/demo/src/helper.rs" => "demo",
            "crates/demo/src/bin/tool.rs" => "tool",
            "crates/demo/src/bin/extra/main.rs" => "extra",
            "crates/demo/examples/it.rs" => "it",
            "crates/other-dir/src/main.rs" => "other",
            "crates/other-dir/build.rs" => "build-script-build",
            other => panic!("unexpected file {other}"),
        };
        let target = package
            .targets
            .iter()
            .find(|t| t.name == expected_target)
            .unwrap_or_else(|| panic!("cargo knows target {expected_target}"));
        assert_eq!(&message.target, target, "target of {file_name}");
    }
    assert_eq!(seen.len(), 7, "{seen:?}");
    assert!(
        matches!(messages.last(), Some(Message::BuildFinished(f)) if !f.success),
        "ends with build-finished"
    );
}

#[test]
fn cargo_json_names_the_real_manifest_or_none() {
    let dir = TempDir::new().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    assert!(
        root.ancestors().all(|d| !d.join("Cargo.toml").exists()),
        "the temporary directory is outside every package"
    );
    write(&root, "src/loose.rs", UNBOUNDED_FIXED);
    write(
        &root,
        "pkg/Cargo.toml",
        "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(&root, "pkg/src/lib.rs", "mod deep;\n");
    write(&root, "pkg/src/deep/mod.rs", UNBOUNDED_FIXED);
    let run = run(&root, &["--format", "cargo-json", "src", "pkg"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let mut manifests: Vec<(String, Option<String>)> = Vec::new();
    for (message, line) in cargo_messages(&run.stdout).iter().zip(run.stdout.lines()) {
        let Message::CompilerMessage(message) = message else {
            continue;
        };
        let raw: Value = serde_json::from_str(line).expect("JSON");
        let manifest = raw.get("manifest_path").map(|m| {
            m.as_str()
                .unwrap_or_else(|| panic!("a path when present: {line}"))
                .to_owned()
        });
        if let Some(manifest) = &manifest {
            assert!(Path::new(manifest).is_file(), "{manifest} exists: {line}");
        }
        let file = message.message.spans[0].file_name.clone();
        if !manifests.iter().any(|(f, _)| *f == file) {
            manifests.push((file, manifest));
        }
    }
    manifests.sort();
    let pkg_manifest = root.join("pkg/Cargo.toml").to_string_lossy().into_owned();
    assert_eq!(
        manifests,
        [
            ("loose.rs".to_owned(), None),
            ("src/deep/mod.rs".to_owned(), Some(pkg_manifest)),
        ],
        "inside a package its Cargo.toml (found upward from the file), outside one none"
    );
}

#[test]
fn cargo_json_messages_read_like_rustcs() {
    let dir = workspace();
    let root = dir.path();
    let run = run(root, &["--format", "cargo-json", "crates/demo"]);
    let human = self::run(
        root,
        &["--format", "human", "--color", "never", "crates/demo"],
    );
    let findings = json_findings(root, &["crates/demo"]);
    let messages: Vec<_> = cargo_messages(&run.stdout)
        .into_iter()
        .filter_map(|m| match m {
            Message::CompilerMessage(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), findings.len());
    let mut fixed_any = false;
    for (message, finding) in messages.iter().zip(&findings) {
        let diagnostic = &message.message;
        let path = str_of(finding, "path");
        let text = fs::read_to_string(root.join(path)).expect("source");
        let level = match str_of(finding, "level") {
            "error" => DiagnosticLevel::Error,
            _ => DiagnosticLevel::Warning,
        };
        assert_eq!(diagnostic.level, level);
        assert_eq!(diagnostic.message, str_of(finding, "message"));
        let rendered = diagnostic.rendered.as_deref().expect("rendered");
        assert!(
            human.stdout.contains(rendered),
            "{rendered}\n---\n{}",
            human.stdout
        );
        assert!(rendered.starts_with(&format!(
            "{}[{}]: {}",
            str_of(finding, "level"),
            str_of(finding, "rule"),
            str_of(finding, "message")
        )));
        let explanation = diagnostic
            .code
            .as_ref()
            .and_then(|c| c.explanation.as_deref());
        assert!(
            explanation.is_some_and(|e| e.starts_with(&format!("# {}", str_of(finding, "rule")))),
            "{explanation:?}"
        );
        // Spans: byte offsets, lines and columns, and the highlighted text agree.
        assert_eq!(
            diagnostic.spans.len(),
            1 + finding["labels"].as_array().expect("labels").len()
        );
        for span in &diagnostic.spans {
            assert_eq!(span.file_name, path);
            let first = &span.text[0];
            let line_text = text.lines().nth(span.line_start - 1).expect("the line");
            assert_eq!(first.text, line_text);
            assert_eq!(first.highlight_start, span.column_start);
            assert_eq!(span.text.len(), span.line_end - span.line_start + 1);
            let start: usize = text
                .lines()
                .take(span.line_start - 1)
                .map(|l| l.len() + 1)
                .sum::<usize>()
                + line_text
                    .chars()
                    .take(span.column_start - 1)
                    .map(char::len_utf8)
                    .sum::<usize>();
            assert_eq!(span.byte_start as usize, start, "byte_start of {span:?}");
            assert!(span.expansion.is_none());
        }
        assert!(diagnostic.spans[0].is_primary);
        assert!(diagnostic.spans[1..].iter().all(|s| !s.is_primary));
        // Help lines and fixes are `help` children, as rustc writes them.
        let helps: Vec<_> = diagnostic
            .children
            .iter()
            .filter(|c| c.level == DiagnosticLevel::Help)
            .collect();
        assert!(!helps.is_empty());
        let suggestions: Vec<_> = diagnostic
            .children
            .iter()
            .flat_map(|c| &c.spans)
            .filter(|s| s.suggested_replacement.is_some())
            .collect();
        if suggestions.is_empty() {
            continue;
        }
        assert_eq!(str_of(finding, "rule"), "RA005");
        let mut fixed = text.clone();
        let mut edits: Vec<_> = suggestions.iter().collect();
        edits.sort_by_key(|s| std::cmp::Reverse(s.byte_start));
        for span in edits {
            assert_eq!(
                span.suggestion_applicability,
                Some(Applicability::MachineApplicable)
            );
            let replacement = span
                .suggested_replacement
                .as_deref()
                .expect("a replacement");
            fixed.replace_range(
                span.byte_start as usize..span.byte_end as usize,
                replacement,
            );
        }
        write(root, "fixed/it.rs", &fixed);
        let after = json_findings(root, &["fixed/it.rs"]);
        assert!(
            after.iter().all(|f| f["rule"] != "RA005"),
            "applying the suggestions removes RA005:\n{fixed}"
        );
        fixed_any = true;
    }
    assert!(fixed_any, "the RA005 case carries a suggestion");
}

#[test]
fn cargo_json_of_a_clean_tree_is_a_successful_build() {
    let dir = TempDir::new().expect("temp dir");
    write(dir.path(), "clean.rs", CLEAN);
    let run = run(dir.path(), &["--format", "cargo-json", "clean.rs"]);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        "{\"reason\":\"build-finished\",\"success\":true}\n"
    );
}

// ---------------------------------------------------------------- all machine formats

#[test]
fn machine_formats_keep_stdout_for_the_consumer() {
    let dir = TempDir::new().expect("temp dir");
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    write(dir.path(), "broken.rs", "fn broken( {\n");
    // RA000 off: the file that does not parse is skipped, and said so on stderr.
    for format in ["sarif", "github", "gitlab", "cargo-json"] {
        let run = run(dir.path(), &["--format", format, "--ignore", "RA000", "."]);
        assert_eq!(run.code, Some(1), "{format}");
        let summary = run.stderr.lines().last().expect("a summary on stderr");
        assert!(
            summary.starts_with("retry-audit: 1 file checked, 1 skipped, "),
            "{format}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains(summary), "{format}: {}", run.stdout);
        assert!(
            run.stderr.contains("warning: skipped broken.rs:1:"),
            "{format}: {}",
            run.stderr
        );
        assert!(
            !run.stdout.contains("warning: skipped"),
            "{format}: {}",
            run.stdout
        );
    }
    // SARIF also lists the skipped file, as a tool notification.
    let log = sarif(dir.path(), &["--ignore", "RA000", "."]);
    let notifications = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(
        notifications.as_array().map(Vec::len),
        Some(1),
        "{notifications}"
    );
    let skipped = &notifications[0];
    assert_eq!(skipped["level"], "warning");
    assert_eq!(
        skipped["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "broken.rs"
    );
    assert_eq!(
        skipped["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
}

// ---------------------------------------------------------------- rust-analyzer wrapper

/// `scripts/check-with-retry-audit.sh`, the README's `rust-analyzer.check.overrideCommand`:
/// rustc's and retry-audit's diagnostics arrive in one stream of cargo messages, for the same
/// package id.
#[test]
fn the_rust_analyzer_wrapper_merges_cargo_check_and_retry_audit() {
    let dir = TempDir::new().expect("temp dir");
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"wrapped\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(
        dir.path(),
        "src/lib.rs",
        format!("pub fn unused() {{\n    let x = 1;\n}}\n\n{UNBOUNDED_FIXED}"),
    );
    let script = crate_root().join("scripts/check-with-retry-audit.sh");
    let output = Command::new("sh")
        .arg(&script)
        .arg("--offline")
        .current_dir(dir.path())
        .env("RETRY_AUDIT", env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .output()
        .expect("the wrapper runs");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "RA001 is an error\n{stderr}");
    let messages = cargo_messages(&stdout);
    let codes: Vec<(String, String)> = messages
        .iter()
        .filter_map(|m| match m {
            Message::CompilerMessage(m) => Some((
                m.package_id.repr.clone(),
                m.message
                    .code
                    .as_ref()
                    .map(|c| c.code.clone())
                    .unwrap_or_default(),
            )),
            _ => None,
        })
        .collect();
    assert!(
        codes.iter().any(|(_, code)| code == "unused_variables"),
        "rustc's warning: {codes:?}\n{stderr}"
    );
    assert!(
        codes
            .iter()
            .any(|(_, code)| code == "retry_audit::unbounded_retry"),
        "retry-audit's error: {codes:?}"
    );
    let ids: HashSet<&String> = codes.iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), 1, "one package, one id: {ids:?}");
    let finished = messages
        .iter()
        .filter(|m| matches!(m, Message::BuildFinished(_)))
        .count();
    assert_eq!(finished, 2, "cargo's build-finished, then retry-audit's");
}

// ---------------------------------------------------------------- README

/// The body of the first fenced code block between the two markers of the README.
fn readme_block(readme: &str, name: &str) -> String {
    let start = format!("<!-- {name}:start -->");
    let end = format!("<!-- {name}:end -->");
    let a = readme
        .find(&start)
        .unwrap_or_else(|| panic!("README.md lacks {start}"))
        + start.len();
    let b = a + readme[a..]
        .find(&end)
        .unwrap_or_else(|| panic!("README.md lacks {end}"));
    let section = &readme[a..b];
    let open = section.find("```").expect("a fenced block");
    let body = open + section[open..].find('\n').expect("a fence line") + 1;
    let close = body + section[body..].find("```").expect("a closing fence");
    section[body..close].to_owned()
}

/// The README's samples of `concise` and `github` are lines the binary prints for the README's
/// sample input saved as `src/lib.rs`; its JSON settings parse.
#[test]
fn readme_format_samples_are_real() {
    // The sample input is in docs/usage.md, the samples of the formats in docs/output-formats.md.
    let readme = ["docs/usage.md", "docs/output-formats.md"]
        .map(|page| fs::read_to_string(crate_root().join(page)).expect("the page"))
        .concat();
    let dir = TempDir::new().expect("temp dir");
    write(
        dir.path(),
        "src/lib.rs",
        readme_block(&readme, "sample-input"),
    );
    for (format, marker) in [("concise", "concise-sample"), ("github", "github-sample")] {
        let printed = run(dir.path(), &["--format", format, "src/"]).stdout;
        for line in readme_block(&readme, marker).lines() {
            assert!(
                printed.lines().any(|l| l == line),
                "README's {format} sample line is not printed:\n{line}\n--- printed ---\n{printed}"
            );
        }
    }
    let tasks: Value =
        serde_json::from_str(&readme_block(&readme, "problem-matcher")).expect("tasks.json");
    let matcher = &tasks["tasks"][0]["problemMatcher"];
    assert_eq!(tasks["tasks"][0]["command"], "retry-audit --format concise");
    let pattern = &matcher["pattern"];
    for (key, group) in [
        ("file", 1),
        ("line", 2),
        ("column", 3),
        ("code", 4),
        ("message", 5),
    ] {
        assert_eq!(pattern[key], group, "{key}");
    }
    assert!(str_of(pattern, "regexp").starts_with("^(.+?):(\\d+):(\\d+): (RA\\d{3}) "));
}

#[test]
fn sarif_points_at_the_definitions_of_other_files_a_finding_rests_on() {
    let dir = "fixtures/ignores-retry-after/classifier_in_another_file";
    let log = sarif(crate_root(), &[dir]);
    let results = log["runs"][0]["results"].as_array().expect("results");
    let ra006 = results
        .iter()
        .find(|r| r["ruleId"] == "RA006")
        .expect("the RA006 of client.rs");
    let related = ra006["relatedLocations"].as_array().expect("related");
    let classifier = related
        .iter()
        .find(|r| r["message"]["text"] == "`is_retryable` decides which errors are retried")
        .expect("the classifier's place");
    assert_eq!(
        classifier["physicalLocation"]["artifactLocation"]["uri"],
        format!("{dir}/src/lib.rs")
    );
    assert_eq!(classifier["physicalLocation"]["region"]["startLine"], 14);
    assert_eq!(classifier["physicalLocation"]["region"]["startColumn"], 8);
    // Trimmed to what RA006 reads: the loop's wait comes from that file too, and is left out.
    assert!(
        related
            .iter()
            .all(|r| !r["message"]["text"].to_string().contains("`backoff`")),
        "{related:#?}"
    );
    let ids: Vec<u64> = related.iter().filter_map(|r| r["id"].as_u64()).collect();
    assert_eq!(ids, (1..=related.len() as u64).collect::<Vec<_>>());
}

/// The labels of a finding that point at definitions (`` `name` decides ... ``), by line.
fn evidence_labels(finding: &Value) -> Vec<(u64, String)> {
    finding["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .filter(|l| str_of(l, "message").starts_with('`'))
        .map(|l| {
            (
                l["line"].as_u64().expect("line"),
                str_of(l, "message").to_owned(),
            )
        })
        .collect()
}

#[test]
fn each_finding_points_at_the_definitions_of_the_facts_it_reads_and_no_others() {
    let findings = json_findings(
        crate_root(),
        &["fixtures/missing-jitter/evidence_per_rule.rs"],
    );
    let of = |rule: &str| {
        findings
            .iter()
            .find(|f| f["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule} in {findings:#?}"))
    };
    assert_eq!(
        evidence_labels(of("RA004")),
        [(
            12,
            "`should_retry` decides which errors are retried".to_owned()
        )]
    );
    assert_eq!(
        evidence_labels(of("RA003")),
        // In the order they were followed: the helper, then the constant it reads.
        [
            (8, "`next_delay` decides the wait".to_owned()),
            (6, "`BASE_MS` decides the wait".to_owned()),
        ]
    );
}

#[test]
fn cargo_json_notes_about_another_file_carry_its_span() {
    let dir = "fixtures/ignores-retry-after/classifier_in_another_file";
    let run = run(crate_root(), &["--format", "cargo-json", dir]);
    let message = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .find(|m| m["message"]["code"]["code"] == "retry_audit::ignores_retry_after")
        .expect("the RA006 message");
    let children = message["message"]["children"].as_array().expect("children");
    let note = children
        .iter()
        .find(|c| str_of(c, "message").starts_with("`is_retryable`, defined at"))
        .expect("the classifier's note");
    let span = &note["spans"][0];
    assert_eq!(str_of(span, "file_name"), format!("{dir}/src/lib.rs"));
    assert_eq!(
        (
            &span["line_start"],
            &span["column_start"],
            &span["column_end"]
        ),
        (
            &serde_json::json!(14),
            &serde_json::json!(8),
            &serde_json::json!(20)
        )
    );
    assert_eq!(
        str_of(span, "label"),
        "`is_retryable` decides which errors are retried"
    );
    let source =
        std::fs::read_to_string(crate_root().join(dir).join("src/lib.rs")).expect("lib.rs");
    let (start, end) = (
        span["byte_start"].as_u64().expect("start") as usize,
        span["byte_end"].as_u64().expect("end") as usize,
    );
    assert_eq!(&source[start..end], "is_retryable");
    // The wait the loop also reads from that file is not what RA006 is about.
    assert!(
        children
            .iter()
            .all(|c| !str_of(c, "message").contains("`backoff`")),
        "{children:#?}"
    );
}
