//! Scanning: expand the paths given into `.rs` files, check them in parallel, collect the results.
//!
//! No printing happens here; front ends render a [`ScanReport`] (see `render`).
//!
//! Walking follows ripgrep's conventions through the `ignore` crate: `.gitignore`, `.ignore` and
//! git's exclude files are honoured (also outside a git repository), hidden files and directories
//! are skipped, symbolic links are not followed, and directories named `target` are always
//! skipped. A path named on the command line is always taken: a file given explicitly is checked
//! whatever its name, and a directory given explicitly is walked even if it is hidden or ignored.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use ignore::WalkBuilder;
use rayon::prelude::*;

use super::index::Disk;
use super::{check_crate, FileJob};
use crate::checks::Settings;
use crate::config::{ConfigError, Configs, RunConfig};
use crate::pipeline::engine;
use crate::report::{BadPath, FileReport, Outcome, ScanReport, ScanStats, SkipReason};

/// What to scan and how.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Files and directories, as given by the user. Empty means the current directory.
    pub paths: Vec<PathBuf>,
    /// Rule levels for this run.
    pub settings: Settings,
    /// Number of worker threads; `None` uses every core.
    pub jobs: Option<NonZeroUsize>,
    /// The configuration in force: when set, it gives each file its settings (the levels,
    /// per-path levels and extensions of the configuration found for it) instead of
    /// `settings`, and each configuration's `exclude` patterns prune the walk below it.
    pub config: Option<Arc<Configs>>,
    /// Skip subdirectories that hold their own `Cargo.toml` while walking (other packages;
    /// `cargo retry-audit` scans each workspace member by itself).
    pub skip_nested_packages: bool,
}

/// A problem that stops the scan before it starts.
#[derive(Debug)]
pub enum ScanError {
    /// The configuration file found for a file to check is invalid.
    Config(ConfigError),
    /// The worker threads could not be created.
    ThreadPool(String),
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::Config(e) => write!(f, "{e}"),
            ScanError::ThreadPool(e) => write!(f, "cannot start worker threads: {e}"),
        }
    }
}

impl std::error::Error for ScanError {}

/// Finds the files under `options.paths` and checks them in parallel.
///
/// Fails only when the configuration found for a file is invalid or the thread pool cannot
/// start. A path given that cannot be checked (missing,
/// a FIFO, a socket, a device) is recorded in [`ScanReport::bad_paths`] without being opened,
/// and the other paths are scanned; problems with single files are recorded in the report as
/// [`Outcome::Skipped`].
pub fn scan(options: &ScanOptions) -> Result<ScanReport, ScanError> {
    scan_with_progress(options, &())
}

/// The files a scan of `options` would check, sorted, and the paths given that cannot be
/// checked (`--show-files`): the same walk as [`scan`], nothing read.
#[must_use]
pub fn files(options: &ScanOptions) -> (Vec<PathBuf>, Vec<BadPath>) {
    let default_root = [PathBuf::from(".")];
    let roots = if options.paths.is_empty() {
        &default_root[..]
    } else {
        &options.paths[..]
    };
    let (candidates, bad) = collect_files(roots, &walk_filter(options));
    let files = candidates
        .into_iter()
        .filter_map(|c| match c {
            Candidate::File(path) => Some(path),
            Candidate::Unreadable(..) => None,
        })
        .collect();
    (files, bad)
}

/// Told how far a scan has got, from the worker threads (the command line's progress bar; the
/// scan itself never draws anything).
pub trait Progress: Sync {
    /// The walk is done: `files` files (and unreadable entries) are to be checked.
    fn start(&self, files: usize);
    /// One more of them is checked.
    fn advance(&self);
}

/// No progress is shown.
impl Progress for () {
    fn start(&self, _files: usize) {}
    fn advance(&self) {}
}

/// [`scan`], telling `progress` how many files there are and when each is checked (the
/// cross-file pass after that is not counted).
pub fn scan_with_progress(
    options: &ScanOptions,
    progress: &dyn Progress,
) -> Result<ScanReport, ScanError> {
    let default_root = [PathBuf::from(".")];
    let roots = if options.paths.is_empty() {
        &default_root[..]
    } else {
        &options.paths[..]
    };
    let started = Instant::now();
    let (candidates, bad_paths) = collect_files(roots, &walk_filter(options));
    // Each file's configuration: looked up by directory (the walk has seen most already), so
    // the workers only read it.
    let configs: Vec<Option<Arc<RunConfig>>> = candidates
        .iter()
        .map(|candidate| match (candidate, &options.config) {
            (Candidate::File(path), Some(configs)) => configs.for_path(path).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_, _>>()
        .map_err(ScanError::Config)?;
    let walked = Instant::now();
    progress.start(candidates.len());
    let threads = thread_count(options.jobs, candidates.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(engine::PARSE_STACK)
        .start_handler(|_| crate::analysis::limits::thread_started_with_stack(engine::PARSE_STACK))
        .thread_name(|i| format!("retry-audit-{i}"))
        .build()
        .map_err(|e| ScanError::ThreadPool(e.to_string()))?;
    let mut files = Vec::new();
    let mut jobs = Vec::new();
    for (candidate, config) in candidates.into_iter().zip(configs) {
        match candidate {
            Candidate::File(path) => {
                let settings = Arc::new(settings_of(config.as_ref(), &path, &options.settings));
                jobs.push(FileJob { path, settings });
            }
            Candidate::Unreadable(path, message) => {
                progress.advance();
                files.push(FileReport {
                    path,
                    outcome: Outcome::Skipped(SkipReason::Walk(message)),
                });
            }
        }
    }
    let crates = by_crate(jobs);
    let advance = || progress.advance();
    let checked: Vec<super::CrateChecked> = pool.install(|| {
        crates
            .into_par_iter()
            .map(|(root, jobs)| check_crate_caught(root, &jobs, &advance))
            .collect()
    });
    let mut stats = ScanStats {
        threads,
        walk: walked - started,
        check: walked.elapsed(),
        ..ScanStats::default()
    };
    for c in checked {
        stats.bytes += c.bytes;
        stats.read += c.read;
        stats.parse += c.times.parse;
        stats.analyse += c.times.analyse;
        stats.files_read += c.files_read;
        stats.files_parsed += c.times.parsed;
        stats.views_parsed += c.times.views;
        stats.windows_parsed += c.times.windows;
        stats.by_defaults += c.times.by_values;
        stats.cross_file += c.cross_file;
        files.extend(c.files);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ScanReport {
        files,
        bad_paths,
        stats,
    })
}

/// The `.rs` files a scan of `root` checks (walked as [`scan`] walks, `config`'s `exclude`
/// honoured): what the language server reads as a document's crate.
#[must_use]
pub fn rust_files(root: &Path, config: Option<Arc<Configs>>) -> Vec<PathBuf> {
    let options = ScanOptions {
        paths: vec![root.to_path_buf()],
        config,
        ..ScanOptions::default()
    };
    let (candidates, _) = collect_files(&options.paths, &walk_filter(&options));
    candidates
        .into_iter()
        .filter_map(|c| match c {
            Candidate::File(path) => Some(path),
            Candidate::Unreadable(..) => None,
        })
        .collect()
}

/// The jobs grouped by crate ([`crate::pipeline::index::crates_of`]).
fn by_crate(jobs: Vec<FileJob>) -> Vec<(Option<PathBuf>, Vec<FileJob>)> {
    let mut settings: HashMap<PathBuf, Arc<Settings>> =
        jobs.into_iter().map(|j| (j.path, j.settings)).collect();
    let paths: Vec<PathBuf> = settings.keys().cloned().collect();
    crate::pipeline::index::crates_of(paths)
        .into_iter()
        .map(|(root, paths)| {
            let jobs = paths
                .into_iter()
                .filter_map(|path| {
                    let settings = settings.remove(&path)?;
                    Some(FileJob { path, settings })
                })
                .collect();
            (root, jobs)
        })
        .collect()
}

/// [`check_crate`], with a panic outside any file's analysis (a bug) made each file's internal
/// error rather than the end of the scan.
fn check_crate_caught(
    root: Option<PathBuf>,
    jobs: &[FileJob],
    advance: &(dyn Fn() + Sync),
) -> super::CrateChecked {
    let paths: Vec<PathBuf> = jobs.iter().map(|j| j.path.clone()).collect();
    panic::catch_unwind(AssertUnwindSafe(|| check_crate(root, jobs, &Disk, advance)))
        .unwrap_or_else(|payload| {
            let message = panic_message(&*payload);
            super::CrateChecked {
                files: paths
                    .into_iter()
                    .map(|path| FileReport {
                        path,
                        outcome: Outcome::Skipped(SkipReason::Internal(message.clone())),
                    })
                    .collect(),
                ..super::CrateChecked::default()
            }
        })
}

/// The settings of the file `path` under its configuration, or `fallback` without one.
fn settings_of(config: Option<&Arc<RunConfig>>, path: &Path, fallback: &Settings) -> Settings {
    match config {
        Some(config) => config.settings_for(path).into_owned(),
        None => fallback.clone(),
    }
}

/// The requested number of threads (default: every core), but never more than there are files.
fn thread_count(jobs: Option<NonZeroUsize>, files: usize) -> usize {
    let wanted = jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    wanted.min(files).max(1)
}

/// A walk result: a file to check, or an entry the walker could not read.
enum Candidate {
    File(PathBuf),
    Unreadable(PathBuf, String),
}

impl Candidate {
    fn path(&self) -> &Path {
        match self {
            Candidate::File(path) | Candidate::Unreadable(path, _) => path,
        }
    }
}

/// Which directory entries a walk skips beyond the built-in rules (`exclude` patterns, nested
/// packages); shared by the walker's threads.
type WalkFilter = Arc<dyn Fn(&ignore::DirEntry) -> bool + Send + Sync>;

fn walk_filter(options: &ScanOptions) -> WalkFilter {
    let configs = options.config.clone();
    let skip_nested_packages = options.skip_nested_packages;
    Arc::new(move |entry: &ignore::DirEntry| {
        // The configuration of the directory the entry is in decides (only directories and
        // `.rs` files can matter). An invalid one prunes nothing here: the files below it are
        // collected, and looking up theirs fails the scan.
        let matters = is_dir(entry) || entry.path().extension().is_some_and(|ext| ext == "rs");
        matters
            && configs.as_ref().is_some_and(|configs| {
                configs
                    .for_path(entry.path())
                    .is_ok_and(|config| config.is_excluded(entry.path()))
            })
            || (skip_nested_packages && is_dir(entry) && entry.path().join("Cargo.toml").is_file())
    })
}

/// Expands the roots into candidate files, sorted by path and without duplicates, and the roots
/// that cannot be checked, in the order given.
fn collect_files(roots: &[PathBuf], skip: &WalkFilter) -> (Vec<Candidate>, Vec<BadPath>) {
    let mut candidates = Vec::new();
    let mut bad = Vec::new();
    for root in roots {
        // `metadata` does not open the file: a FIFO is not read, so nothing blocks on it.
        match std::fs::metadata(root) {
            Ok(metadata) if metadata.is_dir() => walk_dir(root, skip, &mut candidates),
            Ok(metadata) if metadata.is_file() => {
                candidates.push(Candidate::File(without_dot(root.clone())));
            }
            // A pipe or device could block or never end; only regular files are read.
            Ok(metadata) => bad.push(BadPath {
                path: root.clone(),
                reason: format!(
                    "{}, not a file or directory; not read",
                    special_file_kind(metadata.file_type())
                ),
            }),
            Err(e) => bad.push(BadPath {
                path: root.clone(),
                reason: inaccessible(root, &e),
            }),
        }
    }
    candidates.sort_by(|a, b| a.path().cmp(b.path()));
    candidates.dedup_by(|a, b| a.path() == b.path());
    (candidates, bad)
}

/// What a file that is neither a regular file nor a directory is.
fn special_file_kind(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    let _ = file_type;
    "a special file"
}

/// Why a path given cannot be looked at: in words, without the OS error number.
fn inaccessible(path: &Path, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        if let Ok(target) = std::fs::read_link(path) {
            return format!(
                "a symbolic link to `{}`, which does not exist",
                target.display()
            );
        }
        return "no such file or directory".to_owned();
    }
    if error.kind() == std::io::ErrorKind::PermissionDenied {
        return "permission denied".to_owned();
    }
    error.to_string()
}

/// Adds the `.rs` files under `root` that are not hidden, ignored, inside a `target` directory
/// or skipped by `skip` (which never sees `root` itself).
fn walk_dir(root: &Path, skip: &WalkFilter, out: &mut Vec<Candidate>) {
    let skip = Arc::clone(skip);
    let walker = WalkBuilder::new(root)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_target = is_dir(entry) && entry.file_name() == "target";
            !(is_target || skip(entry))
        })
        .build();
    for entry in walker {
        match entry {
            Ok(entry) => {
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file && entry.path().extension().is_some_and(|ext| ext == "rs") {
                    out.push(Candidate::File(without_dot(entry.into_path())));
                }
            }
            Err(error) => {
                let path = error_path(&error).unwrap_or(root).to_path_buf();
                out.push(Candidate::Unreadable(
                    without_dot(path),
                    error_message(&error),
                ));
            }
        }
    }
}

/// A path found or given without its `.` components (`./src/lib.rs` is `src/lib.rs`), as ruff
/// and cargo print paths; `.` itself stays.
fn without_dot(path: PathBuf) -> PathBuf {
    if !path.components().any(|c| c == std::path::Component::CurDir) {
        return path;
    }
    let cleaned: PathBuf = path
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    if cleaned.as_os_str().is_empty() {
        path
    } else {
        cleaned
    }
}

fn is_dir(entry: &ignore::DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_dir())
}

/// The path a walk error is about, if it names one.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errors) => errors.iter().find_map(error_path),
        _ => None,
    }
}

/// A walk error's message without the path (which is printed separately).
fn error_message(error: &ignore::Error) -> String {
    match error {
        ignore::Error::WithPath { err, .. } | ignore::Error::WithDepth { err, .. } => {
            error_message(err)
        }
        ignore::Error::Loop { ancestor, .. } => {
            format!("symbolic link loop back to {}", ancestor.display())
        }
        other => other.to_string(),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "the analysis panicked".to_owned()
    }
}
