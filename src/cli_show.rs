//! `--show-files` and `--show-settings`, as ruff has them: what a run would check, and with
//! which settings, without checking anything.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use retry_audit::analysis::known::List;
use retry_audit::analysis::Extensions;
use retry_audit::config::RunConfig;
use retry_audit::pipeline::scan::{self, ScanOptions};
use retry_audit::{Rule, Settings};

/// The files a run would check, one per line, sorted; the paths given that cannot be checked on
/// standard error. `Ok(false)` when there was such a path.
pub(crate) fn files(options: &ScanOptions, out: &mut dyn Write) -> io::Result<bool> {
    let (files, bad) = if options.paths.is_empty() && options.config.is_some() {
        // Every path given was excluded (--force-exclude).
        (Vec::new(), Vec::new())
    } else {
        scan::files(options)
    };
    for file in &files {
        writeln!(out, "{}", file.display())?;
    }
    for path in &bad {
        let _ = writeln!(io::stderr(), "error: {path}");
    }
    Ok(bad.is_empty())
}

/// The settings the first file a run would check gets (or, when there is none, a file in the
/// first path given): where they come from, the exclusions, each rule's level and the
/// configuration's `[extend]` lists, in the form of the configuration file.
pub(crate) fn settings(
    options: &ScanOptions,
    force_exclude: bool,
    out: &mut dyn Write,
) -> Result<(), String> {
    let (files, _) = scan::files(options);
    let path = files
        .first()
        .cloned()
        .or_else(|| options.paths.first().cloned())
        .unwrap_or_else(|| PathBuf::from("."));
    let Some(configs) = &options.config else {
        return Err("no configuration to show".to_owned());
    };
    let run = configs.for_path(&path).map_err(|e| e.to_string())?;
    let mut settings = run.settings_for(&path).into_owned();
    if retry_audit::pipeline::index::is_test_file(&path) {
        settings.test_code = true;
    }
    match write_settings(&path, &run, &settings, force_exclude, out) {
        // A closed pipe (`--show-settings | head`) is not an error.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

fn write_settings(
    path: &Path,
    run: &RunConfig,
    settings: &Settings,
    force_exclude: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let list = |items: &[String]| serde_json::to_string(items).unwrap_or_default();
    writeln!(out, "Resolved settings for: {}", path.display())?;
    match &run.config().source {
        Some(source) => writeln!(out, "Settings path: {}", source.display())?,
        None => writeln!(out, "Settings path: none (the defaults)")?,
    }
    let (exclude, extend_exclude) = run.exclude_patterns();
    writeln!(out, "\nexclude = {}", list(&exclude))?;
    writeln!(out, "extend-exclude = {}", list(&extend_exclude))?;
    writeln!(out, "force-exclude = {force_exclude}")?;
    writeln!(out, "excluded = {}", run.is_excluded(path))?;
    writeln!(out, "full-parse = {}", settings.full_parse)?;
    writeln!(out, "preview = {}", settings.preview)?;
    writeln!(out, "test-code = {}", settings.test_code)?;
    writeln!(out, "\n[rules]")?;
    for &rule in Rule::ALL {
        writeln!(
            out,
            "{} {} = \"{}\"",
            rule.id(),
            rule.name(),
            settings.level(rule)
        )?;
    }
    writeln!(out, "\n[extend]")?;
    for (key, items) in extension_lists(&run.config().extensions) {
        if !items.is_empty() {
            writeln!(out, "{key} = {}", list(items))?;
        }
    }
    let policies = run.config().extensions.policies.len();
    if policies > 0 {
        writeln!(out, "# and {policies} [[extend.policies]] entries")?;
    }
    Ok(())
}

/// The configuration's `[extend]` lists, under their keys: every list, the vocabulary's
/// included.
fn extension_lists(e: &Extensions) -> impl Iterator<Item = (&'static str, &[String])> {
    List::ALL.into_iter().map(|list| (list.key(), e.list(list)))
}
