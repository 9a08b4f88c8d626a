//! The editor and the command line agree by construction: for every fixture folder and every
//! crate fixture, the diagnostics a language-server client receives for each file (opened in a
//! workspace that is that folder) are the findings a scan of the folder reports for that file:
//! the same rules, on the same lines, with the same messages, nested retries across files
//! included.

#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single answer of the server may take (a debug build, a folder's first file).
const TIMEOUT: Duration = Duration::from_secs(60);

/// (rule, line, message): what is compared.
type Finding = (String, u64, String);

/// A running `retry-audit lsp`, and what it has sent.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
}

impl Client {
    fn start(root: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            messages,
        };
        let root_uri = uri(root);
        client.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": root_uri, "capabilities": {},
                       "workspaceFolders": [{"uri": root_uri, "name": "fixtures"}]}}));
        client.next_where(|m| m["id"] == 1);
        client.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        client
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("sent");
        self.stdin.flush().expect("flushed");
    }

    fn next_where(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => {}
                Err(e) => panic!("no expected message from the server: {e}"),
            }
        }
    }

    /// Opens `path` and returns the findings published for it.
    fn findings(&mut self, path: &Path) -> Vec<Finding> {
        let text = std::fs::read_to_string(path).expect("readable");
        let uri = uri(path);
        self.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}}));
        let published = self.next_where(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        let mut found: Vec<Finding> = published["params"]["diagnostics"]
            .as_array()
            .expect("an array")
            .iter()
            // A document that cannot be analysed gets one note, which is not a finding.
            .filter(|d| d["code"].as_str().is_some_and(|c| c.starts_with("RA")))
            .map(|d| {
                let message = d["message"].as_str().unwrap_or_default();
                (
                    d["code"].as_str().unwrap_or_default().to_owned(),
                    d["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
                    message.lines().next().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        found.sort();
        found
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn uri(path: &Path) -> String {
    lsp_types::Url::from_file_path(path)
        .expect("an absolute path")
        .to_string()
}

/// What a scan of `folder` reports, by file (every `.rs` file it checks has an entry).
fn scanned(folder: &Path) -> BTreeMap<PathBuf, Vec<Finding>> {
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--format", "json", "--quiet"])
        .arg(folder)
        .current_dir(folder)
        .output()
        .expect("the scan runs");
    let mut by_file: BTreeMap<PathBuf, Vec<Finding>> =
        retry_audit::pipeline::scan::rust_files(folder, None)
            .into_iter()
            .map(|p| (p, Vec::new()))
            .collect();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let d: Value = serde_json::from_str(line).expect("a JSON line");
        let path = folder.join(d["path"].as_str().expect("a path"));
        let path = by_file
            .keys()
            .find(|p| same_file(p, &path))
            .cloned()
            .unwrap_or(path);
        by_file.entry(path).or_default().push((
            d["rule"].as_str().unwrap_or_default().to_owned(),
            d["line"].as_u64().unwrap_or_default(),
            d["message"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    for found in by_file.values_mut() {
        found.sort();
    }
    by_file
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The folders compared: `fixtures/` as a whole, each folder of it, and each crate fixture (a
/// folder with a `Cargo.toml`).
fn folders() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = vec![fixtures.clone()];
    let mut stack = vec![fixtures];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                if path.parent().is_some_and(|p| p.ends_with("fixtures"))
                    || path.join("Cargo.toml").is_file()
                {
                    out.push(path.clone());
                }
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_file_of_every_fixture_folder_gets_in_the_editor_what_a_scan_reports() {
    let mut differences = Vec::new();
    let mut compared = 0;
    let mut with_findings = 0;
    let folders = folders();
    assert!(folders.len() > 10, "{folders:?}");
    for folder in &folders {
        let scan = scanned(folder);
        let mut client = Client::start(folder);
        for (path, expected) in &scan {
            let got = client.findings(path);
            compared += 1;
            with_findings += usize::from(!expected.is_empty());
            if &got != expected {
                differences.push(format!(
                    "{} (workspace {}):\n    scan:   {expected:?}\n    editor: {got:?}",
                    path.display(),
                    folder.display()
                ));
            }
        }
    }
    assert!(
        compared > 100 && with_findings > 50,
        "{compared} files, {with_findings} with findings"
    );
    assert!(
        differences.is_empty(),
        "{} of {compared} files differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
