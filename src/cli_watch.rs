//! `--watch`: check, then check again whenever a Rust file to check, or a configuration file
//! that may apply to one, is added, changed or removed, until interrupted (Ctrl-C), as
//! `ruff check --watch`. Files are compared by modification time and length, polled a few
//! times a second (no dependency on a platform's file notifications).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use retry_audit::config;
use retry_audit::pipeline::scan::{self, ScanOptions};

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(300);

/// What is watched, as last seen: each path with its modification time and length (`None`
/// when it does not exist).
type Snapshot = Vec<(PathBuf, Option<(SystemTime, u64)>)>;

/// Runs `round` (a check and its report), then again after each change, for ever.
pub(crate) fn run(
    mut options: impl FnMut() -> Option<ScanOptions>,
    mut round: impl FnMut(&ScanOptions),
) -> ! {
    loop {
        let current = options();
        // Taken before the check, so that a change made while it runs (or just after its
        // report) starts another.
        let before = current.as_ref().map(snapshot).unwrap_or_default();
        if let Some(current) = &current {
            round(current);
        }
        super::cli_output::note("retry-audit: watching for changes (Ctrl-C to stop)");
        loop {
            std::thread::sleep(POLL);
            let now = current.as_ref().map(snapshot).unwrap_or_default();
            if now != before {
                break;
            }
        }
    }
}

/// The files a check would read, and the configuration files that may apply to them: in the
/// directory of each file and root given, and in every directory above them.
fn snapshot(options: &ScanOptions) -> Snapshot {
    let (files, _) = scan::files(options);
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let roots = if options.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        options.paths.clone()
    };
    for path in files.iter().chain(&roots) {
        let absolute = retry_audit::source::paths::absolute(path);
        let start = if absolute.is_dir() {
            absolute.as_path()
        } else {
            absolute.parent().unwrap_or(Path::new("/"))
        };
        for dir in start.ancestors() {
            if !dirs.insert(dir.to_path_buf()) {
                break;
            }
        }
    }
    let configs = dirs.iter().flat_map(|dir| {
        config::FILE_NAMES
            .iter()
            .chain(&["Cargo.toml"])
            .map(move |name| dir.join(name))
    });
    files
        .iter()
        .cloned()
        .chain(configs)
        .map(|path| {
            let stamp = std::fs::metadata(&path)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            (path, stamp)
        })
        .collect()
}
