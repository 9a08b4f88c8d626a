//! The pipeline, one for every front end: index the workspace once ([`index`]: each file read
//! and lexed once, grouped by crate), then, file by file in parallel, its one parse and analysis
//! ([`engine::analyse`]: sites, facts, checks), then, per crate, the nested retries found across
//! files and the suppression comments, once ([`engine::finish`]). The command line walks the
//! files and calls [`check_crate`] for each crate ([`scan`]); the language server keeps the
//! index of a document's crate and calls the same steps for the document.

pub mod engine;
pub mod index;
#[cfg(feature = "cli")]
pub mod scan;

#[cfg(feature = "cli")]
pub use crate_check::{check_crate, CrateChecked, FileJob};

#[cfg(feature = "cli")]
mod crate_check {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use rayon::prelude::*;

    use super::engine::{self, Analysed, PhaseTimes};
    use super::index::{CrateIndex, IndexedFile, Sources};
    use crate::checks::diagnostic::Diagnostic;
    use crate::checks::Settings;
    use crate::report::{FileError, FileReport, Outcome, SkipReason};

    /// One file of a crate to check, with its settings.
    pub struct FileJob {
        pub path: PathBuf,
        pub settings: Arc<Settings>,
    }

    /// What [`check_crate`] made of a crate's files, and what it cost.
    #[derive(Debug, Default)]
    pub struct CrateChecked {
        pub files: Vec<FileReport>,
        /// Reading (summed over threads).
        pub read: Duration,
        pub bytes: u64,
        pub files_read: usize,
        /// Per-file phases, summed over threads.
        pub times: PhaseTimes,
        /// RA010 across files and suppression (wall).
        pub cross_file: Duration,
    }

    /// Checks the files of one crate (`root`: its directory with the `Cargo.toml`): reads and
    /// lexes each once ([`CrateIndex`]), analyses each in parallel (one parse each), then finds
    /// the nested retries across its files and applies each file's suppression comments, once.
    /// `advance` is called as each file's analysis ends. Never panics: a bug of the analysis on
    /// one file is that file's internal error.
    pub fn check_crate(
        root: Option<PathBuf>,
        jobs: &[FileJob],
        sources: &dyn Sources,
        advance: &(dyn Fn() + Sync),
    ) -> CrateChecked {
        let read_nanos = AtomicU64::new(0);
        let indexed: Vec<IndexedFile> = jobs
            .par_iter()
            .map(|job| {
                let started = Instant::now();
                let file = IndexedFile::read(job.path.clone(), sources);
                let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                read_nanos.fetch_add(nanos, Ordering::Relaxed);
                file
            })
            .collect();
        let bytes: u64 = indexed.iter().map(|f| f.bytes as u64).sum();
        let files_read = indexed
            .iter()
            .filter(|f| !matches!(f.text, Err(FileError::Io(_))))
            .count();
        let krate = CrateIndex::new(root, indexed, sources);
        let times = std::sync::Mutex::new(PhaseTimes::default());
        let analysed: Vec<Result<Analysed, FileError>> = (0..jobs.len())
            .into_par_iter()
            .map(|i| {
                let mut mine = PhaseTimes::default();
                let result = match &krate.files[i].text {
                    Ok(text) => {
                        engine::analyse(text, &jobs[i].settings, Some((&krate, i)), &mut mine)
                    }
                    Err(e) => Err(e.clone()),
                };
                if let Ok(mut all) = times.lock() {
                    all.parse += mine.parse;
                    all.analyse += mine.analyse;
                    all.parsed += mine.parsed;
                    all.views += mine.views;
                    all.by_values += mine.by_values;
                    all.windows += mine.windows;
                }
                advance();
                result
            })
            .collect();
        let finishing = Instant::now();
        let more = across(&krate, &analysed, jobs);
        let files: Vec<FileReport> = analysed
            .into_par_iter()
            .zip(more)
            .enumerate()
            .map(|(i, (result, more))| {
                let file = &krate.files[i];
                let outcome = match (result, &file.text) {
                    (Ok(analysed), Ok(text)) => {
                        let diagnostics = engine::finish(text, analysed, more, &jobs[i].settings);
                        let source = (!diagnostics.is_empty()).then(|| text.to_string());
                        Outcome::Checked {
                            diagnostics,
                            source,
                        }
                    }
                    // A file that does not parse is a finding (RA000) where the rule is on and
                    // the compiler reads the file.
                    (Err(e), Ok(text)) if krate.is_compiled(i) => {
                        match crate::report::syntax_error(&e, text.as_bytes(), &jobs[i].settings) {
                            Some(finding) => Outcome::Checked {
                                diagnostics: vec![finding],
                                source: Some(text.to_string()),
                            },
                            None => Outcome::Skipped(SkipReason::File(e)),
                        }
                    }
                    (Err(e), Ok(_)) => Outcome::Skipped(SkipReason::File(e)),
                    (_, Err(e)) => Outcome::Skipped(SkipReason::File(e.clone())),
                };
                FileReport {
                    path: file.path.clone(),
                    outcome,
                }
            })
            .collect();
        let mut times = times.into_inner().unwrap_or_default();
        times.views = krate.views_parsed();
        CrateChecked {
            files,
            read: Duration::from_nanos(read_nanos.load(Ordering::Relaxed)),
            bytes,
            files_read,
            times,
            cross_file: finishing.elapsed(),
        }
    }

    /// RA010 across the crate's files: for each file, the findings its calls add.
    fn across(
        krate: &CrateIndex,
        analysed: &[Result<Analysed, FileError>],
        jobs: &[FileJob],
    ) -> Vec<Vec<Diagnostic>> {
        let ok: Vec<usize> = (0..analysed.len())
            .filter(|&i| analysed[i].is_ok())
            .collect();
        let input: Vec<(String, &Analysed, &Settings)> = ok
            .iter()
            .filter_map(|&i| {
                Some((
                    krate.files[i].path.display().to_string(),
                    analysed[i].as_ref().ok()?,
                    jobs[i].settings.as_ref(),
                ))
            })
            .collect();
        let mut more = vec![Vec::new(); analysed.len()];
        for (k, diagnostic) in engine::nested_across_files(&input) {
            more[ok[k]].push(diagnostic);
        }
        more
    }
}
