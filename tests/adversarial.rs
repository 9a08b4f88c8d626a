//! Hostile input for the `retry-audit` binary, beyond what `tests/cli.rs` covers (empty,
//! non-UTF-8, 100 000 nested parentheses, 50 MB, gitignore, symlink loops): nesting by blocks
//! and closures, files that vanish or turn unreadable mid-scan, 100 000 empty files, paths
//! with spaces and non-ASCII names, CRLF and a byte-order mark with exact JSON positions,
//! `--strict`, the regression inputs the fuzzer found (`tests/adversarial/`), and, ignored by
//! default but run by `.ci/run`, a whole dependency graph (pinned by `tests/corpus/Cargo.lock`,
//! vendored with cargo; `RETRY_AUDIT_CORPUS=DIR` scans another):
//!
//! ```text
//! cargo test --release --test adversarial -- --ignored --nocapture
//! ```
//!
//! Each problem file is reported with a clear reason and the scan goes on; the exit status is
//! that of the findings (0 or 1), or 2 with `--strict` when a file was skipped.

#![cfg(feature = "cli")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;

use support::{json_lines, skipped_lines, temp, write, Run};

/// A retry loop with no bound and a fixed sleep: RA001 on `loop`, RA002 on the sleep call.
const RETRY: &str = "\
fn op() -> Result<u32, ()> {
    Err(())
}

fn fetch() -> u32 {
    /* réessayer, 重试 */ loop {
        match op() {
            Ok(v) => return v,
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    }
}
";

const CLEAN: &str = "fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";

fn binary(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retry-audit"));
    command.env("RETRY_AUDIT_PREVIEW", "1");
    command.current_dir(dir).env_remove("NO_COLOR");
    command
}

fn run(dir: &Path, args: &[&str]) -> Run {
    binary(dir)
        .args(args)
        .output()
        .expect("the retry-audit binary runs")
        .into()
}

/// The summary line's counts: (checked, skipped).
fn summary(output: &str) -> (usize, usize) {
    let line = output
        .lines()
        .find(|l| l.starts_with("retry-audit: ") && l.contains(" checked, "))
        .unwrap_or_else(|| panic!("no summary line in {output}"));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

// ------------------------------------------------------------------------------- nesting

#[test]
fn a_hundred_thousand_nested_blocks_or_closures_are_skipped_and_the_scan_goes_on() {
    let dir = temp();
    let depth = 100_000;
    write(
        dir.path(),
        "blocks.rs",
        format!("fn f() {{ {}1{} }}\n", "{".repeat(depth), "}".repeat(depth)),
    );
    write(
        dir.path(),
        "closures.rs",
        format!(
            "fn f() {{ let _ = {}1{}; }}\n",
            "|| (".repeat(depth),
            ")".repeat(depth)
        ),
    );
    write(
        dir.path(),
        "loops.rs",
        format!(
            "fn f() {{ {}{} }}\n",
            "loop { ".repeat(depth),
            "} ".repeat(depth)
        ),
    );
    write(dir.path(), "retry.rs", RETRY);
    let run = run(dir.path(), &["--format", "json"]);
    assert_eq!(
        run.code,
        Some(1),
        "the findings of retry.rs: {}",
        run.stderr
    );
    assert_eq!(
        skipped_lines(&run.stderr),
        [
            "warning: skipped blocks.rs: too deeply nested to analyse",
            "warning: skipped closures.rs: too deeply nested to analyse",
            "warning: skipped loops.rs: too deeply nested to analyse",
        ]
    );
    assert_eq!(summary(&run.stderr), (1, 3));
    let findings = json_lines(&run.stdout);
    assert!(
        findings.iter().all(|f| f["path"] == "retry.rs"),
        "{findings:?}"
    );
}

#[test]
fn chains_written_without_brackets_are_as_deep_as_nesting_and_skipped_the_same_way() {
    // Each of these once overflowed the parser's or the syntax tree's stack and aborted the
    // whole scan: the tree is as deep as the chain, whatever the brackets say.
    let dir = temp();
    let n = 200_000;
    let body = |expr: String| format!("fn f() {{ loop {{ let x = {expr}; sleep(d); }} }}\n");
    write(dir.path(), "a_sum.rs", body(vec!["a"; n].join(" + ")));
    write(
        dir.path(),
        "b_methods.rs",
        body(format!("a{}", ".b()".repeat(n))),
    );
    write(
        dir.path(),
        "c_generics.rs",
        format!("type T = {}u8{};\n", "Option<".repeat(n), ">".repeat(n)),
    );
    write(
        dir.path(),
        "d_else_if.rs",
        body(format!(
            "if a {{ 1 }} {}else {{ 2 }}",
            "else if a { 1 } ".repeat(n)
        )),
    );
    write(
        dir.path(),
        "e_references.rs",
        format!("type T = {}u8;\n", "&".repeat(n)),
    );
    write(dir.path(), "retry.rs", RETRY);
    let run = run(dir.path(), &["--format", "json", "--full-parse"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(
        skipped_lines(&run.stderr),
        [
            "warning: skipped a_sum.rs: too deeply nested to analyse",
            "warning: skipped b_methods.rs: too deeply nested to analyse",
            "warning: skipped c_generics.rs: too deeply nested to analyse",
            "warning: skipped d_else_if.rs: too deeply nested to analyse",
            "warning: skipped e_references.rs: too deeply nested to analyse",
        ]
    );
    assert_eq!(summary(&run.stderr), (1, 5));
}

#[test]
fn a_match_of_thousands_of_arms_in_a_retry_loop_is_analysed_not_skipped() {
    // Generated code can be this big, and parts of the analysis grow faster than the number of
    // arms: within its work budget, the loop is read whole and its 4xx arms found.
    let dir = temp();
    let arms: String = (0..4_000)
        .map(|i| match i % 3 {
            0 => format!(
                "            Err(e) if e.status() == Some({}) => std::thread::sleep(DELAY),\n",
                400 + i % 200
            ),
            1 => format!("            Err(Error::Code({i})) => return 0,\n"),
            _ => format!("            Err(Error::Io({i})) => continue,\n"),
        })
        .collect();
    write(
        dir.path(),
        "arms.rs",
        format!(
            "fn f() -> u32 {{\n    loop {{\n        match op() {{\n            Ok(v) => return v,\n\
             {arms}            Err(_) => std::thread::sleep(DELAY),\n        }}\n    }}\n}}\n"
        ),
    );
    let run = run(dir.path(), &["--format", "json", "arms.rs"]);
    assert_eq!(
        skipped_lines(&run.stderr),
        Vec::<&str>::new(),
        "{}",
        run.stderr
    );
    assert_eq!(summary(&run.stderr), (1, 0));
    let rules: std::collections::BTreeSet<String> = json_lines(&run.stdout)
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(rules.contains("RA004"), "{rules:?}");
}

#[test]
fn a_helper_of_thousands_of_lines_called_by_many_retries_is_not_read_once_per_call() {
    // A fuzzer's find: a function of thousands of lines (a `match` of thousands of arms) that
    // a hundred retry loops call for their wait. Each call used to read the whole body again
    // (seconds of analysis for a file that parses in a blink); the body is now too long to be
    // read for its callers' facts, so its wait is unknown to them, and the file costs about what
    // the same file costs with a one-arm helper. Compared within this run, not with a clock.
    let dir = temp();
    let file = |arms: usize| {
        use std::fmt::Write as _;
        let mut text = String::from(
            "fn pause_for(attempt: u32) -> u64 {\n    match classify(attempt) {\n        Ok(v) => v,\n",
        );
        for i in 0..arms {
            let _ = writeln!(text, "        Err(Error::Code({i})) => {i} as u64,");
        }
        text.push_str("        Err(_) => 1,\n    }\n}\n");
        for i in 0..100 {
            let _ = writeln!(
                text,
                "fn call_{i}() -> u32 {{\n    loop {{\n        match op() {{\n            \
                 Ok(v) => return v,\n            Err(_) => std::thread::sleep(\
                 std::time::Duration::from_millis(pause_for({i}))),\n        }}\n    }}\n}}"
            );
        }
        text
    };
    write(dir.path(), "long.rs", file(8_000));
    write(dir.path(), "short.rs", file(1));
    let timed = |name: &str| {
        let started = Instant::now();
        let run = run(dir.path(), &["--format", "json", name]);
        let took = started.elapsed();
        assert_eq!(
            skipped_lines(&run.stderr),
            Vec::<&str>::new(),
            "{}",
            run.stderr
        );
        let unbounded = json_lines(&run.stdout)
            .iter()
            .filter(|f| f["rule"] == "RA001")
            .count();
        assert_eq!(unbounded, 100, "{name}: {}", run.stdout);
        took
    };
    let short = timed("short.rs");
    let long = timed("long.rs");
    assert!(
        long < short * 10 + Duration::from_secs(1),
        "the long helper took {long:?}, the short one {short:?}"
    );
}

#[test]
fn a_hundred_bare_loops_around_a_retry_are_analysed_not_skipped() {
    // `loop { loop { .. } }` a hundred deep (a fuzzer's find, a small and shallow file): the
    // outer loops do nothing of their own, and judging each of them would read the retry inside
    // a hundred times. The innermost is judged, within the work budget.
    let dir = temp();
    write(
        dir.path(),
        "bare.rs",
        format!(
            "fn f() -> u32 {{\n{}\n    loop {{\n        match op() {{\n            Ok(v) => return v,\n\
             \x20           Err(_) => std::thread::sleep(DELAY),\n        }}\n    }}\n{}\n}}\n",
            "loop {".repeat(100),
            "}".repeat(100)
        ),
    );
    let run = run(dir.path(), &["--format", "json", "--preview", "bare.rs"]);
    assert_eq!(
        skipped_lines(&run.stderr),
        Vec::<&str>::new(),
        "{}",
        run.stderr
    );
    let rules: std::collections::BTreeSet<String> = json_lines(&run.stdout)
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(rules.contains("RA002"), "{rules:?}");
}

#[test]
fn a_file_too_complex_to_analyse_is_skipped_with_its_path_and_the_scan_goes_on() {
    // Shallow enough to parse (a syntax depth under the limit), but 3 000 calls nested in each
    // other inside a retry loop: the analysis of each call looks at the whole call inside it,
    // and the file's work budget runs out.
    let dir = temp();
    let n = 3_000;
    write(
        dir.path(),
        "nested_calls.rs",
        format!(
            "fn f() -> u32 {{\n    loop {{\n        let x = {}a{};\n        match op() {{\n            \
             Ok(v) => return v,\n            Err(_) => std::thread::sleep(DELAY),\n        }}\n    \
             }}\n}}\n",
            "g(".repeat(n),
            ")".repeat(n)
        ),
    );
    write(dir.path(), "retry.rs", RETRY);
    let run = run(dir.path(), &["--format", "json", "--stats"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(
        skipped_lines(&run.stderr),
        [
            "warning: skipped nested_calls.rs: too complex to analyse: its analysis takes more \
          than 1000 steps per byte"
        ]
    );
    assert_eq!(summary(&run.stderr), (1, 1));
    assert!(
        run.stderr.contains("1 too complex"),
        "--stats counts it: {}",
        run.stderr
    );
    let findings = json_lines(&run.stdout);
    assert!(
        !findings.is_empty() && findings.iter().all(|f| f["path"] == "retry.rs"),
        "{findings:?}"
    );
}

#[test]
fn nesting_just_under_the_limit_is_analysed_not_skipped() {
    // Deep, but real: a thousand nested closures and blocks around a retry loop. The parser and
    // the model recurse on the scan's big-stack threads and find the loop.
    let dir = temp();
    let depth = 900;
    let inner = "loop { match op() { Ok(v) => return v, Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)) } }";
    write(
        dir.path(),
        "deep.rs",
        format!(
            "fn op() -> Result<u32, ()> {{ Ok(1) }}\nfn f() -> u32 {{\n{}{inner}{}\n}}\n",
            "{ (|| { ".repeat(depth / 2),
            " })() }".repeat(depth / 2)
        ),
    );
    let run = run(dir.path(), &["--format", "json", "deep.rs"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(skipped_lines(&run.stderr), Vec::<&str>::new());
    let findings = json_lines(&run.stdout);
    assert!(
        findings.iter().any(|f| f["rule"] == "RA001"),
        "{}",
        run.stdout
    );
}

// ----------------------------------------------------------- files changing during the scan

/// Waits until the process `pid` has a thread named `name`: the scan's worker threads start
/// only once the directory walk is over.
#[cfg(target_os = "linux")]
fn wait_for_thread(child: &mut std::process::Child, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let tasks = PathBuf::from(format!("/proc/{}/task", child.id()));
    loop {
        let found = fs::read_dir(&tasks)
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name)
            });
        if found {
            return;
        }
        assert!(
            child.try_wait().expect("poll the child").is_none(),
            "the scan ended before its workers were seen"
        );
        assert!(Instant::now() < deadline, "no thread {name} after 60 s");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn files_that_vanish_or_become_unreadable_during_the_scan_are_skipped_with_a_reason() {
    use std::fmt::Write as _;

    let dir = temp();
    // A crate's files are all read before any is analysed, so the files that change are in a
    // crate of their own (`z/`) checked after the loose file `a_slow.rs` (one worker, crates in
    // path order, files outside any crate first), which is slow enough (a few hundred
    // milliseconds, seconds in a debug build) for them to change meanwhile.
    let mut slow = String::new();
    for i in 0..12_000 {
        writeln!(
            slow,
            "fn item_{i}(x: u32) -> Result<u32, ()> {{ if x > {i} {{ Ok(x) }} else {{ Err(()) }} }}"
        )
        .expect("write to a String");
    }
    write(dir.path(), "a_slow.rs", slow);
    let krate = dir.path().join("z");
    fs::create_dir(&krate).expect("mkdir");
    write(&krate, "Cargo.toml", "[package]\nname = \"z\"\n");
    write(&krate, "b_vanishes.rs", CLEAN);
    write(&krate, "c_becomes_a_directory.rs", CLEAN);
    write(&krate, "d_stays.rs", RETRY);

    let mut child = binary(dir.path())
        .args(["--jobs", "1", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start retry-audit");
    wait_for_thread(&mut child, "retry-audit-0");
    // The walk has listed all four; now two of z's go away before they are read. (Reading a
    // directory fails for root too, unlike a file without read permission.)
    fs::remove_file(krate.join("b_vanishes.rs")).expect("remove");
    fs::remove_file(krate.join("c_becomes_a_directory.rs")).expect("remove");
    fs::create_dir(krate.join("c_becomes_a_directory.rs")).expect("mkdir");
    let run: Run = child
        .wait_with_output()
        .expect("wait for retry-audit")
        .into();

    assert_eq!(
        run.code,
        Some(1),
        "the findings of d_stays.rs: {}",
        run.stderr
    );
    let skipped = skipped_lines(&run.stderr);
    assert_eq!(skipped.len(), 2, "{}", run.stderr);
    assert!(
        skipped[0].starts_with("warning: skipped z/b_vanishes.rs: cannot read: ")
            && skipped[0].contains("No such file or directory"),
        "{}",
        skipped[0]
    );
    assert!(
        skipped[1].starts_with("warning: skipped z/c_becomes_a_directory.rs: cannot read: ")
            && skipped[1].contains("directory"),
        "{}",
        skipped[1]
    );
    assert_eq!(summary(&run.stderr), (2, 2));
    let findings = json_lines(&run.stdout);
    assert!(
        !findings.is_empty() && findings.iter().all(|f| f["path"] == "z/d_stays.rs"),
        "{findings:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_skipped_with_the_error_or_read_by_root() {
    use std::os::unix::fs::PermissionsExt;

    let dir = temp();
    write(dir.path(), "a_locked.rs", RETRY);
    write(dir.path(), "b_open.rs", CLEAN);
    let locked = dir.path().join("a_locked.rs");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod 000");
    // Root reads it anyway (CI runs as root); anyone else gets "permission denied".
    let readable = fs::read(&locked).is_ok();
    let run = run(dir.path(), &["--format", "json"]);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o644)).expect("chmod back");
    assert_eq!(run.code, Some(i32::from(readable)), "{}", run.stderr);
    if readable {
        assert_eq!(summary(&run.stderr), (2, 0));
    } else {
        assert_eq!(
            skipped_lines(&run.stderr),
            ["warning: skipped a_locked.rs: cannot read: Permission denied (os error 13)"]
        );
        assert_eq!(summary(&run.stderr), (1, 1));
    }
}

// --------------------------------------------------------------------------- many files

#[test]
fn a_directory_of_a_hundred_thousand_empty_files() {
    // In memory where there is a tmpfs: creating and deleting 100 000 files on a loaded disk
    // takes longer than scanning them.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap_or_else(|_| temp())
    } else {
        temp()
    };
    let files = dir.path().join("many");
    fs::create_dir(&files).expect("mkdir");
    let start = Instant::now();
    for i in 0..100_000 {
        fs::write(files.join(format!("f{i:06}.rs")), "").expect("create an empty file");
    }
    let created = start.elapsed();
    let start = Instant::now();
    let run = run(dir.path(), &["many"]);
    let scanned = start.elapsed();
    eprintln!("100 000 empty files: created in {created:?}, scanned in {scanned:?}");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "retry-audit: 100000 files checked, 0 skipped, 0 errors, 0 warnings\n"
    );
    // About a second on two cores in a debug build; a per-file cost gone quadratic would not be.
    assert!(scanned < Duration::from_secs(60), "{scanned:?}");
}

// ------------------------------------------------------------------------- one huge file

/// The peak resident memory of a running process (`VmHWM`, Linux), in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "seconds in a release build, minutes in a debug one: cargo test --release --test adversarial -- --ignored"]
fn a_generated_file_of_126_000_retry_loops_is_checked_in_under_a_gibibyte() {
    // Issue 32: a generated 22 MB file of 126 000 small retry loops took 3.0 GB (syn's tree of
    // the whole file is about a hundred times its text) and minutes (each loop's calls were
    // looked up in a list of every retrying function). Now its bodies are parsed a window at a
    // time and the lookup is by name.
    if !Path::new("/proc/self/status").is_file() {
        eprintln!("no /proc: the peak memory of a process is not read on this system");
        return;
    }
    let dir = temp();
    let mut text =
        String::from("use std::time::Duration;\nfn op(i: u32) -> Result<u32, String> { Ok(i) }\n");
    for i in 0..126_000 {
        std::fmt::Write::write_fmt(
            &mut text,
            format_args!(
                "fn r{i}() -> u32 {{\n    loop {{\n        match op({i}) {{\n            \
                 Ok(v) => return v,\n            \
                 Err(_) => std::thread::sleep(Duration::from_secs(1)),\n        }}\n    }}\n}}\n"
            ),
        )
        .expect("a String takes any text");
    }
    assert!(text.len() > 20_000_000, "{}", text.len());
    write(dir.path(), "generated.rs", &text);
    drop(text);
    let out = dir.path().join("out.jsonl");
    let started = Instant::now();
    let mut child = binary(dir.path())
        .args(["--format", "json", "--stats", "generated.rs"])
        .stdout(fs::File::create(&out).expect("output file"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the retry-audit binary runs");
    // The high-water mark only grows: the last reading before the process ends is its peak.
    let mut peak = 0;
    while child.try_wait().expect("waitable").is_none() {
        if let Some(kib) = peak_kib(child.id()) {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().expect("finished");
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!(
        "126 000 loops, 22 MB: {:?}, peak {} MiB\n{stderr}",
        started.elapsed(),
        peak / 1024
    );
    assert_eq!(summary(&stderr), (1, 0), "{stderr}");
    let findings = fs::read_to_string(&out).expect("output");
    for rule in ["RA001", "RA002"] {
        let n = findings
            .lines()
            .filter(|l| l.contains(&format!("\"rule\":\"{rule}\"")))
            .count();
        assert_eq!(n, 126_000, "one {rule} per loop (no limit, a fixed sleep)");
    }
    assert!(stderr.contains(" windows of function bodies"), "{stderr}");
    assert!(peak > 0, "the peak was read");
    assert!(peak < 1024 * 1024, "peak {} MiB", peak / 1024);
}

// ------------------------------------------------------------------------------- paths

#[test]
fn paths_with_spaces_and_non_ascii_names() {
    let dir = temp();
    write(dir.path(), "my project/src/réessai ✓/retry loop.rs", RETRY);
    write(dir.path(), "my project/src/réessai ✓/cassé — 1.rs", "fn (");
    write(dir.path(), "my project/src/重试.rs", CLEAN);

    let run = run(dir.path(), &["--format", "json", "my project"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert!(!findings.is_empty());
    // The file that does not parse is a finding (RA000) at its syntax error.
    let (broken, others): (Vec<_>, Vec<_>) = findings.iter().partition(|f| f["rule"] == "RA000");
    for finding in &others {
        assert_eq!(finding["path"], "my project/src/réessai ✓/retry loop.rs");
    }
    assert_eq!(broken.len(), 1, "{findings:?}");
    assert_eq!(broken[0]["path"], "my project/src/réessai ✓/cassé — 1.rs");
    assert_eq!(
        (broken[0]["line"].as_u64(), broken[0]["column"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(
        broken[0]["message"],
        "file does not parse: cannot tokenize the file: `(` is never closed"
    );
    assert!(skipped_lines(&run.stderr).is_empty(), "{}", run.stderr);
    assert_eq!(summary(&run.stderr), (3, 0));

    // Named explicitly, in human output.
    let human = self::run(dir.path(), &["my project/src/réessai ✓/retry loop.rs"]);
    assert_eq!(human.code, Some(1), "{}", human.stderr);
    assert!(
        human
            .stdout
            .contains(" --> my project/src/réessai ✓/retry loop.rs:6:25"),
        "{}",
        human.stdout
    );
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_checked_and_shown_lossily() {
    use std::os::unix::ffi::OsStrExt;

    let dir = temp();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.rs");
    fs::write(dir.path().join(name), RETRY).expect("write");
    write(dir.path(), "latin1.rs", b"fn caf\xe9() {}\n");
    let run = run(dir.path(), &["--format", "json", "."]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let findings = json_lines(&run.stdout);
    assert!(!findings.is_empty());
    assert!(
        findings.iter().all(|f| f["path"] == "caf\u{fffd}.rs"),
        "{findings:?}"
    );
    assert_eq!(summary(&run.stderr), (1, 1));
}

// ------------------------------------------------------------------ CRLF and byte-order mark

/// 1-based line and column (in characters) of the `nth` occurrence of `needle` in `text`.
fn position(text: &str, needle: &str, nth: usize) -> (u64, u64) {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in the text"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line as u64, column as u64)
}

/// `(line, column, end_line, end_column)` of a JSON object.
fn span_of(value: &Value) -> (u64, u64, u64, u64) {
    let get = |key: &str| {
        value[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key} in {value}"))
    };
    (
        get("line"),
        get("column"),
        get("end_line"),
        get("end_column"),
    )
}

#[test]
fn crlf_and_a_byte_order_mark_keep_columns_and_spans_exact_in_json() {
    // The positions the findings must have, from the LF text: RA001 on `loop` (after a
    // comment with non-ASCII letters on the same line), its label on `Err(_)`; RA002 on the
    // whole sleep call, its label on `loop`.
    let sleep_call = "std::thread::sleep(std::time::Duration::from_secs(1))";
    let at = |needle: &str, len: usize| {
        let (line, column) = position(RETRY, needle, 0);
        (line, column, line, column + len as u64)
    };
    let loop_kw = at("loop", 4);
    let err_arm = at("Err(_) =>", "Err(_)".len());
    let sleep = at(sleep_call, sleep_call.chars().count());
    assert_eq!(loop_kw, (6, 25, 6, 29), "the fixture itself");

    let crlf = RETRY.replace('\n', "\r\n");
    let variants = [
        ("lf.rs", RETRY.to_owned()),
        ("crlf.rs", crlf.clone()),
        ("bom_lf.rs", format!("\u{feff}{RETRY}")),
        ("bom_crlf.rs", format!("\u{feff}{crlf}")),
    ];
    let dir = temp();
    for (name, text) in &variants {
        write(dir.path(), name, text);
    }
    for (name, _) in &variants {
        let run = run(dir.path(), &["--format", "json", name]);
        assert_eq!(run.code, Some(1), "{name}: {}", run.stderr);
        let findings = json_lines(&run.stdout);
        let rule = |id: &str| {
            let matching: Vec<&Value> = findings.iter().filter(|f| f["rule"] == id).collect();
            assert_eq!(matching.len(), 1, "{name}: one {id} in {findings:?}");
            matching[0].clone()
        };
        let unbounded = rule("RA001");
        assert_eq!(span_of(&unbounded), loop_kw, "{name}: RA001");
        assert_eq!(
            span_of(&unbounded["labels"][0]),
            err_arm,
            "{name}: RA001 label"
        );
        let fixed = rule("RA002");
        assert_eq!(span_of(&fixed), sleep, "{name}: RA002");
        assert_eq!(span_of(&fixed["labels"][0]), loop_kw, "{name}: RA002 label");
    }
}

#[test]
fn a_finding_on_the_first_line_after_a_byte_order_mark() {
    // The BOM is not a column: `loop` is at column 17 of line 1 with or without it.
    let one_line = "fn f() -> u32 { loop { match op() { Ok(v) => return v, Err(_) => \
                    std::thread::sleep(std::time::Duration::from_secs(1)) } } }\r\n\
                    fn op() -> Result<u32, ()> { Ok(1) }\r\n";
    let dir = temp();
    write(dir.path(), "bom.rs", format!("\u{feff}{one_line}"));
    let run = run(dir.path(), &["--format", "json", "bom.rs"]);
    let findings = json_lines(&run.stdout);
    let unbounded = findings
        .iter()
        .find(|f| f["rule"] == "RA001")
        .expect("RA001");
    assert_eq!(span_of(unbounded), (1, 17, 1, 21));
}

/// The human output's `-->` line names the same line and column as the JSON: the human renderer
/// (codespan) must not count the byte-order mark as a column of line 1.
#[test]
fn human_output_columns_after_a_byte_order_mark_match_json() {
    let one_line = "fn f() -> u32 { loop { match op() { Ok(v) => return v, Err(_) => \
                    std::thread::sleep(std::time::Duration::from_secs(1)) } } }\n\
                    fn op() -> Result<u32, ()> { Ok(1) }\n";
    let dir = temp();
    write(dir.path(), "bom.rs", format!("\u{feff}{one_line}"));
    let human = run(dir.path(), &["--color", "never", "bom.rs"]);
    assert!(
        human.stdout.contains(" --> bom.rs:1:17\n"),
        "{}",
        human.stdout
    );
}

// ------------------------------------------------------------------------------ --strict

#[test]
fn strict_turns_a_skipped_file_into_exit_status_two_after_the_full_report() {
    let dir = temp();
    write(dir.path(), "a_retry.rs", RETRY);
    write(dir.path(), "b_latin1.rs", b"fn caf\xe9() {}\n");
    write(dir.path(), "c_latin1.rs", b"fn caf\xe9() {}\n");
    write(dir.path(), "d_clean.rs", CLEAN);

    let lenient = run(dir.path(), &["--format", "json"]);
    assert_eq!(lenient.code, Some(1), "findings at error level");
    let strict = run(dir.path(), &["--format", "json", "--strict"]);
    assert_eq!(strict.code, Some(2), "{}", strict.stderr);
    // Everything is still reported: the same findings, the same skipped files, and then why
    // the run failed.
    assert_eq!(strict.stdout, lenient.stdout);
    assert_eq!(
        skipped_lines(&strict.stderr),
        skipped_lines(&lenient.stderr)
    );
    assert_eq!(skipped_lines(&strict.stderr).len(), 2);
    assert_eq!(
        strict.stderr.lines().last(),
        Some("error: 2 files could not be checked (--strict)")
    );

    // Only skipped files: 0 without --strict, 2 with it (human output too).
    let only_broken = ["b_latin1.rs", "d_clean.rs"];
    assert_eq!(run(dir.path(), &only_broken).code, Some(0));
    let strict_human = run(dir.path(), &["--strict", only_broken[0], only_broken[1]]);
    assert_eq!(strict_human.code, Some(2));
    assert!(strict_human
        .stdout
        .ends_with("retry-audit: 1 file checked, 1 skipped, 0 errors, 0 warnings\n"));
    assert_eq!(
        strict_human.stderr.lines().last(),
        Some("error: 1 file could not be checked (--strict)")
    );
}

#[test]
fn writing_a_baseline_lists_skipped_files_and_strict_fails_after_writing_it() {
    let dir = temp();
    write(dir.path(), "a_retry.rs", RETRY);
    write(dir.path(), "b_latin1.rs", b"fn caf\xe9() {}\n");

    let lenient = run(dir.path(), &["--write-baseline", "lenient.json"]);
    assert_eq!(lenient.code, Some(0), "{}", lenient.stderr);
    assert_eq!(
        skipped_lines(&lenient.stderr).len(),
        1,
        "{}",
        lenient.stderr
    );

    let strict = run(dir.path(), &["--strict", "--write-baseline", "strict.json"]);
    assert_eq!(strict.code, Some(2), "{}", strict.stderr);
    assert_eq!(
        skipped_lines(&strict.stderr),
        skipped_lines(&lenient.stderr)
    );
    assert_eq!(
        strict.stderr.lines().last(),
        Some("error: 1 file could not be checked (--strict)")
    );
    // The baseline is written all the same, with the finding of the file that was checked.
    let written = fs::read_to_string(dir.path().join("strict.json")).expect("baseline written");
    assert_eq!(
        written,
        fs::read_to_string(dir.path().join("lenient.json")).expect("baseline written")
    );
    assert!(written.contains("a_retry.rs"), "{written}");
}

#[test]
fn strict_changes_nothing_when_every_file_is_checked() {
    let dir = temp();
    write(dir.path(), "retry.rs", RETRY);
    write(dir.path(), "clean.rs", CLEAN);
    assert_eq!(run(dir.path(), &["--strict", "clean.rs"]).code, Some(0));
    let run = run(dir.path(), &["--strict", "retry.rs", "clean.rs"]);
    assert_eq!(run.code, Some(1));
    assert!(!run.stderr.contains("--strict"), "{}", run.stderr);
}

// ------------------------------------------------------------------ fuzzer regression inputs

/// The `.rs` files directly under `dir`, sorted.
fn inputs_in(dir: &Path) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    inputs.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    inputs.sort();
    inputs
}

/// Scans one input the fuzzer found (reduced): it is checked or skipped with a reason, never
/// an internal error; with `spans`, every finding's span also ends where or after it starts.
fn check_regression_input(input: &Path, spans: bool) {
    let dir = input.parent().expect("a file in a directory");
    let run = run(dir, &["--format", "json", &input.display().to_string()]);
    let name = input.display();
    assert!(matches!(run.code, Some(0 | 1)), "{name}: {}", run.stderr);
    assert!(
        !run.stderr.contains("internal error"),
        "{name}: {}",
        run.stderr
    );
    let (checked, skipped) = summary(&run.stderr);
    assert_eq!(checked + skipped, 1, "{name}");
    assert_eq!(skipped_lines(&run.stderr).len(), skipped, "{name}");
    if spans {
        for finding in json_lines(&run.stdout) {
            let (line, column, end_line, end_column) = span_of(&finding);
            assert!(
                (line, column) <= (end_line, end_column),
                "{name}: a span that ends before it starts: {finding}"
            );
        }
    }
}

fn adversarial_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversarial")
}

/// Inputs the fuzzer found: those whose bug is fixed sit in `tests/adversarial/` and must be
/// handled correctly; those in `tests/adversarial/known/` (none at the moment) still show a bug
/// in their spans but must not crash the scan either. Move a file up with its fix.
#[test]
fn fuzzer_regression_inputs_are_handled() {
    let fixed = inputs_in(&adversarial_dir());
    let known = inputs_in(&adversarial_dir().join("known"));
    assert!(
        !fixed.is_empty() || !known.is_empty(),
        "no regression input"
    );
    for input in &fixed {
        check_regression_input(input, true);
    }
    for input in &known {
        check_regression_input(input, false);
    }
}

// ------------------------------------------------------------------------- the corpus

/// `.rs` files as the scan's walker finds them in a tree without ignore files: regular files
/// (symbolic links not followed), hidden entries and `target` directories left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && name != "target" {
            rust_files(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The corpus: `RETRY_AUDIT_CORPUS`, or else the dependency graph pinned by
/// `tests/corpus/Cargo.lock` (about 430 crates, 17 000 files, 6.3 M lines), vendored with cargo
/// into the target directory once per lock file.
fn corpus() -> PathBuf {
    if let Some(dir) = std::env::var_os("RETRY_AUDIT_CORPUS") {
        return PathBuf::from(dir);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let lock = fs::read(manifest.join("Cargo.lock")).expect("tests/corpus/Cargo.lock");
    let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-graph");
    let stamp = dest.join(".vendored-from");
    if fs::read(&stamp).ok().as_deref() != Some(&lock[..]) {
        let _ = fs::remove_dir_all(&dest);
        let status = Command::new(env!("CARGO"))
            .args(["vendor", "--locked", "--versioned-dirs", "--quiet"])
            .arg(&dest)
            .current_dir(&manifest)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run cargo vendor");
        assert!(
            status.success(),
            "cargo vendor in {} failed",
            manifest.display()
        );
        fs::write(&stamp, &lock).expect("mark the corpus vendored");
    }
    dest
}

/// Scans the whole corpus as a user would (`args` added) and checks that it ends: exit status
/// 0 or 1, no panic of the analysis, every `.rs` file checked or listed as skipped with a
/// reason. Prints the counts and the skipped files by reason.
fn scan_whole_corpus(corpus: &Path, expected: usize, args: &[&str]) {
    let start = Instant::now();
    let run: Run = binary(corpus)
        .args(["--format", "json"])
        .args(args)
        .arg(".")
        .output()
        .expect("run retry-audit over the corpus")
        .into();
    let took = start.elapsed();

    assert!(
        matches!(run.code, Some(0 | 1)),
        "{args:?}: exit status {:?} (an abort is none, or 134): {}",
        run.code,
        run.stderr
    );
    assert!(
        !run.stderr.contains("internal error"),
        "{args:?}: a panic in the analysis:\n{}",
        run.stderr
            .lines()
            .filter(|l| l.contains("internal error"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let (checked, skipped) = summary(&run.stderr);
    assert_eq!(
        checked + skipped,
        expected,
        "{args:?}: every .rs file is either checked or listed as skipped"
    );
    let skipped_list = skipped_lines(&run.stderr);
    assert_eq!(skipped_list.len(), skipped, "one line per skipped file");
    let mut reasons = std::collections::BTreeMap::<String, Vec<&str>>::new();
    for line in &skipped_list {
        let rest = &line["warning: skipped ".len()..];
        // `path: reason` or `path:line:col: reason`; the reason is never empty.
        let (path, reason) = rest
            .split_once(".rs: ")
            .or_else(|| {
                rest.split_once(".rs:")
                    .and_then(|(p, r)| r.split_once(": ").map(|(_, r)| (p, r)))
            })
            .unwrap_or_else(|| panic!("no reason in {line}"));
        assert!(!reason.trim().is_empty(), "no reason in {line}");
        let kind: String = reason.chars().take(40).collect();
        reasons.entry(kind).or_default().push(path);
    }
    let findings = run.stdout.lines().count();
    eprintln!(
        "corpus {} {args:?}: {expected} files ({checked} checked, {skipped} skipped), {findings} \
         findings, {took:.1?}",
        corpus.display(),
    );
    for (reason, paths) in &reasons {
        eprintln!("  {:6}  {reason}", paths.len());
        for path in paths.iter().take(5) {
            eprintln!("            {path}.rs");
        }
    }
}

#[test]
#[ignore = "minutes: vendors and scans a whole dependency graph (6.3 M lines); run by .ci/run: cargo test --release --test adversarial -- --ignored --nocapture"]
fn the_whole_corpus_without_a_panic_and_every_skipped_file_with_a_reason() {
    let corpus = corpus();
    let mut expected = Vec::new();
    rust_files(&corpus, &mut expected);
    assert!(
        expected.len() > 10_000,
        "{} .rs files under {}: not the corpus",
        expected.len(),
        corpus.display()
    );
    // As a user runs it, and with every function body parsed and analysed.
    scan_whole_corpus(&corpus, expected.len(), &[]);
    scan_whole_corpus(&corpus, expected.len(), &["--full-parse"]);
}
