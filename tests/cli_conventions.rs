//! The conventions users of ruff, clippy and cargo expect (issue 14): rule selection, exit and
//! output flags, standard input, colour from the environment, and the `-j` check. Each test runs
//! the binary in a temporary directory, as `tests/cli.rs` does.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

mod support;

use support::{json_lines, skipped_lines, temp, write, Run, KEY_IN_LOOP};

/// A retry loop with no attempt limit and a constant one-second sleep: RA001 (error) and RA002
/// (warning).
const UNBOUNDED_FIXED: &str = "\
fn op() -> Result<u32, ()> {
    Err(())
}

fn fetch() -> u32 {
    loop {
        match op() {
            Ok(v) => return v,
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    }
}
";

/// The binary run in `dir` with `args`, the colour variables unset, `env` set and `stdin` fed.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retry-audit"));
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
        pipe.write_all(input).expect("stdin written");
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
    write(dir.path(), "broken.rs", "fn broken( {\n");
    let strict = run(
        dir.path(),
        &["--exit-zero", "--strict", "broken.rs", "retry.rs"],
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
    ] {
        assert!(
            help.stdout.contains(needle),
            "--help lacks {needle}:\n{}",
            help.stdout
        );
    }
}
