//! RA010 across files: a retry loop in one file calling a function that retries in another.

#![cfg(feature = "cli")]

use std::fs;
use std::process::Command;

const RETRYING: &str = r"
use std::time::Duration;

pub fn fetch_page(client: &Client, url: &str) -> Result<Page, FetchError> {
    for attempt in 0..3u32 {
        match client.get(url) {
            Ok(page) => return Ok(page),
            Err(err) if err.is_transient() => {
                let cap = (100u64 << attempt).min(2_000);
                std::thread::sleep(Duration::from_millis(fastrand::u64(0..=cap)));
            }
            Err(err) => return Err(err),
        }
    }
    Err(FetchError::GaveUp)
}
";

const CALLER: &str = r#"
use std::time::Duration;

pub fn fetch_report(client: &Client) -> Result<Page, FetchError> {
    for attempt in 0..3u32 {
        match crate::pages::fetch_page(client, "https://reports.example/daily") {
            Ok(page) => return Ok(page),
            Err(err) if err.is_transient() => {
                let cap = (500u64 << attempt).min(5_000);
                std::thread::sleep(Duration::from_millis(fastrand::u64(0..=cap)));
            }
            Err(err) => return Err(err),
        }
    }
    Err(FetchError::GaveUp)
}
"#;

fn findings(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--format", "json", "src"])
        .current_dir(dir)
        .output()
        .expect("binary runs");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

#[test]
fn a_call_into_another_files_retry_is_reported_at_the_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("src")).expect("src");
    fs::write(dir.path().join("src/pages.rs"), RETRYING).expect("pages.rs");
    fs::write(dir.path().join("src/report.rs"), CALLER).expect("report.rs");
    let found = findings(dir.path());
    let nested: Vec<_> = found.iter().filter(|f| f["rule"] == "RA010").collect();
    assert_eq!(nested.len(), 1, "{found:#?}");
    assert_eq!(nested[0]["path"], "src/report.rs");
    assert_eq!(nested[0]["line"], 6);
    let notes = nested[0]["notes"].to_string();
    assert!(
        notes.contains("src/pages.rs:5:"),
        "the note says where it retries: {notes}"
    );
    let place = &nested[0]["elsewhere"][0];
    assert_eq!(
        (&place["path"], &place["line"], &place["message"]),
        (
            &serde_json::json!("src/pages.rs"),
            &serde_json::json!(5),
            &serde_json::json!("`fetch_page` retries here too")
        ),
        "{:#?}",
        nested[0]
    );
}

#[test]
fn a_function_of_the_same_name_in_the_calling_file_is_not_confused() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("src")).expect("src");
    fs::write(dir.path().join("src/pages.rs"), RETRYING).expect("pages.rs");
    let caller = format!(
        "{CALLER}\nfn fetch_page(client: &Client, url: &str) -> Result<Page, FetchError> {{ client.get(url) }}\n"
    );
    fs::write(dir.path().join("src/report.rs"), caller).expect("report.rs");
    let found = findings(dir.path());
    assert!(found.iter().all(|f| f["rule"] != "RA010"), "{found:#?}");
}

#[test]
fn a_function_of_the_same_name_in_another_crate_is_not_confused() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (krate, file, text) in [
        ("pages", "pages.rs", RETRYING),
        ("report", "report.rs", CALLER),
    ] {
        let root = dir.path().join("src").join(krate);
        fs::create_dir_all(&root).expect("crate dir");
        fs::write(root.join("Cargo.toml"), "[package]\n").expect("Cargo.toml");
        fs::write(root.join(file), text).expect("source");
    }
    let found = findings(dir.path());
    assert!(found.iter().all(|f| f["rule"] != "RA010"), "{found:#?}");

    // The same two files in one crate: the call is reported.
    fs::remove_file(dir.path().join("src/report/Cargo.toml")).expect("remove");
    fs::write(dir.path().join("src/Cargo.toml"), "[package]\n").expect("Cargo.toml");
    fs::remove_file(dir.path().join("src/pages/Cargo.toml")).expect("remove");
    let found = findings(dir.path());
    assert_eq!(
        found.iter().filter(|f| f["rule"] == "RA010").count(),
        1,
        "{found:#?}"
    );
}
