//! Baselines end to end: `--write-baseline` records the findings, `--baseline` hides them, and a
//! recorded finding stays recognised when unrelated code moves it to another line, renames
//! other things or reformats the file; a new defect is still reported.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

mod support;

use support::Run;

/// Two retries, each with a fixed pause (RA002); `fetch` also loops for ever (RA001).
const SOURCE: &str = "\
use std::thread::sleep;
use std::time::Duration;

fn fetch(client: &Client) -> Body {
    loop {
        if let Ok(body) = client.get() { return body; }
        sleep(Duration::from_secs(1));
    }
}

fn store(db: &Db, row: &Row) -> bool {
    for _ in 0..3 {
        if db.insert(row).is_ok() { return true; }
        sleep(Duration::from_millis(100));
    }
    false
}
";

impl Run {
    /// `(rule, line)` of each RA001/RA002 finding.
    fn findings(&self) -> Vec<(String, u64)> {
        self.stdout
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
            .filter(|f| f["rule"] == "RA001" || f["rule"] == "RA002")
            .map(|f| {
                (
                    f["rule"].as_str().unwrap_or_default().to_owned(),
                    f["line"].as_u64().unwrap_or_default(),
                )
            })
            .collect()
    }
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--format", "json", "--isolated"])
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

/// A directory with `src/lib.rs` = `SOURCE` and a baseline of it in `baseline.json`.
fn recorded() -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("src")).expect("mkdir");
    fs::write(dir.path().join("src/lib.rs"), SOURCE).expect("write");
    let write = run(dir.path(), &["--write-baseline", "baseline.json", "src"]);
    assert_eq!(write.code, Some(0), "{}", write.stderr);
    assert!(write.stdout.is_empty(), "{}", write.stdout);
    assert!(
        write.stderr.contains("recorded ") && write.stderr.contains(" in baseline.json"),
        "{}",
        write.stderr
    );
    dir
}

fn edit(dir: &Path, change: impl FnOnce(&str) -> String) {
    let path = dir.join("src/lib.rs");
    let text = fs::read_to_string(&path).expect("read");
    fs::write(&path, change(&text)).expect("write");
}

fn with_baseline(dir: &Path) -> Run {
    run(dir, &["--baseline", "baseline.json", "src"])
}

#[test]
fn the_file_records_each_finding_readably() {
    let dir = recorded();
    let text = fs::read_to_string(dir.path().join("baseline.json")).expect("baseline written");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(json["version"], 1);
    let findings = json["findings"].as_array().expect("a list");
    let ra002: Vec<&Value> = findings.iter().filter(|f| f["rule"] == "RA002").collect();
    assert_eq!(ra002.len(), 2, "{text}");
    assert_eq!(ra002[0]["path"], "src/lib.rs");
    assert_eq!(ra002[0]["function"], "fetch");
    assert_eq!(ra002[0]["text"], "sleep(Duration::from_secs(1))");
    assert_eq!(ra002[0]["occurrence"], 0);
    assert_eq!(ra002[0]["line"], 7);
    assert_eq!(ra002[0]["message"], "constant delay between retry attempts");
    assert_eq!(ra002[1]["function"], "store");
    for finding in findings {
        let fingerprint = finding["fingerprint"].as_str().expect("a fingerprint");
        assert_eq!(fingerprint.len(), 16);
        assert!(fingerprint.chars().all(|c| c.is_ascii_hexdigit()));
    }
}

#[test]
fn recorded_findings_are_hidden_and_the_run_passes() {
    let dir = recorded();
    let plain = run(dir.path(), &["src"]);
    assert_eq!(plain.code, Some(1), "RA001 is an error");
    let run = with_baseline(dir.path());
    assert_eq!(run.findings(), []);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("in the baseline hidden, 0 no longer found"),
        "{}",
        run.stderr
    );
}

#[test]
fn lines_shifted_by_unrelated_edits_keep_their_fingerprints() {
    let dir = recorded();
    edit(dir.path(), |text| {
        format!("//! A client.\n\nconst LIMIT: u32 = 3;\n\n{text}")
            .replace("fn store(", "/// Stores a row.\n#[inline]\nfn store(")
    });
    assert_eq!(with_baseline(dir.path()).findings(), []);
}

#[test]
fn renaming_and_reformatting_other_code_keeps_the_fingerprints() {
    let dir = recorded();
    edit(dir.path(), |text| {
        text.replace("client: &Client", "http: &HttpClient")
            .replace("client.get()", "http.get()")
            .replace("row: &Row", "record: &Record")
            .replace("db.insert(row)", "db.insert(record)")
            .replace(
                "        sleep(Duration::from_millis(100));",
                "        sleep(\n            Duration::from_millis(100),\n        );",
            )
    });
    assert_eq!(with_baseline(dir.path()).findings(), []);
}

#[test]
fn a_new_defect_is_reported_alone() {
    let dir = recorded();
    edit(dir.path(), |text| {
        format!(
            "{text}\nfn page(host: &Host) -> Option<Page> {{\n    for _ in 0..3 {{\n        \
             if let Ok(p) = host.fetch_page() {{ return Some(p); }}\n        \
             sleep(Duration::from_secs(2));\n    }}\n    None\n}}\n"
        )
    });
    let run = with_baseline(dir.path());
    assert_eq!(run.findings(), [("RA002".to_owned(), 22)]);
    assert_eq!(run.code, Some(0), "a new warning does not fail the run");
}

#[test]
fn a_second_identical_defect_in_the_same_function_is_new() {
    let dir = recorded();
    edit(dir.path(), |text| {
        text.replace(
            "        sleep(Duration::from_millis(100));\n",
            "        sleep(Duration::from_millis(100));\n        sleep(Duration::from_millis(100));\n",
        )
    });
    assert_eq!(
        with_baseline(dir.path()).findings(),
        [("RA002".to_owned(), 15)]
    );
}

#[test]
fn moving_a_defect_to_another_function_makes_it_new() {
    let dir = recorded();
    edit(dir.path(), |text| {
        text.replace("fn fetch(", "fn fetch_body(")
    });
    let found = with_baseline(dir.path()).findings();
    assert_eq!(
        found,
        [("RA001".to_owned(), 5), ("RA002".to_owned(), 7)],
        "renaming the function holding the findings makes them new"
    );
}

#[test]
fn fixed_findings_are_counted_as_no_longer_found() {
    let dir = recorded();
    edit(dir.path(), |text| {
        text.replace("        sleep(Duration::from_millis(100));\n", "")
    });
    let run = with_baseline(dir.path());
    assert_eq!(run.findings(), []);
    // Its RA002, and its RA004: without the wait, `store`'s loop is no retry at all.
    assert!(run.stderr.contains(", 2 no longer found"), "{}", run.stderr);
}

#[test]
fn paths_are_relative_to_the_baseline_so_the_directory_run_from_does_not_matter() {
    let dir = recorded();
    let run = run(
        &dir.path().join("src"),
        &["--baseline", "../baseline.json", "."],
    );
    assert_eq!(run.findings(), [], "{}", run.stdout);
}

#[test]
fn a_bad_baseline_is_an_error_with_its_position() {
    let dir = recorded();
    fs::write(
        dir.path().join("bad.json"),
        "{\"version\": 1,\n \"findings\": [\n",
    )
    .expect("write");
    let bad = run(dir.path(), &["--baseline", "bad.json", "src"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr
            .starts_with("error: bad.json:3:1: not a retry-audit baseline: EOF while parsing"),
        "{}",
        bad.stderr
    );
    fs::write(
        dir.path().join("v9.json"),
        "{\"version\": 9, \"findings\": []}",
    )
    .expect("write");
    let newer = run(dir.path(), &["--baseline", "v9.json", "src"]);
    assert_eq!(newer.code, Some(2));
    assert!(
        newer.stderr.contains("baseline version 9 is not supported"),
        "{}",
        newer.stderr
    );
    let missing = run(dir.path(), &["--baseline", "missing.json", "src"]);
    assert_eq!(missing.code, Some(2));
    let both = run(
        dir.path(),
        &[
            "--baseline",
            "baseline.json",
            "--write-baseline",
            "b.json",
            "src",
        ],
    );
    assert_eq!(both.code, Some(2), "the two flags conflict");
}
