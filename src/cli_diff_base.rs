//! `--diff-base REV`: report only the findings on lines changed since the git revision `REV`,
//! as `semgrep ci` does with a baseline commit, so that a pull request is judged on what it
//! changes. The changes are git's: `git diff REV` (the working tree, staged or not, against
//! `REV`) and the untracked files that are not ignored (new, so changed throughout). A finding
//! is kept when a line of its primary span is an added or changed line; the others are not
//! reported and do not count towards the exit status.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use retry_audit::report::{Outcome, ScanReport};

/// The lines changed since a revision, by file (relative to the repository's root).
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// The repository's root, absolute.
    root: PathBuf,
    files: HashMap<PathBuf, Lines>,
}

/// The changed lines of one file.
#[derive(Debug, PartialEq, Eq)]
enum Lines {
    /// A file git does not track: every line is new.
    All,
    /// 1-based inclusive ranges of added or changed lines.
    Ranges(Vec<(usize, usize)>),
}

/// Runs git in `dir`; its standard output, or what it said went wrong.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.quotePath=false"])
        .args(args)
        .output()
        .map_err(|e| format!("--diff-base needs git: cannot run it: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        Err(format!(
            "--diff-base: `git {}` failed: {}",
            args.join(" "),
            message.trim_start_matches("fatal: ").trim()
        ))
    }
}

/// The lines changed since `rev` in the repository around the current directory.
pub(crate) fn since(rev: &str) -> Result<Changes, String> {
    let here = retry_audit::source::paths::absolute(Path::new("."));
    let root = String::from_utf8_lossy(&git(&here, &["rev-parse", "--show-toplevel"])?)
        .trim()
        .to_owned();
    let root = retry_audit::source::paths::absolute(Path::new(&root));
    let commit = format!("{rev}^{{commit}}");
    git(&root, &["rev-parse", "--verify", "--quiet", &commit])
        .map_err(|_| format!("--diff-base: `{rev}` is not a commit of this repository"))?;
    let diff = git(
        &root,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--unified=0",
            rev,
            "--",
        ],
    )?;
    let mut files = parse_diff(&String::from_utf8_lossy(&diff));
    let untracked = git(&root, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    for name in untracked.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        files.insert(
            PathBuf::from(String::from_utf8_lossy(name).as_ref()),
            Lines::All,
        );
    }
    Ok(Changes { root, files })
}

/// The added lines of each file of a unified diff with no context (`--unified=0`): the new
/// side of each hunk header `@@ -a,b +c,d @@`, `d` lines from `c` (one when `,d` is left
/// out, none when it is 0).
fn parse_diff(diff: &str) -> HashMap<PathBuf, Lines> {
    let mut files: HashMap<PathBuf, Lines> = HashMap::new();
    let mut current: Option<PathBuf> = None;
    for line in diff.lines() {
        if let Some(name) = line.strip_prefix("+++ ") {
            current = new_path(name);
            if let Some(path) = &current {
                files.insert(path.clone(), Lines::Ranges(Vec::new()));
            }
        } else if let (Some(header), Some(path)) = (line.strip_prefix("@@ "), &current) {
            let Some(new) = header.split(' ').find_map(|part| part.strip_prefix('+')) else {
                continue;
            };
            let (start, count) = match new.split_once(',') {
                Some((start, count)) => (start.parse().ok(), count.parse().ok()),
                None => (new.parse().ok(), Some(1)),
            };
            if let (Some(start), Some(count), Some(Lines::Ranges(ranges))) =
                (start, count, files.get_mut(path))
            {
                if count > 0 {
                    ranges.push((start, start + count - 1));
                }
            }
        }
    }
    files
}

/// The path of the new side of a `+++` line: `b/PATH` (quoted by git when it holds a quote,
/// a backslash or a control character), none for `/dev/null` (a deleted file).
fn new_path(name: &str) -> Option<PathBuf> {
    let name = name.trim_end();
    if name == "/dev/null" {
        return None;
    }
    let unquoted = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(quoted) => unescape(quoted),
        None => name.to_owned(),
    };
    unquoted.strip_prefix("b/").map(PathBuf::from)
}

/// Git's C-style quoting of a path: `\"`, `\\`, `\t`, `\n` and octal bytes (`\303\251`).
fn unescape(quoted: &str) -> String {
    let mut bytes = Vec::with_capacity(quoted.len());
    let mut chars = quoted.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b't') => bytes.push(b'\t'),
            Some(b'n') => bytes.push(b'\n'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&next @ b'0'..=b'7') = chars.peek() {
                        value = value * 8 + u32::from(next - b'0');
                        chars.next();
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Changes {
    /// Whether the lines `first..=last` of `path` (as the scan names it) hold a change.
    fn touches(&self, path: &Path, first: usize, last: usize) -> bool {
        let absolute = retry_audit::source::paths::absolute(path);
        let Ok(relative) = absolute.strip_prefix(&self.root) else {
            return false;
        };
        match self.files.get(relative) {
            Some(Lines::All) => true,
            Some(Lines::Ranges(ranges)) => ranges.iter().any(|&(a, b)| a <= last && first <= b),
            None => false,
        }
    }

    /// Drops the findings of `report` on lines not changed; how many were dropped.
    pub(crate) fn filter(&self, report: &mut ScanReport) -> usize {
        let mut hidden = 0;
        for file in &mut report.files {
            let path = file.path.clone();
            let Outcome::Checked { diagnostics, .. } = &mut file.outcome else {
                continue;
            };
            let before = diagnostics.len();
            diagnostics.retain(|d| {
                let span = d.primary.span;
                self.touches(&path, span.start_pos.line, span.end_pos.line)
            });
            hidden += before - diagnostics.len();
        }
        hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_the_added_lines_of_each_file() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n\
                    @@ -3 +3 @@ fn f()\n-x\n+y\n@@ -10,0 +11,2 @@\n+a\n+b\n@@ -20,3 +21,0 @@\n\
                    -gone\n--- a/old.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\
                    +++ \"b/caf\\303\\251 \\\"q\\\".rs\"\n@@ -0,0 +1 @@\n+new\n";
        let files = parse_diff(diff);
        assert_eq!(
            files.get(Path::new("src/a.rs")),
            Some(&Lines::Ranges(vec![(3, 3), (11, 12)]))
        );
        assert_eq!(
            files.get(Path::new("café \"q\".rs")),
            Some(&Lines::Ranges(vec![(1, 1)]))
        );
        assert_eq!(files.len(), 2, "{files:?}");
    }
}
