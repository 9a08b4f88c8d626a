//! The `retry-audit` binary end to end: exit codes, output formats, levels, the walker, the
//! subcommands and hostile input. Every test writes its own files into a temporary directory and
//! runs the binary there, so paths in the output are relative and predictable.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;

use support::{error_lines, json_lines, skipped_lines, temp, write, Run, UNBOUNDED_FIXED};

const SLEEP_LINE: usize = 9;
const SLEEP_CALL: &str = "std::thread::sleep(std::time::Duration::from_secs(1))";

/// The one-line form of the same defect.
const ONE_LINE: &str = "fn f() -> u32 { loop { match op() { Ok(v) => return v, Err(_) => \
std::thread::sleep(std::time::Duration::from_secs(1)) } } }\nfn op() -> Result<u32, ()> { Ok(1) }\n";

/// A well-built retry: bounded, capped exponential backoff with full jitter.
const CLEAN: &str = "\
use std::time::Duration;

fn op() -> Result<u32, ()> {
    Err(())
}

fn fetch() -> Result<u32, ()> {
    let mut ceiling = Duration::from_millis(100);
    for _ in 0..5 {
        match op() {
            Ok(v) => return Ok(v),
            Err(()) => {
                std::thread::sleep(ceiling.mul_f64(rand::random::<f64>()));
                ceiling = (ceiling * 2).min(Duration::from_secs(5));
            }
        }
    }
    op()
}
";

/// Not Rust: a file that reaches the parser is reported as RA000 `syntax-error`.
const BROKEN: &str = "fn broken( {\n";

/// Not UTF-8: any file that reaches the checker produces a `warning: skipped` line naming it.
const SKIPPED: &[u8] = b"fn caf\xe9() {}\n";

fn run(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("the retry-audit binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn findings_of<'a>(findings: &'a [Value], rule: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["rule"] == rule).collect()
}

fn only_finding<'a>(findings: &'a [Value], rule: &str) -> &'a Value {
    let matching = findings_of(findings, rule);
    assert_eq!(matching.len(), 1, "expected one {rule} in {findings:#?}");
    matching[0]
}

// ---------------------------------------------------------------- findings, levels, exit codes

#[test]
fn unbounded_fixed_delay_retry_fails_with_an_error_and_a_warning() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["retry.rs"]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    assert!(run.stdout.contains("error[RA001]: "), "{}", run.stdout);
    assert!(run.stdout.contains("warning[RA002]: "), "{}", run.stdout);
    assert!(run.stdout.contains(" --> retry.rs:6:5"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(" --> retry.rs:{SLEEP_LINE}:")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("= help: "), "{}", run.stdout);
    let summary = run.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        summary,
        "retry-audit: 1 file checked, 0 skipped, 1 error, 1 warning"
    );
}

#[test]
fn one_line_defect_is_reported_too() {
    let dir = temp();
    write(dir.path(), "f.rs", ONE_LINE);
    let run = run(dir.path(), &["--format", "json", "f.rs"]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert_eq!(only_finding(&findings, "RA001")["level"], "error");
    assert_eq!(only_finding(&findings, "RA002")["level"], "warning");
}

#[test]
fn json_findings_carry_rule_level_path_and_primary_span() {
    let dir = temp();
    write(dir.path(), "src/retry.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["--format", "json", "src"]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);

    let unbounded = only_finding(&findings, "RA001");
    assert_eq!(unbounded["name"], "unbounded-retry");
    assert_eq!(unbounded["level"], "error");
    assert_eq!(unbounded["path"], "src/retry.rs");
    assert_eq!(
        (unbounded["line"].as_u64(), unbounded["column"].as_u64()),
        (Some(6), Some(5))
    );

    let fixed = only_finding(&findings, "RA002");
    assert_eq!(fixed["name"], "fixed-delay");
    assert_eq!(fixed["level"], "warning");
    assert_eq!(fixed["path"], "src/retry.rs");
    let line = SLEEP_LINE as u64;
    let call_start = UNBOUNDED_FIXED
        .lines()
        .nth(SLEEP_LINE - 1)
        .and_then(|l| l.find(SLEEP_CALL))
        .expect("sleep call in the fixture") as u64
        + 1;
    let call_end = call_start + SLEEP_CALL.len() as u64;
    assert_eq!(fixed["line"].as_u64(), Some(line));
    assert_eq!(fixed["end_line"].as_u64(), Some(line));
    let column = fixed["column"].as_u64().expect("column");
    let end_column = fixed["end_column"].as_u64().expect("end_column");
    assert!(
        call_start <= column && column < end_column && end_column <= call_end,
        "RA002 span {column}..{end_column} outside the sleep call {call_start}..{call_end}"
    );

    for finding in &findings {
        for key in [
            "rule",
            "name",
            "level",
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "message",
        ] {
            assert!(finding.get(key).is_some(), "missing {key} in {finding}");
        }
        let message = finding["message"].as_str().expect("message is a string");
        assert!(!message.is_empty());
    }
}

#[test]
fn default_path_is_the_current_directory_and_paths_keep_the_dot() {
    let dir = temp();
    write(dir.path(), "src/retry.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["--format", "json"]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert!(!findings.is_empty());
    assert!(
        findings.iter().all(|f| f["path"] == "src/retry.rs"),
        "{findings:#?}"
    );
}

#[test]
fn allowing_the_error_leaves_a_warning_and_exit_zero() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(
        dir.path(),
        &["--format", "json", "--allow", "RA001", "retry.rs"],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert!(findings_of(&findings, "RA001").is_empty(), "{findings:#?}");
    assert_eq!(only_finding(&findings, "RA002")["level"], "warning");
}

#[test]
fn warn_lowers_an_error_rule_to_a_warning() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(
        dir.path(),
        &["--format", "json", "--warn", "unbounded-retry", "retry.rs"],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert_eq!(only_finding(&findings, "RA001")["level"], "warning");
}

#[test]
fn deny_warnings_turns_the_fixed_delay_into_an_error() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let args = [
        "--format",
        "json",
        "--allow",
        "unbounded-retry",
        "--deny",
        "warnings",
        "retry.rs",
    ];
    let run = run(dir.path(), &args);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert_eq!(only_finding(&findings, "RA002")["level"], "error");
}

#[test]
fn deny_a_rule_by_name() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let args = [
        "--format",
        "json",
        "--allow",
        "RA001",
        "--deny",
        "fixed-delay",
        "retry.rs",
    ];
    let run = run(dir.path(), &args);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert_eq!(only_finding(&findings, "RA002")["level"], "error");
}

#[test]
fn the_last_level_flag_for_a_rule_wins() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let args = [
        "--format",
        "json",
        "--deny",
        "RA002",
        "--allow",
        "RA001",
        "--allow",
        "fixed-delay",
        "retry.rs",
    ];
    let run = run(dir.path(), &args);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");

    let args = [
        "--format", "json", "--allow", "RA002", "--deny", "RA002", "retry.rs",
    ];
    let run2 = self::run(dir.path(), &args);
    let findings = json_lines(&run2.stdout);
    assert_eq!(only_finding(&findings, "RA002")["level"], "error");
}

#[test]
fn a_correct_bounded_jittered_retry_passes() {
    let dir = temp();
    write(dir.path(), "clean.rs", CLEAN);
    let run = run(dir.path(), &["clean.rs"]);
    assert_eq!(
        run.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert_eq!(
        run.stdout,
        "retry-audit: 1 file checked, 0 skipped, 0 errors, 0 warnings\n"
    );
}

#[test]
fn json_mode_writes_only_findings_to_stdout() {
    let dir = temp();
    write(dir.path(), "a/retry.rs", UNBOUNDED_FIXED);
    write(dir.path(), "b/clean.rs", CLEAN);
    write(dir.path(), "c/broken.rs", SKIPPED);
    let run = run(dir.path(), &["--format", "json"]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert!(!findings.is_empty());
    assert!(
        findings.iter().all(|f| f["path"] == "a/retry.rs"),
        "{findings:#?}"
    );
    assert!(
        run.stderr
            .contains("retry-audit: 2 files checked, 1 skipped"),
        "{}",
        run.stderr
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let piped = run(dir.path(), &["retry.rs"]);
    assert!(piped.stdout.contains("warning[RA002]"), "{}", piped.stdout);
    assert!(
        !piped.stdout.contains('\u{1b}'),
        "auto must not colour a pipe"
    );
    let never = run(dir.path(), &["--color", "never", "retry.rs"]);
    assert!(!never.stdout.contains('\u{1b}'));
    let always = run(dir.path(), &["--color", "always", "retry.rs"]);
    assert!(always.stdout.contains('\u{1b}'), "{}", always.stdout);
}

#[test]
fn findings_at_error_level_still_fail_when_other_files_are_skipped() {
    let dir = temp();
    write(dir.path(), "a_broken.rs", SKIPPED);
    write(dir.path(), "b_retry.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["."]);
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    assert_eq!(skipped_lines(&run.stderr).len(), 1, "{}", run.stderr);
    assert!(run.stdout.contains("error[RA001]"), "{}", run.stdout);
}

#[test]
fn output_is_deterministic_and_sorted_by_path() {
    let dir = temp();
    for name in ["z", "m", "a"] {
        write(dir.path(), &format!("{name}/retry.rs"), UNBOUNDED_FIXED);
        write(dir.path(), &format!("{name}/broken.rs"), SKIPPED);
        write(dir.path(), &format!("{name}/clean.rs"), CLEAN);
    }
    let first = run(dir.path(), &["--format", "json", "--jobs", "3"]);
    let second = run(dir.path(), &["--format", "json", "--jobs", "1"]);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.stderr, second.stderr);
    let paths: Vec<String> = json_lines(&first.stdout)
        .iter()
        .map(|f| f["path"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(paths.windows(2).all(|w| w[0] <= w[1]), "{paths:?}");
    assert_eq!(paths.first().map(String::as_str), Some("a/retry.rs"));
    let skipped = skipped_lines(&first.stderr);
    assert_eq!(skipped.len(), 3);
    assert!(skipped.windows(2).all(|w| w[0] < w[1]), "{skipped:?}");

    let human1 = run(dir.path(), &[]);
    let human2 = run(dir.path(), &[]);
    assert_eq!(human1.stdout, human2.stdout);
    assert_eq!(human1.stderr, human2.stderr);
}

// ------------------------------------------------------------------------- usage errors (2)

#[test]
fn unknown_rule_is_a_usage_error() {
    let dir = temp();
    for flag in ["--deny", "--warn", "--allow"] {
        let run = run(dir.path(), &[flag, "RA999", "."]);
        assert_eq!(run.code, Some(2), "{flag}: {}", run.stderr);
        assert!(
            run.stderr.contains("unknown rule `RA999`"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("RA001 (unbounded-retry)"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn warnings_is_only_accepted_by_deny() {
    let dir = temp();
    assert_eq!(run(dir.path(), &["--deny", "warnings"]).code, Some(0));
    assert_eq!(run(dir.path(), &["--warn", "warnings"]).code, Some(2));
    assert_eq!(run(dir.path(), &["--allow", "warnings"]).code, Some(2));
}

/// [`run`], failing the test instead of hanging when the binary has not finished within a
/// minute (a FIFO opened for reading would block it for ever).
fn run_within_a_minute(dir: &Path, args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the retry-audit binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("retry-audit {args:?} did not finish within a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output").into()
}

#[test]
fn a_missing_path_is_reported_and_the_other_paths_are_checked() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let json = run(
        dir.path(),
        &["--format", "json", "does-not-exist", "retry.rs"],
    );
    assert_eq!(json.code, Some(2), "{}", json.stderr);
    let findings = json_lines(&json.stdout);
    assert_eq!(only_finding(&findings, "RA001")["path"], "retry.rs");
    assert_eq!(only_finding(&findings, "RA002")["path"], "retry.rs");
    let errors = error_lines(&json.stderr);
    assert_eq!(
        errors,
        ["error: cannot check does-not-exist: no such file or directory"],
        "{}",
        json.stderr
    );
    assert!(
        json.stderr.contains("1 file checked"),
        "the summary counts the file checked: {}",
        json.stderr
    );

    let human = run(dir.path(), &["retry.rs", "does-not-exist"]);
    assert_eq!(human.code, Some(2), "{}", human.stderr);
    assert!(human.stdout.contains("error[RA001]"), "{}", human.stdout);
    assert!(
        human
            .stderr
            .contains("error: cannot check does-not-exist: no such file or directory"),
        "{}",
        human.stderr
    );
}

#[cfg(unix)]
#[test]
fn fifos_sockets_devices_and_dangling_links_are_reported_without_being_read() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    write(dir.path(), "src/ok.rs", CLEAN);
    for fifo in ["pipe.rs", "src/pipe.rs"] {
        let made = Command::new("mkfifo")
            .arg(dir.path().join(fifo))
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {fifo}");
    }
    let _socket =
        std::os::unix::net::UnixListener::bind(dir.path().join("sock.rs")).expect("socket");
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling.rs")).expect("symlink");
    let run = run_within_a_minute(
        dir.path(),
        &[
            "--format",
            "json",
            "pipe.rs",
            "sock.rs",
            "retry.rs",
            "/dev/null",
            "dangling.rs",
            "src",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert_eq!(only_finding(&findings, "RA001")["path"], "retry.rs");
    let errors = error_lines(&run.stderr);
    assert_eq!(
        errors,
        [
            "error: cannot check pipe.rs: a named pipe (FIFO), not a file or directory; not read",
            "error: cannot check sock.rs: a socket, not a file or directory; not read",
            "error: cannot check /dev/null: a character device, not a file or directory; not read",
            "error: cannot check dangling.rs: a symbolic link to `nowhere`, which does not exist",
        ],
        "{}",
        run.stderr
    );
    // The FIFO met while walking `src` is not a `.rs` file to read: passed over in silence.
    assert!(
        run.stderr.contains("2 files checked, 0 skipped"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_option_values_are_usage_errors() {
    let dir = temp();
    for args in [
        &["--format", "xml"][..],
        &["--color", "sometimes"],
        &["--jobs", "0"],
        &["--jobs", "many"],
        &["--no-such-flag"],
    ] {
        assert_eq!(run(dir.path(), args).code, Some(2), "{args:?}");
    }
}

// ----------------------------------------------------------------------------- subcommands

#[test]
fn explain_prints_every_rule_by_id_and_by_name() {
    let dir = temp();
    let rules = [
        ("RA001", "unbounded-retry"),
        ("RA002", "fixed-delay"),
        ("RA003", "missing-jitter"),
        ("RA004", "retries-client-error"),
        ("RA005", "key-in-loop"),
    ];
    for (id, name) in rules {
        let by_id = run(dir.path(), &["explain", id]);
        assert_eq!(by_id.code, Some(0), "{id}: {}", by_id.stderr);
        let title = by_id.stdout.lines().next().unwrap_or_default();
        assert!(title.contains(id) && title.contains(name), "{title}");
        assert!(title.contains("default level: "), "{title}");
        let mut last = 0;
        for heading in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Use instead",
            "## Known limitations",
            "## References",
        ] {
            let at = by_id
                .stdout
                .find(heading)
                .unwrap_or_else(|| panic!("{id}: {heading}"));
            assert!(at > last, "{id}: {heading} out of order");
            last = at;
        }
        let by_name = run(dir.path(), &["explain", name]);
        assert_eq!(by_name.code, Some(0));
        assert_eq!(by_name.stdout, by_id.stdout);
        let lower = run(dir.path(), &["explain", &id.to_lowercase()]);
        assert_eq!(lower.stdout, by_id.stdout);
    }
}

#[test]
fn explain_shows_the_default_levels_of_the_issue() {
    let dir = temp();
    for (id, level) in [
        ("RA001", "error"),
        ("RA002", "warning"),
        ("RA003", "warning"),
        ("RA004", "error"),
        ("RA005", "error"),
    ] {
        let run = run(dir.path(), &["explain", id]);
        let title = run.stdout.lines().next().unwrap_or_default().to_owned();
        assert!(
            title.ends_with(&format!("(default level: {level})")),
            "{title}"
        );
    }
}

#[test]
fn explain_an_unknown_rule_lists_the_valid_ones() {
    let dir = temp();
    let run = run(dir.path(), &["explain", "RA042"]);
    assert_eq!(run.code, Some(2));
    for id in ["RA001", "RA002", "RA003", "RA004", "RA005"] {
        assert!(run.stderr.contains(id), "{}", run.stderr);
    }
    assert_eq!(self::run(dir.path(), &["explain"]).code, Some(2));
}

#[test]
fn rules_lists_five_rules_in_aligned_columns() {
    let dir = temp();
    let run = run(dir.path(), &["rules"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // One line per rule, then the line on how to run the preview tier.
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .take(retry_audit::Rule::ALL.len())
        .collect();
    assert_eq!(
        run.stdout.lines().count(),
        retry_audit::Rule::ALL.len() + 2,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("says the precision behind each tier\n"),
        "{}",
        run.stdout
    );
    let expected = [
        ("RA000", "syntax-error", "error"),
        ("RA001", "unbounded-retry", "error"),
        ("RA002", "fixed-delay", "warning"),
        ("RA003", "missing-jitter", "warning"),
        ("RA004", "retries-client-error", "error"),
        ("RA005", "key-in-loop", "error"),
    ];
    for (line, (id, name, level)) in lines.iter().zip(expected) {
        let columns: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&columns[..3], &[id, name, level], "{line}");
        assert!(columns.len() > 3, "no summary in {line}");
    }
    let starts: Vec<Vec<usize>> = lines.iter().map(|l| column_starts(l)).collect();
    assert!(
        starts.iter().all(|s| s == &starts[0]),
        "columns not aligned:\n{}",
        run.stdout
    );
}

/// Byte offsets where the first four space-separated columns of `line` start.
fn column_starts(line: &str) -> Vec<usize> {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] != b' ' && (i == 0 || bytes[i - 1] == b' '))
        .take(4)
        .collect()
}

#[test]
fn subcommands_do_not_mix_with_check_options() {
    let dir = temp();
    assert_eq!(
        run(dir.path(), &["--format", "json", "rules"]).code,
        Some(2)
    );
}

#[test]
fn a_directory_named_like_a_subcommand_is_checked_with_dot_slash_or_after_dashes() {
    let dir = temp();
    write(dir.path(), "explain/broken.rs", SKIPPED);
    write(dir.path(), "rules/broken.rs", SKIPPED);
    for args in [&["./explain"][..], &["--", "explain"], &["--", "rules"]] {
        let run = run(dir.path(), args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(
            skipped_lines(&run.stderr).len(),
            1,
            "{args:?}: {}",
            run.stderr
        );
    }
}

// ------------------------------------------------------------------- walking and skipping

#[test]
fn a_file_that_does_not_parse_is_reported_and_the_scan_goes_on() {
    let dir = temp();
    write(dir.path(), "bad.rs", "fn f() {\n    let = 1;\n}\n");
    write(dir.path(), "good.rs", CLEAN);
    // By default the body of `f` (no loop, no retry word, named by nobody) is not parsed, so
    // its error is not seen; `--full-parse` and `--strict` parse everything.
    let fast = run(dir.path(), &["bad.rs", "good.rs"]);
    assert_eq!(fast.code, Some(0), "{}", fast.stderr);
    assert!(skipped_lines(&fast.stderr).is_empty(), "{}", fast.stderr);
    assert!(
        fast.stdout
            .ends_with("2 files checked, 0 skipped, 0 errors, 0 warnings\n"),
        "{}",
        fast.stdout
    );
    // Parsed, the error is a finding (RA000) at its place, and the other file is checked.
    for args in [&["--full-parse"][..], &["--strict"]] {
        let mut all = args.to_vec();
        all.extend(["--format", "concise", "bad.rs", "good.rs"]);
        let run = run(dir.path(), &all);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(skipped_lines(&run.stderr).is_empty(), "{}", run.stderr);
        assert!(
            run.stdout
                .starts_with("bad.rs:2:9: RA000 file does not parse: "),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .ends_with("2 files checked, 0 skipped, 1 error, 0 warnings\n"),
            "{}",
            run.stdout
        );
    }
    // With RA000 off, the file is skipped, as before it became a finding.
    let run = run(
        dir.path(),
        &["--full-parse", "--ignore", "RA000", "bad.rs", "good.rs"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 1, "{}", run.stderr);
    assert!(
        skipped[0].starts_with("warning: skipped bad.rs:2:9: "),
        "{}",
        skipped[0]
    );
    assert!(
        run.stdout
            .ends_with("1 file checked, 1 skipped, 0 errors, 0 warnings\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn empty_file_is_checked_without_findings() {
    let dir = temp();
    write(dir.path(), "empty.rs", "");
    let run = run(dir.path(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "retry-audit: 1 file checked, 0 skipped, 0 errors, 0 warnings\n"
    );
}

#[test]
fn non_utf8_file_is_skipped_with_a_reason() {
    let dir = temp();
    write(dir.path(), "latin1.rs", b"fn caf\xe9() {}\n");
    let run = run(dir.path(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 1, "{}", run.stderr);
    assert!(
        skipped[0].starts_with("warning: skipped latin1.rs: "),
        "{}",
        skipped[0]
    );
    assert!(skipped[0].contains("UTF-8"), "{}", skipped[0]);
}

#[test]
fn deeply_nested_file_does_not_crash() {
    let dir = temp();
    let depth = 100_000;
    let source = format!(
        "fn f() {{ let _ = {}1{}; }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    write(dir.path(), "deep.rs", source);
    write(dir.path(), "ok.rs", CLEAN);
    let run = run(dir.path(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 1, "{}", run.stderr);
    assert!(
        skipped[0].starts_with("warning: skipped deep.rs"),
        "{}",
        skipped[0]
    );
    assert!(
        run.stdout.contains("1 file checked, 1 skipped"),
        "{}",
        run.stdout
    );
}

#[test]
fn fifty_megabyte_file_is_checked() {
    use std::fmt::Write as _;

    let dir = temp();
    // Long item names keep the token count (and so the debug build's parse time) moderate.
    let filler = "z".repeat(200);
    let mut source = String::with_capacity(50 * 1024 * 1024 + 300);
    let mut i = 0;
    while source.len() < 50 * 1024 * 1024 {
        writeln!(source, "fn item_{i}_{filler}() {{}}").expect("write to a String");
        i += 1;
    }
    write(dir.path(), "big.rs", &source);
    let run = run(dir.path(), &["big.rs"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "retry-audit: 1 file checked, 0 skipped, 0 errors, 0 warnings\n"
    );
}

#[test]
fn ignored_hidden_and_target_files_are_not_walked() {
    let dir = temp();
    write(dir.path(), "src/ok.rs", CLEAN);
    write(dir.path(), ".gitignore", "generated/\nscratch.rs\n");
    write(dir.path(), "generated/broken.rs", SKIPPED);
    write(dir.path(), "src/scratch.rs", SKIPPED);
    write(dir.path(), "target/debug/broken.rs", SKIPPED);
    write(dir.path(), "crates/x/target/broken.rs", SKIPPED);
    write(dir.path(), ".hidden/broken.rs", SKIPPED);
    write(dir.path(), "src/.hidden.rs", SKIPPED);
    write(dir.path(), "notes.txt", SKIPPED);
    let run = run(dir.path(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(skipped_lines(&run.stderr), Vec::<&str>::new());
    assert_eq!(
        run.stdout,
        "retry-audit: 1 file checked, 0 skipped, 0 errors, 0 warnings\n"
    );
}

#[test]
fn files_named_explicitly_are_checked_even_if_ignored() {
    let dir = temp();
    write(dir.path(), ".gitignore", "scratch.rs\n");
    write(dir.path(), "scratch.rs", SKIPPED);
    write(dir.path(), "target/broken.rs", SKIPPED);
    write(dir.path(), ".hidden/broken.rs", SKIPPED);
    write(dir.path(), "notes.txt", SKIPPED);
    let args = [
        "scratch.rs",
        "target/broken.rs",
        ".hidden/broken.rs",
        "notes.txt",
    ];
    let run = run(dir.path(), &args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 4, "{}", run.stderr);
    for (line, path) in skipped.iter().zip([
        ".hidden/broken.rs",
        "notes.txt",
        "scratch.rs",
        "target/broken.rs",
    ]) {
        assert!(
            line.starts_with(&format!("warning: skipped {path}: not valid UTF-8")),
            "{line}"
        );
    }
}

#[test]
fn a_directory_named_explicitly_is_walked_even_if_it_is_target() {
    let dir = temp();
    write(dir.path(), "target/broken.rs", SKIPPED);
    let run = run(dir.path(), &["target"]);
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 1, "{}", run.stderr);
    assert!(
        skipped[0].starts_with("warning: skipped target/broken.rs: not valid UTF-8"),
        "{}",
        skipped[0]
    );
}

#[test]
fn a_file_given_twice_is_checked_once() {
    let dir = temp();
    write(dir.path(), "src/broken.rs", SKIPPED);
    let run = run(dir.path(), &["src", "src/broken.rs"]);
    assert_eq!(skipped_lines(&run.stderr).len(), 1, "{}", run.stderr);
}

#[cfg(unix)]
#[test]
fn symlink_loops_do_not_hang_or_crash() {
    let dir = temp();
    write(dir.path(), "src/ok.rs", CLEAN);
    std::os::unix::fs::symlink("..", dir.path().join("src/up")).expect("symlink");
    std::os::unix::fs::symlink("self", dir.path().join("self")).expect("symlink");
    let run = run(dir.path(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("1 file checked"), "{}", run.stdout);
}

#[test]
fn scanned_files_are_left_byte_identical() {
    let dir = temp();
    let files: [(&str, &[u8]); 5] = [
        ("retry.rs", UNBOUNDED_FIXED.as_bytes()),
        ("clean.rs", CLEAN.as_bytes()),
        ("broken.rs", BROKEN.as_bytes()),
        ("latin1.rs", b"fn caf\xe9() {}\n"),
        ("bom.rs", "\u{feff}fn f() {}\r\n".as_bytes()),
    ];
    for (name, contents) in files {
        write(dir.path(), name, contents);
    }
    let before: Vec<_> = files
        .iter()
        .map(|(name, _)| {
            fs::metadata(dir.path().join(name))
                .and_then(|m| m.modified())
                .ok()
        })
        .collect();
    run(dir.path(), &[]);
    run(dir.path(), &["--format", "json", "--deny", "warnings"]);
    for ((name, contents), modified) in files.iter().zip(before) {
        let path = dir.path().join(name);
        assert_eq!(
            fs::read(&path).expect("read back"),
            *contents,
            "{name} changed"
        );
        assert_eq!(
            fs::metadata(&path).and_then(|m| m.modified()).ok(),
            modified,
            "{name} touched"
        );
    }
}

#[test]
fn stats_counts_files_by_outcome_and_times_every_phase_without_changing_the_report() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    write(dir.path(), "clean.rs", CLEAN);
    write(dir.path(), "broken.rs", BROKEN);
    write(dir.path(), "latin1.rs", b"fn caf\xe9() {}\n");

    // RA000 off: the file that does not parse is skipped and counted as such.
    let plain = run(dir.path(), &["--format", "json", "--ignore", "RA000"]);
    let stats = run(
        dir.path(),
        &[
            "--format", "json", "--ignore", "RA000", "--stats", "--jobs", "2",
        ],
    );
    assert_eq!(stats.code, plain.code);
    assert_eq!(
        stats.stdout, plain.stdout,
        "--stats leaves the findings alone"
    );
    // Everything said without --stats is said with it, before the statistics.
    assert!(
        stats.stderr.starts_with(&plain.stderr),
        "{}\n---\n{}",
        plain.stderr,
        stats.stderr
    );
    let block: Vec<&str> = stats.stderr[plain.stderr.len()..].lines().collect();
    assert_eq!(block[0], "retry-audit: --stats");
    assert_eq!(
        block[1].split_whitespace().collect::<Vec<_>>().join(" "),
        "files 4 found: 2 checked, 2 skipped (1 not parsed, 1 not UTF-8, 0 too deeply nested, \
         0 too complex, 0 unreadable, 0 internal errors)"
    );
    let bytes = u32::try_from(UNBOUNDED_FIXED.len() + CLEAN.len() + BROKEN.len() + 15).unwrap();
    assert!(
        block[2].contains(&format!(
            "{:.1} MB read, 2 threads, 2 findings",
            f64::from(bytes) / 1e6
        )),
        "{}",
        block[2]
    );
    // Each file is read once and parsed at most once (not the one that is not UTF-8).
    assert_eq!(
        block[3].split_whitespace().collect::<Vec<_>>().join(" "),
        "parsed 4 files read and 3 files parsed, each once; 0 views of other files' definitions \
         parsed for a file's facts"
    );
    let phases: Vec<&str> = block[4..]
        .iter()
        .map(|line| line.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        phases,
        [
            "walk",
            "read",
            "parse",
            "analyse",
            "check",
            "cross-file",
            "report",
            "total"
        ]
    );
    for line in &block[4..] {
        let seconds: f64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a time in seconds: {line}"));
        assert!((0.0..60.0).contains(&seconds), "{line}");
    }
}

#[test]
fn a_packages_tests_and_benches_are_test_code_but_a_directory_named_tests_elsewhere_is_not() {
    let dir = temp();
    let manifest = "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    write(dir.path(), "pkg/Cargo.toml", manifest);
    write(dir.path(), "pkg/tests/it.rs", UNBOUNDED_FIXED);
    write(dir.path(), "pkg/benches/bench.rs", UNBOUNDED_FIXED);
    write(dir.path(), "pkg/examples/demo.rs", UNBOUNDED_FIXED);
    // No `Cargo.toml` above this `tests`: a project that happens to live in such a folder.
    write(dir.path(), "tests/proj/src/lib.rs", UNBOUNDED_FIXED);
    let run = run(dir.path(), &["--format", "json", "."]);
    let mut paths: Vec<String> = json_lines(&run.stdout)
        .iter()
        .map(|f| f["path"].as_str().expect("a path").to_owned())
        .collect();
    paths.sort();
    paths.dedup();
    assert_eq!(
        paths,
        ["pkg/examples/demo.rs", "tests/proj/src/lib.rs"],
        "{}",
        run.stderr
    );
}

/// A runner given its strategy from a field is reported with a label at the field's default
/// (where the facts come from), in the JSON output's labels.
#[test]
fn a_strategy_read_from_a_field_is_labelled_at_its_default() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(
        root,
        &[
            "--format",
            "json",
            "fixtures/missing-jitter/strategy_fields.rs",
        ],
    );
    let findings: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let at_runner: Vec<&Value> = findings
        .iter()
        .filter(|f| f["rule"] == "RA003" && f["line"] == 39)
        .collect();
    assert_eq!(at_runner.len(), 1, "{findings:#?}");
    let labels = at_runner[0]["labels"].as_array().expect("labels");
    assert!(
        labels
            .iter()
            .any(|l| l["line"] == 19 && l["message"] == "`retry_policy` holds this by default"),
        "{labels:#?}"
    );
}

/// The default run reports only stable rules; `--preview` (or `RETRY_AUDIT_PREVIEW=1`) adds the
/// preview tier; a preview rule named on the command line runs by itself.
#[test]
fn the_default_run_reports_the_stable_tier_only() {
    use retry_audit::checks::registry::Tier;
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let bare = |args: &[&str]| -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .args(["--format", "concise", "--quiet"])
            .args(args)
            .current_dir(dir.path())
            .env_remove("RETRY_AUDIT_PREVIEW")
            .output()
            .expect("runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let rules_in = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .collect()
    };
    let default = rules_in(&bare(&["retry.rs"]));
    for id in &default {
        let rule = retry_audit::Rule::from_code(id).expect("a rule");
        assert_eq!(rule.tier(), Tier::Stable, "{id} is not stable: {default:?}");
    }
    let preview = rules_in(&bare(&["--preview", "retry.rs"]));
    assert!(preview.contains(&"RA001".to_owned()), "{preview:?}");
    assert!(preview.contains(&"RA002".to_owned()), "{preview:?}");
    if retry_audit::Rule::UnboundedRetry.tier() == Tier::Preview {
        assert!(!default.contains(&"RA001".to_owned()), "{default:?}");
        let named = rules_in(&bare(&["--warn", "RA001", "retry.rs"]));
        assert!(named.contains(&"RA001".to_owned()), "{named:?}");
    }
}
