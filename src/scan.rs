//! Scanning: expand the paths given into `.rs` files, check them in parallel, collect the results.
//!
//! No printing happens here; front ends render a [`ScanReport`] (see `render`).
//!
//! Walking follows ripgrep's conventions through the `ignore` crate: `.gitignore`, `.ignore` and
//! git's exclude files are honoured (also outside a git repository), hidden files and directories
//! are skipped, symbolic links are not followed, and directories named `target` are always
//! skipped. A path named on the command line is always taken: a file given explicitly is checked
//! whatever its name, and a directory given explicitly is walked even if it is hidden or ignored.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ignore::WalkBuilder;
use rayon::prelude::*;

use crate::config::{ConfigError, Configs, RunConfig};
use crate::diagnostic::Diagnostic;
use crate::engine::{self, FileError, Settings};
use crate::registry::Level;

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

/// The outcome of a whole scan: one entry per file found, sorted by path.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub files: Vec<FileReport>,
    /// Paths given by the user that could not be checked at all (missing, or not a regular file
    /// or directory), in the order given; the scan went on with the others, and the run fails.
    pub bad_paths: Vec<BadPath>,
    /// Where the time went (`--stats`).
    pub stats: ScanStats,
}

/// Sizes and times of a scan, by phase. The per-file phases (read, parse, analyse) are the time
/// each worker thread spent in them, added up; the others are wall-clock time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Worker threads used.
    pub threads: usize,
    /// Bytes read from the files checked or skipped after reading.
    pub bytes: u64,
    /// Finding the files (wall).
    pub walk: Duration,
    /// Reading the files (summed over threads).
    pub read: Duration,
    /// Decoding, parsing and freeing syntax trees (summed over threads).
    pub parse: Duration,
    /// The retry-site model, the rules and suppressions (summed over threads).
    pub analyse: Duration,
    /// Checking every file, on all threads (wall).
    pub check: Duration,
    /// Definitions across the files of each crate: re-checking the files that use another
    /// file's, and RA010 across files (wall).
    pub cross_file: Duration,
    /// Files checked again with definitions of other files of their crate.
    pub rechecked: usize,
    /// Retry loops whose attempt limit or wait the crate passes in, with findings changed by what
    /// it passes: no retry, one immediate second try at most, no wait ([`crate::defaults`]).
    pub by_defaults: usize,
}

/// Per-file phase times, added up by every worker thread.
#[derive(Default)]
struct PhaseClock {
    bytes: AtomicU64,
    read: AtomicU64,
    parse: AtomicU64,
    analyse: AtomicU64,
}

impl PhaseClock {
    fn add(counter: &AtomicU64, time: Duration) {
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        counter.fetch_add(nanos, Ordering::Relaxed);
    }

    fn total(counter: &AtomicU64) -> Duration {
        Duration::from_nanos(counter.load(Ordering::Relaxed))
    }
}

/// One file (or one unreadable directory entry) and what became of it.
#[derive(Debug)]
pub struct FileReport {
    /// The path as the walker yields it: the path given joined with the file's relative path.
    pub path: PathBuf,
    pub outcome: Outcome,
}

/// Whether a file was checked, and what was found.
#[derive(Debug)]
pub enum Outcome {
    /// The file was analysed.
    Checked {
        /// Findings, in source order.
        diagnostics: Vec<Diagnostic>,
        /// The file's text, kept only when there are findings to render.
        source: Option<String>,
    },
    /// The file could not be analysed; the scan went on without it.
    Skipped(SkipReason),
}

/// Why a file or directory entry was not analysed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// Reading, decoding or parsing failed.
    File(FileError),
    /// The directory walk could not read this entry (permissions, a vanished file, ...).
    Walk(String),
    /// The analysis itself failed on this file; a bug in retry-audit.
    Internal(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::File(FileError::Io(e)) => write!(f, "cannot read: {e}"),
            SkipReason::File(e) => write!(f, "{e}"),
            SkipReason::Walk(e) => f.write_str(e),
            SkipReason::Internal(e) => {
                write!(f, "internal error in retry-audit (please report): {e}")
            }
        }
    }
}

/// A path given by the user that was not checked, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadPath {
    /// The path as given.
    pub path: PathBuf,
    /// What is wrong with it (`no such file or directory`, `a named pipe (FIFO), ...`).
    pub reason: String,
}

impl fmt::Display for BadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot check {}: {}", self.path.display(), self.reason)
    }
}

/// Totals over a [`ScanReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Files analysed.
    pub checked: usize,
    /// Files or entries that could not be analysed.
    pub skipped: usize,
    /// Findings at error level.
    pub errors: usize,
    /// Findings at warning level.
    pub warnings: usize,
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

impl ScanReport {
    /// Every finding with the file it is in, files in path order, findings in source order.
    pub fn diagnostics(&self) -> impl Iterator<Item = (&FileReport, &Diagnostic)> {
        self.files.iter().flat_map(|file| {
            file.diagnostics()
                .iter()
                .map(move |diagnostic| (file, diagnostic))
        })
    }

    /// The files (and entries) that were skipped, with the reason.
    pub fn skipped(&self) -> impl Iterator<Item = (&FileReport, &SkipReason)> {
        self.files.iter().filter_map(|file| match &file.outcome {
            Outcome::Skipped(reason) => Some((file, reason)),
            Outcome::Checked { .. } => None,
        })
    }

    /// Files checked and skipped, findings by level.
    #[must_use]
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for file in &self.files {
            match &file.outcome {
                Outcome::Checked { .. } => counts.checked += 1,
                Outcome::Skipped(_) => counts.skipped += 1,
            }
        }
        for (_, diagnostic) in self.diagnostics() {
            match diagnostic.level {
                Level::Error => counts.errors += 1,
                Level::Warning => counts.warnings += 1,
                Level::Allow => {}
            }
        }
        counts
    }

    /// Whether the run fails whatever was found: a path given could not be checked.
    #[must_use]
    pub fn has_bad_paths(&self) -> bool {
        !self.bad_paths.is_empty()
    }

    /// Whether any finding is at error level (the run fails).
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.counts().errors > 0
    }
}

impl FileReport {
    /// The findings in this file (none if it was skipped).
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match &self.outcome {
            Outcome::Checked { diagnostics, .. } => diagnostics,
            Outcome::Skipped(_) => &[],
        }
    }

    /// The file's text, if it was kept (only files with findings keep it).
    #[must_use]
    pub fn source(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Checked { source, .. } => source.as_deref(),
            Outcome::Skipped(_) => None,
        }
    }
}

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
    let clock = PhaseClock::default();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(engine::PARSE_STACK)
        .start_handler(|_| crate::budget::thread_started_with_stack(engine::PARSE_STACK))
        .thread_name(|i| format!("retry-audit-{i}"))
        .build()
        .map_err(|e| ScanError::ThreadPool(e.to_string()))?;
    let (mut files, mut facts): (Vec<FileReport>, Vec<Option<engine::CrateFacts>>) =
        pool.install(|| {
            candidates
                .into_par_iter()
                .zip(configs.par_iter())
                .map(|(candidate, config)| match candidate {
                    Candidate::File(path) => {
                        let settings = settings_of(config.as_ref(), &path, &options.settings);
                        let (outcome, facts) = check_file(&path, &settings, &clock);
                        (FileReport { path, outcome }, facts)
                    }
                    Candidate::Unreadable(path, message) => (
                        FileReport {
                            path,
                            outcome: Outcome::Skipped(SkipReason::Walk(message)),
                        },
                        None,
                    ),
                })
                .inspect(|_| progress.advance())
                .unzip()
        });
    let checked = Instant::now();
    let crates = crates_of(&files, &facts);
    let rechecked = pool.install(|| {
        recheck_with_crate(&mut files, &mut facts, &crates, &configs, &options.settings)
    });
    let by_defaults = pool
        .install(|| judge_by_values(&mut files, &mut facts, &crates, &configs, &options.settings));
    add_nested_across_files(&mut files, &facts, &crates, &configs, &options.settings);
    let stats = ScanStats {
        threads,
        bytes: clock.bytes.load(Ordering::Relaxed),
        walk: walked - started,
        read: PhaseClock::total(&clock.read),
        parse: PhaseClock::total(&clock.parse),
        analyse: PhaseClock::total(&clock.analyse),
        check: checked - walked,
        cross_file: checked.elapsed(),
        rechecked,
        by_defaults,
    };
    Ok(ScanReport {
        files,
        bad_paths,
        stats,
    })
}

/// The settings of the file `path` under its configuration, or `fallback` without one.
fn settings_of<'a>(
    config: Option<&'a Arc<RunConfig>>,
    path: &Path,
    fallback: &'a Settings,
) -> Cow<'a, Settings> {
    let settings = match config {
        Some(config) => config.settings_for(path),
        None => Cow::Borrowed(fallback),
    };
    if is_test_target(path) {
        let mut settings = settings.into_owned();
        settings.test_code = true;
        Cow::Owned(settings)
    } else {
        settings
    }
}

/// Whether `path` is test code as a whole: in a package's integration tests or benchmarks (under
/// a `tests` or `benches` directory whose parent holds a `Cargo.toml`, cargo's layout), or a
/// module declared under `#[cfg(test)]` (`#[cfg(test)] mod test_util;` in its parent module's
/// file), or a module inside one.
#[must_use]
pub fn is_test_target(path: &Path) -> bool {
    let in_test_dir = path.ancestors().skip(1).any(|dir| {
        matches!(
            dir.file_name().and_then(|n| n.to_str()),
            Some("tests" | "benches")
        ) && dir
            .parent()
            .is_some_and(|pkg| pkg.join("Cargo.toml").is_file())
    });
    in_test_dir || is_test_module(path, 0)
}

/// Whether the module of the file `path` is declared under `#[cfg(test)]` in its parent
/// module's file, or its parent module is (up to 16 levels).
fn is_test_module(path: &Path, depth: usize) -> bool {
    // The answer for each parent module file, shared by its other modules.
    static PARENTS: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    if depth > 16 {
        return false;
    }
    let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
        return false;
    };
    let Some(dir) = path.parent() else {
        return false;
    };
    // `a/x.rs` is module `x` of `a`; `a/x/mod.rs` is module `x` of `a` too.
    let (name, parent_dir) = match stem {
        "lib" | "main" => return false,
        "mod" => match (dir.file_name().and_then(|n| n.to_str()), dir.parent()) {
            (Some(name), Some(up)) => (name, up),
            _ => return false,
        },
        name => (name, dir),
    };
    let Some(parent) = parent_module_file(parent_dir) else {
        return false;
    };
    if test_modules_declared_in(&parent).contains(name) {
        return true;
    }
    let parents = PARENTS.get_or_init(Mutex::default);
    if let Some(known) = parents.lock().ok().and_then(|p| p.get(&parent).copied()) {
        return known;
    }
    let answer = is_test_module(&parent, depth + 1);
    if let Ok(mut p) = parents.lock() {
        p.insert(parent, answer);
    }
    answer
}

/// The file of the module whose submodules live in `dir`: `dir/mod.rs`, `dir/lib.rs`,
/// `dir/main.rs` or `dir.rs` beside it (looked up once per directory).
fn parent_module_file(dir: &Path) -> Option<PathBuf> {
    static FILES: OnceLock<Mutex<HashMap<PathBuf, Option<PathBuf>>>> = OnceLock::new();
    let files = FILES.get_or_init(Mutex::default);
    if let Some(known) = files.lock().ok().and_then(|f| f.get(dir).cloned()) {
        return known;
    }
    let mut candidates = vec![dir.join("mod.rs"), dir.join("lib.rs"), dir.join("main.rs")];
    if let (Some(up), Some(name)) = (dir.parent(), dir.file_name()) {
        let mut sibling = name.to_os_string();
        sibling.push(".rs");
        candidates.push(up.join(sibling));
    }
    let found = candidates.into_iter().find(|p| p.is_file());
    if let Ok(mut f) = files.lock() {
        f.insert(dir.to_path_buf(), found.clone());
    }
    found
}

/// The modules a file declares under `#[cfg(test)]` (`#[cfg(test)]\nmod tests;`), read once per
/// file and version (its modification time) for the whole process.
fn test_modules_declared_in(file: &Path) -> Arc<HashSet<String>> {
    type Cache = Mutex<HashMap<PathBuf, (Option<std::time::SystemTime>, Arc<HashSet<String>>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let modified = std::fs::metadata(file).and_then(|m| m.modified()).ok();
    let cache = CACHE.get_or_init(Cache::default);
    if let Ok(cache) = cache.lock() {
        if let Some((at, names)) = cache.get(file) {
            if *at == modified {
                return Arc::clone(names);
            }
        }
    }
    let names = Arc::new(
        std::fs::read_to_string(file)
            .map(|text| test_module_names(&text))
            .unwrap_or_default(),
    );
    if let Ok(mut cache) = cache.lock() {
        cache.insert(file.to_path_buf(), (modified, Arc::clone(&names)));
    }
    names
}

/// The names of `mod name;` declarations whose attributes (on the lines just above) include a
/// `cfg` on `test` (`#[cfg(test)]`, `#[cfg(any(test, feature = "testing"))]`; not
/// `cfg(not(test))`).
fn test_module_names(text: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    let mut test_attr = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[") {
            let is_test_cfg = line.contains("cfg")
                && !line.contains("not(")
                && line
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "test");
            test_attr |= is_test_cfg;
            continue;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if test_attr {
            let decl = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub(super) "))
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            if let Some(rest) = decl.strip_prefix("mod ") {
                if let Some(name) = rest.strip_suffix(';') {
                    names.insert(name.trim().to_owned());
                }
            }
        }
        test_attr = false;
    }
    names
}

/// The checked files grouped by crate (the nearest directory above them with a `Cargo.toml`;
/// `None` outside any crate): a name in one crate says nothing about a function of the same
/// name in another. Indices into the scan's files, in scan order.
fn crates_of(files: &[FileReport], facts: &[Option<engine::CrateFacts>]) -> Vec<Vec<usize>> {
    let mut roots: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    let mut crates: HashMap<Option<PathBuf>, Vec<usize>> = HashMap::new();
    for (i, f) in facts.iter().enumerate() {
        if f.is_none() {
            continue;
        }
        let root = files[i]
            .path
            .parent()
            .and_then(|dir| crate_root(dir, &mut roots));
        crates.entry(root).or_default().push(i);
    }
    let mut crates: Vec<Vec<usize>> = crates.into_values().collect();
    crates.sort();
    crates
}

/// A file checked again: its findings, facts and text.
type Rechecked = (Vec<Diagnostic>, engine::CrateFacts, String);

/// Most files of its crate one file is checked again with.
pub const MAX_IMPORTS: usize = 8;

/// Checks again, with the definitions of the other files of their crate in view, the files
/// whose retry sites looked for a function or constant they do not define and exactly one
/// other file of the crate defines ([`engine::check_with_imports`]). The new findings replace
/// the file's; a finding the file did not have alone says which definitions it rests on.
/// Returns how many files were checked again. `configs[i]` is the configuration of
/// `files[i]`, `fallback` the settings without one.
fn recheck_with_crate(
    files: &mut [FileReport],
    facts: &mut [Option<engine::CrateFacts>],
    crates: &[Vec<usize>],
    configs: &[Option<Arc<RunConfig>>],
    fallback: &Settings,
) -> usize {
    let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
    for members in crates {
        let mut defined: HashMap<u64, Vec<usize>> = HashMap::new();
        for &i in members {
            for key in facts[i].iter().flat_map(|f| &f.defines) {
                defined.entry(*key).or_default().push(i);
            }
        }
        for &i in members {
            let Some(f) = &facts[i] else { continue };
            let mut from: Vec<usize> = f
                .unresolved
                .iter()
                .filter_map(|name| {
                    match defined
                        .get(&crate::model::name_key(name))
                        .map(Vec::as_slice)
                    {
                        Some([only]) if *only != i => Some(*only),
                        _ => None,
                    }
                })
                .collect();
            from.sort_unstable();
            from.dedup();
            from.truncate(MAX_IMPORTS);
            if !from.is_empty() {
                work.push((i, from));
            }
        }
    }
    let redone: Vec<(usize, Option<Rechecked>)> = work
        .par_iter()
        .map(|(i, from)| {
            let path = &files[*i].path;
            let settings = settings_of(configs[*i].as_ref(), path, fallback);
            let imports: Vec<(String, Vec<u8>)> = from
                .iter()
                .filter_map(|j| {
                    let p = &files[*j].path;
                    Some((p.display().to_string(), std::fs::read(p).ok()?))
                })
                .collect();
            let redone = std::fs::read(path).ok().and_then(|bytes| {
                let checked = panic::catch_unwind(AssertUnwindSafe(|| {
                    engine::check_with_imports(
                        &bytes,
                        &imports,
                        &settings,
                        &mut engine::PhaseTimes::default(),
                    )
                }));
                proc_macro2::extra::invalidate_current_thread_spans();
                let (diagnostics, facts) = checked.ok()?.ok()?;
                Some((diagnostics, facts, String::from_utf8(bytes).ok()?))
            });
            (*i, redone)
        })
        .collect();
    let count = redone.len();
    for (i, redone) in redone {
        // A file that cannot be checked again (changed or removed meanwhile) keeps its findings.
        let Some((mut diagnostics, new_facts, text)) = redone else {
            continue;
        };
        let Outcome::Checked {
            diagnostics: old,
            source,
        } = &mut files[i].outcome
        else {
            continue;
        };
        let seen: std::collections::HashSet<(crate::registry::Rule, usize)> =
            old.iter().map(|d| (d.rule, d.primary.span.start)).collect();
        for d in &mut diagnostics {
            if seen.contains(&(d.rule, d.primary.span.start)) {
                continue;
            }
            // Fixes are made from the file alone (`--fix`).
            d.fix = None;
        }
        *source = if diagnostics.is_empty() {
            None
        } else {
            Some(text)
        };
        *old = diagnostics;
        facts[i] = Some(new_facts);
    }
    count
}

/// Judges the retry loops whose attempt limit or wait is a parameter or a field by what the
/// crate passes there ([`crate::defaults`]): a loop that never goes round reports nothing, one
/// that tries once more at most no RA011, one whose wait is zero what a loop without a wait
/// reports. Only crates with such a loop are read again. Returns how many loops changed.
fn judge_by_values(
    files: &mut [FileReport],
    facts: &mut [Option<engine::CrateFacts>],
    crates: &[Vec<usize>],
    configs: &[Option<Arc<RunConfig>>],
    fallback: &Settings,
) -> usize {
    let asked: Vec<&Vec<usize>> = crates
        .iter()
        .filter(|members| {
            members
                .iter()
                .any(|&i| facts[i].as_ref().is_some_and(|f| !f.by_values.is_empty()))
        })
        .collect();
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let decided: Vec<(usize, engine::ValueQuery, u64)> = asked
        .par_iter()
        .flat_map_iter(|members| {
            let mut krate = crate::defaults::Crate::new(
                members
                    .iter()
                    .map(|&i| (paths[i].to_path_buf(), is_test_target(paths[i])))
                    .collect(),
            );
            let mut memo: HashMap<crate::model::ValueSource, Option<u64>> = HashMap::new();
            let mut out = Vec::new();
            for &i in *members {
                for q in facts[i].iter().flat_map(|f| &f.by_values) {
                    let largest = *memo
                        .entry(q.source.clone())
                        .or_insert_with(|| krate.largest_by_default(&q.source));
                    if let Some(largest) = largest {
                        out.push((i, q.clone(), largest));
                    }
                }
            }
            proc_macro2::extra::invalidate_current_thread_spans();
            out
        })
        .collect();
    let mut changed = 0;
    for (i, q, largest) in &decided {
        let path = files[*i].path.clone();
        let pending = facts[*i].as_mut().and_then(|f| f.suppressions.as_mut());
        if let Outcome::Checked {
            diagnostics,
            source,
        } = &mut files[*i].outcome
        {
            let settings = settings_of(configs[*i].as_ref(), &path, fallback);
            changed += usize::from(q.apply_shown(diagnostics, pending, *largest, &settings));
            if diagnostics.is_empty() {
                *source = None;
            } else if source.is_none() {
                *source = std::fs::read_to_string(&path).ok();
            }
        }
    }
    changed
}

/// RA010 across files, once every file's retrying functions are known (see
/// [`engine::nested_across_files`]). A file that gets a finding this way and had none keeps its
/// text for rendering. The file's suppression comments are applied to these findings as to
/// its others (when it has any, its facts keep what that needs): a comment can suppress them,
/// and RA100 is judged on everything the file reports. Each file's findings follow its own
/// settings (`configs[i]`, or `fallback`).
fn add_nested_across_files(
    files: &mut [FileReport],
    facts: &[Option<engine::CrateFacts>],
    crates: &[Vec<usize>],
    configs: &[Option<Arc<RunConfig>>],
    fallback: &Settings,
) {
    let mut found = Vec::new();
    for members in crates {
        let members: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| facts[i].is_some())
            .collect();
        let settings: Vec<Cow<Settings>> = members
            .iter()
            .map(|&i| settings_of(configs[i].as_ref(), &files[i].path, fallback))
            .collect();
        let input: Vec<(String, &engine::CrateFacts, &Settings)> = members
            .iter()
            .zip(&settings)
            .filter_map(|(&i, settings)| {
                Some((
                    files[i].path.display().to_string(),
                    facts[i].as_ref()?,
                    settings.as_ref(),
                ))
            })
            .collect();
        for (k, diagnostic) in engine::nested_across_files(&input) {
            found.push((members[k], diagnostic));
        }
    }
    let mut by_file: HashMap<usize, Vec<Diagnostic>> = HashMap::new();
    for (index, diagnostic) in found {
        by_file.entry(index).or_default().push(diagnostic);
    }
    for (index, more) in by_file {
        let file = &mut files[index];
        let path = file.path.clone();
        let Outcome::Checked {
            diagnostics,
            source,
        } = &mut file.outcome
        else {
            continue;
        };
        if let Some(pending) = facts[index].as_ref().and_then(|f| f.suppressions.as_ref()) {
            let settings = settings_of(configs[index].as_ref(), &path, fallback);
            let mut before = std::mem::take(diagnostics);
            // The file's own findings are kept as the scan left them (a finding made with
            // another file's definitions has no fix); only RA100 is judged anew.
            *diagnostics = pending
                .apply(more, &settings)
                .into_iter()
                .map(|d| {
                    let kept = before.iter().position(|b| {
                        b.rule == d.rule
                            && b.primary.span == d.primary.span
                            && b.message == d.message
                    });
                    match kept {
                        Some(k) if d.rule != crate::registry::Rule::UnusedSuppression => {
                            before.swap_remove(k)
                        }
                        _ => d,
                    }
                })
                .collect();
        } else {
            diagnostics.extend(more);
            diagnostics.sort_by_key(|d| (d.primary.span.start, d.rule));
        }
        if diagnostics.is_empty() {
            *source = None;
        } else if source.is_none() {
            *source = std::fs::read_to_string(&path).ok();
        }
    }
}

/// The nearest directory at or above `dir` holding a `Cargo.toml` (`None` outside any crate),
/// remembered per directory so each is looked at once.
fn crate_root(dir: &Path, seen: &mut HashMap<PathBuf, Option<PathBuf>>) -> Option<PathBuf> {
    if let Some(root) = seen.get(dir) {
        return root.clone();
    }
    let root = if dir.join("Cargo.toml").is_file() {
        Some(dir.to_path_buf())
    } else {
        dir.parent().and_then(|up| crate_root(up, seen))
    };
    seen.insert(dir.to_path_buf(), root.clone());
    root
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

/// Reads one file once and checks it. Never panics: a panic in the analysis is caught and
/// recorded, so that one bad file cannot abort the scan.
fn check_file(
    path: &Path,
    settings: &Settings,
    clock: &PhaseClock,
) -> (Outcome, Option<engine::CrateFacts>) {
    let reading = Instant::now();
    let read = std::fs::read(path);
    PhaseClock::add(&clock.read, reading.elapsed());
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(e) => {
            return (
                Outcome::Skipped(SkipReason::File(FileError::Io(e.to_string()))),
                None,
            )
        }
    };
    clock.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    let mut times = engine::PhaseTimes::default();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        engine::check_bytes_timed(&bytes, settings, &mut times)
    }));
    PhaseClock::add(&clock.parse, times.parse);
    PhaseClock::add(&clock.analyse, times.analyse);
    // The parser records every file's text in a per-thread span map; an early return (a parse
    // error) may leave it there. Nothing refers to those spans any more.
    proc_macro2::extra::invalidate_current_thread_spans();
    match result {
        Ok(Ok((diagnostics, facts))) => {
            let source = if diagnostics.is_empty() {
                None
            } else {
                String::from_utf8(bytes).ok()
            };
            (
                Outcome::Checked {
                    diagnostics,
                    source,
                },
                Some(facts),
            )
        }
        Ok(Err(error)) => match Diagnostic::syntax_error(&error, &bytes, settings) {
            Some(finding) => (
                Outcome::Checked {
                    diagnostics: vec![finding],
                    source: String::from_utf8(bytes).ok(),
                },
                None,
            ),
            None => (Outcome::Skipped(SkipReason::File(error)), None),
        },
        Err(payload) => (
            Outcome::Skipped(SkipReason::Internal(panic_message(&*payload))),
            None,
        ),
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

#[cfg(test)]
mod test_module_tests {
    use super::test_module_names;

    #[test]
    fn modules_declared_under_cfg_test_are_told_from_the_others() {
        let text = "mod server;\n#[cfg(test)]\nmod test_util;\n#[cfg(not(test))]\nmod real;\n\
                    #[cfg(any(test, feature = \"testing\"))]\n#[allow(dead_code)]\npub(crate) mod mocks;\n\
                    #[cfg(test)]\nmod inline {\n}\n#[cfg(feature = \"latest\")]\nmod latest;\n";
        let mut names: Vec<String> = test_module_names(text).into_iter().collect();
        names.sort();
        assert_eq!(names, ["mocks", "test_util"]);
    }
}
