//! Applying the machine-applicable fixes that findings carry ([`Diagnostic::fix`]): in memory
//! ([`fix_source`]), as a unified diff ([`unified_diff`]) and on disk ([`write_if_unchanged`]).
//!
//! A fix is applied only when the file parsed before and still parses after it; edits of
//! different fixes that overlap are not applied together (the later fix waits for the next
//! round, computed on the fixed text). Files are replaced atomically: the new text goes to a
//! temporary file in the same directory, which is synced and then renamed over the original,
//! and only if the original's bytes are still those the fix was computed from. The temporary
//! file of a run killed in between is removed by the next fix written to that directory.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::Rule;
use crate::checks::Settings;
use crate::pipeline::engine;
use crate::report::FileError;
use crate::source::Edit;

/// The most check-and-fix rounds run on one file. A round applies every fix that does not
/// overlap an earlier one; overlapping fixes are recomputed on the new text and applied in the
/// next round.
pub const MAX_ROUNDS: usize = 10;

/// What fixing one file's text gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixOutcome {
    /// The text with every fix that could be applied.
    pub text: String,
    /// How many fixes were applied, over all rounds.
    pub applied: usize,
    /// The findings of `text` (what is left after fixing).
    pub remaining: Vec<Diagnostic>,
    /// Rules whose fix would have left the file unparseable; these fixes were not applied.
    pub rejected: Vec<Rule>,
}

impl FixOutcome {
    /// Whether the text differs from what it was made from.
    #[must_use]
    pub fn changed(&self) -> bool {
        self.applied > 0
    }
}

/// Applies the fixes of `diagnostics` (findings of `src`) to `src`, in file order. A fix is left
/// out whole when one of its edits overlaps an edit of a fix already taken, or when an edit does
/// not fit the text (out of range, not on a character boundary). Returns the new text and the
/// number of fixes applied.
#[must_use]
pub fn apply_fixes(src: &str, diagnostics: &[Diagnostic]) -> (String, usize) {
    let mut taken: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    for fix in diagnostics.iter().filter_map(|d| d.fix.as_ref()) {
        let fits = fix.edits.iter().all(|e| {
            e.start <= e.end
                && e.end <= src.len()
                && src.is_char_boundary(e.start)
                && src.is_char_boundary(e.end)
        });
        let clashes = fix.edits.iter().enumerate().any(|(i, a)| {
            fix.edits[..i].iter().any(|b| overlap(a, b)) || taken.iter().any(|b| overlap(a, b))
        });
        if fits && !clashes && !fix.edits.is_empty() {
            taken.extend(&fix.edits);
            applied += 1;
        }
    }
    // Insertions at one offset keep the order of their fixes and come before a replacement that
    // starts there.
    let mut order: Vec<(usize, &Edit)> = taken.into_iter().enumerate().collect();
    order.sort_by_key(|(i, e)| (e.start, e.end, *i));
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for (_, e) in order {
        out.push_str(&src[at..e.start]);
        out.push_str(&replacement(src, e));
        at = e.end;
    }
    out.push_str(&src[at..]);
    (out, applied)
}

/// The text an edit puts in: its replacement, with line breaks made `\r\n` when the line it
/// starts on ends in `\r\n` (so that a CRLF file stays CRLF).
#[must_use]
pub fn replacement<'e>(src: &str, edit: &'e Edit) -> Cow<'e, str> {
    let text = &edit.replacement;
    let line_end = src
        .get(edit.start..)
        .and_then(|rest| rest.find('\n').map(|i| edit.start + i));
    let crlf = line_end.is_some_and(|i| i > 0 && src.as_bytes()[i - 1] == b'\r');
    if !crlf || !text.contains('\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    Cow::Owned(out)
}

/// Whether two edits cannot both be applied: their ranges share a byte, or one inserts strictly
/// inside the range the other replaces.
fn overlap(a: &Edit, b: &Edit) -> bool {
    if a.start == a.end || b.start == b.end {
        let (ins, other) = if a.start == a.end { (a, b) } else { (b, a) };
        other.start < ins.start && ins.start < other.end
    } else {
        a.start < b.end && b.start < a.end
    }
}

/// Fixes `src`, whose findings are `diagnostics`, in rounds of at most [`MAX_ROUNDS`]: applies
/// the fixes, re-checks the new text (on a thread with a large stack), and goes on with the
/// fixes found in it. A round whose result does not parse is dropped and ends the fixing.
///
/// `diagnostics` are normally those of a scan just made; `settings` are the settings that scan
/// used. Fails only when `src` itself cannot be analysed.
pub fn fix_source(
    src: &str,
    diagnostics: Option<Vec<Diagnostic>>,
    settings: &Settings,
) -> Result<FixOutcome, FileError> {
    let mut remaining = match diagnostics {
        Some(d) => d,
        None => engine::check_source(src, settings)?,
    };
    let mut text = src.to_owned();
    let mut applied = 0;
    let mut rejected = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let (next, n) = apply_fixes(&text, &remaining);
        if n == 0 || next == text {
            break;
        }
        if let Ok(found) = engine::check_source(&next, settings) {
            text = next;
            applied += n;
            remaining = found;
        } else {
            rejected.extend(remaining.iter().filter(|d| d.fix.is_some()).map(|d| d.rule));
            rejected.dedup();
            break;
        }
    }
    Ok(FixOutcome {
        text,
        applied,
        remaining,
        rejected,
    })
}

/// Why a fixed file was not written.
#[derive(Debug)]
pub enum WriteError {
    /// The file's bytes are no longer those the fix was computed from (an editor saved it, a
    /// formatter ran, ...). Nothing was written.
    Changed,
    /// The file is read-only (no write permission bit is set). Nothing was written: replacing
    /// it by a rename would go round its permissions, and root could write to it directly.
    ReadOnly,
    /// Reading, writing, syncing or renaming failed. The original file is intact.
    Io(io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Changed => f.write_str("the file changed since it was read; not fixed"),
            WriteError::ReadOnly => f.write_str("the file is read-only"),
            WriteError::Io(e) => write!(f, "cannot write the fix: {e}"),
        }
    }
}

impl std::error::Error for WriteError {}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

/// Replaces the contents of `path` with `new`, atomically, if they are still `expected`.
///
/// A read-only file (no write permission bit set) is not replaced, whoever runs this:
/// [`WriteError::ReadOnly`]. The new bytes are written to a temporary file in the same
/// directory (so the rename cannot cross file systems), given the original's permissions and
/// synced to disk; then the original
/// is read again and, if it still holds `expected`, the temporary file is renamed over it and the
/// directory is synced. A reader sees the old file or the new one, never a mix; on any failure
/// the original is left as it was and the temporary file is removed. A symbolic link is followed:
/// the file it points to is replaced and the link stays.
///
/// The last comparison and the rename are two steps: a write landing between them is lost. That
/// window is as short as the file system allows without locks that editors do not take.
pub fn write_if_unchanged(path: &Path, expected: &[u8], new: &[u8]) -> Result<(), WriteError> {
    write_if_unchanged_with_hook(path, expected, new, &mut |_| {})
}

/// [`write_if_unchanged`] with a hook called just before the final comparison, with the path of
/// the file about to be replaced. For tests: a hook that modifies the file shows that a change
/// made while the fix was being written is detected and the fix refused.
#[doc(hidden)]
pub fn write_if_unchanged_with_hook(
    path: &Path,
    expected: &[u8],
    new: &[u8],
    before_rename: &mut dyn FnMut(&Path),
) -> Result<(), WriteError> {
    let target = fs::canonicalize(path)?;
    let metadata = fs::metadata(&target)?;
    if !metadata.is_file() {
        return Err(WriteError::Io(io::Error::other("not a regular file")));
    }
    // The rename below needs only the directory to be writable, and root may write anything:
    // the file's own permission bits decide.
    if metadata.permissions().readonly() {
        return Err(WriteError::ReadOnly);
    }
    if fs::read(&target)? != expected {
        return Err(WriteError::Changed);
    }
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::other("the file has no parent directory"))?;
    remove_stale_temps(dir);
    let (mut file, temp) = create_temp(dir, &target)?;
    file.write_all(new)?;
    fs::set_permissions(temp.path(), metadata.permissions())?;
    file.sync_all()?;
    drop(file);
    before_rename(&target);
    if fs::read(&target)? != expected {
        return Err(WriteError::Changed);
    }
    fs::rename(temp.path(), &target)?;
    temp.disarm();
    sync_dir(dir);
    Ok(())
}

/// A temporary file that is removed when dropped, unless disarmed (renamed into place).
struct TempPath(Option<PathBuf>);

impl TempPath {
    fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// The temporary files of [`create_temp`] are named `.{file}.retry-audit-{pid}-{n}.tmp`.
const TEMP_MARK: &str = ".retry-audit-";
const TEMP_SUFFIX: &str = ".tmp";

/// The process id in the name of one of our temporary files, if `name` is one.
fn temp_owner(name: &str) -> Option<u32> {
    let stem = name.strip_prefix('.')?.strip_suffix(TEMP_SUFFIX)?;
    let (_, ids) = stem.rsplit_once(TEMP_MARK)?;
    let (pid, n) = ids.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n)).then(|| pid.parse().ok())?
}

/// How old a temporary file must be to be taken for a leftover where it cannot be told whether
/// the process that made it still runs. A fix is written in well under a second.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Whether the temporary file `path`, made by process `pid`, was left by a process that ended
/// without removing it (killed while writing a fix): on Linux, no process `pid` runs; elsewhere
/// (no `/proc`), the file is older than [`STALE_AFTER`]. Our own files are never stale.
fn is_stale_temp(path: &Path, pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return !proc.join(pid.to_string()).exists();
    }
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER)
}

/// Removes, once per directory and run, the temporary files that a fix killed before it could
/// clean up left in `dir` (see [`is_stale_temp`]). Best effort: a file that cannot be listed or
/// removed stays.
fn remove_stale_temps(dir: &Path) {
    static CLEANED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    {
        let mut cleaned = CLEANED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cleaned.iter().any(|d| d == dir) {
            return;
        }
        cleaned.push(dir.to_path_buf());
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && is_stale_temp(&entry.path(), pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Creates a new, empty, hidden file next to `target`, readable and writable by the owner only
/// until the original's permissions are copied onto it.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(File, TempPath)> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut last_error = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!(
            ".{name}{TEMP_MARK}{}-{n}{TEMP_SUFFIX}",
            std::process::id()
        ));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&candidate) {
            Ok(file) => return Ok((file, TempPath(Some(candidate)))),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("cannot create a temporary file")))
}

/// Makes a rename durable (Unix: sync the directory entry). Best effort: some file systems
/// refuse to sync a directory, and the rename itself has happened either way.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Lines of context around each change in [`unified_diff`].
pub const CONTEXT: usize = 3;

/// A unified diff (as `diff -u` and `git diff` print it) turning `old` into `new`, headed
/// `--- {old_label}` and `+++ {new_label}`; empty when the texts are equal. Lines keep their
/// endings (a CRLF file gives CRLF lines); a last line without a newline is followed by
/// `\ No newline at end of file`.
#[must_use]
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let script = diff_lines(&a, &b);
    if script.iter().all(|op| matches!(op, Op::Equal)) {
        return String::new();
    }
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    for hunk in hunks(&script) {
        write_hunk(&mut out, &a, &b, &script, hunk);
    }
    out
}

/// One step of an edit script over lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// The next line of both texts is the same.
    Equal,
    /// The next old line is removed.
    Delete,
    /// The next new line is added.
    Insert,
}

/// A shortest edit script from `a` to `b` (Myers' algorithm), after stripping the common prefix
/// and suffix. Time and memory grow with the number of differing lines, which for fixes is small.
fn diff_lines(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut script = vec![Op::Equal; prefix];
    script.extend(myers(ma, mb));
    script.extend(std::iter::repeat_n(Op::Equal, suffix));
    script
}

// Line counts are far below `isize::MAX`; the signed diagonals convert back losslessly.
#[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)]
fn myers(old: &[&str], new: &[&str]) -> Vec<Op> {
    let (old_len, new_len) = (old.len() as isize, new.len() as isize);
    let max = old_len + new_len;
    if max == 0 {
        return Vec::new();
    }
    // reach[k + max] = the furthest x reached on diagonal k. Before round d, the part of it that round
    // d reads (diagonals -d..=d) is kept for the way back: memory grows with d², not with the length.
    let at = |k: isize| (k + max) as usize;
    let mut reach = vec![0isize; (2 * max + 1) as usize];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    'rounds: for d in 0..=max {
        trace.push(reach[at(-d)..=at(d)].to_vec());
        for k in (-d..=d).step_by(2) {
            let mut x = if k == -d || (k != d && reach[at(k - 1)] < reach[at(k + 1)]) {
                reach[at(k + 1)]
            } else {
                reach[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < old_len && y < new_len && old[x as usize] == new[y as usize] {
                x += 1;
                y += 1;
            }
            reach[at(k)] = x;
            if x >= old_len && y >= new_len {
                break 'rounds;
            }
        }
    }
    let mut ops = Vec::new();
    let (mut x, mut y) = (old_len, new_len);
    for (d, snapshot) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let get = |k: isize| snapshot[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let (prev_x, prev_y) = if d == 0 {
            (0, 0)
        } else {
            let px = get(prev_k);
            (px, px - prev_k)
        };
        while x > prev_x && y > prev_y {
            ops.push(Op::Equal);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            ops.push(if x == prev_x { Op::Insert } else { Op::Delete });
        }
        x = prev_x;
        y = prev_y;
    }
    ops.reverse();
    ops
}

/// Ranges of the script, each a change with up to [`CONTEXT`] equal lines on either side;
/// changes closer than twice that share a hunk.
fn hunks(script: &[Op]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i < script.len() {
        if script[i] == Op::Equal {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < script.len() && script[end] != Op::Equal {
            end += 1;
        }
        let start = i.saturating_sub(CONTEXT);
        let stop = (end + CONTEXT).min(script.len());
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = stop,
            _ => out.push(start..stop),
        }
        i = end;
    }
    out
}

fn write_hunk(
    out: &mut String,
    a: &[&str],
    b: &[&str],
    script: &[Op],
    hunk: std::ops::Range<usize>,
) {
    // Line indices at the start of the hunk.
    let (mut ia, mut ib) = (0, 0);
    for op in &script[..hunk.start] {
        match op {
            Op::Equal => {
                ia += 1;
                ib += 1;
            }
            Op::Delete => ia += 1,
            Op::Insert => ib += 1,
        }
    }
    let ops = &script[hunk];
    let len_a = ops.iter().filter(|o| **o != Op::Insert).count();
    let len_b = ops.iter().filter(|o| **o != Op::Delete).count();
    out.push_str("@@ -");
    out.push_str(&hunk_range(ia, len_a));
    out.push_str(" +");
    out.push_str(&hunk_range(ib, len_b));
    out.push_str(" @@\n");
    for op in ops {
        let (sign, line) = match op {
            Op::Equal => {
                ia += 1;
                ib += 1;
                (' ', a[ia - 1])
            }
            Op::Delete => {
                ia += 1;
                ('-', a[ia - 1])
            }
            Op::Insert => {
                ib += 1;
                ('+', b[ib - 1])
            }
        };
        out.push(sign);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// `start,len` of a hunk header: 1-based, and for an empty range the line before it.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// What `--fix` and `--diff` do with the fixes of a scan.
#[cfg(feature = "cli")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Write the fixed files in place ([`write_if_unchanged`]).
    Write,
    /// Print a unified diff per file; write nothing.
    Diff,
}

/// Totals of [`fix_report`].
#[cfg(feature = "cli")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FixSummary {
    /// Fixes applied (or, for a diff, that would be).
    pub fixes: usize,
    /// Files written (or, for a diff, that would be).
    pub files: usize,
    /// Files with fixes that were not written: changed since read, unwritable, or a fix that
    /// would have broken the syntax.
    pub failed: usize,
    /// Of those, the files whose fixed text could not be written: read-only, or an I/O error
    /// (`error: not fixed PATH: ...`). The run fails.
    pub unwritten: usize,
}

/// Applies the fixes of every file of `report` (the result of scanning with `options`) that
/// has any: with [`Mode::Diff`] the diffs go to `out`; with [`Mode::Write`] the files are
/// replaced. Each file is checked again with the settings the scan gave it (its configuration's
/// per-path levels included). Problems with single files are
/// written to `log` and counted (a failing `log` is ignored): `error: not fixed PATH: ...`
/// for a file that could not be written (read-only, an I/O error; [`FixSummary::unwritten`]),
/// `warning: not fixed PATH: ...` for a fix left out (the file changed since it was read, the
/// fix would break the syntax). Only a failure to write `out` is an error.
#[cfg(feature = "cli")]
pub fn fix_report(
    report: &crate::report::ScanReport,
    options: &crate::pipeline::scan::ScanOptions,
    mode: Mode,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> io::Result<FixSummary> {
    let mut summary = FixSummary::default();
    for file in &report.files {
        let diagnostics = file.diagnostics();
        if diagnostics.iter().all(|d| d.fix.is_none()) {
            continue;
        }
        let Some(source) = file.source() else {
            continue;
        };
        let path = file.path.display();
        // The configuration was found for the scan already: this only looks it up.
        let settings = match options.config.as_ref().map(|c| c.settings_for(&file.path)) {
            Some(Ok(settings)) => Cow::Owned(settings),
            Some(Err(e)) => {
                let _ = writeln!(log, "error: not fixed {path}: {e}");
                summary.failed += 1;
                summary.unwritten += 1;
                continue;
            }
            None => Cow::Borrowed(&options.settings),
        };
        let outcome = match fix_source(source, Some(diagnostics.to_vec()), &settings) {
            Ok(outcome) => outcome,
            Err(e) => {
                let _ = writeln!(log, "warning: not fixed {path}: {e}");
                summary.failed += 1;
                continue;
            }
        };
        for rule in &outcome.rejected {
            let _ = writeln!(
                log,
                "warning: not fixed {path}: the fix for {rule} would leave the file unparseable"
            );
        }
        if !outcome.rejected.is_empty() {
            summary.failed += 1;
        }
        if !outcome.changed() {
            continue;
        }
        match mode {
            Mode::Diff => {
                let (old, new) = diff_labels(&file.path);
                out.write_all(unified_diff(source, &outcome.text, &old, &new).as_bytes())?;
            }
            Mode::Write => {
                match write_if_unchanged(&file.path, source.as_bytes(), outcome.text.as_bytes()) {
                    Ok(()) => {}
                    Err(e @ WriteError::Changed) => {
                        let _ = writeln!(log, "warning: not fixed {path}: {e}");
                        summary.failed += 1;
                        continue;
                    }
                    Err(e @ (WriteError::ReadOnly | WriteError::Io(_))) => {
                        let _ = writeln!(log, "error: not fixed {path}: {e}");
                        summary.failed += 1;
                        summary.unwritten += 1;
                        continue;
                    }
                }
            }
        }
        summary.fixes += outcome.applied;
        summary.files += 1;
    }
    Ok(summary)
}

/// `a/PATH` and `b/PATH` for a relative path (as `git diff` prints, for `git apply` or
/// `patch -p1` from the directory the scan ran in); the path itself twice when it is absolute.
#[cfg(feature = "cli")]
fn diff_labels(path: &Path) -> (String, String) {
    let shown = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect::<PathBuf>();
    let shown = shown.to_string_lossy().replace('\\', "/");
    if path.is_absolute() {
        (shown.clone(), shown)
    } else {
        (format!("a/{shown}"), format!("b/{shown}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, replacement: &str) -> Edit {
        Edit {
            start,
            end,
            replacement: replacement.to_owned(),
        }
    }

    /// A finding at the start of the file carrying the given edits as its fix.
    fn finding(edits: Vec<Edit>) -> Diagnostic {
        use crate::checks::diagnostic::Label;
        use crate::source::Fix;
        use crate::source::{Position, Span};
        let at = Position { line: 1, column: 1 };
        Diagnostic {
            rule: Rule::KeyInLoop,
            level: crate::checks::registry::Level::Error,
            message: "m".to_owned(),
            primary: Label {
                span: Span {
                    start: 0,
                    end: 0,
                    start_pos: at,
                    end_pos: at,
                },
                message: String::new(),
            },
            secondary: Vec::new(),
            help: None,
            notes: Vec::new(),
            fix: Some(Fix {
                message: "fix".to_owned(),
                edits,
            }),
            elsewhere: Vec::new(),
        }
    }

    #[test]
    fn fixes_apply_in_file_order_and_clashing_ones_wait() {
        let src = "abcdef";
        let diags = [
            finding(vec![edit(4, 5, "E"), edit(0, 0, "<")]),
            finding(vec![edit(1, 2, "B")]),
            // Overlaps the first fix's `4..5`: left out.
            finding(vec![edit(3, 6, "xyz")]),
            // Out of range: left out.
            finding(vec![edit(5, 9, "")]),
            // Same insertion point as the first fix: after it.
            finding(vec![edit(0, 0, ">")]),
        ];
        assert_eq!(apply_fixes(src, &diags), ("<>aBcdEf".to_owned(), 3));
        // Not on a character boundary: left out.
        assert_eq!(
            apply_fixes("é", &[finding(vec![edit(1, 2, "")])]),
            ("é".to_owned(), 0)
        );
    }

    #[test]
    fn a_fix_that_breaks_the_syntax_is_not_applied() {
        let src = "fn f() {}\n";
        let diags = vec![finding(vec![edit(src.len() - 2, src.len() - 1, "")])];
        let outcome = fix_source(src, Some(diags), &Settings::preview()).expect("parses");
        assert_eq!(outcome.text, src);
        assert_eq!(outcome.applied, 0);
        assert!(!outcome.changed());
        assert_eq!(outcome.rejected, [Rule::KeyInLoop]);
    }

    #[test]
    fn an_unparseable_file_is_not_fixed() {
        assert!(fix_source("fn f( {", None, &Settings::preview()).is_err());
    }

    #[test]
    fn random_diffs_rebuild_the_new_text() {
        fn lines(rng: &mut fastrand::Rng) -> String {
            let n = rng.usize(0..12);
            (0..n)
                .map(|_| ["a\n", "b\n", "c\n", "d"][rng.usize(0..4)])
                .collect()
        }
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..500 {
            let (old, new) = (lines(&mut rng), lines(&mut rng));
            let a: Vec<&str> = old.split_inclusive('\n').collect();
            let b: Vec<&str> = new.split_inclusive('\n').collect();
            let script = diff_lines(&a, &b);
            let (mut ia, mut ib) = (0, 0);
            let mut rebuilt = String::new();
            for op in &script {
                match op {
                    Op::Equal => {
                        assert_eq!(a[ia], b[ib]);
                        rebuilt.push_str(b[ib]);
                        ia += 1;
                        ib += 1;
                    }
                    Op::Delete => ia += 1,
                    Op::Insert => {
                        rebuilt.push_str(b[ib]);
                        ib += 1;
                    }
                }
            }
            assert_eq!((ia, ib), (a.len(), b.len()), "{old:?} -> {new:?}");
            assert_eq!(rebuilt, new);
            // Shortest: no more changes than replacing everything that is not common.
            let changes = script.iter().filter(|o| **o != Op::Equal).count();
            assert!(changes <= a.len() + b.len());
        }
    }

    #[test]
    fn overlapping_edits_clash_and_touching_ones_do_not() {
        assert!(overlap(&edit(0, 5, ""), &edit(4, 6, "")));
        assert!(!overlap(&edit(0, 5, ""), &edit(5, 6, "")));
        assert!(overlap(&edit(0, 5, ""), &edit(3, 3, "x")));
        assert!(!overlap(&edit(0, 5, ""), &edit(5, 5, "x")));
        assert!(!overlap(&edit(0, 5, ""), &edit(0, 0, "x")));
        assert!(!overlap(&edit(2, 2, "a"), &edit(2, 2, "b")));
    }

    #[test]
    fn a_crlf_line_gets_crlf_line_breaks() {
        let crlf = "fn f() {\r\n    loop {\r\n    }\r\n}\r\n";
        let lf = crlf.replace("\r\n", "\n");
        let insert = |src: &str| {
            edit(
                src.find("    loop").unwrap(),
                src.find("    loop").unwrap(),
                "    let k = 1;\n",
            )
        };
        assert_eq!(replacement(crlf, &insert(crlf)), "    let k = 1;\r\n");
        assert_eq!(replacement(&lf, &insert(&lf)), "    let k = 1;\n");
        // Already CRLF: unchanged.
        let e = edit(0, 0, "a\r\nb\n");
        assert_eq!(replacement(crlf, &e), "a\r\nb\r\n");
    }

    #[test]
    fn only_our_temporary_file_names_have_an_owner() {
        assert_eq!(temp_owner(".pay.rs.retry-audit-123-4.tmp"), Some(123));
        assert_eq!(
            temp_owner(".a.retry-audit-b.rs.retry-audit-7-0.tmp"),
            Some(7)
        );
        for other in [
            "pay.rs.retry-audit-123-4.tmp",
            ".pay.rs.retry-audit-123.tmp",
            ".pay.rs.retry-audit-x-4.tmp",
            ".pay.rs.retry-audit-123-4.tmp~",
            ".pay.rs.tmp",
        ] {
            assert_eq!(temp_owner(other), None, "{other}");
        }
    }

    #[test]
    fn diff_of_equal_texts_is_empty() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n", "x", "y"), "");
    }

    #[test]
    fn diff_moves_a_line_up() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n8\n2\n3\n4\n5\n6\n7\n9\n10\n";
        let diff = unified_diff(old, new, "a/f", "b/f");
        assert_eq!(
            diff,
            "--- a/f\n+++ b/f\n@@ -1,10 +1,10 @@\n 1\n+8\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n 9\n 10\n"
        );
    }

    #[test]
    fn distant_changes_get_their_own_hunks_and_missing_newlines_are_marked() {
        let old: String = (1..=20).map(|i| i.to_string() + "\n").collect::<String>() + "end";
        let new = old.replacen("2\n", "two\n", 1).replace("end", "fin");
        let diff = unified_diff(&old, &new, "a/f", "b/f");
        assert_eq!(
            diff,
            "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n\
             @@ -18,4 +18,4 @@\n 18\n 19\n 20\n-end\n\\ No newline at end of file\n+fin\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn insertion_into_an_empty_file_starts_at_line_zero() {
        assert_eq!(
            unified_diff("", "a\n", "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+a\n"
        );
    }
}
