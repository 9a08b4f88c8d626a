//! The conventions users of ruff, clippy and cargo expect (issue 14): rule selection, exit and
//! output flags, standard input, colour from the environment, and the `-j` check. Each test runs
//! the binary in a temporary directory, as `tests/cli.rs` does.

#![cfg(feature = "cli")]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

mod support;

use support::{json_lines, skipped_lines, temp, write, Run, KEY_IN_LOOP, UNBOUNDED_FIXED};

/// A bounded retry with a constant sleep: RA002 only.
const BOUNDED_FIXED: &str = "\
fn op() -> Result<u32, ()> {
    Err(())
}

fn fetch() -> Result<u32, ()> {
    for _ in 0..3 {
        match op() {
            Ok(v) => return Ok(v),
            Err(()) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    }
    op()
}
";

/// The binary run in `dir` with `args`, the colour variables unset, `env` set and `stdin` fed.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retry-audit"));
    command.env("RETRY_AUDIT_PREVIEW", "1");
    command
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the retry-audit binary runs");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        // A run that fails before reading standard input closes it: not the test's failure.
        if let Err(e) = pipe.write_all(input) {
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe,
                "stdin written: {e}"
            );
        }
    }
    Run::from(child.wait_with_output().expect("the binary finishes"))
}

fn run(dir: &Path, args: &[&str]) -> Run {
    run_with(dir, args, &[], None)
}

/// The rule ids of JSON Lines findings, in output order.
fn rules_of(stdout: &str) -> Vec<String> {
    json_lines(stdout)
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A directory holding `retry.rs` (RA001 and RA002).
fn project() -> tempfile::TempDir {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    dir
}

// ------------------------------------------------------------------------- --select, --ignore

#[test]
fn select_runs_only_the_rules_it_names() {
    let dir = project();
    let run = run(
        dir.path(),
        &["--format", "json", "--select", "RA002", "retry.rs"],
    );
    assert_eq!(
        run.code,
        Some(0),
        "RA001 (error) is not run: {}",
        run.stderr
    );
    assert_eq!(rules_of(&run.stdout), ["RA002"]);
}

#[test]
fn select_takes_ids_names_prefixes_commas_and_repeats() {
    let dir = project();
    for args in [
        &["--select", "RA00"][..],
        &["--select", "unbounded-retry,fixed-delay"],
        &["--select", "RA001", "--select", "ra002"],
        &["--select", "ALL"],
    ] {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        all.push("retry.rs");
        let run = run(dir.path(), &all);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert_eq!(rules_of(&run.stdout), ["RA001", "RA002"], "{args:?}");
    }
}

#[test]
fn ignore_removes_rules_and_wins_over_select_and_the_level_flags() {
    let dir = project();
    let ignored = run(
        dir.path(),
        &["--format", "json", "--ignore", "RA001", "retry.rs"],
    );
    assert_eq!(ignored.code, Some(0), "{}", ignored.stderr);
    assert_eq!(rules_of(&ignored.stdout), ["RA002"]);
    for args in [
        &["--select", "RA002", "--ignore", "fixed-delay"][..],
        &["--select", "RA00", "--ignore", "RA00"],
        &["--ignore", "RA001,RA002"],
        &["--deny", "RA002", "--ignore", "RA002", "--ignore", "RA001"],
        &["--ignore", "RA002", "--deny", "RA002", "--ignore", "RA001"],
    ] {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        all.push("retry.rs");
        let run = run(dir.path(), &all);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(rules_of(&run.stdout), Vec::<String>::new(), "{args:?}");
    }
}

#[test]
fn a_selected_rule_keeps_the_level_of_the_configuration_and_the_level_flags() {
    let dir = project();
    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nfixed-delay = \"deny\"\n",
    );
    let denied = run(
        dir.path(),
        &["--format", "json", "--select", "RA002", "retry.rs"],
    );
    assert_eq!(denied.code, Some(1), "{}", denied.stderr);
    let findings = json_lines(&denied.stdout);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["level"], "error");

    write(
        dir.path(),
        "retry-audit.toml",
        "[rules]\nfixed-delay = \"allow\"\n",
    );
    let allowed = run(
        dir.path(),
        &["--format", "json", "--select", "RA002", "retry.rs"],
    );
    assert_eq!(allowed.code, Some(0), "{}", allowed.stderr);
    assert_eq!(
        allowed.stdout, "",
        "selection does not turn on an allowed rule"
    );
    let warned = run(
        dir.path(),
        &[
            "--format", "json", "--select", "RA002", "--warn", "RA002", "retry.rs",
        ],
    );
    assert_eq!(rules_of(&warned.stdout), ["RA002"]);
    assert_eq!(json_lines(&warned.stdout)[0]["level"], "warning");
}

#[test]
fn a_selector_matching_no_rule_is_a_usage_error() {
    let dir = project();
    for (flag, value) in [
        ("--select", "RA9"),
        ("--ignore", "RA9"),
        ("--select", "fixed"),
        ("--ignore", "RA001,nope"),
        ("--select", ""),
    ] {
        let run = run(dir.path(), &[flag, value, "retry.rs"]);
        assert_eq!(run.code, Some(2), "{flag} {value}: {}", run.stderr);
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.contains(&format!("for '{flag} <RULES>'")),
            "{flag} {value}: {}",
            run.stderr
        );
        let what = if value.is_empty() {
            "empty rule selector".to_owned()
        } else {
            let bad = value.rsplit(',').next().unwrap_or(value);
            format!("no rule matches `{bad}`")
        };
        assert!(run.stderr.contains(&what), "{}", run.stderr);
    }
}

// ------------------------------------------------------------------------------ --exit-zero

#[test]
fn exit_zero_passes_with_error_findings_but_not_usage_or_io_errors() {
    let dir = project();
    let plain = run(dir.path(), &["retry.rs"]);
    assert_eq!(plain.code, Some(1));
    let zero = run(dir.path(), &["--exit-zero", "retry.rs"]);
    assert_eq!(zero.code, Some(0), "{}", zero.stderr);
    assert_eq!(zero.stdout, plain.stdout, "the findings are still reported");

    write(dir.path(), "charge.rs", KEY_IN_LOOP);
    let diff = run(dir.path(), &["--exit-zero", "--diff", "charge.rs"]);
    assert_eq!(diff.code, Some(0), "{}", diff.stderr);
    assert!(diff.stdout.contains("+++ b/charge.rs"), "{}", diff.stdout);

    let usage = run(dir.path(), &["--exit-zero", "--select", "RA9", "retry.rs"]);
    assert_eq!(usage.code, Some(2), "{}", usage.stderr);
    let missing = run(dir.path(), &["--exit-zero", "no-such-file.rs"]);
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
    write(
        dir.path(),
        "config/retry-audit.toml",
        "[rules]\nfixed-delay = \"loud\"\n",
    );
    let config = run(
        dir.path(),
        &[
            "--exit-zero",
            "--config",
            "config/retry-audit.toml",
            "retry.rs",
        ],
    );
    assert_eq!(config.code, Some(2), "{}", config.stderr);
    write(dir.path(), "latin1.rs", b"fn caf\xe9() {}\n");
    let strict = run(
        dir.path(),
        &["--exit-zero", "--strict", "latin1.rs", "retry.rs"],
    );
    assert_eq!(strict.code, Some(2), "{}", strict.stderr);
    assert_eq!(skipped_lines(&strict.stderr).len(), 1, "{}", strict.stderr);
}

// ------------------------------------------------------------------------------------- -j 0

#[test]
fn jobs_zero_is_rejected_with_a_clear_message() {
    let dir = project();
    for args in [&["-j", "0"][..], &["--jobs", "0"], &["--jobs=0"], &["-j0"]] {
        let run = run(dir.path(), args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("--jobs must be at least 1"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    let words = run(dir.path(), &["--jobs", "many"]);
    assert_eq!(words.code, Some(2));
    assert!(
        words.stderr.contains("`many` is not a number"),
        "{}",
        words.stderr
    );
    assert_eq!(run(dir.path(), &["-j", "1", "retry.rs"]).code, Some(1));
}

// ---------------------------------------------------------------------------- --output-file

#[test]
fn output_file_holds_what_standard_output_would_for_every_format() {
    let dir = project();
    for format in [
        "human",
        "concise",
        "json",
        "sarif",
        "github",
        "gitlab",
        "cargo-json",
    ] {
        let plain = run(dir.path(), &["--format", format, "retry.rs"]);
        let file = format!("out/{format}/report.txt");
        let to_file = run(
            dir.path(),
            &["--format", format, "--output-file", &file, "retry.rs"],
        );
        assert_eq!(to_file.code, plain.code, "{format}: {}", to_file.stderr);
        assert_eq!(to_file.stdout, "", "{format}: nothing on stdout");
        assert_eq!(to_file.stderr, plain.stderr, "{format}");
        let written = std::fs::read_to_string(dir.path().join(&file)).expect("report written");
        assert_eq!(written, plain.stdout, "{format}");
    }
    let short = run(
        dir.path(),
        &["-o", "short.txt", "--format", "concise", "retry.rs"],
    );
    assert_eq!(short.code, Some(1));
    let written = std::fs::read_to_string(dir.path().join("short.txt")).expect("written");
    assert!(written.starts_with("retry.rs:6:5: RA001 "), "{written}");

    write(dir.path(), "charge.rs", KEY_IN_LOOP);
    let diff = run(dir.path(), &["--diff", "-o", "fix.diff", "charge.rs"]);
    assert_eq!(diff.code, Some(1), "{}", diff.stderr);
    assert_eq!(diff.stdout, "");
    let patch = std::fs::read_to_string(dir.path().join("fix.diff")).expect("diff written");
    assert!(
        patch.starts_with("--- a/charge.rs\n+++ b/charge.rs\n"),
        "{patch}"
    );
}

#[test]
fn an_output_file_that_cannot_be_written_exits_2_and_says_which() {
    let dir = project();
    write(dir.path(), "blocker", "a file, not a directory");
    for format in ["human", "json", "sarif"] {
        let run = run(
            dir.path(),
            &["--format", format, "-o", "blocker/report.txt", "retry.rs"],
        );
        assert_eq!(run.code, Some(2), "{format}: {}", run.stderr);
        assert!(
            run.stderr.contains("error: cannot write output: blocker"),
            "{format}: {}",
            run.stderr
        );
    }
    let dir_as_file = run(dir.path(), &["-o", ".", "retry.rs"]);
    assert_eq!(dir_as_file.code, Some(2), "{}", dir_as_file.stderr);
}

// ----------------------------------------------------------------------------------- --quiet

#[test]
fn quiet_prints_the_findings_and_problems_only() {
    let dir = project();
    write(dir.path(), "latin1.rs", b"fn caf\xe9() {}\n");
    let loud = run(
        dir.path(),
        &["--format", "concise", "latin1.rs", "retry.rs"],
    );
    let quiet = run(
        dir.path(),
        &["-q", "--format", "concise", "latin1.rs", "retry.rs"],
    );
    assert_eq!(quiet.code, loud.code);
    let findings: Vec<&str> = loud
        .stdout
        .lines()
        .filter(|l| !l.starts_with("retry-audit: "))
        .collect();
    assert_eq!(findings.len(), 2, "{}", loud.stdout);
    assert_eq!(quiet.stdout, format!("{}\n", findings.join("\n")));
    assert_eq!(
        skipped_lines(&quiet.stderr).len(),
        1,
        "problems are still said"
    );
    assert!(!quiet.stderr.contains("retry-audit:"), "{}", quiet.stderr);

    let human = run(dir.path(), &["--quiet", "retry.rs"]);
    assert!(human.stdout.contains("error[RA001]"), "{}", human.stdout);
    assert!(!human.stdout.contains("retry-audit:"), "{}", human.stdout);
    let json = run(dir.path(), &["--quiet", "--format", "json", "retry.rs"]);
    assert_eq!(json_lines(&json.stdout).len(), 2);
    assert_eq!(json.stderr, "", "the summary is not printed");
    let clean = run(dir.path(), &["-q", "--ignore", "ALL", "retry.rs"]);
    assert_eq!((clean.code, clean.stdout.as_str()), (Some(0), ""));
}

#[test]
fn quiet_silences_the_counts_of_fix_diff_and_baseline() {
    let dir = project();
    write(dir.path(), "charge.rs", KEY_IN_LOOP);
    let diff = run(dir.path(), &["-q", "--diff", "charge.rs"]);
    assert!(diff.stdout.contains("+++ b/charge.rs"), "{}", diff.stdout);
    assert_eq!(diff.stderr, "");
    let recorded = run(
        dir.path(),
        &["-q", "--write-baseline", "base.json", "retry.rs"],
    );
    assert_eq!((recorded.code, recorded.stderr.as_str()), (Some(0), ""));
    let hidden = run(dir.path(), &["-q", "--baseline", "base.json", "retry.rs"]);
    assert_eq!(hidden.code, Some(0), "{}", hidden.stderr);
    assert_eq!((hidden.stdout.as_str(), hidden.stderr.as_str()), ("", ""));
    let loud = run(dir.path(), &["--baseline", "base.json", "retry.rs"]);
    assert!(
        loud.stderr.contains("in the baseline hidden"),
        "{}",
        loud.stderr
    );
    let fixed = run(dir.path(), &["-q", "--fix", "charge.rs"]);
    assert_eq!(fixed.code, Some(0), "{}", fixed.stderr);
    assert_eq!((fixed.stdout.as_str(), fixed.stderr.as_str()), ("", ""));
}

// ------------------------------------------------------------------------------ --statistics

#[test]
fn statistics_prints_a_count_per_rule_most_first_instead_of_the_findings() {
    let dir = project();
    write(dir.path(), "bounded.rs", BOUNDED_FIXED);
    let run = run(dir.path(), &["--statistics", "bounded.rs", "retry.rs"]);
    assert_eq!(
        run.code,
        Some(1),
        "the exit status is the same: {}",
        run.stderr
    );
    assert_eq!(
        run.stdout,
        "2  RA002  fixed-delay\n\
         1  RA001  unbounded-retry\n\
         retry-audit: 2 files checked, 0 skipped, 1 error, 2 warnings\n"
    );
    let concise = self::run(
        dir.path(),
        &[
            "--statistics",
            "-q",
            "--format",
            "concise",
            "bounded.rs",
            "retry.rs",
        ],
    );
    assert_eq!(
        concise.stdout,
        "2  RA002  fixed-delay\n1  RA001  unbounded-retry\n"
    );
    let json = self::run(
        dir.path(),
        &["--statistics", "--format", "json", "bounded.rs", "retry.rs"],
    );
    assert_eq!(json.code, Some(1));
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON value");
    assert_eq!(
        value,
        serde_json::json!([
            {"rule": "RA002", "name": "fixed-delay", "count": 2},
            {"rule": "RA001", "name": "unbounded-retry", "count": 1},
        ])
    );
    assert!(json
        .stdout
        .starts_with(r#"[{"rule":"RA002","name":"fixed-delay","count":2}"#));
    assert!(
        json.stderr.contains("retry-audit: 2 files checked"),
        "{}",
        json.stderr
    );
    let none = self::run(
        dir.path(),
        &["--statistics", "--format", "json", "--ignore", "ALL"],
    );
    assert_eq!((none.code, none.stdout.as_str()), (Some(0), "[]\n"));
}

#[test]
fn statistics_is_refused_with_the_other_machine_formats_and_with_diff() {
    let dir = project();
    for format in ["sarif", "github", "gitlab", "cargo-json"] {
        let run = run(
            dir.path(),
            &["--statistics", "--format", format, "retry.rs"],
        );
        assert_eq!(run.code, Some(2), "{format}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "'--statistics' cannot be used with '--format {format}'"
            )),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    for other in ["--diff", "--write-baseline=b.json"] {
        let run = run(dir.path(), &["--statistics", other, "retry.rs"]);
        assert_eq!(run.code, Some(2), "{other}: {}", run.stderr);
        assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    }
}

// ------------------------------------------------------------------ NO_COLOR, CLICOLOR_FORCE

#[test]
fn clicolor_force_and_no_color_decide_auto_and_the_flag_wins_over_both() {
    const ESC: char = '\u{1b}';
    let dir = project();
    let coloured = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = args.to_vec();
        all.push("retry.rs");
        let run = run_with(dir.path(), &all, env, None);
        assert_eq!(run.code, Some(1), "{args:?} {env:?}: {}", run.stderr);
        assert!(run.stdout.contains("RA001"), "{}", run.stdout);
        run.stdout.contains(ESC)
    };
    assert!(!coloured(&[], &[]), "a pipe is not coloured");
    assert!(coloured(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(coloured(&["--color", "auto"], &[("CLICOLOR_FORCE", "yes")]));
    assert!(!coloured(&[], &[("CLICOLOR_FORCE", "0")]));
    assert!(!coloured(&[], &[("CLICOLOR_FORCE", "")]));
    assert!(
        !coloured(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        "NO_COLOR wins"
    );
    assert!(
        coloured(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]),
        "empty is unset"
    );
    assert!(
        coloured(&["--color", "always"], &[("NO_COLOR", "1")]),
        "the flag wins"
    );
    assert!(
        !coloured(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]),
        "the flag wins"
    );
    assert!(!coloured(
        &[],
        &[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "0")]
    ));

    let to_file = run_with(
        dir.path(),
        &["-o", "report.txt", "retry.rs"],
        &[("CLICOLOR_FORCE", "1")],
        None,
    );
    assert_eq!(to_file.code, Some(1));
    let written = std::fs::read_to_string(dir.path().join("report.txt")).expect("written");
    assert!(written.contains(ESC), "forced colour goes to the file too");
    let plain = run(
        dir.path(),
        &["-o", "plain.txt", "--color", "auto", "retry.rs"],
    );
    assert_eq!(plain.code, Some(1));
    let written = std::fs::read_to_string(dir.path().join("plain.txt")).expect("written");
    assert!(!written.contains(ESC), "a file is not a terminal");
}

// ---------------------------------------------------------------- `-` and --stdin-filename

#[test]
fn a_dash_reads_standard_input_and_names_it_dash() {
    let dir = temp();
    let stdin = Some(UNBOUNDED_FIXED.as_bytes());
    let concise = run_with(dir.path(), &["--format", "concise", "-"], &[], stdin);
    assert_eq!(concise.code, Some(1), "{}", concise.stderr);
    assert_eq!(
        concise.stdout.lines().collect::<Vec<_>>(),
        [
            "-:6:5: RA001 retry loop has no attempt limit or deadline",
            "-:9:23: RA002 constant delay between retry attempts",
            "retry-audit: 1 file checked, 0 skipped, 1 error, 1 warning",
        ]
    );
    let human = run_with(dir.path(), &["-"], &[], stdin);
    assert!(human.stdout.contains(" --> -:6:5"), "{}", human.stdout);
    assert!(
        human.stdout.contains("6 |     loop {"),
        "the source is shown: {}",
        human.stdout
    );
    let json = run_with(dir.path(), &["--format", "json", "-"], &[], stdin);
    let findings = json_lines(&json.stdout);
    assert!(findings.iter().all(|f| f["path"] == "-"), "{findings:#?}");
    let broken = run_with(
        dir.path(),
        &["--full-parse", "-"],
        &[],
        Some(b"fn broken( {\n"),
    );
    // A source that does not parse is a finding (RA000) of `-`, as a file's would be.
    assert_eq!(broken.code, Some(1), "{}", broken.stderr);
    assert!(
        skipped_lines(&broken.stderr).is_empty(),
        "{}",
        broken.stderr
    );
    assert!(
        broken.stdout.contains("error[RA000]") && broken.stdout.contains(" --> -:1:12"),
        "{}",
        broken.stdout
    );
}

#[test]
fn stdin_filename_names_standard_input_and_picks_its_settings() {
    let dir = temp();
    write(
        dir.path(),
        "retry-audit.toml",
        "[[per-path]]\npaths = [\"tests\"]\nrules = { fixed-delay = \"allow\" }\n",
    );
    let stdin = Some(UNBOUNDED_FIXED.as_bytes());
    let json = |args: &[&str]| {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        let run = run_with(dir.path(), &all, &[], stdin);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        json_lines(&run.stdout)
            .iter()
            .map(|f| format!("{} {}", f["path"].as_str().unwrap_or(""), f["rule"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        json(&["--stdin-filename", "src/lib.rs", "-"]),
        ["src/lib.rs \"RA001\"", "src/lib.rs \"RA002\""]
    );
    assert_eq!(
        json(&["--stdin-filename", "tests/it.rs", "-"]),
        ["tests/it.rs \"RA001\""],
        "the per-path entry for tests/ applies"
    );
    assert_eq!(
        json(&["--stdin-filename", "tests/it.rs"]),
        ["tests/it.rs \"RA001\""],
        "without paths, --stdin-filename reads standard input"
    );
    assert!(!dir.path().join("src").exists() && !dir.path().join("-").exists());
}

#[test]
fn standard_input_with_other_paths_is_a_usage_error() {
    let dir = project();
    for args in [
        &["-", "retry.rs"][..],
        &["retry.rs", "-"],
        &["--stdin-filename", "a.rs", "retry.rs"],
    ] {
        let run = run_with(dir.path(), args, &[], Some(b"fn f() {}\n"));
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "");
        assert!(run.stderr.contains("standard input"), "{}", run.stderr);
    }
}

#[test]
fn fix_on_standard_input_prints_the_fixed_source_and_reports_on_stderr() {
    let dir = temp();
    write(dir.path(), "charge.rs", KEY_IN_LOOP);
    let on_disk = run(dir.path(), &["--fix", "charge.rs"]);
    assert_eq!(on_disk.code, Some(0), "{}", on_disk.stderr);
    let fixed = std::fs::read_to_string(dir.path().join("charge.rs")).expect("fixed file");
    assert_ne!(fixed, KEY_IN_LOOP);

    let piped = run_with(
        dir.path(),
        &["--fix", "--stdin-filename", "charge.rs", "-"],
        &[],
        Some(KEY_IN_LOOP.as_bytes()),
    );
    assert_eq!(piped.code, Some(0), "{}", piped.stderr);
    assert_eq!(
        piped.stdout, fixed,
        "the fixed source, as --fix writes it to a file"
    );
    assert!(
        piped
            .stderr
            .contains("retry-audit: applied 1 fix to charge.rs"),
        "{}",
        piped.stderr
    );
    assert!(
        piped
            .stderr
            .ends_with("retry-audit: 1 file checked, 0 skipped, 0 errors, 0 warnings\n"),
        "the report goes to stderr: {}",
        piped.stderr
    );

    let unfixable = run_with(
        dir.path(),
        &["--fix", "-"],
        &[],
        Some(UNBOUNDED_FIXED.as_bytes()),
    );
    assert_eq!(unfixable.code, Some(1));
    assert_eq!(
        unfixable.stdout, UNBOUNDED_FIXED,
        "nothing to fix: the source unchanged"
    );
    assert!(
        unfixable.stderr.contains("error[RA001]"),
        "{}",
        unfixable.stderr
    );
    let broken = run_with(dir.path(), &["--fix", "-"], &[], Some(b"fn broken( {\n"));
    assert_eq!(broken.stdout, "fn broken( {\n");
    assert!(
        broken.stderr.contains("error[RA000]"),
        "reported on standard error: {}",
        broken.stderr
    );
    let to_file = run_with(
        dir.path(),
        &["--fix", "-o", "report.json", "--format", "json", "-"],
        &[],
        Some(UNBOUNDED_FIXED.as_bytes()),
    );
    assert_eq!(to_file.stdout, UNBOUNDED_FIXED);
    let report = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
    assert_eq!(json_lines(&report).len(), 2);

    let diff = run_with(
        dir.path(),
        &["--diff", "--stdin-filename", "src/pay.rs", "-"],
        &[],
        Some(KEY_IN_LOOP.as_bytes()),
    );
    assert_eq!(diff.code, Some(1), "{}", diff.stderr);
    assert!(
        diff.stdout
            .starts_with("--- a/src/pay.rs\n+++ b/src/pay.rs\n"),
        "{}",
        diff.stdout
    );
    assert!(!dir.path().join("-").exists() && !dir.path().join("src").exists());
}

// ---------------------------------------------------------------------- rules --format json

#[test]
fn rules_as_json_lists_id_name_level_summary_docs_and_url_of_every_rule() {
    let dir = temp();
    let text = run(dir.path(), &["rules"]);
    assert_eq!(
        run(dir.path(), &["rules", "--format", "text"]).stdout,
        text.stdout
    );
    let json = run(dir.path(), &["rules", "--format", "json"]);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let rules: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).expect("one JSON array");
    assert_eq!(rules.len(), retry_audit::Rule::ALL.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for ((entry, rule), line) in rules
        .iter()
        .zip(retry_audit::Rule::ALL)
        .zip(text.stdout.lines())
    {
        let object = entry.as_object().expect("an object per rule");
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 9, "{entry}");
        for key in ["id", "name", "level", "tier", "summary", "docs"] {
            assert!(object[key].is_string(), "{key} in {entry}");
        }
        assert_eq!(entry["id"], rule.id());
        assert_eq!(entry["name"], rule.name());
        let columns: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            entry["level"], columns[2],
            "the default level, as `rules` prints"
        );
        assert_eq!(entry["tier"], columns[3], "the tier, as `rules` prints");
        assert_eq!(entry["summary"], columns[4..].join(" "), "{line}");
        // The rule's page in the project; a URL only for a repository the manifest names.
        let docs = entry["docs"].as_str().unwrap_or_default();
        assert_eq!(docs, format!("docs/rules/{}.md", rule.id()));
        assert!(root.join(docs).is_file(), "{docs}");
        match entry["url"].as_str() {
            Some(url) => assert!(url.starts_with("https://") && url.ends_with(docs), "{url}"),
            None => assert!(entry["url"].is_null(), "{entry}"),
        }
    }
    assert_eq!(run(dir.path(), &["rules", "--format", "xml"]).code, Some(2));
    let help = run(dir.path(), &["rules", "--help"]);
    assert!(help.stdout.contains("--format <FORMAT>"), "{}", help.stdout);
    assert!(
        help.stdout
            .contains("{id, name, level, summary, docs, url}"),
        "{}",
        help.stdout
    );
}

// ---------------------------------------------------------------------------- progress bar

/// `n` files of ten retry loops each in `dir/many/`: a scan of 200 of them takes well over the
/// half second after which the bar is drawn (over a second in a debug build on one thread).
fn many_files(dir: &Path, n: usize) {
    let text: String = (0..10)
        .map(|k| {
            UNBOUNDED_FIXED
                .replace("op()", &format!("op{k}()"))
                .replace("fn fetch()", &format!("fn fetch{k}()"))
        })
        .collect();
    for i in 0..n {
        write(dir, &format!("many/{:02}/retry_{i}.rs", i % 20), &text);
    }
}

#[test]
fn no_progress_bar_when_standard_error_is_not_a_terminal() {
    let dir = temp();
    many_files(dir.path(), 200);
    for format in ["human", "concise"] {
        let run = run(dir.path(), &["-j", "1", "--format", format, "many"]);
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert_eq!(
            run.stderr, "",
            "{format}: nothing but problems on a piped stderr"
        );
        assert!(!run.stdout.contains("files/s"), "{format}");
    }
}

/// On a terminal (a pseudo-terminal made by util-linux's `script`, when it is installed) the bar
/// is drawn on stderr for people's formats, and never for a machine format or with --quiet.
#[test]
fn the_progress_bar_is_drawn_on_a_terminal_for_people_only() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("skipped: no `script` to make a terminal with");
        return;
    }
    let dir = temp();
    many_files(dir.path(), 200);
    let bin = env!("CARGO_BIN_EXE_retry-audit");
    let on_terminal = |args: &str| {
        let command = format!("{bin} -j 1 {args} many > report.txt");
        let status = Command::new("script")
            .args(["-q", "-e", "-c", &command, "terminal.txt"])
            .current_dir(dir.path())
            .env("RETRY_AUDIT_PREVIEW", "1")
            // The bar waits half a second before it shows; a fast machine scans these files
            // sooner.
            .env("RETRY_AUDIT_PROGRESS_DELAY_MS", "0")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("script runs");
        assert_eq!(status.code(), Some(1), "{args}");
        let terminal = std::fs::read(dir.path().join("terminal.txt")).expect("transcript");
        let report = std::fs::read_to_string(dir.path().join("report.txt")).expect("report");
        assert!(
            !report.contains("files/s"),
            "{args}: the bar is not in the report"
        );
        String::from_utf8_lossy(&terminal).into_owned()
    };
    let human = on_terminal("--format human");
    assert!(human.contains("/200 files, "), "{human}");
    assert!(human.contains(" files/s"), "{human}");
    assert!(on_terminal("--format concise").contains("/200 files, "));
    for args in [
        "--format json",
        "--format sarif",
        "--format cargo-json",
        "-q",
    ] {
        let shown = on_terminal(args);
        assert!(!shown.contains("files/s"), "{args}: {shown}");
    }
}

// --------------------------------------------------------------------------------- --help

/// Every convention is documented in `--help`.
#[test]
fn help_documents_the_conventions() {
    let dir = temp();
    let help = run(dir.path(), &["--help"]);
    assert_eq!(help.code, Some(0), "{}", help.stderr);
    for needle in [
        "--select <RULES>",
        "--ignore <RULES>",
        "`RA00`",
        "wins over --select",
        "--exit-zero",
        "at least 1",
        "-o, --output-file <FILE>",
        "-q, --quiet",
        "--statistics",
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "--stdin-filename <NAME>",
        "`-` (alone) reads the source from standard input",
        "shows a progress bar on standard error",
        "Exit status: 0 when nothing",
    ] {
        assert!(
            help.stdout.contains(needle),
            "--help lacks {needle}:\n{}",
            help.stdout
        );
    }
}
