//! Cargo's JSON messages: one `compiler-message` object per line, as `cargo check
//! --message-format=json` prints for rustc's diagnostics, then a `build-finished` line. Tools
//! that read cargo's output read this too: rust-analyzer (`rust-analyzer.check.overrideCommand`),
//! bacon, clippy-sarif.
//!
//! ```json
//! {"reason":"compiler-message","package_id":"path+file:///repo#0.1.0","manifest_path":"/repo/Cargo.toml","target":{"kind":["lib"],...},"message":{"rendered":"warning[RA002]: ...","$message_type":"diagnostic","children":[...],"code":{"code":"retry_audit::fixed_delay","explanation":"..."},"level":"warning","message":"constant delay between retry attempts","spans":[...]}}
//! {"reason":"build-finished","success":true}
//! ```
//!
//! The package and target of a file come from the nearest `Cargo.toml` above it that has a
//! `[package]` (read with `toml`, cargo's rules for default targets applied); `package_id` has
//! the form cargo prints (`path+file:///dir#name@version`, or `#version` when the directory is
//! named after the package). `file_name` is relative to the workspace root, as rustc reports it
//! under cargo. A file outside any package gets a stand-in package named after its directory,
//! and its messages have no `manifest_path` (there is no `Cargo.toml` to name).
//!
//! Diagnostics follow rustc's JSON: the primary label is the primary span, secondary labels
//! are further spans, notes and help are children, and a mechanical fix (RA005) is a `help`
//! child whose spans carry `suggested_replacement` with `MachineApplicable`, so editors offer
//! it as a quick fix. `rendered` is the `human` text of the finding; `code.explanation` is the
//! rule's documentation (`retry-audit explain`).

use std::cmp::Reverse;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use codespan_reporting::term::termcolor::NoColor;
use serde::Serialize;
use toml::{Table, Value};

use super::location::{absolute, file_uri};
use crate::checks::diagnostic::{Diagnostic, Elsewhere, Label};
use crate::checks::registry::{Level, Rule};
use crate::report::ScanReport;
use crate::source::Position;

#[derive(Serialize)]
struct CompilerMessage<'a> {
    reason: &'static str,
    package_id: &'a str,
    /// Left out for a file outside every package: there is no manifest to name (cargo's
    /// readers, `cargo_metadata` and so rust-analyzer, do not need the key).
    #[serde(skip_serializing_if = "Option::is_none")]
    manifest_path: Option<&'a str>,
    target: &'a Target,
    message: RustcDiagnostic,
}

/// A cargo build target, with the keys and order cargo prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    pub kind: Vec<String>,
    pub crate_types: Vec<String>,
    pub name: String,
    pub src_path: String,
    pub edition: String,
    #[serde(rename = "required-features", skip_serializing_if = "Vec::is_empty")]
    pub required_features: Vec<String>,
    pub doc: bool,
    pub doctest: bool,
    pub test: bool,
}

/// rustc's JSON diagnostic (`children` have no `$message_type`).
#[derive(Serialize)]
struct RustcDiagnostic {
    rendered: Option<String>,
    #[serde(rename = "$message_type", skip_serializing_if = "Option::is_none")]
    message_type: Option<&'static str>,
    children: Vec<RustcDiagnostic>,
    code: Option<Code>,
    level: &'static str,
    message: String,
    spans: Vec<SpanJson>,
}

#[derive(Serialize)]
struct Code {
    code: String,
    explanation: Option<String>,
}

#[derive(Serialize)]
struct SpanJson {
    byte_end: usize,
    byte_start: usize,
    column_end: usize,
    column_start: usize,
    expansion: Option<()>,
    file_name: String,
    is_primary: bool,
    label: Option<String>,
    line_end: usize,
    line_start: usize,
    suggested_replacement: Option<String>,
    suggestion_applicability: Option<&'static str>,
    text: Vec<SpanLine>,
}

#[derive(Serialize)]
struct SpanLine {
    highlight_end: usize,
    highlight_start: usize,
    text: String,
}

/// The package a file belongs to, as far as cargo-json output needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// Cargo's package id, e.g. `path+file:///repo#0.1.0`.
    pub id: String,
    /// The absolute path of the package's `Cargo.toml`; `None` for the stand-in package of a
    /// file outside every package.
    pub manifest_path: Option<PathBuf>,
    /// The directory `file_name`s are relative to: the workspace root.
    pub workspace_root: PathBuf,
    /// Every target cargo would build for the package.
    pub targets: Vec<Target>,
}

impl Package {
    /// The target `file` (absolute) belongs to: the one whose root file it is, else the one
    /// whose root file's directory holds it most closely (the library before binaries, tests,
    /// examples and benches; a build script only for its own file), else the library or first
    /// target.
    #[must_use]
    pub fn target_for(&self, file: &Path) -> Option<&Target> {
        if let Some(exact) = self.targets.iter().find(|t| Path::new(&t.src_path) == file) {
            return Some(exact);
        }
        let enclosing = self
            .targets
            .iter()
            .filter(|t| kind_rank(t) != KIND_ORDER.len() - 1)
            .filter_map(|t| {
                let dir = Path::new(&t.src_path).parent()?;
                file.starts_with(dir)
                    .then(|| (Reverse(dir.components().count()), kind_rank(t), &t.name, t))
            })
            .min_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)))
            .map(|(.., t)| t);
        enclosing.or_else(|| self.targets.iter().min_by_key(|t| (kind_rank(t), &t.name)))
    }
}

/// Target kinds in the order a file is attributed to them when several could hold it.
const KIND_ORDER: [&str; 6] = ["lib", "bin", "test", "example", "bench", "custom-build"];

fn kind_rank(target: &Target) -> usize {
    match target.kind.first().map(String::as_str) {
        Some("bin") => 1,
        Some("test") => 2,
        Some("example") => 3,
        Some("bench") => 4,
        Some("custom-build") => 5,
        // Library crate types: lib, rlib, dylib, cdylib, staticlib, proc-macro.
        _ => 0,
    }
}

/// Finds and reads the package of each file, once per directory.
#[derive(Debug, Default)]
pub struct Packages {
    by_dir: HashMap<PathBuf, Option<Rc<Package>>>,
}

impl Packages {
    /// The package whose `Cargo.toml` is nearest above `file` (absolute), if any.
    pub fn package_of(&mut self, file: &Path) -> Option<Rc<Package>> {
        let dir = file.parent()?;
        self.package_in(dir)
    }

    fn package_in(&mut self, dir: &Path) -> Option<Rc<Package>> {
        if let Some(known) = self.by_dir.get(dir) {
            return known.clone();
        }
        let manifest_path = dir.join("Cargo.toml");
        let found = match read_table(&manifest_path) {
            Some(manifest) if manifest.contains_key("package") => {
                Some(Rc::new(read_package(&manifest_path, &manifest)))
            }
            _ => dir.parent().and_then(|parent| self.package_in(parent)),
        };
        self.by_dir.insert(dir.to_path_buf(), found.clone());
        found
    }
}

fn read_table(path: &Path) -> Option<Table> {
    let text = std::fs::read_to_string(path).ok()?;
    text.parse::<Table>().ok()
}

fn str_key<'a>(table: &'a Table, key: &str) -> Option<&'a str> {
    table.get(key).and_then(Value::as_str)
}

/// The nearest `Cargo.toml` at or above `dir` with a `[workspace]` table: its directory and
/// its `[workspace.package]` table.
fn workspace_of(dir: &Path) -> Option<(PathBuf, Table)> {
    dir.ancestors().find_map(|candidate| {
        let manifest = read_table(&candidate.join("Cargo.toml"))?;
        let workspace = manifest.get("workspace")?.as_table()?;
        let inherited = workspace
            .get("package")
            .and_then(Value::as_table)
            .cloned()
            .unwrap_or_default();
        Some((candidate.to_path_buf(), inherited))
    })
}

/// A `[package]` key that may be `{ workspace = true }`.
fn package_str(package: &Table, key: &str, inherited: &Table) -> Option<String> {
    match package.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Table(t) if t.get("workspace").and_then(Value::as_bool) == Some(true) => {
            str_key(inherited, key).map(str::to_owned)
        }
        _ => None,
    }
}

fn read_package(manifest_path: &Path, manifest: &Table) -> Package {
    let dir = manifest_path.parent().unwrap_or(Path::new("/"));
    let empty = Table::new();
    let package = manifest
        .get("package")
        .and_then(Value::as_table)
        .unwrap_or(&empty);
    let (workspace_root, inherited) =
        workspace_of(dir).unwrap_or_else(|| (dir.to_path_buf(), Table::new()));
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = str_key(package, "name")
        .map(str::to_owned)
        .or_else(|| dir_name.clone())
        .unwrap_or_else(|| "unknown".to_owned());
    let version = package_str(package, "version", &inherited).unwrap_or_else(|| "0.0.0".into());
    let edition = package_str(package, "edition", &inherited).unwrap_or_else(|| "2015".into());
    Package {
        id: package_id(dir, &name, &version),
        manifest_path: Some(manifest_path.to_path_buf()),
        workspace_root,
        targets: targets(dir, &name, &edition, manifest),
    }
}

/// Cargo's package id spec: `path+file:///dir#version` when the directory is named after the
/// package, `path+file:///dir#name@version` otherwise.
#[must_use]
pub fn package_id(dir: &Path, name: &str, version: &str) -> String {
    let uri = file_uri(dir, false);
    let uri = uri.strip_suffix('/').unwrap_or(&uri);
    if dir.file_name().is_some_and(|n| n == name) {
        format!("path+{uri}#{version}")
    } else {
        format!("path+{uri}#{name}@{version}")
    }
}

/// One kind of target and cargo's defaults for it.
struct AutoTargets {
    /// The manifest's array of tables, e.g. `bin` for `[[bin]]`.
    section: &'static str,
    /// The directory of automatically discovered targets, e.g. `src/bin`.
    auto_dir: &'static str,
    /// The `auto*` key that turns discovery off, e.g. `autobins`.
    auto_key: &'static str,
    kind: &'static str,
    doc: bool,
    test: bool,
}

const KINDS: [AutoTargets; 4] = [
    AutoTargets {
        section: "bin",
        auto_dir: "src/bin",
        auto_key: "autobins",
        kind: "bin",
        doc: true,
        test: true,
    },
    AutoTargets {
        section: "test",
        auto_dir: "tests",
        auto_key: "autotests",
        kind: "test",
        doc: false,
        test: true,
    },
    AutoTargets {
        section: "example",
        auto_dir: "examples",
        auto_key: "autoexamples",
        kind: "example",
        doc: false,
        test: false,
    },
    AutoTargets {
        section: "bench",
        auto_dir: "benches",
        auto_key: "autobenches",
        kind: "bench",
        doc: false,
        test: false,
    },
];

fn target(kind: &str, crate_types: Vec<String>, name: String, src_path: &Path) -> Target {
    Target {
        kind: if kind == "lib" {
            crate_types.clone()
        } else {
            vec![kind.to_owned()]
        },
        crate_types,
        name,
        src_path: src_path.to_string_lossy().into_owned(),
        edition: String::new(),
        required_features: Vec::new(),
        doc: false,
        doctest: false,
        test: false,
    }
}

/// Applies a target table's `edition`, `required-features`, `doc`, `doctest` and `test`.
fn apply_table(target: &mut Target, table: Option<&Table>, edition: &str) {
    table
        .and_then(|t| str_key(t, "edition"))
        .unwrap_or(edition)
        .clone_into(&mut target.edition);
    let Some(table) = table else { return };
    if let Some(features) = table.get("required-features").and_then(Value::as_array) {
        target.required_features = features
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    for (key, field) in [
        ("doc", &mut target.doc),
        ("doctest", &mut target.doctest),
        ("test", &mut target.test),
    ] {
        if let Some(value) = table.get(key).and_then(Value::as_bool) {
            *field = value;
        }
    }
}

/// The targets cargo builds for the package in `dir`: `[lib]`, `[[bin]]`, `[[test]]`,
/// `[[example]]`, `[[bench]]` and the build script, explicit or discovered in the standard
/// places (`src/lib.rs`, `src/main.rs`, `src/bin/`, `tests/`, `examples/`, `benches/`,
/// `build.rs`).
fn targets(dir: &Path, package_name: &str, edition: &str, manifest: &Table) -> Vec<Target> {
    let package = manifest.get("package").and_then(Value::as_table);
    let mut out = Vec::new();
    if let Some(lib) = lib_target(dir, package_name, edition, manifest) {
        out.push(lib);
    }
    for kind in &KINDS {
        out.extend(kind_targets(dir, package_name, edition, manifest, kind));
    }
    let build = package.and_then(|p| p.get("build"));
    let build_path = match build {
        Some(Value::String(path)) => Some(dir.join(path)),
        Some(Value::Boolean(false)) => None,
        _ => Some(dir.join("build.rs")).filter(|p| p.is_file()),
    };
    if let Some(path) = build_path {
        let mut build = target(
            "custom-build",
            vec!["bin".to_owned()],
            "build-script-build".to_owned(),
            &path,
        );
        apply_table(&mut build, None, edition);
        out.push(build);
    }
    out
}

fn lib_target(dir: &Path, package_name: &str, edition: &str, manifest: &Table) -> Option<Target> {
    let table = manifest.get("lib").and_then(Value::as_table);
    let default_path = dir.join("src/lib.rs");
    let path = match table.and_then(|t| str_key(t, "path")) {
        Some(path) => dir.join(path),
        None if table.is_some() || default_path.is_file() => default_path,
        None => return None,
    };
    let crate_types = table
        .and_then(|t| t.get("crate-type").or_else(|| t.get("crate_type")))
        .and_then(Value::as_array)
        .map(|types| {
            types
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|types| !types.is_empty());
    let proc_macro = table
        .and_then(|t| t.get("proc-macro").or_else(|| t.get("proc_macro")))
        .and_then(Value::as_bool)
        == Some(true);
    let crate_types = crate_types
        .unwrap_or_else(|| vec![if proc_macro { "proc-macro" } else { "lib" }.to_owned()]);
    let name = table
        .and_then(|t| str_key(t, "name"))
        .map_or_else(|| package_name.replace('-', "_"), str::to_owned);
    let mut lib = target("lib", crate_types, name, &path);
    lib.doc = true;
    lib.doctest = true;
    lib.test = true;
    apply_table(&mut lib, table, edition);
    Some(lib)
}

/// The explicit targets of one kind, then the discovered ones not already declared.
fn kind_targets(
    dir: &Path,
    package_name: &str,
    edition: &str,
    manifest: &Table,
    kind: &AutoTargets,
) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    let auto_dir = dir.join(kind.auto_dir);
    let entries = manifest
        .get(kind.section)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for table in entries.iter().filter_map(Value::as_table) {
        let Some(name) = str_key(table, "name") else {
            continue;
        };
        let path = match str_key(table, "path") {
            Some(path) => dir.join(path),
            None if kind.section == "bin" && name == package_name => dir.join("src/main.rs"),
            None => {
                let single = auto_dir.join(format!("{name}.rs"));
                if single.is_file() {
                    single
                } else {
                    auto_dir.join(name).join("main.rs")
                }
            }
        };
        out.push(new_target(
            kind,
            name.to_owned(),
            &path,
            Some(table),
            edition,
        ));
    }
    let package = manifest.get("package").and_then(Value::as_table);
    let auto = package
        .and_then(|p| p.get(kind.auto_key))
        .and_then(Value::as_bool)
        != Some(false);
    if !auto {
        return out;
    }
    let mut found = Vec::new();
    if kind.section == "bin" {
        let main = dir.join("src/main.rs");
        if main.is_file() {
            found.push((package_name.to_owned(), main));
        }
    }
    if let Ok(read) = std::fs::read_dir(&auto_dir) {
        let mut discovered: Vec<(String, PathBuf)> = read
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let path = entry.path();
                if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
                    let stem = path.file_stem()?.to_string_lossy().into_owned();
                    Some((stem, path))
                } else if path.join("main.rs").is_file() {
                    let name = path.file_name()?.to_string_lossy().into_owned();
                    Some((name, path.join("main.rs")))
                } else {
                    None
                }
            })
            .collect();
        discovered.sort();
        found.extend(discovered);
    }
    for (name, path) in found {
        let declared = out
            .iter()
            .any(|t| t.name == name || Path::new(&t.src_path) == path);
        if !declared {
            out.push(new_target(kind, name, &path, None, edition));
        }
    }
    out
}

fn new_target(
    kind: &AutoTargets,
    name: String,
    path: &Path,
    table: Option<&Table>,
    edition: &str,
) -> Target {
    let mut target = target(kind.kind, vec!["bin".to_owned()], name, path);
    target.doc = kind.doc;
    target.test = kind.test;
    apply_table(&mut target, table, edition);
    target
}

/// A stand-in for a file outside any package: a library named after the file, in a package
/// named after its directory, with no manifest (none exists to name).
fn loose_package(file: &Path) -> Package {
    let dir = file.parent().unwrap_or(Path::new("/"));
    let dir_name = dir.file_name().map_or_else(
        || "unknown".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let stem = file.file_stem().map_or_else(
        || "unknown".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut lib = target("lib", vec!["lib".to_owned()], stem, file);
    "2021".clone_into(&mut lib.edition);
    lib.doc = true;
    lib.doctest = true;
    lib.test = true;
    Package {
        id: package_id(dir, &dir_name, "0.0.0"),
        manifest_path: None,
        workspace_root: dir.to_path_buf(),
        targets: vec![lib],
    }
}

/// The line and column (1-based, column in characters) of byte `offset` in `source`.
fn position_at(source: &str, offset: usize) -> Option<Position> {
    let before = source.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    })
}

/// rustc's `text` of a span: each line it touches, with the highlighted columns (1-based,
/// end exclusive).
fn span_lines(source: Option<&str>, start: Position, end: Position) -> Vec<SpanLine> {
    let Some(source) = source else {
        return Vec::new();
    };
    source
        .lines()
        .enumerate()
        .skip(start.line.saturating_sub(1))
        .take(end.line.saturating_sub(start.line) + 1)
        .map(|(index, text)| {
            let line = index + 1;
            let text = text.strip_suffix('\r').unwrap_or(text);
            SpanLine {
                highlight_start: if line == start.line { start.column } else { 1 },
                highlight_end: if line == end.line {
                    end.column
                } else {
                    text.chars().count() + 1
                },
                text: text.to_owned(),
            }
        })
        .collect()
}

fn label_span(file_name: &str, source: Option<&str>, label: &Label, primary: bool) -> SpanJson {
    let span = label.span;
    SpanJson {
        byte_end: span.end,
        byte_start: span.start,
        column_end: span.end_pos.column,
        column_start: span.start_pos.column,
        expansion: None,
        file_name: file_name.to_owned(),
        is_primary: primary,
        label: (!label.message.is_empty()).then(|| label.message.clone()),
        line_end: span.end_pos.line,
        line_start: span.start_pos.line,
        suggested_replacement: None,
        suggestion_applicability: None,
        text: span_lines(source, span.start_pos, span.end_pos),
    }
}

fn child(level: &'static str, message: String, spans: Vec<SpanJson>) -> RustcDiagnostic {
    RustcDiagnostic {
        rendered: None,
        message_type: None,
        children: Vec::new(),
        code: None,
        level,
        message,
        spans,
    }
}

/// The `help` child that carries a fix as suggestions, as rustc emits machine-applicable ones.
/// `None` when an edit does not fit the text.
fn fix_child(
    file_name: &str,
    source: Option<&str>,
    diagnostic: &Diagnostic,
) -> Option<RustcDiagnostic> {
    let fix = diagnostic.fix.as_ref()?;
    let source = source?;
    let spans = fix
        .edits
        .iter()
        .map(|edit| {
            let start = position_at(source, edit.start)?;
            let end = position_at(source, edit.end)?;
            Some(SpanJson {
                byte_end: edit.end,
                byte_start: edit.start,
                column_end: end.column,
                column_start: start.column,
                expansion: None,
                file_name: file_name.to_owned(),
                is_primary: true,
                label: None,
                line_end: end.line,
                line_start: start.line,
                suggested_replacement: Some(edit.replacement.clone()),
                suggestion_applicability: Some("MachineApplicable"),
                text: span_lines(Some(source), start, end),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(child("help", fix.message.clone(), spans))
}

/// The cargo lint code of a rule: `retry_audit::fixed_delay`.
#[must_use]
pub fn lint_code(rule: Rule) -> String {
    format!("retry_audit::{}", rule.name().replace('-', "_"))
}

fn rendered(file_name: &str, source: Option<&str>, diagnostic: &Diagnostic) -> String {
    let mut out = NoColor::new(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = super::human::render_one(file_name, source, diagnostic, &mut out);
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

fn explanation(rule: Rule) -> String {
    let mut out = Vec::new();
    let _ = super::write_explain(rule, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The span of a place in another file (a definition a finding rests on): the name at its
/// line and column, as that file reads now. `None` when it cannot be read or has changed.
fn elsewhere_span(place: &Elsewhere, cwd: &Path, workspace_root: &Path) -> Option<SpanJson> {
    let path = absolute(Path::new(&place.path), cwd);
    let source = std::fs::read_to_string(&path).ok()?;
    let byte_start = Position {
        line: place.line,
        column: place.column,
    }
    .offset_in(&source);
    // The name there; a place past the end of the file (it changed) has none.
    let name = source[byte_start..]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .filter(|n| !n.is_empty())?;
    let byte_end = byte_start + name.len();
    let start = position_at(&source, byte_start)?;
    let end = position_at(&source, byte_end)?;
    let file_name = path.strip_prefix(workspace_root).map_or_else(
        |_| path.to_string_lossy().into_owned(),
        |relative| relative.to_string_lossy().into_owned(),
    );
    Some(SpanJson {
        byte_end,
        byte_start,
        column_end: end.column,
        column_start: start.column,
        expansion: None,
        file_name,
        is_primary: true,
        label: Some(place.message.clone()),
        line_end: end.line,
        line_start: start.line,
        suggested_replacement: None,
        suggestion_applicability: None,
        text: span_lines(Some(&source), start, end),
    })
}

fn message(
    file_name: &str,
    source: Option<&str>,
    diagnostic: &Diagnostic,
    elsewhere: &dyn Fn(&Elsewhere) -> Option<SpanJson>,
) -> RustcDiagnostic {
    let mut spans = vec![label_span(file_name, source, &diagnostic.primary, true)];
    spans.extend(
        diagnostic
            .secondary
            .iter()
            .map(|label| label_span(file_name, source, label, false)),
    );
    // A note that names a place in another file carries its span, as rustc's do ("required
    // by a bound in ..."): editors show it as related information.
    let mut children: Vec<RustcDiagnostic> = diagnostic
        .notes
        .iter()
        .enumerate()
        .map(|(i, note)| {
            let spans = diagnostic
                .elsewhere
                .iter()
                .filter(|e| e.note == i)
                .filter_map(elsewhere)
                .collect();
            child("note", note.clone(), spans)
        })
        .collect();
    children.extend(
        diagnostic
            .help
            .iter()
            .map(|help| child("help", help.clone(), Vec::new())),
    );
    children.extend(fix_child(file_name, source, diagnostic));
    RustcDiagnostic {
        rendered: Some(rendered(file_name, source, diagnostic)),
        message_type: Some("diagnostic"),
        children,
        code: Some(Code {
            code: lint_code(diagnostic.rule),
            explanation: Some(explanation(diagnostic.rule)),
        }),
        level: match diagnostic.level {
            Level::Error => "error",
            Level::Warning | Level::Allow => "warning",
        },
        message: diagnostic.message.clone(),
        spans,
    }
}

/// Writes one `compiler-message` line per finding, then `build-finished` (`success` is false
/// when a finding is at error level). Relative paths in the report are taken relative to
/// `cwd`.
pub fn render(report: &ScanReport, cwd: &Path, out: &mut dyn Write) -> io::Result<()> {
    let mut packages = Packages::default();
    for file in &report.files {
        if file.diagnostics().is_empty() {
            continue;
        }
        let path = absolute(&file.path, cwd);
        let package = packages
            .package_of(&path)
            .unwrap_or_else(|| Rc::new(loose_package(&path)));
        let fallback;
        let target = if let Some(target) = package.target_for(&path) {
            target
        } else {
            fallback = loose_package(&path).targets.remove(0);
            &fallback
        };
        let file_name = path.strip_prefix(&package.workspace_root).map_or_else(
            |_| path.to_string_lossy().into_owned(),
            |relative| relative.to_string_lossy().into_owned(),
        );
        let manifest_path = package
            .manifest_path
            .as_ref()
            .map(|manifest| manifest.to_string_lossy());
        for diagnostic in file.diagnostics() {
            let line = CompilerMessage {
                reason: "compiler-message",
                package_id: &package.id,
                manifest_path: manifest_path.as_deref(),
                target,
                message: message(&file_name, file.source(), diagnostic, &|place| {
                    elsewhere_span(place, cwd, &package.workspace_root)
                }),
            };
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    writeln!(
        out,
        "{{\"reason\":\"build-finished\",\"success\":{}}}",
        !report.has_errors()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_ids_have_cargos_two_forms() {
        assert_eq!(
            package_id(Path::new("/src/demo"), "demo", "1.2.3"),
            "path+file:///src/demo#1.2.3"
        );
        assert_eq!(
            package_id(Path::new("/src/my dir"), "demo", "0.1.0"),
            "path+file:///src/my%20dir#demo@0.1.0"
        );
    }

    #[test]
    fn multi_line_spans_highlight_each_line_as_rustc_does() {
        let source = "fn f() {\r\n    loop {\r\n        x();\r\n    }\r\n}\r\n";
        let start = position_at(source, source.find("loop").expect("loop")).expect("start");
        let end = position_at(source, source.rfind("    }").expect("}") + 5).expect("end");
        assert_eq!(
            (start.line, start.column, end.line, end.column),
            (2, 5, 4, 6)
        );
        let lines = span_lines(Some(source), start, end);
        let got: Vec<(usize, usize, &str)> = lines
            .iter()
            .map(|l| (l.highlight_start, l.highlight_end, l.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (5, 11, "    loop {"),
                (1, 13, "        x();"),
                (1, 6, "    }"),
            ]
        );
        assert_eq!(position_at(source, source.len() + 1), None);
        assert_eq!(position_at("é", 1), None, "not a character boundary");
    }
}
