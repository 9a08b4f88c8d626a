//! Helpers shared by the tests that run the binaries in a temporary directory (`mod support;` in
//! each test file). Each file uses a part of them.
#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use tempfile::TempDir;

/// What a run of a binary gave: exit status, standard output and standard error.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Writes `contents` to `dir/relative`, creating the directories on the way.
pub fn write(dir: &Path, relative: &str, contents: impl AsRef<[u8]>) {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create parent directory");
    }
    fs::write(path, contents).expect("write test file");
}

pub fn temp() -> TempDir {
    tempfile::tempdir().expect("create temporary directory")
}

/// Every line of standard output parsed as JSON.
pub fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("invalid JSON line {line:?}: {e}"))
        })
        .collect()
}

/// The lines of standard error that report an error (`error: cannot check ..`).
pub fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("error: "))
        .collect()
}

/// The lines of standard error that report skipped files.
pub fn skipped_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("warning: skipped "))
        .collect()
}

/// A retry loop with no attempt limit and a constant one-second sleep: RA001 (error) and RA002
/// (warning). The loop starts at 6:5; the sleep call spans 9:23 to 9:78.
pub const UNBOUNDED_FIXED: &str = "\
fn op() -> Result<u32, ()> {
    Err(())
}

fn fetch() -> u32 {
    loop {
        match op() {
            Ok(v) => return v,
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    }
}
";

/// A retry loop whose idempotency key is made per attempt, in a plain `let`: RA005 with a fix
/// (the key moves above the loop), and nothing else to report.
pub const KEY_IN_LOOP: &str = r#"async fn charge(client: &Client, order: &Order) -> Result<Receipt, Error> {
    for attempt in 0..3u32 {
        let idempotency_key = Uuid::new_v4().to_string();
        let resp = client
            .post("https://pay.example/charges")
            .header("Idempotency-Key", &idempotency_key)
            .json(order)
            .send()
            .await;
        match resp {
            Ok(r) => return Ok(r.json().await?),
            Err(e) if !(e.is_timeout() || e.is_connect()) => return Err(e.into()),
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..(100 << attempt)))).await;
    }
    Err(Error::GaveUp)
}
"#;
