//! `retry-audit lsp`'s transport and scheduling (issue 32, defects 2 and 3), driven over stdio
//! as an editor would: a malformed frame is answered with a parse error and the server goes on;
//! the end of the input is an error only after `initialize` and before `shutdown`; only the
//! newest version of a document is analysed and published, and requests are answered without
//! waiting for the analysis of a version that is already superseded.
//!
//! The server reports its scheduling with `$/logTrace` when the client asks for a trace
//! (`"trace": "messages"` in `initialize`), which lets the tests see the order of events rather
//! than time them. Every read has a timeout and the server is killed when a test ends.

#![cfg(feature = "cli")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single answer of the server may take (analysis of a debug build included).
const TIMEOUT: Duration = Duration::from_secs(60);

/// A retry loop with a fixable RA005: one finding, one quick fix.
const DEFECT: &str = "async fn charge(client: &Client, order: &Order) -> Result<Receipt, Error> {
    for attempt in 0..3u32 {
        let idempotency_key = Uuid::new_v4().to_string();
        let resp = client
            .post(\"https://pay.example/charges\")
            .header(\"Idempotency-Key\", &idempotency_key)
            .json(order)
            .send()
            .await;
        match resp { Ok(r) => return Ok(r.json().await?),
            Err(e) if !e.is_timeout() => return Err(e.into()),
            Err(_) => {} }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..(100 << attempt)))).await;
    }
    Err(Error::GaveUp)
}
";

/// A document that takes the server seconds to analyse (a debug build): `n` retry loops.
fn big_document(n: usize, tag: &str) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    for k in 0..n {
        let _ = write!(
            text,
            "fn op_{tag}_{k}() -> Result<u32, ()> {{ Err(()) }}\n\
             fn fetch_{tag}_{k}() -> u32 {{\n    loop {{\n        match op_{tag}_{k}() {{\n            \
             Ok(v) => return v,\n            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),\n        \
             }}\n    }}\n}}\n"
        );
    }
    text
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    /// Messages read while waiting for one that did not come, to be read again.
    backlog: std::collections::VecDeque<Value>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
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
        Server {
            child,
            stdin,
            messages,
            backlog: std::collections::VecDeque::new(),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input open");
        stdin.write_all(bytes).expect("sent");
        stdin.flush().expect("flushed");
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn request(&mut self, id: i64, method: &str, params: &Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn notify(&mut self, method: &str, params: &Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Closes the server's standard input.
    fn close(&mut self) {
        self.stdin = None;
    }

    /// The next message, whatever it is.
    fn next(&mut self) -> Value {
        if let Some(message) = self.backlog.pop_front() {
            return message;
        }
        self.messages
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|e| panic!("no message from the server: {e}"))
    }

    /// Waits until the server says it started analysing `version` of a document (with
    /// `$/logTrace`), for at most two seconds; the messages read meanwhile are read again.
    fn analysing(&mut self, version: i32) {
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(message) = self.messages.recv_timeout(left) else {
                break;
            };
            let started = trace(&message).starts_with("analysing")
                && trace(&message).ends_with(&format!("version {version}"));
            seen.push(message);
            if started {
                break;
            }
        }
        self.backlog.extend(seen);
    }

    /// The messages up to and including the first that satisfies `wanted`.
    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = wanted(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    fn initialize(&mut self) {
        self.request(
            1,
            "initialize",
            &json!({"processId": null, "rootUri": null, "capabilities": {}, "trace": "messages"}),
        );
        let answer = self.until(|m| m["id"] == 1);
        assert!(
            answer.last().is_some_and(|m| m.get("result").is_some()),
            "{:?}",
            briefs(&answer)
        );
        self.notify("initialized", &json!({}));
    }

    fn open(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            &json!({"textDocument": {"uri": uri, "languageId": "rust", "version": version, "text": text}}),
        );
    }

    fn change(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            &json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Waits for the process to end; its exit status.
    fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("waitable") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one framed message (headers, an empty line, `Content-Length` bytes of JSON).
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

fn uri(name: &str) -> String {
    let dir = std::env::temp_dir().join("retry-audit-lsp-transport-test");
    format!("file://{}/{name}", dir.display())
}

fn is_publish(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

/// A message in a few words, for failures: its method or id, the version it publishes, its trace.
fn brief(message: &Value) -> String {
    format!(
        "{} {} {} {}",
        message["method"],
        message["id"],
        message["params"]["version"],
        trace(message)
    )
}

/// The messages in a few words each.
fn briefs(messages: &[Value]) -> Vec<String> {
    messages.iter().map(brief).collect()
}

fn trace(message: &Value) -> &str {
    if message["method"] == "$/logTrace" {
        message["params"]["message"].as_str().unwrap_or_default()
    } else {
        ""
    }
}

// --------------------------------------------------------------- defect 2: malformed frames

/// A frame that is not a message is answered with a parse error (-32700, id null) and the
/// server reads the next one: invalid JSON, a missing or non-numeric `Content-Length`, a JSON
/// array. It then still analyses, answers and exits cleanly.
#[test]
fn malformed_frames_are_answered_and_the_server_keeps_serving() {
    let mut server = Server::start();
    server.initialize();
    let bad_json = "{\"jsonrpc\": \"2.0\", \"method\": ";
    let frames = [
        format!("Content-Length: {}\r\n\r\n{bad_json}", bad_json.len()),
        "Content-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}".to_owned(),
        "Content-Length: forty\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}".to_owned(),
        "Content-Length: 5\r\n\r\n[1,2]".to_owned(),
    ];
    for frame in &frames {
        server.send_raw(frame.as_bytes());
        let answer = server.next();
        assert_eq!(answer["error"]["code"], -32700, "{frame:?}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{frame:?}: {answer}");
    }
    let uri = uri("malformed.rs");
    server.open(&uri, 1, DEFECT);
    let published = server.until(|m| is_publish(m, &uri));
    let diagnostics = &published.last().expect("published")["params"]["diagnostics"];
    assert_eq!(diagnostics[0]["code"], "RA005", "{diagnostics}");
    server.request(2, "shutdown", &Value::Null);
    server.until(|m| m["id"] == 2);
    server.notify("exit", &Value::Null);
    assert_eq!(server.wait(), Some(0));
}

/// Standard input closed before `initialize` is not an error (status 0), nor after `shutdown`;
/// after `initialize` without `shutdown` it is (status 1, as `exit` without `shutdown`).
#[test]
fn the_end_of_the_input_is_an_error_only_between_initialize_and_shutdown() {
    let mut server = Server::start();
    server.close();
    assert_eq!(server.wait(), Some(0), "closed before initialize");

    let mut server = Server::start();
    server.initialize();
    server.request(2, "shutdown", &Value::Null);
    server.until(|m| m["id"] == 2);
    server.close();
    assert_eq!(server.wait(), Some(0), "closed after shutdown");

    let mut server = Server::start();
    server.initialize();
    server.close();
    assert_eq!(server.wait(), Some(1), "closed while serving");
}

// ------------------------------------------------------------- defect 3: superseded versions

/// While a long analysis of version 1 runs, the document changes to version 2 and a quick fix is
/// asked for: the request is answered from version 2's analysis before version 1's ends, whose
/// result is then dropped. Only version 2 is published.
#[test]
fn a_request_is_answered_without_waiting_for_the_analysis_of_a_superseded_version() {
    let mut server = Server::start();
    server.initialize();
    let uri = uri("superseded.rs");
    server.open(&uri, 1, &big_document(1500, "a"));
    // Let the analysis of version 1 start.
    server.analysing(1);
    server.change(&uri, 2, DEFECT);
    server.request(
        2,
        "textDocument/codeAction",
        &json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 2, "character": 34}, "end": {"line": 2, "character": 34}},
            "context": {"diagnostics": []},
        }),
    );
    let before_answer = server.until(|m| m["id"] == 2);
    let actions = &before_answer.last().expect("answered")["result"];
    assert_eq!(
        actions.as_array().map(Vec::len),
        Some(1),
        "{:?}",
        briefs(&before_answer)
    );
    for message in &before_answer {
        assert!(
            !trace(message).contains("version 1:") && !trace(message).contains("version 1 in"),
            "the answer waited for version 1: {}",
            brief(message)
        );
        if is_publish(message, &uri) {
            assert_eq!(message["params"]["version"], 2, "{}", brief(message));
        }
    }
    // Version 1's analysis ends later and is dropped, never published.
    let after =
        server.until(|m| trace(m).starts_with("dropped") && trace(m).contains("version 1:"));
    for message in before_answer.iter().chain(&after) {
        if is_publish(message, &uri) {
            assert_eq!(message["params"]["version"], 2, "{}", brief(message));
        }
    }
    server.request(3, "shutdown", &Value::Null);
    server.until(|m| m["id"] == 3);
    server.notify("exit", &Value::Null);
    assert_eq!(server.wait(), Some(0));
}

/// Quick full-text edits while both workers analyse large texts: the versions in between are
/// never analysed, and the first (and only) diagnostics published are the newest version's.
/// Versions 1 and 2 are large, so both workers are busy for far longer than the server takes to
/// read the three short edits after them (whatever else the machine runs meanwhile); a server
/// that analysed each text it received would analyse versions 3 and 4 when a worker frees.
#[test]
fn only_the_newest_of_quick_edits_is_analysed_and_published() {
    let mut server = Server::start();
    server.initialize();
    let uri = uri("edits.rs");
    server.open(&uri, 1, &big_document(1500, "v1"));
    server.analysing(1);
    server.change(&uri, 2, &big_document(1500, "v2"));
    server.analysing(2);
    for version in 3..=5 {
        server.change(&uri, version, &big_document(2, &format!("v{version}")));
    }
    let seen = server.until(|m| is_publish(m, &uri));
    assert_eq!(
        seen.last().expect("published")["params"]["version"],
        5,
        "{:?}",
        briefs(&seen)
    );
    for message in &seen {
        for middle in [3, 4] {
            assert!(
                !trace(message).ends_with(&format!("version {middle}")),
                "version {middle} was analysed: {}",
                brief(message)
            );
        }
    }
    server.request(2, "shutdown", &Value::Null);
    server.until(|m| m["id"] == 2);
    server.notify("exit", &Value::Null);
    assert_eq!(server.wait(), Some(0));
}

/// `shutdown` sent during a long analysis is answered at once, and `exit` ends the server
/// without waiting for the analysis.
#[test]
fn shutdown_is_answered_during_an_analysis() {
    let mut server = Server::start();
    server.initialize();
    let uri = uri("shutdown.rs");
    server.open(&uri, 1, &big_document(1500, "s"));
    server.analysing(1);
    server.request(2, "shutdown", &Value::Null);
    let seen = server.until(|m| m["id"] == 2);
    assert!(
        !seen.iter().any(|m| is_publish(m, &uri)),
        "shutdown waited for the analysis: {:?}",
        briefs(&seen)
    );
    server.notify("exit", &Value::Null);
    assert_eq!(server.wait(), Some(0));
}
