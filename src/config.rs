//! Configuration: `retry-audit.toml`, `.retry-audit.toml`, or a `[package.metadata.retry-audit]`
//! / `[workspace.metadata.retry-audit]` table in `Cargo.toml`, all with the same keys:
//!
//! ```toml
//! exclude = ["generated/**", "vendor"]       # paths not walked (globs, see below)
//!
//! [rules]                                    # levels by id or name: allow, warn, deny
//! fixed-delay = "allow"
//! RA004 = "deny"
//!
//! [[per-path]]                               # levels for some paths only (later wins)
//! paths = ["tests/**", "benches"]
//! rules = { unbounded-retry = "warn", fixed-delay = "allow" }
//!
//! [extend]                                   # teach the analysis a team's own wrappers
//! sleep-fns = ["crate::time::pause"]
//! random-sources = ["crate::rng::jitter"]
//! key-constructors = ["crate::ids::new_request_id"]
//! status-accessors = ["http_status"]
//! ```
//!
//! **Discovery** ([`Configs`]), per file, as ruff does: from the file's directory upward, the
//! first directory that has `.retry-audit.toml`, `retry-audit.toml` (in that order) or a
//! `Cargo.toml` with one of the metadata tables configures the file; nothing is merged, so a
//! subdirectory with its own file is configured by it alone. The search stops at the filesystem
//! root and after the first directory that holds `.git` or `.hg` (a repository root), so a
//! checkout never picks up a file from outside it. Where the tool runs from does not matter.
//! `--config FILE` names one file for every file instead ([`load`]; a file named `Cargo.toml`
//! is read for its metadata tables). The language server finds a document's configuration the
//! same way.
//!
//! **Paths** in `exclude` and `per-path` are globs relative to the directory of the file that
//! sets them (`*` and `?` stop at `/`, `**` crosses it). A pattern without `/` matches a file or
//! directory name anywhere (`vendor`, `*_generated.rs`); a pattern with `/` matches the path
//! from that directory (`src/legacy/**`; a leading `/` anchors a single name: `/tests` is the
//! top-level `tests` only); a directory that matches covers everything under it. Excluded paths are not walked; a file named on the command line is always checked.
//!
//! **Precedence** ([`RunConfig::settings_for`]): rule defaults, then `[rules]`, then each
//! matching `[[per-path]]` in file order, then the command line (`--allow`, `--warn`, `--deny`).
//!
//! Unknown keys, unknown rules, bad levels, bad globs and bad extension paths are errors that
//! name the file, line and column ([`ConfigError`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use crate::analysis::Extensions;
use crate::checks::registry::{Level, Rule};
use crate::checks::Settings;
use crate::source::paths::{absolute, normalize, relative_to};
use crate::source::Position;

/// Configuration file names, in the order they are looked for in each directory.
pub const FILE_NAMES: [&str; 2] = [".retry-audit.toml", "retry-audit.toml"];

/// Directories that mark a repository root: the upward search stops after checking one.
const REPOSITORY_MARKERS: [&str; 2] = [".git", ".hg"];

/// A configuration, read and checked.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it was read from; `None` for the defaults.
    pub source: Option<PathBuf>,
    /// The directory that path patterns are relative to (the file's directory), absolute.
    pub root: PathBuf,
    /// `[rules]`: levels for every file.
    pub rules: Vec<(Rule, Level)>,
    /// `exclude`: paths not walked.
    pub exclude: Globs,
    /// `[[per-path]]`: levels for some paths, in file order.
    pub per_path: Vec<PerPath>,
    /// `[extend]`: names the analysis learns.
    pub extensions: Extensions,
    /// `preview = true`: the rules of the preview tier run too.
    pub preview: bool,
}

/// One `[[per-path]]` entry.
#[derive(Clone, Debug)]
pub struct PerPath {
    pub paths: Globs,
    pub rules: Vec<(Rule, Level)>,
}

/// A list of path globs (see the module documentation for how they match).
#[derive(Clone, Debug, Default)]
pub struct Globs {
    patterns: Vec<String>,
    /// Patterns without `/`: matched against each path component.
    names: GlobSet,
    /// Patterns with `/`: matched against the relative path and each of its ancestors.
    paths: GlobSet,
}

impl Globs {
    /// Compiles patterns given on the command line (see the module documentation for how they
    /// match); the error says which pattern is bad and why.
    pub fn from_patterns(patterns: &[String]) -> Result<Globs, String> {
        Globs::new(patterns).map_err(|(_, message)| message)
    }

    /// Compiles patterns; the error is the index of the bad pattern and why.
    fn new(patterns: &[String]) -> Result<Globs, (usize, String)> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for (i, pattern) in patterns.iter().enumerate() {
            // A leading `/` or `./` anchors a pattern at the root, as in `.gitignore`.
            let anchored = pattern.starts_with('/') || pattern.starts_with("./");
            let trimmed = pattern.trim_start_matches("./").trim_matches('/');
            if trimmed.is_empty() {
                return Err((i, "empty path pattern".to_owned()));
            }
            let glob = GlobBuilder::new(trimmed)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| (i, format!("invalid glob `{pattern}`: {}", e.kind())))?;
            if anchored || trimmed.contains('/') {
                paths.add(glob);
            } else {
                names.add(glob);
            }
        }
        let build = |set: GlobSetBuilder| set.build().map_err(|e| (0, e.to_string()));
        Ok(Globs {
            patterns: patterns.to_vec(),
            names: build(names)?,
            paths: build(paths)?,
        })
    }

    /// The patterns as written.
    #[must_use]
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `relative` (a path relative to the configuration's directory) or one of its
    /// ancestors matches.
    #[must_use]
    pub fn matches(&self, relative: &Path) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let mut prefix = String::new();
        for component in relative.components() {
            let Component::Normal(name) = component else {
                if component == Component::ParentDir {
                    prefix.push_str(if prefix.is_empty() { ".." } else { "/.." });
                }
                continue;
            };
            let name = name.to_string_lossy();
            if self.names.is_match(name.as_ref()) {
                return true;
            }
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(&name);
            if self.paths.is_match(&prefix) {
                return true;
            }
        }
        false
    }
}

/// A configuration that cannot be used: the file, where in it (when known), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub position: Option<Position>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(Position { line, column }) => {
                write!(
                    f,
                    "{}:{line}:{column}: {}",
                    self.path.display(),
                    self.message
                )
            }
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The raw keys, as written; checked into a [`Config`] by [`Checker`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    #[serde(default)]
    preview: bool,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    per_path: Vec<RawPerPath>,
    #[serde(default)]
    extend: crate::analysis::known::RawExtensions,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPerPath {
    paths: Spanned<Vec<Spanned<String>>>,
    rules: BTreeMap<Spanned<String>, Spanned<String>>,
}

/// The parts of a `Cargo.toml` that matter here; everything else is ignored.
#[derive(Debug, Deserialize)]
struct Manifest {
    package: Option<MetadataHolder>,
    workspace: Option<MetadataHolder>,
}

#[derive(Debug, Deserialize)]
struct MetadataHolder {
    metadata: Option<Metadata>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    #[serde(rename = "retry-audit")]
    retry_audit: Option<Spanned<RawConfig>>,
}

/// Turns byte offsets of one file into positions, and raw keys into checked ones.
struct Checker<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn error(
        &self,
        span: Option<std::ops::Range<usize>>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            path: self.path.to_path_buf(),
            position: span.map(|span| position_of(self.text, span.start)),
            message: message.into(),
        }
    }

    fn toml_error(&self, error: &toml::de::Error) -> ConfigError {
        self.error(error.span(), error.message().trim_end())
    }

    fn levels(
        &self,
        table: &BTreeMap<Spanned<String>, Spanned<String>>,
    ) -> Result<Vec<(Rule, Level)>, ConfigError> {
        let mut out: Vec<(Rule, Level, &Spanned<String>)> = Vec::new();
        // In the order written, so that a duplicate is reported at its second spelling.
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
        for (key, value) in entries {
            let rule = Rule::from_code(key.get_ref()).ok_or_else(|| {
                self.error(
                    Some(key.span()),
                    format!(
                        "unknown rule `{}`; valid rules are {}",
                        key.get_ref(),
                        valid_rules()
                    ),
                )
            })?;
            let level = parse_level(value.get_ref()).ok_or_else(|| {
                self.error(
                    Some(value.span()),
                    format!(
                        "invalid level `{}` for `{}`; expected `allow`, `warn` or `deny`",
                        value.get_ref(),
                        key.get_ref()
                    ),
                )
            })?;
            if let Some((_, _, first)) = out.iter().find(|(r, _, _)| *r == rule) {
                return Err(self.error(
                    Some(key.span()),
                    format!(
                        "`{}` names the same rule as `{}` ({rule} {})",
                        key.get_ref(),
                        first.get_ref(),
                        rule.name()
                    ),
                ));
            }
            out.push((rule, level, key));
        }
        Ok(out
            .into_iter()
            .map(|(rule, level, _)| (rule, level))
            .collect())
    }

    fn globs(&self, patterns: &[Spanned<String>]) -> Result<Globs, ConfigError> {
        let strings: Vec<String> = patterns.iter().map(|p| p.get_ref().clone()).collect();
        Globs::new(&strings)
            .map_err(|(i, message)| self.error(patterns.get(i).map(Spanned::span), message))
    }

    fn check(&self, raw: &RawConfig, root: PathBuf) -> Result<Config, ConfigError> {
        let mut per_path = Vec::new();
        for entry in &raw.per_path {
            if entry.paths.get_ref().is_empty() {
                return Err(self.error(Some(entry.paths.span()), "`paths` is empty"));
            }
            per_path.push(PerPath {
                paths: self.globs(entry.paths.get_ref())?,
                rules: self.levels(&entry.rules)?,
            });
        }
        Ok(Config {
            source: Some(self.path.to_path_buf()),
            root,
            rules: self.levels(&raw.rules)?,
            exclude: self.globs(&raw.exclude)?,
            per_path,
            preview: raw.preview,
            // The same code reads the built-in models (`models/*.toml`).
            extensions: raw
                .extend
                .check()
                .map_err(|(span, message)| self.error(Some(span), message))?,
        })
    }
}

/// `allow`, `warn`/`warning`, `deny`/`error`.
fn parse_level(word: &str) -> Option<Level> {
    match word {
        "allow" => Some(Level::Allow),
        "warn" | "warning" => Some(Level::Warning),
        "deny" | "error" => Some(Level::Error),
        _ => None,
    }
}

/// `RA001 (unbounded-retry), RA002 (fixed-delay), ...`
fn valid_rules() -> String {
    Rule::ALL
        .iter()
        .map(|r| format!("{} ({})", r.id(), r.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The 1-based line and column (in characters) of a byte offset of `text`.
fn position_of(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

/// The directory a configuration file's patterns are relative to.
fn root_of(path: &Path) -> PathBuf {
    let absolute = absolute(path);
    absolute
        .parent()
        .map_or_else(|| absolute.clone(), Path::to_path_buf)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    fs::read_to_string(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        position: None,
        message: format!("cannot read: {e}"),
    })
}

/// Parses the text of a `retry-audit.toml`. `path` names it in errors and sets the root.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let checker = Checker { path, text };
    let raw: RawConfig = toml::from_str(text).map_err(|e| checker.toml_error(&e))?;
    checker.check(&raw, root_of(path))
}

/// Parses the metadata tables of a `Cargo.toml`; `None` when it has neither.
pub fn parse_manifest(text: &str, path: &Path) -> Result<Option<Config>, ConfigError> {
    let checker = Checker { path, text };
    let manifest: Manifest = toml::from_str(text).map_err(|e| checker.toml_error(&e))?;
    let table = |holder: Option<MetadataHolder>| {
        holder.and_then(|h| h.metadata).and_then(|m| m.retry_audit)
    };
    match (table(manifest.package), table(manifest.workspace)) {
        (Some(_), Some(workspace)) => Err(checker.error(
            Some(workspace.span()),
            "both [package.metadata.retry-audit] and [workspace.metadata.retry-audit] are set; \
             keep one",
        )),
        (Some(raw), None) | (None, Some(raw)) => {
            checker.check(raw.get_ref(), root_of(path)).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// Reads the file given with `--config`: a `Cargo.toml` is read for its metadata tables (and
/// must have one), anything else as a `retry-audit.toml`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = read(path)?;
    if path.file_name().is_some_and(|name| name == "Cargo.toml") {
        parse_manifest(&text, path)?.ok_or_else(|| ConfigError {
            path: path.to_path_buf(),
            position: None,
            message: "has no [package.metadata.retry-audit] or [workspace.metadata.retry-audit] \
                      table"
                .to_owned(),
        })
    } else {
        parse(&text, path)
    }
}

/// The configuration file of one directory, if it has one: `.retry-audit.toml`,
/// `retry-audit.toml` (in that order), or a `Cargo.toml` with one of the metadata tables. It is
/// named relative to `cwd` in messages, as the scanned files are.
fn config_in(dir: &Path, cwd: &Path) -> Result<Option<Config>, ConfigError> {
    for name in FILE_NAMES {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return load(&relative_to(&candidate, cwd)).map(Some);
        }
    }
    let manifest = relative_to(&dir.join("Cargo.toml"), cwd);
    if manifest.is_file() {
        let text = read(&manifest)?;
        // Only a manifest that mentions the tool can configure it; others are not parsed.
        if text.contains("retry-audit") {
            return parse_manifest(&text, &manifest);
        }
    }
    Ok(None)
}

/// Whether the upward search stops after `dir`: it holds `.git` or `.hg`.
fn is_repository_root(dir: &Path) -> bool {
    REPOSITORY_MARKERS.iter().any(|m| dir.join(m).exists())
}

/// The configuration of every file of a run, each with the command line's levels on top: one
/// file for all (`--config FILE`), none (`--isolated`), or, by default, for each file the
/// nearest configuration above it, as ruff finds its own ([`Configs::for_path`], which the
/// command line and the language server both use).
///
/// Discovery starts in the directory of the file (for a directory entry met while walking, the
/// directory it is in) and goes up to the first directory that has a configuration file (see
/// [`FILE_NAMES`]; nothing is merged), stopping at the filesystem root and after a repository
/// root (a directory holding `.git` or `.hg`). Each directory is looked at once: the answer is
/// remembered for it and every directory the search went through, so asking for every file of
/// a large tree reads each configuration file once.
#[derive(Debug)]
pub struct Configs {
    /// Whether `defaults` is every file's configuration (`--config`, `--isolated`).
    fixed: bool,
    /// `--exclude` and `--extend-exclude`, for every configuration.
    exclude: Option<Arc<CommandLineExclude>>,
    /// The configuration of a file no configuration file is found for, the command line on top.
    defaults: Arc<RunConfig>,
    command_line: Settings,
    /// The answer for each directory already looked at (absolute, normalised).
    by_dir: Mutex<HashMap<PathBuf, Result<Arc<RunConfig>, ConfigError>>>,
    /// Where relative paths start.
    cwd: PathBuf,
}

impl Configs {
    /// `config` for every file (`--config FILE`; `Config::default()` for `--isolated`).
    #[must_use]
    pub fn fixed(config: Config, command_line: &Settings) -> Configs {
        Configs {
            fixed: true,
            ..Configs::with_defaults(config, command_line)
        }
    }

    /// For each file, the nearest configuration above it, or the defaults.
    #[must_use]
    pub fn discover(command_line: &Settings) -> Configs {
        Configs::with_defaults(Config::default(), command_line)
    }

    fn with_defaults(defaults: Config, command_line: &Settings) -> Configs {
        Configs {
            fixed: false,
            exclude: None,
            defaults: Arc::new(RunConfig::new(defaults, command_line)),
            command_line: command_line.clone(),
            by_dir: Mutex::new(HashMap::new()),
            cwd: absolute(Path::new(".")),
        }
    }

    /// Sets the exclusions of the command line (`--exclude`, `--extend-exclude`) for every
    /// configuration of the run.
    #[must_use]
    pub fn with_command_line_exclude(mut self, exclude: CommandLineExclude) -> Configs {
        let exclude = Arc::new(exclude);
        let mut defaults = (*self.defaults).clone();
        defaults.exclude = Some(Arc::clone(&exclude));
        self.defaults = Arc::new(defaults);
        self.exclude = Some(exclude);
        self
    }

    /// The settings of a file no configuration file configures (for `--config`, of a file no
    /// `[[per-path]]` entry matches).
    #[must_use]
    pub fn base_settings(&self) -> &Settings {
        self.defaults.settings()
    }

    /// The configuration that applies to `path`, a file or an entry found while walking a
    /// directory: the one found from the directory it is in. An invalid configuration file is
    /// an error, for every path it would configure.
    pub fn for_path(&self, path: &Path) -> Result<Arc<RunConfig>, ConfigError> {
        if self.fixed {
            return Ok(Arc::clone(&self.defaults));
        }
        let path = normalize(&self.cwd.join(path));
        self.for_dir(path.parent().unwrap_or(&path))
    }

    /// The settings of the file `path`: its configuration's levels for it, the command line on
    /// top.
    pub fn settings_for(&self, path: &Path) -> Result<Settings, ConfigError> {
        self.for_path(path)
            .map(|run| run.settings_for(path).into_owned())
    }

    /// The configuration of the files of `dir` (absolute and normalised), by discovery.
    fn for_dir(&self, dir: &Path) -> Result<Arc<RunConfig>, ConfigError> {
        // A panic while holding the lock cannot leave a half-made entry: take the map anyway.
        let mut known = self
            .by_dir
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut visited: Vec<&Path> = Vec::new();
        let mut answer = None;
        for candidate in dir.ancestors() {
            if let Some(found) = known.get(candidate) {
                answer = Some(found.clone());
                break;
            }
            visited.push(candidate);
            match config_in(candidate, &self.cwd) {
                Ok(Some(config)) => {
                    let mut run = RunConfig::new(config, &self.command_line);
                    run.exclude.clone_from(&self.exclude);
                    answer = Some(Ok(Arc::new(run)));
                    break;
                }
                Err(e) => {
                    answer = Some(Err(e));
                    break;
                }
                Ok(None) if is_repository_root(candidate) => break,
                Ok(None) => {}
            }
        }
        let answer = answer.unwrap_or_else(|| Ok(Arc::clone(&self.defaults)));
        for candidate in visited {
            known.insert(candidate.to_path_buf(), answer.clone());
        }
        answer
    }
}

/// The exclusions of the command line, as ruff's: `--exclude` patterns replace each
/// configuration's `exclude`, `--extend-exclude` patterns are added to it. Both are relative to
/// the current directory (and match as the configuration's patterns do).
#[derive(Clone, Debug, Default)]
pub struct CommandLineExclude {
    /// `--exclude`, when given.
    pub exclude: Option<Globs>,
    /// `--extend-exclude`.
    pub extend: Globs,
}

/// The configuration in force for one run: a [`Config`] with the command line's levels on top.
#[derive(Clone, Debug)]
pub struct RunConfig {
    config: Config,
    /// `--exclude` and `--extend-exclude`.
    exclude: Option<Arc<CommandLineExclude>>,
    /// The command line's levels and `--deny warnings`.
    command_line: Settings,
    /// The settings of a file that no `[[per-path]]` entry matches.
    base: Settings,
    /// Where relative paths given to [`RunConfig::settings_for`] start.
    cwd: PathBuf,
}

impl RunConfig {
    /// `command_line` holds the levels set by `--allow`, `--warn`, `--deny` and
    /// `--deny warnings`; they override the configuration everywhere.
    #[must_use]
    pub fn new(config: Config, command_line: &Settings) -> RunConfig {
        let mut run = RunConfig {
            config,
            exclude: None,
            command_line: command_line.clone(),
            base: Settings::default(),
            cwd: absolute(Path::new(".")),
        };
        run.base = run.layered(&[]);
        run
    }

    /// The configuration this run uses.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The settings of a file no `[[per-path]]` entry matches.
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.base
    }

    fn layered(&self, per_path: &[&PerPath]) -> Settings {
        let mut settings = Settings::default();
        settings.extensions = self.config.extensions.clone();
        let levels = self
            .config
            .rules
            .iter()
            .chain(per_path.iter().flat_map(|p| p.rules.iter()))
            .copied()
            .chain(self.command_line.overrides());
        for (rule, level) in levels {
            settings.set_level(rule, level);
        }
        settings.warnings_as_errors = self.command_line.warnings_as_errors;
        settings.full_parse = self.command_line.full_parse;
        settings.preview = self.config.preview || self.command_line.preview;
        settings
    }

    /// `path` relative to the configuration's directory.
    fn relative(&self, path: &Path) -> PathBuf {
        let absolute = normalize(&self.cwd.join(path));
        relative_to(&absolute, &self.config.root)
    }

    /// The settings of one file: defaults, `[rules]`, matching `[[per-path]]` entries in
    /// order, the command line.
    #[must_use]
    pub fn settings_for(&self, path: &Path) -> Cow<'_, Settings> {
        if self.config.per_path.is_empty() {
            return Cow::Borrowed(&self.base);
        }
        let relative = self.relative(path);
        let matching: Vec<&PerPath> = self
            .config
            .per_path
            .iter()
            .filter(|p| p.paths.matches(&relative))
            .collect();
        if matching.is_empty() {
            Cow::Borrowed(&self.base)
        } else {
            Cow::Owned(self.layered(&matching))
        }
    }

    /// Whether `exclude` covers `path` (a path found by walking a directory): the
    /// configuration's patterns, or `--exclude`'s in their place, and `--extend-exclude`'s.
    #[must_use]
    pub fn is_excluded(&self, path: &Path) -> bool {
        let from_cwd = || normalize(&self.cwd.join(path));
        let cwd_relative = || relative_to(&from_cwd(), &self.cwd);
        let own = match self.exclude.as_deref().and_then(|e| e.exclude.as_ref()) {
            Some(replaced) => replaced.matches(&cwd_relative()),
            None => {
                !self.config.exclude.patterns.is_empty()
                    && self.config.exclude.matches(&self.relative(path))
            }
        };
        own || self
            .exclude
            .as_deref()
            .is_some_and(|e| e.extend.matches(&cwd_relative()))
    }

    /// The `--exclude` patterns when given, else the configuration's `exclude`, then
    /// `--extend-exclude`'s (for `--show-settings`).
    #[must_use]
    pub fn exclude_patterns(&self) -> (Vec<String>, Vec<String>) {
        let command_line = self.exclude.as_deref();
        let own = match command_line.and_then(|e| e.exclude.as_ref()) {
            Some(replaced) => replaced.patterns().to_vec(),
            None => self.config.exclude.patterns().to_vec(),
        };
        let extend = command_line.map(|e| e.extend.patterns().to_vec());
        (own, extend.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(patterns: &[&str]) -> Globs {
        let patterns: Vec<String> = patterns.iter().map(|&p| p.to_owned()).collect();
        Globs::new(&patterns).expect("valid globs")
    }

    #[test]
    fn globs_match_names_anywhere_and_paths_from_the_root() {
        let g = globs(&["vendor", "*_generated.rs", "src/legacy/**", "/tests"]);
        for yes in [
            "vendor/x.rs",
            "crates/a/vendor/y.rs",
            "src/api_generated.rs",
            "src/legacy/old.rs",
            "src/legacy/deep/er.rs",
            "tests/it.rs",
        ] {
            assert!(g.matches(Path::new(yes)), "{yes} should match");
        }
        for no in [
            "src/lib.rs",
            "src/legacy.rs",
            "crates/tests/x.rs",
            "vendored/x.rs",
        ] {
            assert!(!g.matches(Path::new(no)), "{no} should not match");
        }
    }

    #[test]
    fn a_star_stays_within_one_directory() {
        let g = globs(&["src/*.rs"]);
        assert!(g.matches(Path::new("src/lib.rs")));
        assert!(!g.matches(Path::new("src/a/lib.rs")));
    }

    #[test]
    fn relative_paths_climb_out_with_dot_dot() {
        assert_eq!(
            relative_to(Path::new("/a/b/c.rs"), Path::new("/a/d")),
            Path::new("../b/c.rs")
        );
        assert_eq!(
            relative_to(Path::new("/a/b"), Path::new("/a")),
            Path::new("b")
        );
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
    }
}
