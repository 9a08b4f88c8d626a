//! SARIF 2.1.0, the format GitHub code scanning ingests (`github/codeql-action/upload-sarif`).
//!
//! One run: `tool.driver` names retry-audit with its version and one `rules[]` entry per rule
//! (id, name, descriptions, help as text and Markdown, default level, precision); `results[]`
//! hold one result per finding with its rule, level, message, location and a
//! `partialFingerprints` entry that survives line shifts (see [`super::fingerprint`]).
//!
//! Locations are relative to the repository root (see [`super::location`]) under the base id
//! `%SRCROOT%`, which `originalUriBaseIds` maps to the root's absolute `file://` URI. Regions
//! are 1-based, `endColumn` exclusive, columns counted in Unicode code points
//! (`columnKind: unicodeCodePoints`). Secondary labels are `relatedLocations`; a mechanical fix
//! (RA005) is a `fixes[]` entry. Files that could not be analysed are listed as warnings in
//! `invocations[0].toolExecutionNotifications`.
//!
//! `.ci/run` checks the output of the fixtures with Microsoft's validator
//! (`sarif-multitool validate`, SARIF and GitHub rule sets), which must report nothing at
//! warning or error level.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{json, Map, Value};

use super::fingerprint::fingerprints;
use super::location::{file_uri, uri_reference, Root};
use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::{Level, Rule};
use crate::report::FileError;
use crate::report::{ScanReport, SkipReason};
use crate::source::Span;

/// The `uriBaseId` of every location inside the repository.
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of our entry in `partialFingerprints` (versioned, as SARIF recommends).
pub const FINGERPRINT_KEY: &str = "retryAudit/v1";

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF's level for a retry-audit level.
fn level(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Allow => "none",
    }
}

/// The `reportingDescriptor` of one rule.
fn rule_descriptor(rule: Rule) -> Value {
    let meta = rule.meta();
    let mut markdown = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = super::write_explain(rule, &mut markdown);
    let markdown = String::from_utf8_lossy(&markdown).into_owned();
    let text = format!(
        "{}\n\n{}\n\nUse instead: {}.",
        meta.what_it_does.trim(),
        meta.why_bad.trim(),
        meta.help.trim()
    );
    let mut descriptor = json!({
        "id": rule.id(),
        "name": rule.name(),
        "shortDescription": { "text": meta.summary },
        "fullDescription": { "text": meta.what_it_does.trim() },
        "help": { "text": text, "markdown": markdown },
        "defaultConfiguration": { "level": level(rule.default_level()) },
        "properties": {
            "precision": "high",
            "problem.severity": level(rule.default_level()),
            "tags": ["reliability", "retry"],
        },
    });
    // The rule's page, where the manifest names a repository; the help above holds it anyway.
    if let Some(url) = super::rule_url(rule) {
        descriptor["helpUri"] = json!(url);
    }
    descriptor
}

/// An `artifactLocation` for `path`: relative to `%SRCROOT%` when inside the root, else an
/// absolute `file://` URI.
fn artifact_location(root: &Root, path: &Path) -> Value {
    match root.relative(path) {
        Some(relative) => json!({ "uri": uri_reference(&relative), "uriBaseId": SRCROOT }),
        None => json!({ "uri": file_uri(&root.absolute(path), false) }),
    }
}

fn region(span: Span) -> Value {
    json!({
        "startLine": span.start_pos.line,
        "startColumn": span.start_pos.column,
        "endLine": span.end_pos.line,
        "endColumn": span.end_pos.column,
    })
}

fn location(artifact: &Value, label: &Label) -> Value {
    let mut location = json!({
        "physicalLocation": { "artifactLocation": artifact, "region": region(label.span) },
    });
    if !label.message.is_empty() {
        location["message"] = json!({ "text": label.message });
    }
    location
}

/// The result's message: the finding's message and, after a colon, the primary label; then
/// the notes, one per line.
fn message_text(diagnostic: &Diagnostic) -> String {
    let mut text = diagnostic.message.clone();
    if !diagnostic.primary.message.is_empty() {
        text.push_str(": ");
        text.push_str(&diagnostic.primary.message);
    }
    for note in &diagnostic.notes {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
    text
}

fn result(root: &Root, artifact: &Value, diagnostic: &Diagnostic, fingerprint: &str) -> Value {
    let mut result = json!({
        "ruleId": diagnostic.rule.id(),
        "ruleIndex": Rule::ALL.iter().position(|r| *r == diagnostic.rule).unwrap_or(0),
        "level": level(diagnostic.level),
        "message": { "text": message_text(diagnostic) },
        "locations": [location(artifact, &diagnostic.primary)],
        "partialFingerprints": { FINGERPRINT_KEY: fingerprint },
    });
    if !diagnostic.secondary.is_empty() || !diagnostic.elsewhere.is_empty() {
        let here = diagnostic
            .secondary
            .iter()
            .map(|label| location(artifact, label));
        // Definitions of other files the finding rests on.
        let there = diagnostic.elsewhere.iter().map(|e| {
            json!({
                "physicalLocation": {
                    "artifactLocation": artifact_location(root, Path::new(&e.path)),
                    "region": { "startLine": e.line, "startColumn": e.column },
                },
                "message": { "text": e.message },
            })
        });
        let related: Vec<Value> = here
            .chain(there)
            .zip(1..)
            .map(|(mut related, id)| {
                related["id"] = json!(id);
                related
            })
            .collect();
        result["relatedLocations"] = Value::Array(related);
    }
    if let Some(fix) = &diagnostic.fix {
        let replacements: Vec<Value> = fix
            .edits
            .iter()
            .map(|edit| {
                json!({
                    "deletedRegion": {
                        "byteOffset": edit.start,
                        "byteLength": edit.end.saturating_sub(edit.start),
                    },
                    "insertedContent": { "text": edit.replacement },
                })
            })
            .collect();
        result["fixes"] = json!([{
            "description": { "text": fix.message },
            "artifactChanges": [{ "artifactLocation": artifact, "replacements": replacements }],
        }]);
    }
    result
}

/// A `toolExecutionNotifications` entry for a file that was not analysed.
fn skipped_notification(root: &Root, path: &Path, reason: &SkipReason) -> Value {
    let mut physical = json!({ "artifactLocation": artifact_location(root, path) });
    let text = match reason {
        SkipReason::File(FileError::Parse { position, message }) => {
            physical["region"] = json!({
                "startLine": position.line,
                "startColumn": position.column,
            });
            format!("skipped: {message}")
        }
        other => format!("skipped: {other}"),
    };
    json!({
        "level": "warning",
        "message": { "text": text },
        "locations": [{ "physicalLocation": physical }],
    })
}

/// The whole SARIF log of a report.
#[must_use]
pub fn log(report: &ScanReport, root: &Root) -> Value {
    let mut results = Vec::new();
    for file in &report.files {
        let diagnostics = file.diagnostics();
        if diagnostics.is_empty() {
            continue;
        }
        let artifact = artifact_location(root, &file.path);
        let key = root.display(&file.path);
        let prints = fingerprints(&key, file.source(), diagnostics);
        results.extend(
            diagnostics
                .iter()
                .zip(prints)
                .map(|(diagnostic, print)| result(root, &artifact, diagnostic, &print)),
        );
    }
    let notifications: Vec<Value> = report
        .skipped()
        .map(|(file, reason)| skipped_notification(root, &file.path, reason))
        .collect();
    let mut invocation = Map::new();
    invocation.insert("executionSuccessful".to_owned(), json!(true));
    if !notifications.is_empty() {
        invocation.insert(
            "toolExecutionNotifications".to_owned(),
            Value::Array(notifications),
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    let mut driver = json!({
        "name": "retry-audit",
        "version": version,
        "semanticVersion": version,
        "rules": Rule::ALL.iter().map(|r| rule_descriptor(*r)).collect::<Vec<_>>(),
    });
    // Only a page that exists: the repository the manifest names, if it names one.
    if let Some(home) = super::home_page() {
        driver["informationUri"] = json!(home);
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": driver,
            },
            "originalUriBaseIds": {
                SRCROOT: { "uri": file_uri(root.dir(), true) },
            },
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": results,
        }],
    })
}

/// Writes the SARIF log, pretty-printed, followed by a newline.
pub fn render(report: &ScanReport, root: &Root, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &log(report, root))?;
    writeln!(out)
}
