//! `--fix` and `--diff` on real files: a fixed file parses and no longer has the finding; a
//! diff changes nothing and applies cleanly with `patch`; files that do not parse, files without
//! fixes and files changed while the fix was being written are left alone.
//!
//! A change "between read and write" is simulated through the library's
//! `fix::write_if_unchanged_with_hook`, whose hook runs after the temporary file is written and
//! just before the final comparison and rename: the same code path `--fix` takes.

#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use retry_audit::fix::{self, WriteError};
use retry_audit::{check_source, Rule, Settings};

mod support;

use support::KEY_IN_LOOP;

/// RA005 without a mechanical fix: the key is made inline in the request.
const INLINE_KEY: &str = r#"async fn charge(client: &Client, order: &Order) -> Result<Receipt, Error> {
    for attempt in 0..3u32 {
        let resp = client
            .post("https://pay.example/charges")
            .header("Idempotency-Key", Uuid::new_v4().to_string())
            .json(order)
            .send()
            .await;
        if let Ok(r) = resp {
            return Ok(r.json().await?);
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..(100 << attempt)))).await;
    }
    Err(Error::GaveUp)
}
"#;

/// RA001 (no limit), which has no fix.
const UNBOUNDED: &str = r"fn fetch(client: &Client) -> Result<Body, Error> {
    loop {
        match client.get() {
            Ok(body) => return Ok(body),
            Err(_) => std::thread::sleep(jittered()),
        }
    }
}
";

const CLEAN: &str = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";

fn retry_audit(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retry-audit"))
        .env("RETRY_AUDIT_PREVIEW", "1")
        .args(["--color", "never"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn rules_in(src: &str) -> Vec<Rule> {
    check_source(src, &Settings::preview())
        .expect("parses")
        .into_iter()
        .map(|d| d.rule)
        .collect()
}

/// Writes a file and dates it in the past, so that any rewrite shows in its mtime.
fn write_old(path: &Path, contents: &str) {
    fs::write(path, contents).expect("written");
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(old))
        .expect("mtime set");
}

/// Bytes and modification time: what "untouched" means.
fn snapshot(path: &Path) -> (Vec<u8>, SystemTime) {
    let bytes = fs::read(path).expect("readable");
    let mtime = fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime");
    (bytes, mtime)
}

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .expect("listable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_fixed_file_parses_and_no_longer_triggers_the_rule() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pay.rs");
    write_old(&file, KEY_IN_LOOP);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).expect("chmod");
    }
    assert_eq!(rules_in(KEY_IN_LOOP), [Rule::KeyInLoop]);

    let out = retry_audit(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "nothing is left to report:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("applied 1 fix to 1 file"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("0 errors, 0 warnings"));

    let fixed = fs::read_to_string(&file).expect("readable");
    assert_ne!(fixed, KEY_IN_LOOP);
    assert!(
        syn::parse_file(&fixed).is_ok(),
        "the fixed file parses:\n{fixed}"
    );
    assert!(
        fixed.contains(
            "    let idempotency_key = Uuid::new_v4().to_string();\n    for attempt in 0..3u32 {"
        ),
        "{fixed}"
    );
    assert!(rules_in(&fixed).is_empty(), "{fixed}");
    // Atomic replacement leaves no temporary file behind, and keeps the permissions.
    assert_eq!(names(dir.path()), ["pay.rs"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&file).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    // A second run has nothing to fix and writes nothing.
    let before = snapshot(&file);
    let out = retry_audit(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out.stderr).contains("applied"));
    assert_eq!(snapshot(&file), before);
}

#[test]
fn crlf_and_a_byte_order_mark_survive_the_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pay.rs");
    let original = format!("\u{feff}{}", KEY_IN_LOOP.replace('\n', "\r\n"));
    fs::write(&file, &original).expect("written");

    let out = retry_audit(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let fixed = fs::read_to_string(&file).expect("readable");
    assert!(fixed.starts_with('\u{feff}'));
    assert!(
        !fixed.replace("\r\n", "").contains('\n'),
        "every line break is still CRLF: {fixed:?}"
    );
    assert_eq!(
        fixed.replace("\r\n", "\n").trim_start_matches('\u{feff}'),
        KEY_IN_LOOP
            .replace(
                "        let idempotency_key = Uuid::new_v4().to_string();\n",
                ""
            )
            .replace(
                "    for attempt",
                "    let idempotency_key = Uuid::new_v4().to_string();\n    for attempt"
            )
    );
    assert!(rules_in(&fixed).is_empty());
}

#[test]
fn diff_changes_nothing_and_prints_a_patch_that_applies() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pay.rs");
    write_old(&file, KEY_IN_LOOP);
    let before = snapshot(&file);

    let out = retry_audit(dir.path(), &["--diff", "pay.rs"]);
    assert_eq!(out.status.code(), Some(1), "there is something to fix");
    assert_eq!(snapshot(&file), before, "--diff writes nothing");
    assert_eq!(names(dir.path()), ["pay.rs"]);
    let diff = text(&out.stdout);
    assert!(
        diff.starts_with("--- a/pay.rs\n+++ b/pay.rs\n@@ -1,6 +1,6 @@\n"),
        "{diff}"
    );
    assert!(diff.contains("\n+    let idempotency_key = Uuid::new_v4().to_string();\n"));
    assert!(diff.contains("\n-        let idempotency_key = Uuid::new_v4().to_string();\n"));
    assert!(text(&out.stderr).contains("1 fix would be applied to 1 file"));

    // The diff is exactly what --fix does: apply it with patch(1) to a copy, fix another copy.
    let patched = tempfile::tempdir().expect("temp dir");
    fs::write(patched.path().join("pay.rs"), KEY_IN_LOOP).expect("written");
    let mut patch = Command::new("patch")
        .args(["-p1", "--quiet"])
        .current_dir(patched.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("patch(1) runs");
    std::io::Write::write_all(&mut patch.stdin.take().expect("stdin"), diff.as_bytes())
        .expect("diff sent");
    assert!(patch.wait().expect("patch ends").success());
    let fixed = retry_audit(dir.path(), &["--fix", "pay.rs"]);
    assert_eq!(fixed.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(patched.path().join("pay.rs")).expect("readable"),
        fs::read_to_string(&file).expect("readable")
    );

    // Nothing left to fix: no diff, exit status 0.
    let out = retry_audit(dir.path(), &["--diff", "pay.rs"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_file_that_does_not_parse_is_not_touched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("broken.rs");
    // The defect is there, but the file does not parse (a `}` too many at the end).
    write_old(&broken, &format!("{KEY_IN_LOOP}}}\n"));
    let good = dir.path().join("good.rs");
    write_old(&good, KEY_IN_LOOP);
    let before = snapshot(&broken);

    let out = retry_audit(dir.path(), &["--fix", "."]);
    let stderr = text(&out.stderr);
    // What is left to report: the file that does not parse, as RA000.
    assert!(
        text(&out.stdout).contains("error[RA000]: file does not parse"),
        "{}",
        text(&out.stdout)
    );
    assert!(stderr.contains("applied 1 fix to 1 file"), "{stderr}");
    assert_eq!(
        snapshot(&broken),
        before,
        "the unparseable file is untouched"
    );
    assert!(rules_in(&fs::read_to_string(&good).expect("readable")).is_empty());

    let out = retry_audit(dir.path(), &["--diff", "broken.rs"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "nothing to fix in a file that does not parse"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn files_without_fixes_are_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = [
        ("fixable.rs", KEY_IN_LOOP),
        ("inline_key.rs", INLINE_KEY),
        ("unbounded.rs", UNBOUNDED),
        ("clean.rs", CLEAN),
    ];
    for (name, src) in files {
        write_old(&dir.path().join(name), src);
    }
    // Their requests' every error is retried too (RA004, which has no fix).
    assert_eq!(
        rules_in(INLINE_KEY),
        [Rule::RetriesClientError, Rule::KeyInLoop]
    );
    assert_eq!(
        rules_in(UNBOUNDED),
        [Rule::UnboundedRetry, Rule::RetriesClientError]
    );
    let before: Vec<_> = files[1..]
        .iter()
        .map(|(name, _)| snapshot(&dir.path().join(name)))
        .collect();

    let out = retry_audit(dir.path(), &["--fix", "--format", "json", "."]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "RA005 (inline), RA001 and their RA004s remain, at error level"
    );
    let remaining = text(&out.stdout);
    assert_eq!(remaining.lines().count(), 4, "{remaining}");
    assert!(remaining.contains("inline_key.rs") && remaining.contains("unbounded.rs"));
    assert!(!remaining.contains("fixable.rs"));

    let after: Vec<_> = files[1..]
        .iter()
        .map(|(name, _)| snapshot(&dir.path().join(name)))
        .collect();
    assert_eq!(after, before, "bytes and mtimes of files without fixes");
    assert_ne!(
        fs::read_to_string(dir.path().join("fixable.rs")).expect("readable"),
        KEY_IN_LOOP
    );
}

#[test]
fn a_file_changed_while_the_fix_is_written_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pay.rs");
    fs::write(&file, KEY_IN_LOOP).expect("written");
    let fixed = fix::fix_source(KEY_IN_LOOP, None, &Settings::preview()).expect("parses");
    assert!(fixed.changed());

    let edited = format!("{KEY_IN_LOOP}// saved by an editor meanwhile\n");
    let result = fix::write_if_unchanged_with_hook(
        &file,
        KEY_IN_LOOP.as_bytes(),
        fixed.text.as_bytes(),
        &mut |path| fs::write(path, &edited).expect("concurrent write"),
    );
    assert!(matches!(result, Err(WriteError::Changed)), "{result:?}");
    assert_eq!(
        fs::read_to_string(&file).expect("readable"),
        edited,
        "the concurrent edit is kept, the fix is not written"
    );
    assert_eq!(names(dir.path()), ["pay.rs"], "no temporary file left");

    // Changed before the write started (the bytes differ from those the fix came from).
    let result = fix::write_if_unchanged(&file, KEY_IN_LOOP.as_bytes(), fixed.text.as_bytes());
    assert!(matches!(result, Err(WriteError::Changed)), "{result:?}");
    assert_eq!(fs::read_to_string(&file).expect("readable"), edited);

    // Unchanged: written.
    fix::write_if_unchanged(&file, edited.as_bytes(), fixed.text.as_bytes()).expect("written");
    assert_eq!(fs::read_to_string(&file).expect("readable"), fixed.text);
    assert_eq!(names(dir.path()), ["pay.rs"]);
}

#[test]
fn a_read_only_file_is_not_fixed_and_the_run_fails() {
    let dir = tempfile::tempdir().expect("temp dir");
    let locked = dir.path().join("locked.rs");
    write_old(&locked, KEY_IN_LOOP);
    let mut read_only = fs::metadata(&locked).expect("metadata").permissions();
    read_only.set_readonly(true);
    fs::set_permissions(&locked, read_only).expect("chmod 0444");
    let open = dir.path().join("open.rs");
    write_old(&open, KEY_IN_LOOP);
    let before = snapshot(&locked);

    // Whoever runs it (root may write to a 0444 file): the permission bits are the answer.
    let out = retry_audit(dir.path(), &["--fix", "."]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: not fixed locked.rs: the file is read-only"),
        "{stderr}"
    );
    assert!(stderr.contains("applied 1 fix to 1 file"), "{stderr}");
    assert_eq!(snapshot(&locked), before, "the read-only file is untouched");
    assert!(fs::metadata(&locked)
        .expect("metadata")
        .permissions()
        .readonly());
    assert!(rules_in(&fs::read_to_string(&open).expect("readable")).is_empty());
    assert_eq!(
        names(dir.path()),
        ["locked.rs", "open.rs"],
        "no temporary file left"
    );
    // What is left is reported: the finding of the file not fixed.
    assert!(
        text(&out.stdout).contains("locked.rs"),
        "{}",
        text(&out.stdout)
    );

    // The library refuses too, before writing anything.
    let fixed = fix::fix_source(KEY_IN_LOOP, None, &Settings::preview()).expect("parses");
    let result = fix::write_if_unchanged(&locked, KEY_IN_LOOP.as_bytes(), fixed.text.as_bytes());
    assert!(matches!(result, Err(WriteError::ReadOnly)), "{result:?}");
    assert_eq!(snapshot(&locked), before);
    assert_eq!(names(dir.path()), ["locked.rs", "open.rs"]);

    // `--diff` writes nothing, so a read-only file is no obstacle to it.
    let diff = retry_audit(dir.path(), &["--diff", "locked.rs"]);
    assert_eq!(diff.status.code(), Some(1), "{}", text(&diff.stderr));
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_followed_and_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("real.rs");
    fs::write(&target, KEY_IN_LOOP).expect("written");
    let link = dir.path().join("link.rs");
    std::os::unix::fs::symlink("real.rs", &link).expect("symlink");

    let out = retry_audit(dir.path(), &["--fix", "link.rs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(rules_in(&fs::read_to_string(&target).expect("readable")).is_empty());
}

#[test]
fn fix_and_diff_together_are_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(dir.path().join("pay.rs"), KEY_IN_LOOP).expect("written");
    let out = retry_audit(dir.path(), &["--fix", "--diff", "pay.rs"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fs::read_to_string(dir.path().join("pay.rs")).expect("readable"),
        KEY_IN_LOOP
    );
}

#[test]
fn fixes_follow_the_configuration_of_each_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).expect(".git");
    fs::create_dir(dir.path().join("legacy")).expect("legacy");
    fs::write(
        dir.path().join("retry-audit.toml"),
        "[[per-path]]\npaths = [\"legacy\"]\nrules = { key-in-loop = \"allow\" }\n",
    )
    .expect("config written");
    let legacy = dir.path().join("legacy/pay.rs");
    write_old(&legacy, KEY_IN_LOOP);
    let current = dir.path().join("pay.rs");
    write_old(&current, KEY_IN_LOOP);
    let before = snapshot(&legacy);

    let out = retry_audit(dir.path(), &["--fix", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("applied 1 fix to 1 file"));
    assert_eq!(snapshot(&legacy), before, "RA005 is allowed under legacy/");
    assert!(rules_in(&fs::read_to_string(&current).expect("readable")).is_empty());
}
