//! What a ruff or clippy user meets on first use (issue 32): the defects found trying every
//! documented feature from a fresh clone, and the conventions of ruff's command line. Each test
//! runs the binary in a temporary directory, as `tests/cli.rs` does.

#![cfg(feature = "cli")]

use std::path::Path;
use std::process::{Command, Stdio};

mod support;

use support::{temp, write, Run, UNBOUNDED_FIXED};

/// The binary run in `dir` with `args`, colour variables unset.
fn run(dir: &Path, args: &[&str]) -> Run {
    Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .output()
        .expect("the retry-audit binary runs")
        .into()
}

// ------------------------------------------------------------ defect 6: --diff --write-baseline

/// `--diff` writes no baseline: asking for both is a usage error, as `--statistics --diff` is,
/// and no file is written.
#[test]
fn diff_with_write_baseline_is_a_usage_error() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(
        dir.path(),
        &["--diff", "--write-baseline", "base.json", "."],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("--write-baseline") && run.stderr.contains("--diff"),
        "{}",
        run.stderr
    );
    assert!(
        !dir.path().join("base.json").exists(),
        "no baseline written"
    );
}

// ------------------------------------------------------------- defect 7: stale temporary files

/// A `kill -9` during `--fix` leaves the temporary file of the file being written. The next
/// `--fix` that writes into that directory removes such files of processes that are gone, and
/// leaves those of a running process (this test's) alone.
#[test]
fn fix_removes_the_temporary_files_a_killed_fix_left() {
    let dir = temp();
    write(dir.path(), "pay.rs", support::KEY_IN_LOOP);
    // A process id above Linux's largest (2^22): no such process runs.
    let stale = ".pay.rs.retry-audit-4294967-0.tmp";
    let running = format!(".pay.rs.retry-audit-{}-0.tmp", std::process::id());
    let other = ".pay.rs.retry-audit-notes.tmp";
    for name in [stale, running.as_str(), other] {
        write(dir.path(), name, "half a file");
    }
    let run = run(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("listable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut kept = vec![other.to_owned(), running, "pay.rs".to_owned()];
    kept.sort();
    assert_eq!(names, kept);
}

// ------------------------------------------------------------------- defect 9: paths printed

/// Paths print as ruff and clippy print them: relative, without `./`, whether the scan starts
/// at `.` (the default), at `./src` or at `src`.
#[test]
fn paths_print_without_a_leading_dot_slash() {
    let dir = temp();
    write(dir.path(), "src/lib.rs", UNBOUNDED_FIXED);
    for args in [&[][..], &["."], &["./src"], &["src"], &["./src/lib.rs"]] {
        let mut all = vec!["--format", "concise"];
        all.extend_from_slice(args);
        let run = run(dir.path(), &all);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(
            run.stdout.starts_with("src/lib.rs:6:5: RA001 "),
            "{args:?}:\n{}",
            run.stdout
        );
    }
}

/// `cargo retry-audit` prints paths relative to the workspace root from any directory of it,
/// as cargo and clippy do, never `../src/http.rs`.
#[test]
fn cargo_retry_audit_prints_paths_from_the_workspace_root() {
    let dir = temp();
    std::fs::create_dir(dir.path().join(".git")).expect("repository marker");
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\nmembers = [\"crates/client\"]\n",
    );
    write(dir.path(), "src/http.rs", UNBOUNDED_FIXED);
    write(
        dir.path(),
        "crates/client/Cargo.toml",
        "[package]\nname = \"client\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(dir.path(), "crates/client/src/lib.rs", UNBOUNDED_FIXED);
    for at in ["", "src", "crates/client/src"] {
        let output = Command::new(env!("CARGO_BIN_EXE_cargo-retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .args(["retry-audit", "--format", "concise"])
            .current_dir(dir.path().join(at))
            .env("CARGO", dir.path().join("no-such-cargo"))
            .output()
            .expect("the binary runs");
        let run = Run::from(output);
        let paths: Vec<&str> = run
            .stdout
            .lines()
            .filter_map(|line| line.split_once(':').map(|(path, _)| path))
            .filter(|path| Path::new(path).extension().is_some_and(|e| e == "rs"))
            .collect();
        assert_eq!(
            paths,
            [
                "crates/client/src/lib.rs",
                "crates/client/src/lib.rs",
                "src/http.rs",
                "src/http.rs"
            ],
            "from {at:?}: {}",
            run.stderr
        );
    }
}

// ------------------------------------------------------------- ruff's command-line conventions

/// A retry loop with a constant sleep and a bound: RA002 only.
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

/// The `path:line:col: RULE` of each concise line, without the message and summary.
fn findings(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.starts_with("retry-audit: "))
        .filter_map(|l| {
            let mut parts = l.splitn(3, ": ");
            Some(format!(
                "{}: {}",
                parts.next()?,
                parts.next()?.split(' ').next()?
            ))
        })
        .collect()
}

/// `retry-audit check PATH...` is the scan, as `ruff check`; `--output-format` is `--format`.
#[test]
fn check_is_the_scan_and_output_format_is_format() {
    let dir = temp();
    write(dir.path(), "src/retry.rs", UNBOUNDED_FIXED);
    let plain = run(dir.path(), &["--format", "concise", "src"]);
    assert_eq!(plain.code, Some(1), "{}", plain.stderr);
    for args in [
        &["check", "--format", "concise", "src"][..],
        &["check", "--output-format", "concise", "src"],
        &["--output-format", "concise", "src"],
        &["check", "--output-format=concise"],
    ] {
        let run = run(dir.path(), args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, plain.stdout, "{args:?}");
    }
    let json = run(dir.path(), &["check", "--output-format", "json", "src"]);
    assert!(
        json.stdout.starts_with("{\"rule\":\"RA001\""),
        "{}",
        json.stdout
    );
    let help = run(dir.path(), &["--help"]);
    assert!(help.stdout.contains("  check "), "{}", help.stdout);
    assert!(help.stdout.contains("--output-format"), "{}", help.stdout);
    let check_help = run(dir.path(), &["check", "--help"]);
    assert!(
        check_help.stdout.contains("--extend-exclude"),
        "{}",
        check_help.stdout
    );
}

/// `--extend-select` adds rules to `--select`'s, as in ruff.
#[test]
fn extend_select_adds_to_select() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let run = run(
        dir.path(),
        &[
            "--format",
            "concise",
            "--select",
            "RA001",
            "--extend-select",
            "fixed-delay",
        ],
    );
    assert_eq!(
        findings(&run.stdout),
        ["retry.rs:6:5: RA001", "retry.rs:9:23: RA002"],
        "{}",
        run.stderr
    );
    let only = self::run(
        dir.path(),
        &["--format", "concise", "--extend-select", "RA002"],
    );
    assert_eq!(findings(&only.stdout).len(), 2, "all rules still run");
}

/// `--exclude` replaces the configuration's `exclude`, `--extend-exclude` adds to it (globs
/// relative to the current directory); files named on the command line are checked anyway,
/// unless `--force-exclude`, which also applies to `--stdin-filename`.
#[test]
fn exclude_extend_exclude_and_force_exclude() {
    let dir = temp();
    std::fs::create_dir(dir.path().join(".git")).expect("repository marker");
    write(dir.path(), "retry-audit.toml", "exclude = [\"vendor\"]\n");
    for file in ["a.rs", "vendor/b.rs", "gen/c.rs"] {
        write(dir.path(), file, BOUNDED_FIXED);
    }
    let files = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--format", "concise"];
        all.extend_from_slice(args);
        let run = run(dir.path(), &all);
        assert!(run.code.is_some_and(|c| c < 2), "{args:?}: {}", run.stderr);
        findings(&run.stdout)
            .iter()
            .map(|f| f.split(':').next().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(files(&[]), ["a.rs", "gen/c.rs"]);
    assert_eq!(files(&["--extend-exclude", "gen"]), ["a.rs"]);
    assert_eq!(files(&["--exclude", "gen"]), ["a.rs", "vendor/b.rs"]);
    assert_eq!(files(&["--exclude", "gen,a.rs"]), ["vendor/b.rs"]);
    assert_eq!(files(&["vendor/b.rs"]), ["vendor/b.rs"], "named: checked");
    assert!(files(&["--force-exclude", "vendor/b.rs"]).is_empty());
    assert!(files(&["--force-exclude", "vendor"]).is_empty());
    assert_eq!(files(&["--force-exclude", "vendor/b.rs", "a.rs"]), ["a.rs"]);
    let stdin = |args: &[&str]| -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        {
            use std::io::Write as _;
            let mut input = child.stdin.take().expect("stdin");
            input.write_all(BOUNDED_FIXED.as_bytes()).expect("written");
        }
        child.wait_with_output().expect("ends").into()
    };
    let named = stdin(&[
        "--format",
        "concise",
        "--stdin-filename",
        "vendor/b.rs",
        "-",
    ]);
    assert_eq!(findings(&named.stdout), ["vendor/b.rs:9:24: RA002"]);
    let forced = stdin(&[
        "--format",
        "concise",
        "--force-exclude",
        "--stdin-filename",
        "vendor/b.rs",
        "-",
    ]);
    assert_eq!(forced.code, Some(0), "{}", forced.stderr);
    assert!(findings(&forced.stdout).is_empty(), "{}", forced.stdout);
    let fixed = stdin(&[
        "--fix",
        "--force-exclude",
        "--stdin-filename",
        "vendor/b.rs",
        "-",
    ]);
    assert_eq!(
        fixed.stdout, BOUNDED_FIXED,
        "an excluded input is echoed unchanged"
    );
}

/// `--show-files` lists what would be checked; `--show-settings` what a file is checked with.
#[test]
fn show_files_and_show_settings() {
    let dir = temp();
    std::fs::create_dir(dir.path().join(".git")).expect("repository marker");
    write(
        dir.path(),
        "retry-audit.toml",
        "exclude = [\"vendor\"]\n[rules]\nfixed-delay = \"deny\"\n[extend]\nsleep-fns = [\"crate::time::pause\"]\nno-waits = [\"pass\"]\nclient-words = [\"gateway\"]\n",
    );
    for file in ["src/a.rs", "vendor/b.rs", "src/c.rs"] {
        write(dir.path(), file, BOUNDED_FIXED);
    }
    let files = run(dir.path(), &["--show-files"]);
    assert_eq!(files.code, Some(0), "{}", files.stderr);
    assert_eq!(files.stdout, "src/a.rs\nsrc/c.rs\n");
    let excluded = run(
        dir.path(),
        &["check", "--show-files", "--extend-exclude", "c.rs"],
    );
    assert_eq!(excluded.stdout, "src/a.rs\n");

    let settings = run(dir.path(), &["--show-settings", "--warn", "RA001", "src"]);
    assert_eq!(settings.code, Some(0), "{}", settings.stderr);
    let text = &settings.stdout;
    for line in [
        "Resolved settings for: src/a.rs",
        "Settings path: retry-audit.toml",
        "exclude = [\"vendor\"]",
        "RA001 unbounded-retry = \"warning\"",
        "RA002 fixed-delay = \"error\"",
        "RA003 missing-jitter = \"warning\"",
        "sleep-fns = [\"crate::time::pause\"]",
        "no-waits = [\"pass\"]",
        "client-words = [\"gateway\"]",
    ] {
        assert!(text.lines().any(|l| l.trim() == line), "{line}:\n{text}");
    }
}

// ---------------------------------------------------------------- a file that does not parse

/// A file that does not parse is a finding, RA000 `syntax-error`, at its first syntax error,
/// at error level: it fails the run (status 1) in every format, as ruff's syntax errors do.
/// Turned off, the file is skipped again, and `--strict` still fails the run for it (status 2).
#[test]
fn a_file_that_does_not_parse_is_a_finding_that_fails_the_run() {
    let dir = temp();
    // The error is in a retry loop's function, whose body is always parsed.
    write(
        dir.path(),
        "broken.rs",
        "fn fetch() -> u32 {\n    loop {\n        let x = 1 +;\n    }\n}\n",
    );
    // In a body the pre-filter leaves out: seen with --full-parse (and --strict).
    write(
        dir.path(),
        "hidden.rs",
        "fn main() {\n    let y = 2 *;\n}\n",
    );
    write(
        dir.path(),
        "ok.rs",
        "pub fn add(a: u32) -> u32 {\n    a + 1\n}\n",
    );
    let concise = run(dir.path(), &["--format", "concise"]);
    assert_eq!(concise.code, Some(1), "{}", concise.stderr);
    assert_eq!(
        concise.stdout.lines().next(),
        Some("broken.rs:3:20: RA000 file does not parse: expected an expression"),
        "{}",
        concise.stdout
    );
    assert!(concise
        .stdout
        .contains("3 files checked, 0 skipped, 1 error"));
    let full = run(dir.path(), &["--format", "json", "--full-parse"]);
    let rules: Vec<(String, u64)> = support::json_lines(&full.stdout)
        .iter()
        .map(|f| {
            (
                format!("{} {}", f["path"].as_str().unwrap_or_default(), f["rule"]),
                f["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("broken.rs \"RA000\"".to_owned(), 3),
            ("hidden.rs \"RA000\"".to_owned(), 2)
        ]
    );
    let human = run(dir.path(), &["--color", "never"]);
    assert!(
        human
            .stdout
            .starts_with("error[RA000]: file does not parse: expected an expression\n"),
        "{}",
        human.stdout
    );
    let off = run(dir.path(), &["--ignore", "RA000"]);
    assert_eq!(off.code, Some(0), "{}", off.stderr);
    assert!(
        off.stderr
            .contains("warning: skipped broken.rs:3:20: expected an expression"),
        "{}",
        off.stderr
    );
    let strict = run(dir.path(), &["--ignore", "RA000", "--strict"]);
    assert_eq!(strict.code, Some(2), "{}", strict.stderr);
}

// ------------------------------------------------------------------ concise output in colour

/// `concise` is coloured on a terminal as `human` is (the path in bold, the rule in the colour
/// of its level), as ruff colours its concise output; never in a pipe by default, never with
/// `NO_COLOR`, always with `--color always` or `CLICOLOR_FORCE`.
#[test]
fn concise_output_is_coloured_as_asked_and_honours_no_color() {
    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let with_env = |args: &[&str], env: &[(&str, &str)]| -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
            .env("RETRY_AUDIT_PREVIEW", "1")
            .args(args)
            .current_dir(dir.path())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE")
            .envs(env.iter().copied())
            .output()
            .expect("runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let always = with_env(&["--format", "concise", "--color", "always"], &[]);
    assert!(
        always.contains("\u{1b}[1mretry.rs"),
        "the path in bold: {always:?}"
    );
    assert!(
        always.contains("\u{1b}[31mRA001"),
        "RA001 in red: {always:?}"
    );
    assert!(
        always.contains("\u{1b}[33mRA002"),
        "RA002 in yellow: {always:?}"
    );
    let forced = with_env(&["--format", "concise"], &[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains('\u{1b}'), "{forced:?}");
    let plain = with_env(&["--format", "concise"], &[]);
    assert!(
        !plain.contains('\u{1b}'),
        "a pipe is not coloured: {plain:?}"
    );
    let no_color = with_env(
        &["--format", "concise"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert!(!no_color.contains('\u{1b}'), "{no_color:?}");
    assert_eq!(no_color, plain);
}

// ------------------------------------------------------------------------------------ --watch

/// `--watch` reports, then reports again when a file changes (here: the defects fixed) or a
/// file is added, until it is stopped.
#[test]
fn watch_checks_again_when_a_file_changes() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::Duration;

    let dir = temp();
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let mut child = Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--watch", "--format", "concise"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let summary = || -> String {
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .expect("a report from --watch");
            if line.starts_with("retry-audit: ") {
                return line;
            }
        }
    };
    let first = summary();
    assert!(
        first.ends_with("1 file checked, 0 skipped, 1 error, 1 warning"),
        "{first}"
    );
    write(
        dir.path(),
        "retry.rs",
        "pub fn add(a: u32) -> u32 {\n    a + 1\n}\n",
    );
    let second = summary();
    assert!(
        second.ends_with("1 file checked, 0 skipped, 0 errors, 0 warnings"),
        "{second}"
    );
    write(dir.path(), "src/new.rs", UNBOUNDED_FIXED);
    let third = summary();
    assert!(
        third.ends_with("2 files checked, 0 skipped, 1 error, 1 warning"),
        "{third}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

// ------------------------------------------------------------------------------- --diff-base

/// `--diff-base REV` reports only the findings on lines changed since `REV`: a loop added to a
/// committed file, and an untracked file, but not the committed loop above them.
#[test]
fn diff_base_reports_only_the_findings_on_changed_lines() {
    let dir = temp();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    write(dir.path(), "src/client.rs", UNBOUNDED_FIXED);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one retry loop"]);
    let added = UNBOUNDED_FIXED.replace("fn fetch()", "fn fetch_again()");
    write(
        dir.path(),
        "src/client.rs",
        format!("{UNBOUNDED_FIXED}\n{added}"),
    );
    write(dir.path(), "src/new.rs", BOUNDED_FIXED);

    let all = run(dir.path(), &["--format", "concise"]);
    assert_eq!(findings(&all.stdout).len(), 5, "{}", all.stdout);
    let changed = run(dir.path(), &["--format", "concise", "--diff-base", "HEAD"]);
    assert_eq!(changed.code, Some(1), "{}", changed.stderr);
    assert_eq!(
        findings(&changed.stdout),
        [
            "src/client.rs:19:5: RA001",
            "src/client.rs:22:23: RA002",
            "src/new.rs:9:24: RA002"
        ],
        "{}",
        changed.stderr
    );
    assert!(
        changed
            .stderr
            .contains("retry-audit: 2 findings on lines not changed since HEAD hidden"),
        "{}",
        changed.stderr
    );
    // Only the warning of the new file changed: the run passes.
    let new_only = run(
        dir.path(),
        &["--format", "concise", "--diff-base", "HEAD", "src/new.rs"],
    );
    assert_eq!(new_only.code, Some(0), "{}", new_only.stderr);
    let bad = run(dir.path(), &["--diff-base", "no-such-branch"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("`no-such-branch` is not a commit"),
        "{}",
        bad.stderr
    );
}

// ------------------------------------------------------------------------ defect 10: rule URLs

/// The rules' documentation ships with the project: one page per rule, `docs/rules/RA002.md`,
/// which `rules --format json` names (`docs`) and which is what `explain` prints. A URL is
/// given only where the manifest names the repository the pages are in; never a page that
/// does not exist (the crate's crates.io page, with no crate published).
#[test]
fn rule_documentation_points_to_pages_that_exist() {
    let dir = temp();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = run(dir.path(), &["rules", "--format", "json"]);
    assert_eq!(rules.code, Some(0), "{}", rules.stderr);
    assert!(!rules.stdout.contains("crates.io"), "{}", rules.stdout);
    let entries: serde_json::Value = serde_json::from_str(&rules.stdout).expect("JSON");
    for entry in entries.as_array().expect("an array") {
        let id = entry["id"].as_str().expect("an id");
        let page = format!("docs/rules/{id}.md");
        assert_eq!(entry["docs"], page.as_str(), "{entry}");
        let text = std::fs::read_to_string(root.join(&page)).expect("the rule's page exists");
        let explain = run(dir.path(), &["explain", id]);
        assert_eq!(explain.stdout, text, "`explain {id}` prints {page}");
        match option_env!("CARGO_PKG_REPOSITORY").filter(|r| !r.is_empty()) {
            Some(repository) => assert!(
                entry["url"]
                    .as_str()
                    .is_some_and(|u| u.starts_with(repository) && u.ends_with(&page)),
                "{entry}"
            ),
            None => assert!(entry["url"].is_null(), "no repository, no URL: {entry}"),
        }
    }
    write(dir.path(), "retry.rs", UNBOUNDED_FIXED);
    let sarif = run(dir.path(), &["--format", "sarif", "retry.rs"]);
    assert!(!sarif.stdout.contains("crates.io"), "{}", sarif.stdout);
}

/// Every convention of issue 32 is in `--help` (and `check --help`).
#[test]
fn help_documents_the_conventions_of_ruff() {
    let dir = temp();
    for args in [&["--help"][..], &["check", "--help"]] {
        let help = run(dir.path(), args);
        assert_eq!(help.code, Some(0), "{}", help.stderr);
        for needle in [
            "--output-format",
            "--extend-select <RULES>",
            "--exclude <PATTERNS>",
            "--extend-exclude <PATTERNS>",
            "--force-exclude",
            "--show-files",
            "--show-settings",
            "-w, --watch",
            "--diff-base <REV>",
            "(`human` and `concise`)",
            "`retry-audit check [OPTIONS] [PATHS]...` is the same as",
            "RA000 (syntax-error)",
        ] {
            assert!(
                help.stdout.contains(needle),
                "{args:?} lacks {needle}:\n{}",
                help.stdout
            );
        }
    }
    let top = run(dir.path(), &["--help"]);
    assert!(top.stdout.contains("  check "), "{}", top.stdout);
}
