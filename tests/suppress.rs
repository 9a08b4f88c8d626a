//! Inline suppressions (`// retry-audit: allow(...)`) and RA100 `unused-suppression`, through
//! [`retry_audit::check_source`] (which every front end calls) and through the binary.
//!
//! The fixtures in `fixtures/unused-suppression/` pin the scopes line by line; these tests pin
//! the messages, labels, spans and levels, and the interplay with settings.

#![cfg(feature = "cli")]

use std::fs;
use std::process::Command;

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
    found_with(src, &Settings::default())
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
    check(src, &Settings::default())
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
            check(&src, &Settings::default())
                .iter()
                .any(|d| d.rule == Rule::FixedDelay),
            "{comment}"
        );
    }
}

#[test]
fn a_suppression_of_a_rule_that_is_not_enabled_is_unused() {
    let mut settings = Settings::default();
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
    let mut settings = Settings::default();
    settings.set_level(Rule::UnusedSuppression, Level::Allow);
    let used = with_comment(" // retry-audit: allow(RA002)");
    assert_eq!(found_with(&used, &settings), []);
    let unused = with_comment(" // retry-audit: allow(RA002, RA001, nonsense)");
    assert_eq!(found_with(&unused, &settings), []);
}

#[test]
fn ra100_follows_the_levels() {
    let mut settings = Settings::default();
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
