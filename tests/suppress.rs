//! Inline suppressions (`// retry-audit: allow(...)`) and RA100 `unused-suppression`, through
//! [`retry_audit::check_source`] (which every front end calls) and through the binary.
//!
//! The fixtures in `fixtures/unused-suppression/` pin the scopes line by line; these tests pin
//! the messages, labels, spans and levels, and the interplay with settings.

#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use retry_audit::pipeline::scan::{scan, ScanOptions};
use retry_audit::{check_source, Diagnostic, Level, Rule, Settings};

/// A bounded retry with a fixed one-second pause: RA002 on line 5 (`{}` marks where a
/// suppression comment goes, on the sleep's line).
const FIXED: &str = "\
fn fetch(client: &Client) -> Option<Body> {
    for _ in 0..3 {
        if let Ok(body) = client.get() { return Some(body); }
        // keep
        std::thread::sleep(std::time::Duration::from_secs(1));{}
    }
    None
}
";

fn with_comment(trailing: &str) -> String {
    FIXED.replace("{}", trailing)
}

fn check(src: &str, settings: &Settings) -> Vec<Diagnostic> {
    check_source(src, settings).unwrap_or_else(|e| panic!("does not parse: {e}\n{src}"))
}

/// `(rule id, line)` of the findings of the rules these tests are about.
fn found(src: &str) -> Vec<(&'static str, usize)> {
    found_with(src, &Settings::preview())
}

fn found_with(src: &str, settings: &Settings) -> Vec<(&'static str, usize)> {
    check(src, settings)
        .iter()
        .filter(|d| {
            matches!(
                d.rule,
                Rule::UnboundedRetry | Rule::FixedDelay | Rule::UnusedSuppression
            )
        })
        .map(|d| (d.rule.id(), d.primary.span.start_pos.line))
        .collect()
}

fn ra100(src: &str) -> Vec<Diagnostic> {
    check(src, &Settings::preview())
        .into_iter()
        .filter(|d| d.rule == Rule::UnusedSuppression)
        .collect()
}

#[test]
fn without_a_comment_the_finding_is_reported() {
    assert_eq!(found(&with_comment("")), [("RA002", 5)]);
}

#[test]
fn a_trailing_comment_suppresses_its_line_by_id_or_name() {
    for comment in [
        " // retry-audit: allow(RA002)",
        " // retry-audit: allow(fixed-delay)",
        " // retry-audit: allow(ra002, reason = \"a local device\")",
        " //retry-audit:allow( fixed-delay ,)",
    ] {
        assert_eq!(found(&with_comment(comment)), [], "{comment}");
    }
}

#[test]
fn a_comment_on_the_line_above_suppresses_the_next_line_of_code() {
    let src = FIXED
        .replace("{}", "")
        .replace("// keep", "// retry-audit: allow(RA002)");
    assert_eq!(found(&src), []);
    // Further comment lines in between are skipped.
    let src = FIXED.replace("{}", "").replace(
        "// keep",
        "// retry-audit: allow(RA002)\n        // because the device asks for it",
    );
    assert_eq!(found(&src), []);
    // A blank line is not code: the suppression covers it, and nothing else.
    let src = FIXED
        .replace("{}", "")
        .replace("// keep", "// retry-audit: allow(RA002)\n");
    assert_eq!(found(&src), [("RA100", 4), ("RA002", 6)]);
}

#[test]
fn a_comment_above_a_fn_covers_the_whole_fn_and_nothing_else() {
    let src = format!(
        "// retry-audit: allow(fixed-delay)\n/// Docs.\n#[inline]\n{}{}",
        with_comment(""),
        with_comment("").replace("fn fetch", "fn again")
    );
    assert_eq!(found(&src), [("RA002", 16)]);
}

#[test]
fn a_file_level_comment_covers_every_fn() {
    let src = format!(
        "//! Module docs.\n//! retry-audit: allow(RA002)\n\n{}{}",
        with_comment(""),
        with_comment("").replace("fn fetch", "fn again")
    );
    assert_eq!(found(&src), []);
}

#[test]
fn an_unused_name_is_reported_at_the_name_with_what_it_missed() {
    let src = with_comment(" // retry-audit: allow(RA002, unbounded-retry)");
    let unused = ra100(&src);
    assert_eq!(unused.len(), 1, "{unused:#?}");
    let d = &unused[0];
    assert_eq!(d.message, "unused suppression of `unbounded-retry`");
    assert_eq!(d.primary.message, "no `unbounded-retry` finding on line 5");
    assert_eq!(d.level, Level::Warning);
    assert_eq!(
        &src[d.primary.span.start..d.primary.span.end],
        "unbounded-retry"
    );
    let line = src.lines().nth(4).expect("line 5");
    let column = line.find("unbounded-retry").expect("in line") + 1;
    assert_eq!(
        (
            d.primary.span.start_pos.line,
            d.primary.span.start_pos.column
        ),
        (5, column)
    );
    assert_eq!(
        d.help.as_deref(),
        Some(Rule::UnusedSuppression.meta().help.as_str())
    );
}

#[test]
fn the_label_names_the_scope() {
    let above_fn = format!("// retry-audit: allow(RA001)\n{}", with_comment(""));
    assert_eq!(
        ra100(&above_fn)[0].primary.message,
        "no `unbounded-retry` finding in `fetch`"
    );
    let in_impl = format!(
        "impl Api {{\n    // retry-audit: allow(RA001)\n{}}}\n",
        with_comment("")
    );
    assert_eq!(
        ra100(&in_impl)[0].primary.message,
        "no `unbounded-retry` finding in `Api::fetch`"
    );
    let file = format!("//! retry-audit: allow(RA001)\n{}", with_comment(""));
    assert_eq!(
        ra100(&file)[0].primary.message,
        "no `unbounded-retry` finding in this file"
    );
}

#[test]
fn a_repeated_rule_is_unused_the_second_time() {
    let unused = ra100(&with_comment(" // retry-audit: allow(fixed-delay, RA002)"));
    assert_eq!(unused.len(), 1);
    assert_eq!(unused[0].message, "unused suppression of `RA002`");
    assert_eq!(
        unused[0].primary.message,
        "already allowed by `fixed-delay` in this comment"
    );
}

#[test]
fn unknown_names_and_malformed_comments_are_reported() {
    let unknown = ra100(&with_comment(" // retry-audit: allow(fixed-dely)"));
    assert_eq!(unknown.len(), 1);
    assert_eq!(
        unknown[0].message,
        "unknown rule `fixed-dely` in suppression"
    );
    assert!(unknown[0]
        .help
        .as_deref()
        .is_some_and(|h| h.contains("retry-audit rules")));

    for (comment, problem) in [
        (" // retry-audit: allow RA002", "expected `(` after `allow`"),
        (
            " // retry-audit: deny(RA002)",
            "only `allow(...)` is supported",
        ),
        (" // retry-audit: allow(RA002", "expected `)`"),
        (
            " // retry-audit: allow(reason = \"x\", RA002)",
            "`reason` must come last",
        ),
        (
            " // retry-audit: allow(RA002) trailing words",
            "unexpected text after `)`",
        ),
    ] {
        let src = with_comment(comment);
        let found = ra100(&src);
        assert_eq!(found.len(), 1, "{comment}: {found:#?}");
        assert_eq!(found[0].message, "malformed suppression comment");
        assert!(
            found[0].primary.message.contains(problem),
            "{comment}: {}",
            found[0].primary.message
        );
        // A malformed comment suppresses nothing.
        assert!(
            check(&src, &Settings::preview())
                .iter()
                .any(|d| d.rule == Rule::FixedDelay),
            "{comment}"
        );
    }
}

#[test]
fn a_suppression_of_a_rule_that_is_not_enabled_is_unused() {
    let mut settings = Settings::preview();
    settings.set_level(Rule::FixedDelay, Level::Allow);
    let src = with_comment(" // retry-audit: allow(RA002)");
    let found: Vec<Diagnostic> = check(&src, &settings)
        .into_iter()
        .filter(|d| d.rule == Rule::UnusedSuppression)
        .collect();
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].primary.message,
        "`fixed-delay` is not enabled for this file"
    );
}

#[test]
fn allowing_ra100_keeps_suppressions_working_and_silences_the_reports() {
    let mut settings = Settings::preview();
    settings.set_level(Rule::UnusedSuppression, Level::Allow);
    let used = with_comment(" // retry-audit: allow(RA002)");
    assert_eq!(found_with(&used, &settings), []);
    let unused = with_comment(" // retry-audit: allow(RA002, RA001, nonsense)");
    assert_eq!(found_with(&unused, &settings), []);
}

#[test]
fn ra100_follows_the_levels() {
    let mut settings = Settings::preview();
    settings.warnings_as_errors = true;
    let found = check(
        &with_comment(" // retry-audit: allow(RA001, RA002)"),
        &settings,
    );
    let unused = found
        .iter()
        .find(|d| d.rule == Rule::UnusedSuppression)
        .expect("RA100");
    assert_eq!(unused.level, Level::Error);
}

#[test]
fn ra100_can_be_suppressed_itself_and_an_unneeded_allow_of_it_is_reported() {
    let src = format!(
        "//! retry-audit: allow(unused-suppression)\n{}",
        with_comment(" // retry-audit: allow(RA002, RA001)")
    );
    assert_eq!(found(&src), []);
    let src = format!(
        "//! retry-audit: allow(unused-suppression)\n{}",
        with_comment(" // retry-audit: allow(RA002)")
    );
    assert_eq!(found(&src), [("RA100", 1)]);
}

#[test]
fn text_that_only_looks_like_a_suppression_is_ignored() {
    for comment in [
        " /* retry-audit: allow(RA002) */",
        " let _s = \"// retry-audit: allow(RA002)\";",
        " let _r = r#\"// retry-audit: allow(RA002)\"#;",
    ] {
        assert_eq!(found(&with_comment(comment)), [("RA002", 5)], "{comment}");
    }
    // Documentation is prose, even above a fn.
    let doc = format!("/// retry-audit: allow(RA002)\n{}", with_comment(""));
    assert_eq!(found(&doc), [("RA002", 6)]);
}

#[test]
fn positions_are_right_after_a_byte_order_mark() {
    let src = format!("\u{feff}{}", with_comment(" // retry-audit: allow(RA001)"));
    let unused = ra100(&src);
    assert_eq!(unused.len(), 1);
    let span = unused[0].primary.span;
    assert_eq!(&src[span.start..span.end], "RA001");
    let line = src.lines().nth(4).expect("line 5");
    assert_eq!(
        span.start_pos.column,
        line.find("RA001").expect("in line") + 1
    );
}

#[test]
fn the_binary_honours_suppressions_and_reports_ra100_in_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).expect("repository marker");
    fs::write(
        dir.path().join("a.rs"),
        with_comment(" // retry-audit: allow(RA002, RA004)"),
    )
    .expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--format", "json", "a.rs"])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let findings: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert!(
        !findings.iter().any(|f| f["rule"] == "RA002"),
        "suppressed finding reported: {stdout}"
    );
    let unused: Vec<&serde_json::Value> =
        findings.iter().filter(|f| f["rule"] == "RA100").collect();
    assert_eq!(unused.len(), 1, "{stdout}");
    assert_eq!(unused[0]["name"], "unused-suppression");
    assert_eq!(unused[0]["level"], "warning");
    assert_eq!(unused[0]["line"], 5);
    assert_eq!(unused[0]["message"], "unused suppression of `RA004`");
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable fixture folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The annotated `(rule id, line)` pairs of a fixture (`//~ RA002` on the line, `//~^ RA002`
/// one line up per caret), as `tests/fixtures.rs` reads them.
fn annotations(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(at) = line.find("//~") else { continue };
        let rest = &line[at + 3..];
        let carets = rest.chars().take_while(|&c| c == '^').count();
        for code in rest[carets..].split_whitespace() {
            out.push((code.to_owned(), index + 1 - carets));
        }
    }
    out
}

/// The fixture's text with a suppression of `rule` on line `line`, if one can be written there
/// after the code: `//~` annotations are removed from that line, an `allow(...)` comment
/// already after the code gets the rule added, and a line with other comments is left out.
fn suppressed_at(text: &str, rule: &str, line: usize) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let original = lines.get(line - 1)?;
    let code = original
        .find("//~")
        .map_or(original.as_str(), |at| &original[..at])
        .trim_end();
    if code.trim().is_empty() || code.contains("/*") {
        return None;
    }
    let new = match comment_start(code) {
        None => format!("{code} // retry-audit: allow({rule})"),
        Some(at) if code[at..].starts_with("// retry-audit: allow(") => {
            if code[..at].trim().is_empty() {
                return None;
            }
            let list = at + "// retry-audit: allow(".len();
            format!("{}{rule}, {}", &code[..list], &code[list..])
        }
        Some(_) => return None,
    };
    lines[line - 1] = new;
    Some(lines.join("\n"))
}

/// Where the `//` comment of one line of code starts, outside string and char literals (raw
/// strings are not told apart: a line with one is taken to have a comment).
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'\'' if !in_string && bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `(path relative to the scanned folder, rule id, line)` of every finding of a scan.
fn scanned(dir: &Path) -> Vec<(String, String, usize)> {
    let options = ScanOptions {
        paths: vec![dir.to_path_buf()],
        jobs: std::num::NonZeroUsize::new(1),
        settings: Settings::preview(),
        ..ScanOptions::default()
    };
    let report = scan(&options).expect("scans");
    let mut found: Vec<(String, String, usize)> = report
        .diagnostics()
        .map(|(file, d)| {
            let path = file.path.strip_prefix(dir).unwrap_or(&file.path);
            (
                path.to_string_lossy().into_owned(),
                d.rule.id().to_owned(),
                d.primary.span.start_pos.line,
            )
        })
        .collect();
    found.sort();
    found
}

/// Copies `from` (a file or a folder) into `to`.
fn copy_into(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).expect("mkdir");
        for entry in fs::read_dir(from).expect("readable") {
            let entry = entry.expect("entry");
            copy_into(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        fs::copy(from, to).expect("copied");
    }
}

/// Every rule's finding can be suppressed at the line it is reported at, by a comment after
/// the code, whatever the rule and however the finding is made (in the file's own check, with
/// definitions of other files, or across the files of a crate: RA010): each annotated finding
/// of each rule's fixture folder, one at a time, scanned as a user would (a crate fixture's
/// whole crate, any other fixture alone). Only that finding goes away: no RA100 appears and
/// nothing else changes.
#[test]
fn every_rules_finding_is_suppressed_at_its_primary_line() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    // Crate fixtures with annotations of their rule, and those a case was checked in.
    let mut crates: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for rule in Rule::ALL {
        let folder = fixtures.join(rule.name());
        if !folder.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&folder, &mut files);
        files.sort();
        for file in files {
            // A crate fixture is scanned whole; any other fixture alone.
            let unit = file
                .ancestors()
                .skip(1)
                .take_while(|dir| *dir != folder)
                .find(|dir| dir.join("Cargo.toml").is_file())
                .unwrap_or(&file)
                .to_path_buf();
            let text = fs::read_to_string(&file).expect("readable fixture");
            for (id, line) in annotations(&text) {
                if id != rule.id() {
                    continue;
                }
                if unit != file {
                    crates.entry(unit.clone()).or_default();
                }
                let Some(edited) = suppressed_at(&text, &id, line) else {
                    continue;
                };
                let dir = tempfile::tempdir().expect("temp dir");
                let copy = dir.path().join(unit.file_name().expect("named"));
                copy_into(&unit, &copy);
                let relative = file.strip_prefix(&unit).expect("inside its unit");
                let target = if relative.as_os_str().is_empty() {
                    copy.clone()
                } else {
                    copy.join(relative)
                };
                let before = scanned(dir.path());
                fs::write(&target, &edited).expect("written");
                let after = scanned(dir.path());
                let shown = target
                    .strip_prefix(dir.path())
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                let expected: Vec<_> = before
                    .iter()
                    .filter(|(path, rule_id, at)| {
                        !(*path == shown && *rule_id == id && *at == line)
                    })
                    .cloned()
                    .collect();
                assert_ne!(
                    before, expected,
                    "{shown}:{line}: {id} is reported unsuppressed"
                );
                if after != expected {
                    let added: Vec<_> = after.iter().filter(|f| !expected.contains(f)).collect();
                    let gone: Vec<_> = expected.iter().filter(|f| !after.contains(f)).collect();
                    failures.push(format!(
                        "{}:{line}: suppressing {id} there reports {added:?} and hides {gone:?}",
                        file.strip_prefix(&fixtures).unwrap_or(&file).display()
                    ));
                }
                *checked.entry(rule.id()).or_default() += 1;
                if let Some(cases) = crates.get_mut(&unit) {
                    *cases += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for (dir, cases) in &crates {
        assert!(
            *cases > 0,
            "no case of crate fixture {} checked",
            dir.display()
        );
    }
    for rule in Rule::ALL {
        if fixtures.join(rule.name()).is_dir() {
            assert!(
                checked.get(rule.id()).copied().unwrap_or(0) > 0,
                "no finding of {} could be suppressed after its code: {checked:?}",
                rule.id()
            );
        }
    }
}
