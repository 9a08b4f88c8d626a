//! `retry-audit lsp`: a language server on standard input and output, with the message types
//! of the `lsp-server` and `lsp-types` crates (those rust-analyzer uses).
//!
//! Over 1 000 lines on purpose: the protocol's transport, its main loop and the document state
//! are one state machine; the analysis itself is the pipeline's ([`crate::pipeline`]).
//!
//! - Documents are synchronised incrementally; each one is analysed when it is opened, changed or
//!   saved, and its findings are published with `textDocument/publishDiagnostics`: the primary
//!   span as the range, the rule id as the code, `retry-audit` as the source, the message
//!   followed by the primary label, notes and help, and the secondary labels as related
//!   information.
//! - A document's findings are those a scan of its workspace folder reports for its file (a
//!   test holds this for every fixture): the same pipeline steps over the same files of its
//!   crate, with the document's text from the editor and the other files from the disk, each
//!   read, lexed and analysed once and again only when it changes there.
//! - Only the newest text of a document is analysed and published. Analyses run on two worker
//!   threads (with the analysis's large stack, so no document can crash the server) while the
//!   main loop keeps reading: changes that arrive together are analysed once, a result for a
//!   text that changed meanwhile is dropped, and the newest text is analysed on the other worker
//!   while a superseded analysis (which cannot be interrupted) runs to its end. Requests are
//!   answered as they come (`shutdown` at once); a code action waits only for the analysis of
//!   its document's current text, and is answered `ContentModified` (-32801) if the text changes
//!   first. With `"trace"` set in `initialize` (or `$/setTrace`), `$/logTrace` says what is
//!   analysed and what is dropped.
//! - `textDocument/codeAction` offers a preferred `quickfix` for each finding in the requested
//!   range that carries a mechanical fix (RA005: create the key once, before the loop).
//! - Each document is analysed with the configuration that applies to its file (found upward
//!   from its directory as a scan finds each file's, read again at every analysis); a document
//!   the configuration excludes
//!   gets no findings, and an invalid configuration one warning (and the defaults).
//! - A document that does not parse (as a scan parses it: bodies that cannot hold a retry are
//!   skipped) gets a single information-level diagnostic saying so, at the parse error, and no findings: the syntax error itself is the compiler's (or
//!   rust-analyzer's) to report.
//! - Positions are converted from byte offsets to LSP positions (0-based lines, columns in the
//!   negotiated encoding: UTF-16 code units unless the client offers UTF-8 or UTF-32 first) by
//!   [`LineIndex`], which splits lines at `\n`, `\r\n` and `\r` as LSP does.
//! - A frame that is not a message (invalid JSON, a missing or non-numeric `Content-Length`, a
//!   JSON array) is answered with a parse error (-32700, `"id": null`) and the server reads on,
//!   skipping to the next `Content-Length` header when the body's length is unknown.
//! - `shutdown` then `exit` (or the end of the input) ends the server with status 0, and so does
//!   the end of the input before `initialize`; `exit` without `shutdown`, or the input ending
//!   while serving, with status 1.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc;
use std::thread;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    Cancel, DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Exit as ExitNotification, LogTrace, Notification as _, PublishDiagnostics, SetTrace,
};
use lsp_types::request::{CodeActionRequest, Initialize, Request as _, Shutdown};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOptions, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, DiagnosticRelatedInformation, DiagnosticSeverity,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentChanges, InitializeParams, InitializeResult, Location,
    NumberOrString, OneOf, OptionalVersionedTextDocumentIdentifier, Position, PositionEncodingKind,
    PublishDiagnosticsParams, Range, SaveOptions, ServerCapabilities, ServerInfo, TextDocumentEdit,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, TextEdit, Url, WorkspaceEdit,
};

use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::Level;
use crate::checks::Settings;
use crate::config;
use crate::fix;
use crate::pipeline::engine;
use crate::pipeline::index::{self, CrateIndex, IndexedFile};
use crate::report::FileError;

/// The `source` of every diagnostic this server publishes.
pub const SOURCE: &str = "retry-audit";

/// How the server ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `shutdown` was answered and `exit` received: exit status 0.
    Clean,
    /// `exit` came without `shutdown`, or the connection closed: exit status 1.
    Abrupt,
}

/// A failure of the protocol itself (not of a document's analysis).
#[derive(Debug)]
pub struct LspError(String);

impl fmt::Display for LspError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LspError {}

/// Runs the server on standard input and output until `exit`, or until the input ends.
pub fn run_stdio(preview: bool) -> Result<Exit, LspError> {
    PREVIEW.store(preview, std::sync::atomic::Ordering::Relaxed);
    serve(io::BufReader::new(io::stdin()), io::stdout().lock())
}

/// Runs the server: reads framed messages from `input` (on a thread of its own) and writes to
/// `output`, until `exit` or the end of the input. The end of the input is a clean end before
/// `initialize` (nothing was asked) and after `shutdown`, an abrupt one in between. Only a
/// failure to write `output` is an error.
pub fn serve(input: impl BufRead + Send + 'static, output: impl Write) -> Result<Exit, LspError> {
    let (events, inbox) = mpsc::channel();
    let reader_events = events.clone();
    thread::Builder::new()
        .name("retry-audit-lsp-reader".to_owned())
        .spawn(move || read_frames(input, &reader_events))
        .map_err(|e| LspError(format!("cannot start the reader thread: {e}")))?;
    let mut server = Server {
        out: output,
        events,
        encoding: Encoding::Utf16,
        document_changes: false,
        initialized: false,
        shutdown_requested: false,
        trace: false,
        documents: HashMap::new(),
        workers: Vec::new(),
        waiting: Vec::new(),
        generations: 0,
    };
    server
        .main_loop(&inbox)
        .map_err(|e| LspError(format!("cannot write to the client: {e}")))
}

/// What the server offers.
fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(true),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            resolve_provider: Some(false),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

// JSON-RPC error codes the `lsp-server` crate does not name the way they are used here.
/// The frame could not be read as a message (JSON-RPC's parse error).
const PARSE_ERROR: i32 = -32700;
/// A request for a document whose text changed before it could be answered (LSP's
/// `ContentModified`): the client asks again if it still wants to know.
const CONTENT_MODIFIED: i32 = -32801;
/// A request the client cancelled (`$/cancelRequest`) or that `shutdown` left unanswered.
const REQUEST_CANCELLED: i32 = -32800;

/// What the main loop is told: by the reader thread (each frame, the end of the input) and by
/// the analysis workers (each result).
enum Event {
    Message(Message),
    /// A frame that is not a message: answered with `code` (and the request's id when it has
    /// one), then the next frame is read.
    Malformed {
        id: Option<RequestId>,
        code: i32,
        message: String,
    },
    /// The input ended (or could not be read any more).
    Closed,
    Analysed(Done),
}

/// Reads frames from `input` until it ends, telling the main loop of each.
fn read_frames(input: impl BufRead, events: &mpsc::Sender<Event>) {
    let mut frames = Frames {
        input,
        resync: false,
    };
    loop {
        let event = frames.next_frame().unwrap_or(Event::Closed);
        let closed = matches!(event, Event::Closed);
        if events.send(event).is_err() || closed {
            return;
        }
    }
}

/// The base protocol's framing: header lines (`Content-Length: N`, others ignored), an empty
/// line, `N` bytes of JSON. After a header block without a usable `Content-Length`, the length
/// of the body is unknown: the input is skipped up to the next `Content-Length:` header.
struct Frames<R> {
    input: R,
    /// The next frame's `Content-Length:` header name was consumed while skipping.
    resync: bool,
}

impl<R: BufRead> Frames<R> {
    /// The next frame as an event; `Closed` at the end of the input.
    fn next_frame(&mut self) -> io::Result<Event> {
        let mut length: Option<Result<usize, String>> = None;
        let mut headers = 0;
        loop {
            let mut line = Vec::new();
            if self.resync {
                self.resync = false;
                if !self.skip_to_header()? {
                    return Ok(Event::Closed);
                }
                line.extend_from_slice(b"Content-Length:");
            }
            if self.input.read_until(b'\n', &mut line)? == 0 && line.is_empty() {
                return Ok(Event::Closed);
            }
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                // Blank lines before the first header are stray line breaks, not a frame.
                if headers == 0 {
                    continue;
                }
                break;
            }
            headers += 1;
            match line.split_once(':') {
                Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                    let value = value.trim();
                    length = Some(
                        value
                            .parse()
                            .map_err(|_| format!("the Content-Length `{value}` is not a number")),
                    );
                }
                None if length.is_none() => {
                    length = Some(Err(format!("malformed header line `{line}`")));
                }
                // Other headers (`Content-Type`) are not needed.
                _ => {}
            }
        }
        let length = match length {
            Some(Ok(length)) => length,
            Some(Err(why)) => return Ok(self.unreadable(&why)),
            None => return Ok(self.unreadable("no Content-Length header")),
        };
        let mut body = Vec::new();
        (&mut self.input)
            .take(length as u64)
            .read_to_end(&mut body)?;
        if body.len() < length {
            return Ok(Event::Closed);
        }
        Ok(parse_body(&body))
    }

    /// A header block whose body cannot be found: answered, and the input is skipped to the
    /// next frame.
    fn unreadable(&mut self, why: &str) -> Event {
        self.resync = true;
        Event::Malformed {
            id: None,
            code: PARSE_ERROR,
            message: format!("cannot read the message: {why}; skipped to the next header"),
        }
    }

    /// Skips the input up to and including the next `Content-Length:` (any case); `false` when
    /// the input ends first.
    fn skip_to_header(&mut self) -> io::Result<bool> {
        const HEADER: &[u8] = b"content-length:";
        let mut matched = 0;
        loop {
            let buffer = self.input.fill_buf()?;
            if buffer.is_empty() {
                return Ok(false);
            }
            let mut used = 0;
            let mut found = false;
            for &byte in buffer {
                used += 1;
                let byte = byte.to_ascii_lowercase();
                matched = if byte == HEADER[matched] {
                    matched + 1
                } else {
                    usize::from(byte == HEADER[0])
                };
                if matched == HEADER.len() {
                    found = true;
                    break;
                }
            }
            self.input.consume(used);
            if found {
                return Ok(true);
            }
        }
    }
}

/// A frame's body as an event: a message, or a parse error for text that is not JSON or JSON
/// that is not one JSON-RPC message (an array, a number), or an invalid request (with its id)
/// for an object with an id that is not a message.
fn parse_body(body: &[u8]) -> Event {
    let malformed = |id, code, message: String| Event::Malformed { id, code, message };
    let Ok(text) = std::str::from_utf8(body) else {
        return malformed(None, PARSE_ERROR, "the message is not UTF-8".to_owned());
    };
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return malformed(None, PARSE_ERROR, format!("invalid JSON: {e}")),
    };
    if !value.is_object() {
        // serde would read an array as the fields of a message in order (`[1, {..}]`).
        return malformed(
            None,
            PARSE_ERROR,
            "not a JSON-RPC message: not a JSON object".to_owned(),
        );
    }
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    // With a `method`, a request (with an id) or a notification; without, a response. (An
    // untagged `Message` would take a request with a bad method for a response, and drop it.)
    let parsed = match (value.get("method").is_some(), value.get("id").is_some()) {
        (true, true) => serde_json::from_value::<Request>(value).map(Message::Request),
        (true, false) => serde_json::from_value::<Notification>(value).map(Message::Notification),
        (false, _) => serde_json::from_value::<Response>(value).map(Message::Response),
    };
    match parsed {
        Ok(message) => Event::Message(message),
        Err(e) if id.is_some() => malformed(
            id,
            ErrorCode::InvalidRequest as i32,
            format!("not a JSON-RPC message: {e}"),
        ),
        Err(e) => malformed(None, PARSE_ERROR, format!("not a JSON-RPC message: {e}")),
    }
}

/// One open document.
struct Document {
    text: String,
    version: i32,
    /// Counts the texts the server has seen of any document: a new one at each open, change
    /// and save (a save re-analyses, the configuration may have changed), so that a result is
    /// known for the current text only by its generation.
    generation: u64,
    /// Findings of the current text, once analysed.
    analysis: Option<Analysis>,
    /// The current text is being analysed.
    in_flight: bool,
}

/// A document's findings as LSP diagnostics, with the quick fix of each where there is one.
struct Analysis {
    diagnostics: Vec<lsp_types::Diagnostic>,
    /// (index into `diagnostics`, title, edits).
    fixes: Vec<(usize, String, Vec<TextEdit>)>,
}

/// How many documents are analysed at once. Two, so that the newest version of a document is
/// analysed while a superseded one (whose analysis cannot be interrupted) runs to its end.
const WORKERS: usize = 2;

/// An analysis thread, kept for the whole session (each keeps the crates it has read, see
/// [`CRATES`]).
struct Worker {
    jobs: mpsc::Sender<Job>,
    busy: bool,
}

/// One document text to analyse.
struct Job {
    worker: usize,
    uri: Url,
    version: i32,
    generation: u64,
    text: String,
    encoding: Encoding,
}

/// An analysis done.
struct Done {
    worker: usize,
    uri: Url,
    version: i32,
    generation: u64,
    analysis: Analysis,
    took: std::time::Duration,
}

/// A `textDocument/codeAction` waiting for the analysis of its document's current text.
struct Waiting {
    id: RequestId,
    params: CodeActionParams,
}

struct Server<W: Write> {
    out: W,
    /// Where the workers send their results.
    events: mpsc::Sender<Event>,
    encoding: Encoding,
    /// The client takes versioned `documentChanges` in a workspace edit.
    document_changes: bool,
    initialized: bool,
    shutdown_requested: bool,
    /// The client asked for a trace (`$/logTrace`) of what is analysed and dropped.
    trace: bool,
    documents: HashMap<Url, Document>,
    workers: Vec<Worker>,
    waiting: Vec<Waiting>,
    generations: u64,
}

impl<W: Write> Server<W> {
    /// Handles events until `exit` or the end of the input. Whatever is already waiting (a burst
    /// of keystrokes) is handled before analyses are started, so that only the newest text is
    /// analysed; requests are answered as they come, never after an analysis of a text that is
    /// no longer current.
    fn main_loop(&mut self, inbox: &mpsc::Receiver<Event>) -> io::Result<Exit> {
        loop {
            let Ok(event) = inbox.recv() else {
                return Ok(self.end_of_input());
            };
            if let Some(exit) = self.handle(event)? {
                return Ok(exit);
            }
            while let Ok(event) = inbox.try_recv() {
                if let Some(exit) = self.handle(event)? {
                    return Ok(exit);
                }
            }
            self.schedule()?;
        }
    }

    /// How a session whose input ended is over: cleanly before `initialize` and after
    /// `shutdown`.
    fn end_of_input(&self) -> Exit {
        if self.initialized && !self.shutdown_requested {
            Exit::Abrupt
        } else {
            Exit::Clean
        }
    }

    /// Handles one event; `Some` when the session is over.
    fn handle(&mut self, event: Event) -> io::Result<Option<Exit>> {
        match event {
            Event::Closed => return Ok(Some(self.end_of_input())),
            Event::Malformed { id, code, message } => self.reply_error(id, code, &message)?,
            Event::Analysed(done) => self.analysed(done)?,
            Event::Message(Message::Request(request)) => self.handle_request(request)?,
            Event::Message(Message::Notification(notification)) => {
                if notification.method == ExitNotification::METHOD {
                    return Ok(Some(if self.shutdown_requested {
                        Exit::Clean
                    } else {
                        Exit::Abrupt
                    }));
                }
                if self.initialized {
                    self.handle_notification(notification)?;
                }
            }
            // This server sends no requests, so expects no responses.
            Event::Message(Message::Response(_)) => {}
        }
        Ok(None)
    }

    fn send(&mut self, message: &Message) -> io::Result<()> {
        message.write(&mut self.out)
    }

    /// An error answer; with no id (a frame that could not be read), `"id": null`.
    fn reply_error(&mut self, id: Option<RequestId>, code: i32, message: &str) -> io::Result<()> {
        if let Some(id) = id {
            return self.send(&Response::new_err(id, code, message.to_owned()).into());
        }
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": code, "message": message },
        })
        .to_string();
        write!(self.out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
        self.out.flush()
    }

    fn handle_request(&mut self, request: Request) -> io::Result<()> {
        let id = request.id.clone();
        if request.method == Initialize::METHOD {
            if self.initialized {
                return self.reply_error(
                    Some(id),
                    ErrorCode::InvalidRequest as i32,
                    "the server is already initialized",
                );
            }
            return self.initialize(request);
        }
        if !self.initialized {
            return self.reply_error(
                Some(id),
                ErrorCode::ServerNotInitialized as i32,
                "the server is not initialized",
            );
        }
        if self.shutdown_requested {
            return self.reply_error(
                Some(id),
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down",
            );
        }
        match request.method.as_str() {
            Shutdown::METHOD => {
                self.shutdown_requested = true;
                for waiting in std::mem::take(&mut self.waiting) {
                    self.reply_error(
                        Some(waiting.id),
                        REQUEST_CANCELLED,
                        "the server is shutting down",
                    )?;
                }
                self.send(&Response::new_ok(id, ()).into())
            }
            CodeActionRequest::METHOD => {
                match request.extract::<CodeActionParams>(CodeActionRequest::METHOD) {
                    Ok((id, params)) => self.code_action(id, params),
                    Err(e) => {
                        self.reply_error(Some(id), ErrorCode::InvalidParams as i32, &e.to_string())
                    }
                }
            }
            other => self.reply_error(
                Some(id),
                ErrorCode::MethodNotFound as i32,
                &format!("retry-audit does not handle `{other}`"),
            ),
        }
    }

    /// The `initialize` handshake: the position encoding, whether the client takes versioned
    /// edits and wants a trace; the capabilities.
    fn initialize(&mut self, request: Request) -> io::Result<()> {
        let id = request.id.clone();
        let params: InitializeParams = match serde_json::from_value(request.params) {
            Ok(p) => p,
            Err(e) => {
                let message = format!("invalid initialize parameters: {e}");
                return self.reply_error(Some(id), ErrorCode::InvalidParams as i32, &message);
            }
        };
        self.encoding = Encoding::negotiate(&params);
        if let Ok(mut roots) = WORKSPACE_ROOTS.lock() {
            *roots = workspace_roots(&params);
        }
        self.document_changes = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        self.trace = params
            .trace
            .is_some_and(|t| t != lsp_types::TraceValue::Off);
        let result = InitializeResult {
            capabilities: capabilities(self.encoding),
            server_info: Some(ServerInfo {
                name: SOURCE.to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
        };
        self.initialized = true;
        self.send(&Response::new_ok(id, result).into())
    }

    fn handle_notification(&mut self, notification: Notification) -> io::Result<()> {
        // Malformed parameters of a notification cannot be answered; they are ignored.
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                {
                    self.set_text(
                        &p.text_document.uri,
                        p.text_document.text,
                        p.text_document.version,
                    )?;
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = notification
                    .extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD)
                {
                    self.change(p)?;
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<DidSaveTextDocumentParams>(DidSaveTextDocument::METHOD)
                {
                    if let Some(doc) = self.documents.get_mut(&p.text_document.uri) {
                        if let Some(text) = p.text {
                            doc.text = text;
                        }
                        // Analysed again: what is around the file (its settings) may have changed.
                        self.generations += 1;
                        doc.generation = self.generations;
                        doc.analysis = None;
                        doc.in_flight = false;
                        self.superseded(&p.text_document.uri)?;
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    self.documents.remove(&p.text_document.uri);
                    self.superseded(&p.text_document.uri)?;
                    self.publish(p.text_document.uri, Vec::new(), None)?;
                }
            }
            Cancel::METHOD => {
                if let Ok(p) = notification.extract::<lsp_types::CancelParams>(Cancel::METHOD) {
                    let id: RequestId = match p.id {
                        NumberOrString::Number(n) => n.into(),
                        NumberOrString::String(s) => s.into(),
                    };
                    if let Some(i) = self.waiting.iter().position(|w| w.id == id) {
                        let waiting = self.waiting.remove(i);
                        self.reply_error(Some(waiting.id), REQUEST_CANCELLED, "cancelled")?;
                    }
                }
            }
            SetTrace::METHOD => {
                if let Ok(p) = notification.extract::<lsp_types::SetTraceParams>(SetTrace::METHOD) {
                    self.trace = p.value != lsp_types::TraceValue::Off;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn set_text(&mut self, uri: &Url, text: String, version: i32) -> io::Result<()> {
        self.generations += 1;
        self.documents.insert(
            uri.clone(),
            Document {
                text,
                version,
                generation: self.generations,
                analysis: None,
                in_flight: false,
            },
        );
        self.superseded(uri)
    }

    fn change(&mut self, params: DidChangeTextDocumentParams) -> io::Result<()> {
        let uri = params.text_document.uri;
        let Some(doc) = self.documents.get_mut(&uri) else {
            return Ok(());
        };
        for change in params.content_changes {
            match change.range {
                None => doc.text = change.text,
                Some(range) => {
                    let index = LineIndex::new(&doc.text);
                    let start = index.offset(range.start, self.encoding);
                    let end = index.offset(range.end, self.encoding).max(start);
                    doc.text.replace_range(start..end, &change.text);
                }
            }
        }
        self.generations += 1;
        doc.version = params.text_document.version;
        doc.generation = self.generations;
        doc.analysis = None;
        doc.in_flight = false;
        self.superseded(&uri)
    }

    /// The text of `uri` changed (or it was closed): the code actions waiting for the old
    /// text's analysis are answered with `ContentModified`, as the protocol suggests; the
    /// client asks again.
    fn superseded(&mut self, uri: &Url) -> io::Result<()> {
        let (stale, kept): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| w.params.text_document.uri == *uri);
        self.waiting = kept;
        for waiting in stale {
            self.reply_error(
                Some(waiting.id),
                CONTENT_MODIFIED,
                "the document changed before its analysis ended",
            )?;
        }
        Ok(())
    }

    /// Starts the analysis of each document whose current text is neither analysed nor being
    /// analysed, on an idle worker; the others wait for one.
    fn schedule(&mut self) -> io::Result<()> {
        if self.shutdown_requested {
            return Ok(());
        }
        let mut pending: Vec<(u64, Url)> = self
            .documents
            .iter()
            .filter(|(_, doc)| doc.analysis.is_none() && !doc.in_flight)
            .map(|(uri, doc)| (doc.generation, uri.clone()))
            .collect();
        // The oldest text first: documents are analysed in the order they were edited.
        pending.sort();
        for (_, uri) in pending {
            let Some(worker) = self.idle_worker() else {
                break;
            };
            let Some(doc) = self.documents.get_mut(&uri) else {
                continue;
            };
            doc.in_flight = true;
            let job = Job {
                worker,
                uri: uri.clone(),
                version: doc.version,
                generation: doc.generation,
                text: doc.text.clone(),
                encoding: self.encoding,
            };
            let version = doc.version;
            self.log(&format!("analysing {uri} version {version}"))?;
            self.workers[worker].busy = true;
            if let Err(mpsc::SendError(job)) = self.workers[worker].jobs.send(job) {
                // The worker is gone (it could not start): analyse here, as a last resort.
                let done = run_job(job);
                self.analysed(done)?;
            }
        }
        Ok(())
    }

    /// An idle worker, started on first need.
    fn idle_worker(&mut self) -> Option<usize> {
        if let Some(i) = self.workers.iter().position(|w| !w.busy) {
            return Some(i);
        }
        if self.workers.len() >= WORKERS {
            return None;
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let events = self.events.clone();
        // On failure the sender's receiver is dropped: jobs sent to it are run in place.
        let _ = thread::Builder::new()
            .name(format!("retry-audit-lsp-{}", self.workers.len()))
            .stack_size(crate::analysis::limits::STACK_SIZE)
            .spawn(move || {
                crate::analysis::limits::thread_started_with_stack(
                    crate::analysis::limits::STACK_SIZE,
                );
                for job in queue {
                    if events.send(Event::Analysed(run_job(job))).is_err() {
                        return;
                    }
                }
            });
        self.workers.push(Worker { jobs, busy: false });
        Some(self.workers.len() - 1)
    }

    /// A worker's result: kept and published when it is of the document's current text,
    /// dropped otherwise (the text changed, or the document was closed, while it ran).
    fn analysed(&mut self, done: Done) -> io::Result<()> {
        if let Some(worker) = self.workers.get_mut(done.worker) {
            worker.busy = false;
        }
        let (uri, version) = (done.uri, done.version);
        let current = self
            .documents
            .get(&uri)
            .map(|doc| (doc.generation, doc.version));
        match current {
            Some((generation, _)) if generation == done.generation && !self.shutdown_requested => {
                self.log(&format!(
                    "analysed {uri} version {version} in {} ms",
                    done.took.as_millis()
                ))?;
                let diagnostics = done.analysis.diagnostics.clone();
                if let Some(doc) = self.documents.get_mut(&uri) {
                    doc.analysis = Some(done.analysis);
                    doc.in_flight = false;
                }
                self.publish(uri.clone(), diagnostics, Some(version))?;
                self.answer_waiting(&uri)
            }
            Some((_, newest)) => self.log(&format!(
                "dropped the analysis of {uri} version {version}: superseded by version {newest}"
            )),
            None => self.log(&format!(
                "dropped the analysis of {uri} version {version}: the document was closed"
            )),
        }
    }

    /// Answers the code actions that waited for the analysis of `uri`'s current text.
    fn answer_waiting(&mut self, uri: &Url) -> io::Result<()> {
        let (ready, kept): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| w.params.text_document.uri == *uri);
        self.waiting = kept;
        for waiting in ready {
            let actions = self.code_actions(&waiting.params);
            self.send(&Response::new_ok(waiting.id, actions).into())?;
        }
        Ok(())
    }

    /// A `$/logTrace` notification, when the client asked for a trace.
    fn log(&mut self, message: &str) -> io::Result<()> {
        if !self.trace {
            return Ok(());
        }
        let params = lsp_types::LogTraceParams {
            message: message.to_owned(),
            verbose: None,
        };
        self.send(&Notification::new(LogTrace::METHOD.to_owned(), params).into())
    }

    fn publish(
        &mut self,
        uri: Url,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> io::Result<()> {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(&Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into())
    }

    /// Answers a code action at once when the document's current text is analysed (or there
    /// is nothing to answer); otherwise when its analysis ends.
    fn code_action(&mut self, id: RequestId, params: CodeActionParams) -> io::Result<()> {
        let ready = self
            .documents
            .get(&params.text_document.uri)
            .is_none_or(|doc| doc.analysis.is_some());
        if ready || !wants_quickfix(&params) {
            let actions = self.code_actions(&params);
            self.send(&Response::new_ok(id, actions).into())
        } else {
            self.waiting.push(Waiting { id, params });
            Ok(())
        }
    }

    /// The quick fixes of the analysed document's findings in the requested range.
    fn code_actions(&self, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &params.text_document.uri;
        if !wants_quickfix(params) {
            return Vec::new();
        }
        let Some(doc) = self.documents.get(uri) else {
            return Vec::new();
        };
        let Some(analysis) = &doc.analysis else {
            return Vec::new();
        };
        analysis
            .fixes
            .iter()
            .filter(|(i, _, _)| touches(analysis.diagnostics[*i].range, params.range))
            .map(|(i, title, edits)| {
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![analysis.diagnostics[*i].clone()]),
                    edit: Some(self.workspace_edit(uri, doc.version, edits.clone())),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                })
            })
            .collect()
    }

    /// The edits of one document as a workspace edit: versioned when the client takes that, so
    /// that it refuses to apply them to a newer text.
    fn workspace_edit(&self, uri: &Url, version: i32, edits: Vec<TextEdit>) -> WorkspaceEdit {
        if self.document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: uri.clone(),
                        version: Some(version),
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                }])),
                ..WorkspaceEdit::default()
            }
        } else {
            WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), edits)])),
                ..WorkspaceEdit::default()
            }
        }
    }
}

/// Whether a code action request asks for quick fixes (no `only`, or an `only` that includes
/// `quickfix`).
fn wants_quickfix(params: &CodeActionParams) -> bool {
    params.context.only.as_ref().is_none_or(|only| {
        only.iter().any(|kind| {
            let kind = kind.as_str();
            kind.is_empty()
                || kind == CodeActionKind::QUICKFIX.as_str()
                || CodeActionKind::QUICKFIX
                    .as_str()
                    .strip_prefix(kind)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    })
}

/// Runs one analysis. A panic of the analysis (a bug) leaves the document without findings
/// rather than ending the server.
fn run_job(job: Job) -> Done {
    let started = std::time::Instant::now();
    let analysis = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        analyse(&job.uri, &job.text, job.encoding)
    }))
    .unwrap_or(Analysis {
        diagnostics: Vec::new(),
        fixes: Vec::new(),
    });
    Done {
        worker: job.worker,
        uri: job.uri,
        version: job.version,
        generation: job.generation,
        analysis,
        took: started.elapsed(),
    }
}

/// Whether two ranges overlap or touch (a cursor at either end of a finding selects it).
fn touches(a: Range, b: Range) -> bool {
    let key = |p: Position| (p.line, p.character);
    key(a.start) <= key(b.end) && key(b.start) <= key(a.end)
}

/// What the configuration says about one document.
enum DocConfig {
    /// Analyse it with these settings.
    Use(Box<Settings>),
    /// The configuration's `exclude` covers it: no findings.
    Excluded,
    /// The configuration file is invalid (the message says where and why): the defaults apply.
    Invalid(String),
}

/// The configuration that applies to a document's file, found upward from its directory exactly
/// as a scan finds each file's ([`config::Configs::for_path`]: `retry-audit.toml`,
/// `.retry-audit.toml` or `Cargo.toml` metadata): rule levels, per-path levels, extensions and
/// `exclude`. It is read again for every analysis, so edits to it apply at the next change or
/// save. A document that is not a file (`untitled:`) gets the defaults.
fn document_config(uri: &Url) -> DocConfig {
    let Ok(path) = uri.to_file_path() else {
        return DocConfig::Use(Box::new(command_line()));
    };
    match config::Configs::discover(&command_line()).for_path(&path) {
        Ok(run) if run.is_excluded(&path) => DocConfig::Excluded,
        Ok(run) => DocConfig::Use(Box::new(run.settings_for(&path).into_owned())),
        Err(e) => DocConfig::Invalid(e.to_string()),
    }
}

/// Analyses one document's text with the configuration that applies to it.
fn analyse(uri: &Url, text: &str, encoding: Encoding) -> Analysis {
    let (settings, config_error) = match document_config(uri) {
        DocConfig::Use(settings) => (*settings, None),
        DocConfig::Excluded => {
            return Analysis {
                diagnostics: Vec::new(),
                fixes: Vec::new(),
            }
        }
        DocConfig::Invalid(message) => (command_line(), Some(message)),
    };
    let mut analysis = analyse_text(uri, text, &settings, encoding);
    if let Some(message) = config_error {
        analysis.diagnostics.push(lsp_types::Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String("config-error".to_owned())),
            source: Some(SOURCE.to_owned()),
            message: format!("invalid retry-audit configuration, the defaults apply: {message}"),
            ..lsp_types::Diagnostic::default()
        });
    }
    analysis
}

/// Analyses one document's text with the given settings, as a scan of its workspace folder
/// would ([`crate_findings`]).
fn analyse_text(uri: &Url, text: &str, settings: &Settings, encoding: Encoding) -> Analysis {
    let index = LineIndex::new(text);
    let checked = match uri.to_file_path() {
        Ok(path) => crate_findings(&path, text, settings),
        Err(()) => engine::check_source(text, settings),
    };
    match checked {
        Ok(found) => {
            let mut analysis = Analysis {
                diagnostics: Vec::new(),
                fixes: Vec::new(),
            };
            for d in found.iter().filter(|d| d.level != Level::Allow) {
                if let Some(fix) = &d.fix {
                    let edits = fix
                        .edits
                        .iter()
                        .map(|e| TextEdit {
                            range: index.range(e.start, e.end, encoding),
                            new_text: fix::replacement(text, e).into_owned(),
                        })
                        .collect();
                    analysis
                        .fixes
                        .push((analysis.diagnostics.len(), fix.message.clone(), edits));
                }
                analysis.diagnostics.push(to_lsp(d, uri, &index, encoding));
            }
            analysis
        }
        Err(error) => Analysis {
            diagnostics: vec![not_analysed(&error, text, &index, encoding)],
            fixes: Vec::new(),
        },
    }
}

/// The findings of the document `path` (its text from the editor) as a scan of the workspace
/// folder it is in (or of its crate, outside any) reports them: the same pipeline steps on the
/// same files ([`crate::pipeline::check_crate`] runs them for a scan). The files of its crate
/// are walked as a scan walks them; each is read, lexed and analysed once and kept until it
/// changes on disk ([`WorkspaceCache`]), the document itself analysed anew each time.
fn crate_findings(
    path: &std::path::Path,
    text: &str,
    settings: &Settings,
) -> Result<Vec<Diagnostic>, FileError> {
    let mut roots = index::CrateRoots::default();
    let crate_root = roots.of_file(path);
    let walk_root = WORKSPACE_ROOTS
        .lock()
        .ok()
        .and_then(|roots| {
            roots
                .iter()
                .filter(|r| path.starts_with(r))
                .max_by_key(|r| r.components().count())
                .cloned()
        })
        .or_else(|| crate_root.clone())
        .or_else(|| path.parent().map(std::path::Path::to_path_buf))
        .unwrap_or_default();
    let configs = std::sync::Arc::new(config::Configs::discover(&command_line()));
    let mut paths: Vec<std::path::PathBuf> =
        crate::pipeline::scan::rust_files(&walk_root, Some(std::sync::Arc::clone(&configs)))
            .into_iter()
            .filter(|p| p != path && roots.of_file(p) == crate_root)
            .collect();
    paths.push(path.to_path_buf());
    paths.sort();
    let me = paths.iter().position(|p| p == path).unwrap_or_default();
    WORKSPACES.with_borrow_mut(|cache| {
        let key = (walk_root, crate_root.clone());
        if !cache.contains_key(&key) && cache.len() >= KEPT_CRATES {
            cache.clear();
        }
        let kept = cache.entry(key).or_default();
        let settings_of = |p: &std::path::Path| -> Settings {
            configs
                .for_path(p)
                .map_or_else(|_| command_line(), |c| c.settings_for(p).into_owned())
        };
        let files: Vec<IndexedFile> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == me {
                    return IndexedFile::from_bytes(p.clone(), text.as_bytes().to_vec());
                }
                kept.file(p)
            })
            .collect();
        let krate = CrateIndex::new(crate_root, files, &index::Disk);
        let mut times = engine::PhaseTimes::default();
        let analysed: Vec<Result<engine::Analysed, FileError>> = krate
            .files
            .iter()
            .enumerate()
            .map(|(i, file)| {
                let text = file.text.clone()?;
                if i == me {
                    return engine::analyse(&text, settings, Some((&krate, i)), &mut times);
                }
                kept.analysed(&file.path, || {
                    engine::analyse(
                        &text,
                        &settings_of(&file.path),
                        Some((&krate, i)),
                        &mut times,
                    )
                })
            })
            .collect();
        kept.forget_all_but(&paths);
        let own = analysed[me].clone()?;
        let all_settings: Vec<Settings> = krate
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == me {
                    settings.clone()
                } else {
                    settings_of(&f.path)
                }
            })
            .collect();
        let ok: Vec<usize> = (0..analysed.len())
            .filter(|&i| analysed[i].is_ok())
            .collect();
        let input: Vec<(String, &engine::Analysed, &Settings)> = ok
            .iter()
            .filter_map(|&i| {
                Some((
                    krate.files[i].path.display().to_string(),
                    analysed[i].as_ref().ok()?,
                    &all_settings[i],
                ))
            })
            .collect();
        let more = engine::nested_across_files(&input)
            .into_iter()
            .filter(|(k, _)| ok[*k] == me)
            .map(|(_, d)| d)
            .collect();
        Ok(engine::finish(text, own, more, settings))
    })
}

/// `retry-audit lsp --preview`: the rules of the preview tier run too.
static PREVIEW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The settings the server was started with, before each document's configuration.
fn command_line() -> Settings {
    let mut settings = Settings::default();
    settings.preview = PREVIEW.load(std::sync::atomic::Ordering::Relaxed);
    settings
}

/// The client's workspace folders (from `initialize`): a document is analysed as a scan of the
/// one it is in would analyse it (shared by the analysis workers).
static WORKSPACE_ROOTS: std::sync::Mutex<Vec<std::path::PathBuf>> =
    std::sync::Mutex::new(Vec::new());

/// The client's workspace folders, or its root, as directories.
#[allow(deprecated)]
fn workspace_roots(params: &InitializeParams) -> Vec<std::path::PathBuf> {
    let folders = params
        .workspace_folders
        .iter()
        .flatten()
        .map(|f| f.uri.clone());
    let root = params.root_uri.clone();
    folders
        .chain(root)
        .filter_map(|uri| uri.to_file_path().ok())
        .collect()
}

/// How many crates' files [`WORKSPACES`] keeps (on each analysis worker).
const KEPT_CRATES: usize = 4;

/// A file's modification time and length on disk.
type Stamp = (Option<std::time::SystemTime>, u64);

/// What the server keeps of one crate's files between analyses: each read, lexed and analysed
/// once, and again only when it changes on disk.
#[derive(Default)]
struct WorkspaceCache {
    files: HashMap<std::path::PathBuf, KeptFile>,
}

struct KeptFile {
    stamp: Option<Stamp>,
    file: IndexedFile,
    analysed: Option<Result<engine::Analysed, FileError>>,
}

impl WorkspaceCache {
    /// The file at `path`, read again when it changed on disk since it was kept (its analysis
    /// is then forgotten).
    fn file(&mut self, path: &std::path::Path) -> IndexedFile {
        let stamp = std::fs::metadata(path)
            .ok()
            .map(|m| (m.modified().ok(), m.len()));
        match self.files.get(path) {
            Some(kept) if stamp.is_some() && kept.stamp == stamp => kept.file.clone(),
            _ => {
                let file = IndexedFile::read(path.to_path_buf(), &index::Disk);
                self.files.insert(
                    path.to_path_buf(),
                    KeptFile {
                        stamp,
                        file: file.clone(),
                        analysed: None,
                    },
                );
                file
            }
        }
    }

    /// The kept analysis of the file at `path`, or `analyse`'s, kept.
    fn analysed(
        &mut self,
        path: &std::path::Path,
        analyse: impl FnOnce() -> Result<engine::Analysed, FileError>,
    ) -> Result<engine::Analysed, FileError> {
        match self.files.get_mut(path) {
            Some(kept) => kept.analysed.get_or_insert_with(analyse).clone(),
            None => analyse(),
        }
    }

    fn forget_all_but(&mut self, paths: &[std::path::PathBuf]) {
        let wanted: std::collections::HashSet<&std::path::PathBuf> = paths.iter().collect();
        self.files.retain(|p, _| wanted.contains(p));
    }
}

thread_local! {
    /// The crates of the documents analysed, by (folder walked, crate root).
    static WORKSPACES: std::cell::RefCell<HashMap<(std::path::PathBuf, Option<std::path::PathBuf>), WorkspaceCache>> =
        std::cell::RefCell::new(HashMap::new());
}

/// One finding as an LSP diagnostic.
fn to_lsp(
    d: &Diagnostic,
    uri: &Url,
    index: &LineIndex<'_>,
    encoding: Encoding,
) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    if !d.primary.message.is_empty() {
        message.push('\n');
        message.push_str(&d.primary.message);
    }
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related = |label: &Label| DiagnosticRelatedInformation {
        location: Location {
            uri: uri.clone(),
            range: index.range(label.span.start, label.span.end, encoding),
        },
        message: label.message.clone(),
    };
    lsp_types::Diagnostic {
        range: index.range(d.primary.span.start, d.primary.span.end, encoding),
        severity: Some(match d.level {
            Level::Error => DiagnosticSeverity::ERROR,
            Level::Warning => DiagnosticSeverity::WARNING,
            Level::Allow => DiagnosticSeverity::HINT,
        }),
        code: Some(NumberOrString::String(d.rule.id().to_owned())),
        source: Some(SOURCE.to_owned()),
        message,
        related_information: (!d.secondary.is_empty() || !d.elsewhere.is_empty()).then(|| {
            d.secondary
                .iter()
                .map(related)
                .chain(d.elsewhere.iter().filter_map(|e| {
                    // A definition of another file of the crate (or a retry there), at the
                    // start of its name. The column counts characters; LSP counts UTF-16
                    // units, the same for the ASCII of a Rust name's line up to it, nearly
                    // always.
                    let line = u32::try_from(e.line.saturating_sub(1)).ok()?;
                    let character = u32::try_from(e.column.saturating_sub(1)).ok()?;
                    let at = lsp_types::Position { line, character };
                    Some(DiagnosticRelatedInformation {
                        location: Location {
                            uri: Url::from_file_path(&e.path).ok()?,
                            range: Range { start: at, end: at },
                        },
                        message: e.message.clone(),
                    })
                }))
                .collect()
        }),
        ..lsp_types::Diagnostic::default()
    }
}

/// The single diagnostic of a document that could not be analysed.
fn not_analysed(
    error: &FileError,
    text: &str,
    index: &LineIndex<'_>,
    encoding: Encoding,
) -> lsp_types::Diagnostic {
    let offset = match error {
        FileError::Parse { position, .. } => position.offset_in(text),
        _ => 0,
    };
    let end = text[offset..]
        .chars()
        .next()
        .map_or(offset, |c| offset + c.len_utf8());
    lsp_types::Diagnostic {
        range: index.range(offset, end, encoding),
        severity: Some(DiagnosticSeverity::INFORMATION),
        code: Some(NumberOrString::String("not-analysed".to_owned())),
        source: Some(SOURCE.to_owned()),
        message: format!("retry-audit did not analyse this file: {error}"),
        ..lsp_types::Diagnostic::default()
    }
}

/// How LSP positions count columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units: the LSP default.
    Utf16,
    /// Characters (Unicode scalar values).
    Utf32,
}

impl Encoding {
    /// The first encoding the client offers (`general.positionEncodings`, in its order of
    /// preference); UTF-16 when it offers none.
    #[must_use]
    pub fn negotiate(params: &InitializeParams) -> Encoding {
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .and_then(|offered| {
                offered.iter().find_map(|kind| match kind.as_str() {
                    "utf-8" => Some(Encoding::Utf8),
                    "utf-16" => Some(Encoding::Utf16),
                    "utf-32" => Some(Encoding::Utf32),
                    _ => None,
                })
            })
            .unwrap_or(Encoding::Utf16)
    }

    fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// Code units of one character.
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// Converts between byte offsets of a text and LSP positions. Lines end at `\n`, `\r\n` or `\r`,
/// as LSP specifies.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    #[must_use]
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
            }
        }
        LineIndex { text, starts }
    }

    /// The position of a byte offset (clamped to the text, and moved back to a character
    /// boundary if it falls inside one).
    #[must_use]
    pub fn position(&self, offset: usize, encoding: Encoding) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset]
            .chars()
            .map(|c| encoding.units(c))
            .sum();
        Position {
            line: line as u32,
            character: character as u32,
        }
    }

    /// The range of the bytes `start..end`.
    #[must_use]
    pub fn range(&self, start: usize, end: usize, encoding: Encoding) -> Range {
        Range {
            start: self.position(start, encoding),
            end: self.position(end.max(start), encoding),
        }
    }

    /// The byte offset of a position. A line past the end gives the end of the text; a column
    /// past the end of its line gives the end of the line (before its line break); a column in
    /// the middle of a character gives the start of that character.
    #[must_use]
    pub fn offset(&self, position: Position, encoding: Encoding) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let content = self.text[start..end].trim_end_matches(['\n', '\r']);
        let mut units = 0;
        for (i, c) in content.char_indices() {
            let next = units + encoding.units(c);
            if next > position.character as usize {
                return start + i;
            }
            units = next;
        }
        start + content.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn columns_count_in_the_negotiated_encoding() {
        // `é` is 2 bytes and 1 UTF-16 unit; `🦀` is 4 bytes and 2 UTF-16 units.
        let text = "a\né🦀x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(x, Encoding::Utf8), pos(1, 6));
        assert_eq!(index.position(x, Encoding::Utf16), pos(1, 3));
        assert_eq!(index.position(x, Encoding::Utf32), pos(1, 2));
        for encoding in ALL {
            assert_eq!(index.offset(index.position(x, encoding), encoding), x);
        }
    }

    #[test]
    fn every_line_break_of_lsp_starts_a_line() {
        let text = "a\r\nb\rc\nd";
        let index = LineIndex::new(text);
        for (c, line) in [('a', 0), ('b', 1), ('c', 2), ('d', 3)] {
            let offset = text.find(c).unwrap();
            for encoding in ALL {
                assert_eq!(index.position(offset, encoding), pos(line, 0));
                assert_eq!(index.offset(pos(line, 0), encoding), offset);
            }
        }
        // The end of a CRLF line is before the `\r`.
        assert_eq!(index.offset(pos(0, 99), Encoding::Utf16), 1);
    }

    #[test]
    fn offsets_are_clamped_to_the_text_and_to_characters() {
        let text = "🦀\n";
        let index = LineIndex::new(text);
        // Inside the crab (bytes 1..4) is the crab's start.
        assert_eq!(index.position(2, Encoding::Utf16), pos(0, 0));
        // Between the two UTF-16 units of the crab is the crab's start.
        assert_eq!(index.offset(pos(0, 1), Encoding::Utf16), 0);
        assert_eq!(index.position(99, Encoding::Utf16), pos(1, 0));
        assert_eq!(index.offset(pos(7, 0), Encoding::Utf16), text.len());
    }

    #[test]
    fn engine_positions_map_to_offsets() {
        let text = "\u{feff}ab\né🦀x\n";
        let at = |line, column| crate::source::Position { line, column }.offset_in(text);
        assert_eq!(at(1, 1), 3);
        assert_eq!(at(2, 3), text.find('x').unwrap());
        assert_eq!(at(9, 1), text.len());
        assert_eq!(at(1, 99), text.find('\n').unwrap());
    }

    #[test]
    fn frames_that_are_no_message_are_answered_and_the_next_frame_is_read() {
        let input = "Content-Length: 2\r\n\r\n[]\
                     Content-Type: x\r\n\r\n{}\
                     Content-Length: 35\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}\
                     \r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}";
        let mut frames = Frames {
            input: io::Cursor::new(input.as_bytes()),
            resync: false,
        };
        let mut next = || frames.next_frame().expect("read");
        for (code, id) in [(PARSE_ERROR, None), (PARSE_ERROR, None)] {
            match next() {
                Event::Malformed {
                    id: got, code: c, ..
                } => assert_eq!((c, got), (code, id)),
                _ => panic!("a malformed frame"),
            }
        }
        match next() {
            Event::Malformed { id, code, .. } => {
                assert_eq!((code, id), (-32600, Some(RequestId::from(7))));
            }
            _ => panic!("an invalid request"),
        }
        assert!(
            matches!(next(), Event::Message(Message::Notification(n)) if n.method == "initialized")
        );
        assert!(matches!(next(), Event::Closed));
    }

    #[test]
    fn ranges_touch_at_their_ends() {
        let r = |a, b, c, d| Range {
            start: pos(a, b),
            end: pos(c, d),
        };
        assert!(touches(r(1, 4, 1, 8), r(1, 8, 1, 8)));
        assert!(touches(r(1, 4, 1, 8), r(0, 0, 5, 0)));
        assert!(!touches(r(1, 4, 1, 8), r(1, 9, 1, 9)));
        assert!(!touches(r(1, 4, 1, 8), r(0, 0, 1, 3)));
    }
}
