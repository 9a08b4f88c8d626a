//! `retry-audit lsp` driven over stdio with real LSP framing (`Content-Length` headers), as an
//! editor would: initialize, open a document with an RA005 defect, read the published
//! diagnostics, ask for the quick fix, apply it, change the document, shut down.
//!
//! Every read has a timeout and the server is killed when a test ends, so a test cannot hang.

#![cfg(feature = "cli")]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use retry_audit::{check_source, Rule, Settings};

/// How long any single answer of the server may take (analysis of a debug build included).
const TIMEOUT: Duration = Duration::from_secs(30);

/// An RA005 defect with a mechanical fix. The line with the key holds `é` (2 bytes, 1 UTF-16
/// unit) and `𝐊` (4 bytes, 2 UTF-16 units, 1 character) before the finding, so the column is
/// different in bytes (40), characters (36) and UTF-16 units (37).
const DEFECT: &str = "// Paiement: réessais — 🦀
async fn charge(client: &Client, order: &Order) -> Result<Receipt, Error> {
    for attempt in 0..3u32 {
        let idempotency_key: Clé𝐊 = Uuid::new_v4().to_string();
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

const KEY_LINE: &str = "        let idempotency_key: Clé𝐊 = Uuid::new_v4().to_string();\r\n";

/// The document as an editor on Windows holds it: CRLF line endings.
fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// A running server and what it has sent.
struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    stderr: Receiver<String>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, messages) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let (etx, stderr_rx) = mpsc::channel();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = etx.send(text);
        });
        Server {
            child,
            stdin,
            messages,
            stderr: stderr_rx,
        }
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("sent");
        self.stdin.flush().expect("flushed");
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        self.send(&message);
        let response =
            self.next_where(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none());
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        message["params"] = params;
        self.send(&message);
    }

    /// The next message that satisfies `wanted`, skipping others; fails after [`TIMEOUT`].
    fn next_where(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => {}
                Err(e) => {
                    let _ = self.child.kill();
                    let stderr = self.stderr.recv_timeout(Duration::from_secs(5));
                    panic!("no expected message from the server ({e}); stderr: {stderr:?}");
                }
            }
        }
    }

    /// The next `publishDiagnostics` for `uri`: (version, diagnostics).
    fn diagnostics(&mut self, uri: &str) -> (Value, Vec<Value>) {
        let message = self.next_where(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        let params = &message["params"];
        let list = params["diagnostics"].as_array().expect("an array").clone();
        (params["version"].clone(), list)
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

/// Reads one framed message: headers up to an empty line, then `Content-Length` bytes of JSON.
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

fn initialize(server: &mut Server, capabilities: Value) -> Value {
    let mut params = json!({"processId": null, "rootUri": null});
    params["capabilities"] = capabilities;
    let result = server.request(1, "initialize", params);
    server.notify("initialized", json!({}));
    result
}

/// The byte offset of an LSP position counted in UTF-16 units (independent of the server's code).
fn offset_utf16(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        start += text[start..].find('\n').expect("line exists") + 1;
    }
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character as usize || c == '\r' || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// Applies LSP text edits (non-overlapping, positions in the original text).
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let r = &e["range"];
            let at = |p: &Value| {
                offset_utf16(
                    text,
                    p["line"].as_u64().expect("line"),
                    p["character"].as_u64().expect("character"),
                )
            };
            let new_text = e["newText"].as_str().expect("newText").to_owned();
            (at(&r["start"]), at(&r["end"]), new_text)
        })
        .collect();
    // Back to front, so that earlier offsets stay valid; ties keep their order.
    spans.sort_by_key(|(start, _, _)| *start);
    let mut out = text.to_owned();
    for (start, end, new_text) in spans.into_iter().rev() {
        out.replace_range(start..end, &new_text);
    }
    out
}

fn range(start: (u64, u64), end: (u64, u64)) -> Value {
    json!({
        "start": {"line": start.0, "character": start.1},
        "end": {"line": end.0, "character": end.1},
    })
}

fn doc_uri() -> String {
    let dir = std::env::temp_dir().join("retry-audit-lsp-test");
    format!("file://{}/pay.rs", dir.display())
}

#[test]
fn diagnostics_quick_fix_changes_and_shutdown() {
    let mut server = Server::start();
    let init = initialize(
        &mut server,
        json!({"textDocument": {"publishDiagnostics": {"relatedInformation": true}}}),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16", "{init}");
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix"])
    );
    assert_eq!(init["serverInfo"]["name"], "retry-audit");

    let uri = doc_uri();
    let text = crlf(DEFECT);
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let diagnostic = &diagnostics[0];
    // Independently: the finding is `Uuid::new_v4()` on line 3 (0-based), at 37 UTF-16 units.
    let line = text.split("\r\n").nth(3).expect("line 3");
    let column = line[..line.find("Uuid::new_v4()").expect("on line 3")]
        .encode_utf16()
        .count() as u64;
    assert_eq!(column, 37);
    assert_eq!(
        diagnostic["range"],
        range((3, column), (3, column + "Uuid::new_v4()".len() as u64))
    );
    assert_eq!(diagnostic["code"], "RA005");
    assert_eq!(diagnostic["source"], "retry-audit");
    assert_eq!(diagnostic["severity"], 1, "error");
    let message = diagnostic["message"].as_str().expect("message");
    assert!(
        message.starts_with("idempotency key is created anew on every retry attempt\n"),
        "{message}"
    );
    assert!(message.contains("\nhelp: create the key once before the loop"));
    let related = diagnostic["relatedInformation"]
        .as_array()
        .expect("related information");
    assert_eq!(related.len(), 1, "{related:#?}");
    assert_eq!(related[0]["location"]["uri"], uri.as_str());
    assert_eq!(related[0]["location"]["range"], range((2, 4), (2, 26)));
    assert_eq!(related[0]["message"], "retry loop here");

    // The quick fix, asked for at the cursor inside the finding.
    let actions = server.request(
        2,
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": range((3, column + 2), (3, column + 2)),
            "context": {"diagnostics": [diagnostic]},
        }),
    );
    let actions = actions.as_array().expect("an array of actions");
    assert_eq!(actions.len(), 1, "{actions:#?}");
    let action = &actions[0];
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    assert_eq!(action["diagnostics"][0]["code"], "RA005");
    let edits = action["edit"]["changes"][uri.as_str()]
        .as_array()
        .expect("edits for the document");
    let fixed = apply_edits(&text, edits);
    assert!(
        !fixed.replace("\r\n", "").contains('\n'),
        "CRLF kept: {fixed:?}"
    );
    assert!(
        fixed.contains(&format!(
            "\r\n{}    for attempt",
            KEY_LINE.strip_prefix("    ").expect("indented")
        )),
        "the key now comes before the loop:\n{fixed}"
    );
    assert!(!fixed.contains(KEY_LINE));
    assert!(syn::parse_file(&fixed).is_ok(), "{fixed}");
    let left = check_source(&fixed, &Settings::preview()).expect("parses");
    assert!(left.iter().all(|d| d.rule != Rule::KeyInLoop), "{left:#?}");

    // The editor applies it: nothing left to report.
    server.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": fixed}],
        }),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 2);
    assert_eq!(diagnostics, Vec::<Value>::new());

    // Undo by hand with incremental changes, in UTF-16 positions: delete the hoisted line (2),
    // then put it back inside the loop (line 3, after `for ...`, once the first change is made).
    server.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [
                {"range": range((2, 0), (3, 0)), "text": ""},
                {"range": range((3, 0), (3, 0)), "text": KEY_LINE},
            ],
        }),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 3);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "RA005");
    assert_eq!(
        diagnostics[0]["range"],
        range((3, column), (3, column + 14)),
        "the text is the original again"
    );

    // Clean text: empty diagnostics.
    server.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 4},
            "contentChanges": [{"text": "pub fn add(a: u32, b: u32) -> u32 {\r\n    a + b\r\n}\r\n"}],
        }),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 4);
    assert_eq!(diagnostics, Vec::<Value>::new());
    let actions = server.request(
        3,
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": range((0, 0), (3, 0)),
            "context": {"diagnostics": []},
        }),
    );
    assert_eq!(actions, json!([]));

    // Saving analyses again (and publishes).
    server.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 4);
    assert_eq!(diagnostics, Vec::<Value>::new());

    let result = server.request(4, "shutdown", Value::Null);
    assert_eq!(result, Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

#[test]
fn unparseable_and_hostile_documents_get_one_note_and_the_server_goes_on() {
    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let uri = doc_uri();
    // A syntax error where a retry could be (a loop): the document is parsed as a scan parses
    // it, so one in a body that cannot hold a retry is the compiler's alone to report.
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1,
               "text": "fn main() {\n    loop { let x = 1 +; }\n}\n"}}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "not-analysed");
    assert_eq!(diagnostics[0]["severity"], 3, "information");
    assert_eq!(diagnostics[0]["source"], "retry-audit");
    assert_eq!(
        diagnostics[0]["range"]["start"]["line"], 1,
        "at the parse error"
    );

    // Nested far deeper than any parser follows: reported, not a crash.
    let deep = format!(
        "fn f() {{ {}1{} }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    server.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": deep}]}),
    );
    let (version, diagnostics) = server.diagnostics(&uri);
    assert_eq!(version, 2);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0]["code"], "not-analysed");

    // Still serving: the defect is found.
    server.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": DEFECT}]}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0]["code"], "RA005");

    // An unknown request is an error, not the end.
    server.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover",
                        "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}}));
    let response = server.next_where(|m| m.get("id") == Some(&json!(7)));
    assert_eq!(response["error"]["code"], -32601, "method not found");

    // Closing the document clears its diagnostics.
    server.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert!(diagnostics.is_empty());

    // `exit` without `shutdown`: status 1, as the protocol says.
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(1));
}

#[test]
fn utf8_positions_when_the_client_prefers_them_and_versioned_edits() {
    let mut server = Server::start();
    let init = initialize(
        &mut server,
        json!({
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "workspace": {"workspaceEdit": {"documentChanges": true}},
        }),
    );
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    let uri = doc_uri();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 5, "text": DEFECT}}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    let line = DEFECT.lines().nth(3).expect("line 3");
    let bytes = line.find("Uuid::new_v4()").expect("on line 3") as u64;
    assert_eq!(bytes, 40);
    assert_eq!(diagnostics[0]["range"], range((3, bytes), (3, bytes + 14)));

    let actions = server.request(
        2,
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": range((3, bytes), (3, bytes)),
            "context": {"diagnostics": [], "only": ["quickfix"]},
        }),
    );
    let change = &actions[0]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri.as_str());
    assert_eq!(change["textDocument"]["version"], 5);
    assert!(!change["edits"].as_array().expect("edits").is_empty());

    // A client that asks only for refactorings gets no quick fix.
    let actions = server.request(
        3,
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": range((3, bytes), (3, bytes)),
            "context": {"diagnostics": [], "only": ["refactor"]},
        }),
    );
    assert_eq!(actions, json!([]));

    server.request(4, "shutdown", Value::Null);
    // After shutdown, requests are refused; `exit` still ends the server cleanly.
    server.send(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/codeAction",
                        "params": {"textDocument": {"uri": uri}, "range": range((0, 0), (0, 0)),
                                   "context": {"diagnostics": []}}}),
    );
    let response = server.next_where(|m| m.get("id") == Some(&json!(5)));
    assert_eq!(response["error"]["code"], -32600, "invalid request");
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

#[test]
fn the_configuration_of_the_document_s_directory_applies() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A repository root: the configuration search stops here.
    std::fs::create_dir(dir.path().join(".git")).expect(".git");
    std::fs::create_dir_all(dir.path().join("src/generated")).expect("dirs");
    let config = dir.path().join("retry-audit.toml");
    std::fs::write(
        &config,
        "exclude = [\"generated\"]\n\n[rules]\nkey-in-loop = \"warn\"\n",
    )
    .expect("config written");
    let file_uri = |path: &str| {
        lsp_types::Url::from_file_path(dir.path().join(path))
            .expect("absolute path")
            .to_string()
    };

    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let uri = file_uri("src/pay.rs");
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": DEFECT}}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "RA005");
    assert_eq!(diagnostics[0]["severity"], 2, "a warning, as configured");

    let excluded = file_uri("src/generated/pay.rs");
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": excluded, "languageId": "rust", "version": 1, "text": DEFECT}}),
    );
    let (_, diagnostics) = server.diagnostics(&excluded);
    assert_eq!(diagnostics, Vec::<Value>::new(), "excluded");

    // The configuration is read again on save: a broken one is reported, the defaults apply.
    std::fs::write(&config, "[rules]\nno-such-rule = \"warn\"\n").expect("config written");
    server.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "RA005");
    assert_eq!(diagnostics[0]["severity"], 1, "the default level");
    assert_eq!(diagnostics[1]["code"], "config-error");
    let message = diagnostics[1]["message"].as_str().expect("message");
    assert!(
        message.contains("retry-audit.toml") && message.contains("no-such-rule"),
        "{message}"
    );

    server.request(2, "shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

/// Opens `file` of the crate fixture `dir` (relative to the package) from disk: the fixture's
/// root, the document's URI and its text.
fn open_fixture(
    server: &mut Server,
    dir: &str,
    file: &str,
) -> (std::path::PathBuf, String, String) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let uri = lsp_types::Url::from_file_path(&path)
        .expect("absolute path")
        .to_string();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": text}}),
    );
    (root, uri, text)
}

#[test]
fn a_method_of_a_parameters_type_is_read_in_another_file_as_in_a_scan() {
    // The crate fixture whose retry loop calls `connector.connect(..)`, a `Connector` method of
    // `connector.rs` that waits and opens a plain socket; the file has a `connect` of its own.
    // A scan reports nothing; nor may the editor (without `Connector::connect` it would say
    // RA011, no wait).
    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let (_, uri, text) = open_fixture(
        &mut server,
        "fixtures/no-delay/wait_in_another_file",
        "src/lib.rs",
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.is_empty(), "{diagnostics:#?}");

    // Alone (an untitled document with the same text), the wait is not in view.
    let alone = "untitled:lib.rs";
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": alone, "languageId": "rust", "version": 1, "text": text}}),
    );
    let (_, diagnostics) = server.diagnostics(alone);
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    // No RA004 alone either: without the parameter's type read, the call reaches the method of
    // that name in view, the file's own `Client::connect`, which opens a plain socket.
    assert_eq!(codes, ["RA011"], "{diagnostics:#?}");

    server.request(2, "shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

#[test]
fn a_limit_the_crate_passes_as_zero_is_judged_as_in_a_scan() {
    // The crate fixture whose `Transport::send` retries at once up to `max_retries` times, a
    // limit the crate gives from a configuration default of 0 (and 1 for a health check), and
    // `upload`, whose limit defaults to 0: a scan reports only `fetch` (default 3); so must the
    // editor, and it must read the edited text, not the disk's.
    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let (_, uri, text) = open_fixture(
        &mut server,
        "fixtures/no-delay/limit_zero_by_default",
        "src/transport.rs",
    );
    let lines = |diagnostics: &[Value]| -> Vec<(String, u64)> {
        diagnostics
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().unwrap_or_default().to_owned(),
                    d["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
                )
            })
            .collect()
    };
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(
        lines(&diagnostics),
        [("RA011".to_owned(), 67), ("RA004".to_owned(), 68)],
        "{diagnostics:#?}"
    );

    // Edited so that `send` compares its count with a literal: the crate's values no longer
    // decide, and the edit (not the file on disk) is what is read.
    let edited = text.replace("retry_count >= max_retries", "retry_count >= 4");
    assert_ne!(edited, text);
    server.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}),
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    assert_eq!(
        lines(&diagnostics),
        [
            ("RA011".to_owned(), 32),
            ("RA011".to_owned(), 67),
            ("RA004".to_owned(), 68)
        ],
        "{diagnostics:#?}"
    );

    server.request(2, "shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

#[test]
fn a_wait_the_crate_passes_as_zero_is_no_wait_as_in_a_scan() {
    // The crate fixture whose reconnect loop pauses for a field the crate's convenience
    // constructor sets to `Duration::ZERO`: a scan reports RA011 there, not RA002; so must the
    // editor.
    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let (_, uri, _) = open_fixture(
        &mut server,
        "fixtures/no-delay/wait_zero_by_default",
        "src/connection.rs",
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    let found: Vec<(&str, u64)> = diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default(),
                d["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
            )
        })
        .collect();
    assert_eq!(
        found,
        [("RA001", 26), ("RA011", 26), ("RA002", 57)],
        "{diagnostics:#?}"
    );

    server.request(2, "shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}

#[test]
fn definitions_of_other_files_of_the_crate_apply_as_in_a_scan() {
    // The crate fixture whose classifier lives in `lib.rs`: the editor reports, in `client.rs`,
    // the RA006 a scan of the crate reports, with the same evidence.
    let mut server = Server::start();
    initialize(&mut server, json!({}));
    let (root, uri, text) = open_fixture(
        &mut server,
        "fixtures/ignores-retry-after/classifier_in_another_file",
        "src/client.rs",
    );
    let (_, diagnostics) = server.diagnostics(&uri);
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["RA006"], "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["range"]["start"]["line"], 14);
    let message = diagnostics[0]["message"].as_str().expect("message");
    assert!(
        message.contains("is_retryable") && message.contains("lib.rs:14"),
        "{message}"
    );
    let related = diagnostics[0]["relatedInformation"]
        .as_array()
        .expect("related information");
    let lib = lsp_types::Url::from_file_path(root.join("src/lib.rs"))
        .expect("absolute path")
        .to_string();
    assert!(
        related.iter().any(|r| r["location"]["uri"] == lib.as_str()
            && r["location"]["range"]["start"]["line"] == 13
            && r["location"]["range"]["start"]["character"] == 7
            && r["message"] == "`is_retryable` decides which errors are retried"),
        "{related:#?}"
    );

    // Alone (an untitled document with the same text), the classifier is not in view.
    let alone = "untitled:client.rs";
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": alone, "languageId": "rust", "version": 1, "text": text}}),
    );
    let (_, diagnostics) = server.diagnostics(alone);
    assert_eq!(diagnostics, Vec::<Value>::new());

    server.request(2, "shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), Some(0));
}
