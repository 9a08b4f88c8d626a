//! `retry-audit lsp`: a language server on standard input and output, built on the `lsp-server`
//! and `lsp-types` crates (those rust-analyzer uses).
//!
//! - Documents are synchronised incrementally; each one is analysed when it is opened, changed or
//!   saved (changes that arrive together are analysed once), and its findings are published with
//!   `textDocument/publishDiagnostics`: the primary span as the range, the rule id as the code,
//!   `retry-audit` as the source, the message followed by the primary label, notes and help, and
//!   the secondary labels as related information.
//! - A document's findings are those a scan of its workspace folder reports for its file (a
//!   test holds this for every fixture): the same pipeline steps over the same files of its
//!   crate, with the document's text from the editor and the other files from the disk, each
//!   read, lexed and analysed once and again only when it changes there.
//! - `textDocument/codeAction` offers a preferred `quickfix` for each finding in the requested
//!   range that carries a mechanical fix (RA005: create the key once, before the loop).
//! - Each document is analysed with the configuration that applies to its file (found upward
//!   from its directory as a scan finds each file's, read again at every analysis); a document
//!   the configuration excludes
//!   gets no findings, and an invalid configuration one warning (and the defaults).
//! - A document that does not parse (as a scan parses it: bodies that cannot hold a retry are
//!   skipped) gets a single information-level diagnostic saying so, at the parse error, and no
//!   findings: the syntax error itself is the compiler's (or
//!   rust-analyzer's) to report. Analysis runs on a thread with a large stack, so no document
//!   can crash the server.
//! - Positions are converted from byte offsets to LSP positions (0-based lines, columns in the
//!   negotiated encoding: UTF-16 code units unless the client offers UTF-8 or UTF-32 first) by
//!   [`LineIndex`], which splits lines at `\n`, `\r\n` and `\r` as LSP does.
//! - `shutdown` then `exit` ends the server with status 0; `exit` without `shutdown`, or the
//!   client closing the connection, with status 1.

use std::collections::HashMap;
use std::fmt;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Exit as ExitNotification, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, Request as _, Shutdown};
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

impl From<lsp_server::ProtocolError> for LspError {
    fn from(e: lsp_server::ProtocolError) -> Self {
        LspError(e.to_string())
    }
}

/// Runs the server on standard input and output until `exit`.
pub fn run_stdio() -> Result<Exit, LspError> {
    let (connection, io_threads) = Connection::stdio();
    let exit = serve(&connection)?;
    // Closing our side lets the writer flush and stop; the reader stopped at `exit` (or at the
    // end of the input).
    drop(connection);
    io_threads
        .join()
        .map_err(|e| LspError(format!("stdio: {e}")))?;
    Ok(exit)
}

/// Runs the server over `connection`: the initialize handshake, then the main loop until `exit`
/// or until the client disconnects.
pub fn serve(connection: &Connection) -> Result<Exit, LspError> {
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = match serde_json::from_value(params) {
        Ok(p) => p,
        Err(e) => {
            let message = format!("invalid initialize parameters: {e}");
            send(
                connection,
                Response::new_err(id, ErrorCode::InvalidParams as i32, message.clone()).into(),
            );
            return Err(LspError(message));
        }
    };
    let encoding = Encoding::negotiate(&params);
    WORKSPACE_ROOTS.with_borrow_mut(|roots| *roots = workspace_roots(&params));
    let document_changes = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.workspace_edit.as_ref())
        .and_then(|e| e.document_changes)
        .unwrap_or(false);
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(ServerInfo {
            name: SOURCE.to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    };
    let result =
        serde_json::to_value(result).map_err(|e| LspError(format!("initialize result: {e}")))?;
    connection.initialize_finish(id, result)?;
    let mut server = Server {
        connection,
        encoding,
        document_changes,
        documents: HashMap::new(),
        shutdown_requested: false,
    };
    Ok(server.main_loop())
}

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

/// Sends a message; a closed connection shows up as the end of the input, so a failed send is
/// not handled here.
fn send(connection: &Connection, message: Message) {
    let _ = connection.sender.send(message);
}

/// One open document.
struct Document {
    text: String,
    version: i32,
    /// Findings of `text`, computed on demand.
    analysis: Option<Analysis>,
    /// Whether the findings of the current text were published.
    published: bool,
}

/// A document's findings as LSP diagnostics, with the quick fix of each where there is one.
struct Analysis {
    diagnostics: Vec<lsp_types::Diagnostic>,
    /// (index into `diagnostics`, title, edits).
    fixes: Vec<(usize, String, Vec<TextEdit>)>,
}

struct Server<'c> {
    connection: &'c Connection,
    encoding: Encoding,
    /// The client takes versioned `documentChanges` in a workspace edit.
    document_changes: bool,
    documents: HashMap<Url, Document>,
    shutdown_requested: bool,
}

impl Server<'_> {
    fn main_loop(&mut self) -> Exit {
        loop {
            let Ok(message) = self.connection.receiver.recv() else {
                return Exit::Abrupt;
            };
            if let Some(exit) = self.handle(message) {
                return exit;
            }
            // Handle whatever else is already waiting (a burst of keystrokes) before analysing.
            while let Ok(message) = self.connection.receiver.try_recv() {
                if let Some(exit) = self.handle(message) {
                    return exit;
                }
            }
            self.publish_pending();
        }
    }

    /// Handles one message; `Some` when it was `exit`.
    fn handle(&mut self, message: Message) -> Option<Exit> {
        match message {
            Message::Request(request) => self.handle_request(request),
            Message::Notification(notification) => {
                if notification.method == ExitNotification::METHOD {
                    return Some(if self.shutdown_requested {
                        Exit::Clean
                    } else {
                        Exit::Abrupt
                    });
                }
                self.handle_notification(notification);
            }
            // This server sends no requests, so expects no responses.
            Message::Response(_) => {}
        }
        None
    }

    fn handle_request(&mut self, request: Request) {
        let id = request.id.clone();
        if self.shutdown_requested {
            self.reply_error(id, ErrorCode::InvalidRequest, "the server is shutting down");
            return;
        }
        match request.method.as_str() {
            Shutdown::METHOD => {
                self.shutdown_requested = true;
                send(self.connection, Response::new_ok(id, ()).into());
            }
            CodeActionRequest::METHOD => {
                match request.extract::<CodeActionParams>(CodeActionRequest::METHOD) {
                    Ok((id, params)) => {
                        let actions = self.code_actions(&params);
                        send(self.connection, Response::new_ok(id, actions).into());
                    }
                    Err(e) => self.reply_error(id, ErrorCode::InvalidParams, &e.to_string()),
                }
            }
            other => self.reply_error(
                id,
                ErrorCode::MethodNotFound,
                &format!("retry-audit does not handle `{other}`"),
            ),
        }
    }

    fn reply_error(&self, id: RequestId, code: ErrorCode, message: &str) {
        send(
            self.connection,
            Response::new_err(id, code as i32, message.to_owned()).into(),
        );
    }

    fn handle_notification(&mut self, notification: Notification) {
        // Malformed parameters of a notification cannot be answered; they are ignored.
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                {
                    self.set_text(
                        p.text_document.uri,
                        p.text_document.text,
                        p.text_document.version,
                    );
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = notification
                    .extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD)
                {
                    self.change(p);
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
                        doc.analysis = None;
                        doc.published = false;
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    notification.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    self.documents.remove(&p.text_document.uri);
                    self.publish(p.text_document.uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    fn set_text(&mut self, uri: Url, text: String, version: i32) {
        self.documents.insert(
            uri,
            Document {
                text,
                version,
                analysis: None,
                published: false,
            },
        );
    }

    fn change(&mut self, params: DidChangeTextDocumentParams) {
        let Some(doc) = self.documents.get_mut(&params.text_document.uri) else {
            return;
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
        doc.version = params.text_document.version;
        doc.analysis = None;
        doc.published = false;
    }

    /// Analyses and publishes every document whose current text has not been published.
    fn publish_pending(&mut self) {
        let pending: Vec<Url> = self
            .documents
            .iter()
            .filter(|(_, doc)| !doc.published)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in pending {
            self.analyse(&uri);
            if let Some(doc) = self.documents.get_mut(&uri) {
                doc.published = true;
                let diagnostics = doc
                    .analysis
                    .as_ref()
                    .map(|a| a.diagnostics.clone())
                    .unwrap_or_default();
                let version = doc.version;
                self.publish(uri, diagnostics, Some(version));
            }
        }
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        send(
            self.connection,
            Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into(),
        );
    }

    /// Makes sure the document's findings are those of its current text.
    fn analyse(&mut self, uri: &Url) {
        let encoding = self.encoding;
        if let Some(doc) = self.documents.get_mut(uri) {
            if doc.analysis.is_none() {
                doc.analysis = Some(analyse(uri, &doc.text, encoding));
            }
        }
    }

    fn code_actions(&mut self, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &params.text_document.uri;
        let wanted = params.context.only.as_ref().map_or(true, |only| {
            only.iter().any(|kind| {
                let kind = kind.as_str();
                kind.is_empty()
                    || kind == CodeActionKind::QUICKFIX.as_str()
                    || CodeActionKind::QUICKFIX
                        .as_str()
                        .strip_prefix(kind)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
        });
        if !wanted {
            return Vec::new();
        }
        self.analyse(uri);
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
        return DocConfig::Use(Box::default());
    };
    match config::Configs::discover(&Settings::default()).for_path(&path) {
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
        DocConfig::Invalid(message) => (Settings::default(), Some(message)),
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
        .with_borrow(|roots| {
            roots
                .iter()
                .filter(|r| path.starts_with(r))
                .max_by_key(|r| r.components().count())
                .cloned()
        })
        .or_else(|| crate_root.clone())
        .or_else(|| path.parent().map(std::path::Path::to_path_buf))
        .unwrap_or_default();
    let configs = std::sync::Arc::new(config::Configs::discover(&Settings::default()));
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
                .map_or_else(|_| Settings::default(), |c| c.settings_for(p).into_owned())
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

/// How many crates' files [`WORKSPACES`] keeps.
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
    /// The client's workspace folders (from `initialize`): a document is analysed as a scan of
    /// the one it is in would analyse it.
    static WORKSPACE_ROOTS: std::cell::RefCell<Vec<std::path::PathBuf>> =
        const { std::cell::RefCell::new(Vec::new()) };
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
