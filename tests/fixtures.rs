//! The fixture corpus is the contract of the engine: every `fixtures/**/*.rs` states, line by line,
//! what the auditor must report, with rustc/ui_test-style annotations:
//!
//! ```text
//! std::thread::sleep(Duration::from_secs(1)); //~ RA002      this line
//! //~^ RA002                                                 the line above (one caret per line)
//! loop { //~ RA001 RA002                                     several rules on one line
//! ```
//!
//! `fixtures_match_annotations` runs [`retry_audit::check_source`] on each file and compares the
//! emitted `(rule id, line of the primary span)` pairs with the annotations, both ways; the rest
//! of each finding (columns, message, labels, help, notes, fix, places in other files) is
//! compared with the snapshot `tests/snapshots/fixtures.txt` by `findings_match_the_snapshot`
//! (`BLESS=1 cargo test --test fixtures` rewrites it after a change made on purpose). A folder
//! with a `Cargo.toml` is a *crate fixture*: its files are checked together by a scan of the
//! folder (definitions of one file in view of the others), and at least one of its annotations
//! must need that (`crate_fixtures_need_the_crate`). The other tests check the corpus itself:
//! folder layout, enough positive cases per rule, no annotations in `clean/` and `not-retry/`,
//! only known rule ids.

#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use retry_audit::pipeline::scan::{scan, ScanOptions};
use retry_audit::report::Outcome;
use retry_audit::{check_source, Diagnostic, Rule, Settings};

/// Folders whose files must produce nothing and so carry no annotation.
const SILENT_FOLDERS: &[&str] = &["clean", "not-retry"];

/// Minimum number of annotations of a rule inside its own folder.
const MIN_POSITIVE_CASES: usize = 12;

/// The rules of the analysis, which fixtures are for: not RA000 `syntax-error`, which the scan
/// reports for a file that does not parse (its cases are in `tests/first_use.rs` and
/// `tests/cli.rs`; a fixture must parse).
fn analysed_rules() -> impl Iterator<Item = &'static Rule> {
    Rule::ALL.iter().filter(|r| **r != Rule::SyntaxError)
}

/// Minimum number of cases (see [`count_cases`]) across the `negatives*.rs` files of a rule's
/// folder.
const MIN_NEGATIVE_CASES: usize = 8;

/// One expectation: a rule id on a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    rule: String,
    line: usize,
}

/// A fixture file, read once.
struct Fixture {
    /// Path relative to the crate root, with `/` separators (for messages).
    name: String,
    path: PathBuf,
    text: String,
}

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every `.rs` file under `dir`, recursively, sorted by path.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot read an entry of {}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

fn load_fixtures() -> Vec<Fixture> {
    let root = fixtures_root();
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures: Vec<Fixture> = rust_files(&root)
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let relative = path.strip_prefix(crate_root).unwrap_or(&path);
            let name = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            Fixture { name, path, text }
        })
        .collect();
    assert!(
        !fixtures.is_empty(),
        "no fixtures found under {}",
        root.display()
    );
    fixtures
}

/// The folder directly under `fixtures/` that holds a fixture (`fixed-delay`, `clean`, ...).
fn top_folder(fixture: &Fixture) -> &str {
    fixture
        .name
        .strip_prefix("fixtures/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or("")
}

fn is_known_rule_id(id: &str) -> bool {
    Rule::ALL.iter().any(|rule| rule.id() == id)
}

/// Parses the annotations of one file. Errors (unknown rule ids, a caret pointing above line 1,
/// an annotation naming no rule, an unsupported marker) are returned as messages with their line.
fn parse_annotations(text: &str) -> (Vec<Expected>, Vec<String>) {
    let mut expected = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let Some(at) = line.find("//~") else {
            continue;
        };
        let rest = &line[at + 3..];
        let carets = rest.chars().take_while(|&c| c == '^').count();
        let rest = &rest[carets..];
        if rest.starts_with(['|', 'v']) {
            errors.push(format!(
                "line {line_no}: `//~|` and `//~v` are not supported; use `//~` or `//~^`"
            ));
            continue;
        }
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            errors.push(format!(
                "line {line_no}: malformed annotation `{}`",
                line[at..].trim_end()
            ));
            continue;
        }
        let Some(target) = line_no.checked_sub(carets).filter(|&l| l >= 1) else {
            errors.push(format!(
                "line {line_no}: annotation with {carets} caret(s) points before line 1"
            ));
            continue;
        };
        let codes: Vec<&str> = rest.split_whitespace().collect();
        if codes.is_empty() {
            errors.push(format!("line {line_no}: annotation names no rule"));
        }
        for code in codes {
            if is_known_rule_id(code) {
                expected.push(Expected {
                    rule: code.to_owned(),
                    line: target,
                });
            } else {
                errors.push(format!(
                    "line {line_no}: unknown rule id `{code}` in annotation"
                ));
            }
        }
    }
    (expected, errors)
}

/// Counts of each `(rule, line)` pair.
fn multiset(items: impl IntoIterator<Item = Expected>) -> BTreeMap<Expected, usize> {
    let mut counts = BTreeMap::new();
    for item in items {
        *counts.entry(item).or_insert(0) += 1;
    }
    counts
}

/// The crate fixture a fixture belongs to: the nearest folder above it, under `fixtures/`,
/// with a `Cargo.toml`.
fn crate_dir(fixture: &Fixture) -> Option<PathBuf> {
    let root = fixtures_root();
    fixture
        .path
        .ancestors()
        .skip(1)
        .take_while(|dir| *dir != root)
        .find(|dir| dir.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// What a scan of a crate fixture's folder reports, by file.
fn scan_crate(dir: &Path) -> BTreeMap<PathBuf, Result<Vec<Diagnostic>, String>> {
    let options = ScanOptions {
        paths: vec![dir.to_path_buf()],
        settings: Settings::preview(),
        ..ScanOptions::default()
    };
    let report = scan(&options).unwrap_or_else(|e| panic!("cannot scan {}: {e}", dir.display()));
    report
        .files
        .into_iter()
        .map(|file| {
            let found = match file.outcome {
                Outcome::Checked { diagnostics, .. } => Ok(diagnostics),
                Outcome::Skipped(why) => Err(format!("{why:?}")),
            };
            (file.path, found)
        })
        .collect()
}

/// What the engine emits for each fixture: alone, or with its crate fixture.
fn emitted_for(fixtures: &[Fixture]) -> Vec<Result<Vec<Diagnostic>, String>> {
    let mut crates: BTreeMap<PathBuf, BTreeMap<PathBuf, Result<Vec<Diagnostic>, String>>> =
        BTreeMap::new();
    fixtures
        .iter()
        .map(|fixture| match crate_dir(fixture) {
            Some(dir) => crates
                .entry(dir.clone())
                .or_insert_with(|| scan_crate(&dir))
                .get(&fixture.path)
                .cloned()
                .unwrap_or_else(|| Err("not found by the scan of its crate".to_owned())),
            None => check_source(&fixture.text, &Settings::preview()).map_err(|e| e.to_string()),
        })
        .collect()
}

/// Compares one fixture's annotations with what the engine emitted for it; appends mismatches
/// to `report`.
fn check_fixture(
    fixture: &Fixture,
    emitted: &Result<Vec<Diagnostic>, String>,
    report: &mut Vec<String>,
) {
    let (expected, errors) = parse_annotations(&fixture.text);
    for error in errors {
        report.push(format!("{}: bad annotation: {error}", fixture.name));
    }
    let diagnostics = match emitted {
        Ok(diagnostics) => diagnostics,
        Err(error) => {
            report.push(format!("{}: does not parse: {error}", fixture.name));
            return;
        }
    };
    let mut messages: BTreeMap<Expected, Vec<String>> = BTreeMap::new();
    let emitted = diagnostics.iter().map(|d| {
        let key = Expected {
            rule: d.rule.id().to_owned(),
            line: d.primary.span.start_pos.line,
        };
        messages
            .entry(key.clone())
            .or_default()
            .push(d.message.clone());
        key
    });
    let emitted = multiset(emitted);
    let expected = multiset(expected);

    let mut lines: Vec<(usize, String)> = Vec::new();
    for (key, &want) in &expected {
        let got = emitted.get(key).copied().unwrap_or(0);
        for _ in got..want {
            lines.push((
                key.line,
                format!(
                    "{}:{}: expected {}, not emitted",
                    fixture.name, key.line, key.rule
                ),
            ));
        }
    }
    for (key, &got) in &emitted {
        let want = expected.get(key).copied().unwrap_or(0);
        let texts = messages.get(key).map_or(&[][..], Vec::as_slice);
        for i in want..got {
            let message = texts.get(i).map_or("", String::as_str);
            lines.push((
                key.line,
                format!(
                    "{}:{}: unexpected {}: {message}",
                    fixture.name, key.line, key.rule
                ),
            ));
        }
    }
    lines.sort();
    report.extend(lines.into_iter().map(|(_, line)| line));
}

/// Where the snapshot of every finding of the fixtures is kept.
const SNAPSHOT: &str = "tests/snapshots/fixtures.txt";

/// A span as `line:column-line:column`.
fn span(span: &retry_audit::Span) -> String {
    format!(
        "{}:{}-{}:{}",
        span.start_pos.line, span.start_pos.column, span.end_pos.line, span.end_pos.column
    )
}

/// Every finding of one fixture, one line per finding and one indented line per part of it:
/// what a user reads, so that a change of a column, a message or a label shows.
fn render(fixture: &Fixture, emitted: &Result<Vec<Diagnostic>, String>, out: &mut String) {
    let diagnostics = match emitted {
        Ok(diagnostics) => diagnostics,
        Err(error) => {
            let _ = writeln!(out, "{}: does not parse: {error}", fixture.name);
            return;
        }
    };
    for d in diagnostics {
        let _ = writeln!(
            out,
            "{}:{} {} {:?}: {}",
            fixture.name,
            span(&d.primary.span),
            d.rule.id(),
            d.level,
            d.message
        );
        let _ = writeln!(out, "    here: {}", d.primary.message);
        for label in &d.secondary {
            let _ = writeln!(out, "    {}: {}", span(&label.span), label.message);
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "    help: {help}");
        }
        for note in &d.notes {
            let _ = writeln!(out, "    note: {note}");
        }
        if let Some(fix) = &d.fix {
            let _ = writeln!(out, "    fix: {} ({} edits)", fix.message, fix.edits.len());
        }
        for place in &d.elsewhere {
            let _ = writeln!(
                out,
                "    elsewhere: {}:{}:{}: {}",
                place.path, place.line, place.column, place.message
            );
        }
    }
}

fn fail_with(title: &str, report: &[String]) {
    if report.is_empty() {
        return;
    }
    let mut text = format!("{title} ({} problem(s)):\n", report.len());
    for line in report {
        let _ = writeln!(text, "  {line}");
    }
    panic!("{text}");
}

#[test]
fn fixtures_match_annotations() {
    let fixtures = load_fixtures();
    let emitted = emitted_for(&fixtures);
    let mut report = Vec::new();
    for (fixture, found) in fixtures.iter().zip(&emitted) {
        check_fixture(fixture, found, &mut report);
    }
    fail_with(
        &format!(
            "fixtures disagree with the engine ({} files checked)",
            fixtures.len()
        ),
        &report,
    );
}

/// The columns, messages, labels, help, notes and fixes of every finding are the snapshot's:
/// a regression of what a finding says fails here even when its rule and line stay.
#[test]
fn findings_match_the_snapshot() {
    let fixtures = load_fixtures();
    let emitted = emitted_for(&fixtures);
    let mut rendered = String::new();
    for (fixture, found) in fixtures.iter().zip(&emitted) {
        render(fixture, found, &mut rendered);
    }
    // Paths a crate fixture's scan names are absolute: shown from the crate's root.
    let root = format!("{}/", env!("CARGO_MANIFEST_DIR"));
    let rendered = rendered.replace(&root, "");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    let kept = fs::read_to_string(&path).unwrap_or_default();
    if kept == rendered {
        return;
    }
    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        fs::create_dir_all(path.parent().expect("a folder")).expect("the snapshot's folder");
        fs::write(&path, rendered).unwrap_or_else(|e| panic!("cannot write {SNAPSHOT}: {e}"));
        return;
    }
    let (kept_lines, new_lines): (Vec<&str>, Vec<&str>) =
        (kept.lines().collect(), rendered.lines().collect());
    let first = kept_lines
        .iter()
        .zip(&new_lines)
        .position(|(a, b)| a != b)
        .unwrap_or(kept_lines.len().min(new_lines.len()));
    let show = |lines: &[&str]| {
        lines
            .iter()
            .skip(first)
            .take(12)
            .copied()
            .collect::<Vec<&str>>()
            .join("\n")
    };
    panic!(
        "the fixtures' findings differ from {SNAPSHOT} (a column, message, label, help, note or \
         fix changed); if the change is meant, run `BLESS=1 cargo test --test fixtures`.\n\
         first difference at line {}:\n--- {SNAPSHOT} ---\n{}\n--- now ---\n{}",
        first + 1,
        show(&kept_lines),
        show(&new_lines),
    );
}

/// A crate fixture is one because its files need each other: some annotation of a positive
/// crate fixture is not what its file alone produces, and a clean one has a file that says
/// something different alone or a definition the others use (checked by the scan's evidence:
/// at least one file is checked with another's definitions).
#[test]
fn crate_fixtures_need_the_crate() {
    let fixtures = load_fixtures();
    let mut dirs: BTreeMap<PathBuf, Vec<&Fixture>> = BTreeMap::new();
    for fixture in &fixtures {
        if let Some(dir) = crate_dir(fixture) {
            dirs.entry(dir).or_default().push(fixture);
        }
    }
    assert!(!dirs.is_empty(), "no crate fixture found");
    let mut report = Vec::new();
    for (dir, members) in &dirs {
        let options = ScanOptions {
            paths: vec![dir.clone()],
            settings: Settings::preview(),
            ..ScanOptions::default()
        };
        let scanned = scan(&options).expect("the fixture crate scans");
        // A package's layout is a reason of its own: its `tests/` and `benches/` are test code.
        let laid_out = members
            .iter()
            .any(|f| retry_audit::pipeline::index::is_test_file(&f.path));
        if laid_out {
            let findings: usize = scanned
                .files
                .iter()
                .map(|f| match &f.outcome {
                    retry_audit::report::Outcome::Checked { diagnostics, .. } => diagnostics.len(),
                    retry_audit::report::Outcome::Skipped(_) => 0,
                })
                .sum();
            let alone: usize = members
                .iter()
                .map(|f| check_source(&f.text, &Settings::preview()).map_or(0, |d| d.len()))
                .sum();
            if findings == alone {
                report.push(format!(
                    "{}: its tests/ and benches/ give the same findings checked alone",
                    dir.display()
                ));
            }
            continue;
        }
        if scanned.stats.views_parsed == 0 && scanned.stats.by_defaults == 0 {
            report.push(format!(
                "{}: no file is checked with another file's definitions, nor a limit decided by the crate's defaults",
                dir.display()
            ));
            continue;
        }
        let annotated = members
            .iter()
            .any(|f| !parse_annotations(&f.text).0.is_empty());
        if !annotated {
            continue;
        }
        let differs = members.iter().any(|f| {
            let alone = check_source(&f.text, &Settings::preview()).unwrap_or_default();
            let alone = multiset(alone.iter().map(|d| Expected {
                rule: d.rule.id().to_owned(),
                line: d.primary.span.start_pos.line,
            }));
            alone != multiset(parse_annotations(&f.text).0)
        });
        if !differs {
            report.push(format!(
                "{}: every file alone already gives what is annotated",
                dir.display()
            ));
        }
    }
    fail_with("crate fixtures that do not need their crate", &report);
}

#[test]
fn annotations_are_well_formed() {
    let mut report = Vec::new();
    for fixture in load_fixtures() {
        let (_, errors) = parse_annotations(&fixture.text);
        report.extend(errors.into_iter().map(|e| format!("{}: {e}", fixture.name)));
    }
    fail_with("malformed annotations", &report);
}

#[test]
fn every_rule_has_fixtures() {
    let root = fixtures_root();
    let missing: Vec<String> = analysed_rules()
        .filter(|rule| !root.join(rule.name()).is_dir())
        .map(|rule| format!("fixtures/{}/ (for {})", rule.name(), rule.id()))
        .collect();
    fail_with("rules without a fixture folder", &missing);
}

#[test]
fn fixture_folders_are_rules_or_silent() {
    let mut report = Vec::new();
    for fixture in load_fixtures() {
        let folder = top_folder(&fixture);
        let known =
            SILENT_FOLDERS.contains(&folder) || Rule::ALL.iter().any(|r| r.name() == folder);
        if !known {
            report.push(format!(
                "{}: folder `{folder}` is neither a rule name nor one of {SILENT_FOLDERS:?}",
                fixture.name
            ));
        }
    }
    fail_with("fixtures outside the known folders", &report);
}

#[test]
fn every_rule_folder_has_enough_positive_cases() {
    let fixtures = load_fixtures();
    let mut report = Vec::new();
    for rule in analysed_rules() {
        let count: usize = fixtures
            .iter()
            .filter(|f| top_folder(f) == rule.name())
            .map(|f| {
                parse_annotations(&f.text)
                    .0
                    .iter()
                    .filter(|e| e.rule == rule.id())
                    .count()
            })
            .sum();
        if count < MIN_POSITIVE_CASES {
            report.push(format!(
                "fixtures/{}/: {count} annotation(s) of {}, want at least {MIN_POSITIVE_CASES}",
                rule.name(),
                rule.id()
            ));
        }
    }
    fail_with("rules with too few positive cases", &report);
}

/// Cases of a file, by the corpus convention: an unindented `// ` comment line directly followed
/// by an unindented `fn`, `async fn` or `impl` (helpers carry `///` docs or nothing).
fn count_cases(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .filter(|pair| {
            let item = pair[1].strip_prefix("pub ").unwrap_or(pair[1]);
            pair[0].starts_with("// ")
                && (item.starts_with("fn ")
                    || item.starts_with("async fn ")
                    || item.starts_with("impl"))
        })
        .count()
}

#[test]
fn every_rule_folder_has_enough_negative_cases() {
    let fixtures = load_fixtures();
    let mut report = Vec::new();
    for rule in analysed_rules() {
        let count: usize = fixtures
            .iter()
            .filter(|f| top_folder(f) == rule.name())
            .filter(|f| {
                f.path
                    .file_stem()
                    .is_some_and(|stem| stem.to_string_lossy().starts_with("negatives"))
            })
            .map(|f| count_cases(&f.text))
            .sum();
        if count < MIN_NEGATIVE_CASES {
            report.push(format!(
                "fixtures/{}/negatives*.rs: {count} case(s), want at least {MIN_NEGATIVE_CASES}",
                rule.name()
            ));
        }
    }
    fail_with("rules with too few negative cases", &report);
}

#[test]
fn silent_folders_have_no_annotations() {
    let mut report = Vec::new();
    for fixture in load_fixtures() {
        if !SILENT_FOLDERS.contains(&top_folder(&fixture)) {
            continue;
        }
        for (index, line) in fixture.text.lines().enumerate() {
            if line.contains("//~") {
                report.push(format!(
                    "{}:{}: annotation in a folder that must produce nothing",
                    fixture.name,
                    index + 1
                ));
            }
        }
    }
    fail_with("annotations where nothing may be reported", &report);
}

#[test]
fn silent_folders_exist() {
    let root = fixtures_root();
    let missing: Vec<String> = SILENT_FOLDERS
        .iter()
        .filter(|folder| rust_files(&root.join(folder)).is_empty())
        .map(|folder| format!("fixtures/{folder}/ has no .rs file"))
        .collect();
    fail_with("missing silent fixture folders", &missing);
}

#[test]
fn case_counter_reads_the_convention() {
    let text = "/// helper\nfn helper() {}\n\n// a case\nfn case_one() {}\n// another\nimpl X {}\n// third\npub async fn case_three() {}\n    // nested\n    fn inner() {}\n";
    assert_eq!(count_cases(text), 3);
}

#[test]
fn annotation_parser_reads_the_grammar() {
    let text = "a\nb //~ RA002\n//~^ RA001 RA003\nc\n//~^^ RA005\n";
    let (expected, errors) = parse_annotations(text);
    assert!(errors.is_empty(), "{errors:?}");
    let pairs: Vec<(&str, usize)> = expected.iter().map(|e| (e.rule.as_str(), e.line)).collect();
    assert_eq!(
        pairs,
        [("RA002", 2), ("RA001", 2), ("RA003", 2), ("RA005", 3)]
    );
}

#[test]
fn annotation_parser_rejects_bad_annotations() {
    let cases = [
        ("//~^ RA001\n", "before line 1"),
        ("x\n//~^^ RA001\n", "before line 1"),
        ("x //~ RA999\n", "unknown rule id"),
        ("x //~ fixed-delay\n", "unknown rule id"),
        ("x //~\n", "names no rule"),
        ("x //~| RA001\n", "not supported"),
        ("x //~RA001\n", "malformed"),
    ];
    for (text, want) in cases {
        let (expected, errors) = parse_annotations(text);
        assert!(expected.is_empty(), "{text:?} gave {expected:?}");
        assert!(
            errors.iter().any(|e| e.contains(want)),
            "{text:?}: want an error containing {want:?}, got {errors:?}"
        );
    }
}

/// One pipeline reads each file once and parses it once: a crate fixture whose retry loop
/// follows a definition into another file parses a view of just that definition, not the
/// other file again.
#[test]
fn each_file_of_a_crate_is_read_and_parsed_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/no-delay/wait_in_another_file");
    let files = retry_audit::pipeline::scan::rust_files(&dir, None).len();
    let scanned = scan(&ScanOptions {
        paths: vec![dir],
        settings: Settings::preview(),
        ..ScanOptions::default()
    })
    .expect("the fixture crate scans");
    assert_eq!(files, 2, "{:?}", scanned.files);
    assert_eq!(scanned.stats.files_read, files);
    assert_eq!(scanned.stats.files_parsed, files);
    assert_eq!(scanned.stats.views_parsed, 1, "{:?}", scanned.stats);
}
