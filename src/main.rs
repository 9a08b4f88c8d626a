//! The `retry-audit` command line: parses arguments, runs the scan, renders, sets the exit code
//! (0: nothing at error level, 1: findings at error level, 2: usage, configuration or I/O error,
//! a path given that could not be checked, or with `--strict` a file that could not be checked).
//!
//! Over 1 000 lines on purpose: the command line's arguments and their documentation (`--help`)
//! are most of it; the work is the library's.

use std::io::{self, BufWriter, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use codespan_reporting::term::termcolor::WriteColor;

use retry_audit::cli::workspace;
use retry_audit::config;
use retry_audit::pipeline::scan::{self, ScanOptions};
use retry_audit::report::baseline;
use retry_audit::report::render::location::Root;
use retry_audit::report::render::{
    self, cargo_json, concise, github, gitlab, human, json, sarif, statistics,
};
use retry_audit::report::ScanReport;
use retry_audit::{fix, lsp};
use retry_audit::{Level, Rule, Settings};

mod cli_diff_base;
mod cli_output;
mod cli_progress;
mod cli_select;
mod cli_show;
mod cli_stdin;
mod cli_watch;

const AFTER_HELP: &str = "\
Rules are named by id or name, e.g. `--allow RA002` or `--allow fixed-delay`. When the same rule
is given to several level flags, the last one wins.

Which rules run and how loud they are: each rule starts at its default level, then the
configuration file's `[rules]` and matching `[[per-path]]` entries, then --allow, --warn and
--deny set levels. --select and --ignore (ids, names, id prefixes such as `RA00`, or `ALL`;
comma-separated or repeated) then only take rules away: with --select, only the rules it names
run; --ignore removes rules, and wins over --select and over the level flags for the same rule.
A selected rule runs at the level set above, so one the configuration allows stays off (turn it
on with --warn or --deny).

Exit status: 0 when nothing is reported at error level, 1 when something is (0 with
--exit-zero), 2 on a usage, configuration or I/O error, or with --strict when a file could not be
checked. A file that does not parse is a finding, RA000 (syntax-error), at error level.

On a terminal, a scan that lasts over half a second shows a progress bar on standard error (files
checked / files found, files per second), cleared before the report; never with a machine format
(json, sarif, github, gitlab, cargo-json), when standard error is not a terminal, or with --quiet.

A subcommand name given as the first argument is the subcommand: to check a file or directory
literally named `check`, `explain`, `rules` or `lsp`, write `./explain`, or put the paths after
`--`. `retry-audit check [OPTIONS] [PATHS]...` is the same as `retry-audit [OPTIONS] [PATHS]...`,
as `ruff check`.";

/// Finds retry anti-patterns in Rust code: unbounded retries, fixed delays, backoff without
/// jitter, retried client errors and idempotency keys made per attempt.
#[derive(Debug, Parser)]
#[command(
    name = "retry-audit",
    version,
    args_conflicts_with_subcommands = true,
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check files and directories (the default command): `retry-audit check PATHS` is
    /// `retry-audit PATHS`.
    #[command(after_help = AFTER_HELP)]
    Check(Box<CheckArgs>),
    /// Print the documentation of a rule: the text of its page, docs/rules/RULE-ID.md.
    Explain {
        /// Rule id or name, e.g. RA003 or missing-jitter.
        #[arg(value_name = "RULE", value_parser = parse_rule)]
        rule: Rule,
    },
    /// List every rule with its id, name, default level and summary.
    Rules {
        /// `text`: aligned columns; `json`: one JSON array of {id, name, level, summary, docs,
        /// url} objects (level: the default; docs: the rule's page in the project,
        /// docs/rules/RULE-ID.md; url: that page in the repository the manifest names, or
        /// null), for editor extensions and documentation sites.
        #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RulesFormat::Text)]
        format: RulesFormat,
    },
    /// Run the language server (LSP) on standard input and output, for editors.
    Lsp {
        /// Run the rules of the preview tier too (as `--preview` for a scan; also
        /// `RETRY_AUDIT_PREVIEW=1`, or `preview = true` in the configuration).
        #[arg(long)]
        preview: bool,
    },
}

#[derive(Clone, Debug, clap::Args)]
struct CheckArgs {
    /// Files and directories to check. Directories are searched for `*.rs` files, skipping
    /// hidden and `.gitignore`d entries and `target` directories; files named here are always
    /// checked. A path that is missing or not a file or directory (a FIFO, a device) is
    /// reported, the others are checked, and the exit status is 2. `-` (alone) reads the source
    /// from standard input.
    #[arg(value_name = "PATHS", default_value = ".")]
    paths: Vec<PathBuf>,

    /// The name of the source read from standard input (`-`), used in messages and to find its
    /// settings (`[[per-path]]` levels) [default: `-`]. Without paths, standard input is read.
    /// With --fix, the fixed source is written to standard output and the report to standard
    /// error.
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<PathBuf>,

    /// Output format (`--output-format` is ruff's name for it, `--message-format` cargo's).
    #[arg(
        long,
        visible_aliases = ["output-format", "message-format"],
        value_enum,
        value_name = "FORMAT",
        default_value_t = Format::Human
    )]
    format: Format,

    /// Write the report to FILE instead of standard output (every format, and --diff's diff);
    /// FILE and its missing directories are created, an existing FILE is overwritten.
    #[arg(long, short = 'o', value_name = "FILE")]
    output_file: Option<PathBuf>,

    /// Print the findings and problems only: no summary line, no count of the fixes applied or
    /// of the findings the baseline hid, no progress bar. Skipped files and errors are still
    /// reported on standard error, and --stats still prints.
    #[arg(long, short = 'q')]
    quiet: bool,

    /// Print how many findings each rule has (count, id, name; most first) instead of the
    /// findings. With --format json, one JSON array; not with the other machine formats.
    #[arg(long, conflicts_with_all = ["diff", "write_baseline"])]
    statistics: bool,

    /// When to colour the output (`human` and `concise`). With `auto`, `NO_COLOR` (set, not empty) turns
    /// colour off and `CLICOLOR_FORCE` (set, not empty, not 0) turns it on even when the output
    /// is not a terminal; `NO_COLOR` wins. `always` and `never` win over both.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    color: Color,

    /// Report RULE as an error (repeatable); `--deny warnings` makes every warning an error.
    #[arg(long, value_name = "RULE", value_parser = parse_deny)]
    deny: Vec<Deny>,

    /// Report RULE as a warning (repeatable).
    #[arg(long, value_name = "RULE", value_parser = parse_rule)]
    warn: Vec<Rule>,

    /// Do not run RULE (repeatable).
    #[arg(long, value_name = "RULE", value_parser = parse_rule)]
    allow: Vec<Rule>,

    /// Run only these rules: ids, names, id prefixes (`RA00`) or `ALL`, comma-separated or
    /// repeated. An unknown rule or a prefix that matches none is an error.
    #[arg(
        long,
        value_name = "RULES",
        value_delimiter = ',',
        value_parser = cli_select::parse_selector
    )]
    select: Vec<cli_select::Selector>,

    /// Run these rules too, in addition to those of --select (ids, names, id prefixes or `ALL`,
    /// comma-separated or repeated).
    #[arg(
        long,
        value_name = "RULES",
        value_delimiter = ',',
        value_parser = cli_select::parse_selector
    )]
    extend_select: Vec<cli_select::Selector>,

    /// Do not run these rules (ids, names, id prefixes or `ALL`, comma-separated or repeated);
    /// wins over --select and over the level flags.
    #[arg(
        long,
        value_name = "RULES",
        value_delimiter = ',',
        value_parser = cli_select::parse_selector
    )]
    ignore: Vec<cli_select::Selector>,

    /// Number of files checked in parallel, at least 1 [default: number of cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_jobs)]
    jobs: Option<NonZeroUsize>,

    /// Apply the machine-applicable fixes in place (files that parse, atomically, only if
    /// unchanged since read), then report what is left. A read-only file is not fixed, and a
    /// fixed file that cannot be written makes the exit status 2.
    #[arg(long, conflicts_with = "diff")]
    fix: bool,

    /// Print the fixes as a unified diff instead of applying them; no file is changed. Exits 1
    /// when there is something to fix.
    #[arg(long)]
    diff: bool,

    /// Exit with status 0 even when findings are at error level (or, with --diff, when there is
    /// something to fix). Usage, configuration and I/O errors still exit 2, and so does
    /// --strict when a file could not be checked.
    #[arg(long)]
    exit_zero: bool,

    /// Exit with status 2 when a file could not be checked (unreadable, not UTF-8, too deeply
    /// nested; one that does not parse when RA000 is off), after reporting everything else;
    /// implies --full-parse, so a syntax error anywhere is reported (RA000). Without it, skipped
    /// files are listed as warnings and do not change the exit status.
    #[arg(long)]
    strict: bool,

    /// Parse every function body. By default the bodies that can neither hold nor inform a
    /// retry site (no loop, no retry or timeout word, no nested item, not named elsewhere in the
    /// file) are not parsed, which is faster and finds the same; a syntax error inside such a
    /// body is then not seen. Implied by --strict.
    #[arg(long)]
    full_parse: bool,

    /// Run the rules of the preview tier too (`retry-audit rules` lists each rule's tier). A
    /// rule is stable, and runs by default, only while its precision on findings judged in code
    /// not used for tuning is at least 0.90; the others are preview, as ruff's preview rules and
    /// clippy's nursery. Also `preview = true` in the configuration. A preview rule selected by
    /// name (`--select RA009`, `--warn RA009`) runs without this.
    #[arg(long)]
    preview: bool,

    /// After the report, print to standard error how many files were found, checked and
    /// skipped (by reason) and the time of each phase (walk, read, parse, analyse, report).
    #[arg(long)]
    stats: bool,

    /// Read the configuration of every file from FILE (a `retry-audit.toml`, or a `Cargo.toml`
    /// with a `[package.metadata.retry-audit]` or `[workspace.metadata.retry-audit]` table)
    /// instead of looking for the nearest one above each file.
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    config: Option<PathBuf>,

    /// Ignore every configuration file: rule defaults and command-line flags only.
    #[arg(long)]
    isolated: bool,

    /// Paths not to walk, instead of the configuration's `exclude`: globs relative to the
    /// current directory (a pattern without `/` matches a file or directory name anywhere),
    /// comma-separated or repeated. Paths named on the command line are checked anyway, unless
    /// --force-exclude.
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    exclude: Option<Vec<String>>,

    /// Paths not to walk, in addition to the configuration's `exclude` (globs as --exclude).
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    extend_exclude: Vec<String>,

    /// Apply the exclusions to the paths named on the command line too, and to
    /// --stdin-filename (an excluded input is not checked), as for the files pre-commit and
    /// editors pass.
    #[arg(long)]
    force_exclude: bool,

    /// Check, then check again whenever a Rust file to check or a configuration file changes,
    /// until interrupted (Ctrl-C); on a terminal each report replaces the last.
    #[arg(
        long,
        short = 'w',
        conflicts_with_all = ["fix", "diff", "write_baseline", "stdin_filename", "show_files", "show_settings"]
    )]
    watch: bool,

    /// Print the files that would be checked, one per line, and exit.
    #[arg(long, conflicts_with_all = ["show_settings", "fix", "diff", "write_baseline", "statistics"])]
    show_files: bool,

    /// Print the settings the first file to check would get (the configuration file, the
    /// exclusions, each rule's level, the `[extend]` lists) and exit.
    #[arg(long, conflicts_with_all = ["fix", "diff", "write_baseline", "statistics"])]
    show_settings: bool,

    /// Report only the findings that are not recorded in the baseline FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    baseline: Option<PathBuf>,

    /// Report only the findings on lines changed since the git revision REV (`git diff REV`:
    /// the working tree against REV, and the untracked files), as for a pull request against
    /// its base; the others are not reported and do not fail the run.
    #[arg(long, value_name = "REV", conflicts_with_all = ["fix", "diff", "write_baseline"])]
    diff_base: Option<String>,

    /// Record every current finding in the baseline FILE (JSON) instead of reporting them;
    /// exits 0. Not with --diff, which writes nothing.
    #[arg(long, value_name = "FILE", conflicts_with = "diff")]
    write_baseline: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Diagnostics in the style of rustc, then a summary line.
    Human,
    /// One `path:line:col: RA002 message` line per finding, then a summary line.
    #[value(alias = "short")]
    Concise,
    /// JSON Lines: one object per finding, nothing else on stdout.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// Cargo's JSON messages, as `cargo check --message-format=json` prints them.
    CargoJson,
}

/// The output of `retry-audit rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum RulesFormat {
    /// One line per rule: id, name, default level, summary.
    Text,
    /// One JSON array of {id, name, level, summary, docs, url}.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Color {
    /// Colour when stdout is a terminal.
    Auto,
    Always,
    Never,
}

/// The argument of `--deny`: a rule, or `warnings` for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deny {
    Rule(Rule),
    Warnings,
}

fn parse_rule(code: &str) -> Result<Rule, String> {
    Rule::from_code(code).ok_or_else(|| {
        format!(
            "unknown rule `{code}`; valid rules are {}",
            render::valid_rules()
        )
    })
}

fn parse_deny(code: &str) -> Result<Deny, String> {
    if code == "warnings" {
        Ok(Deny::Warnings)
    } else {
        parse_rule(code).map(Deny::Rule)
    }
}

// `pub(crate)`: `src/bin/cargo-retry-audit.rs` includes this file as a module and calls it.
pub(crate) fn main() -> ExitCode {
    let (args, cargo) = command_line();
    let command = Cli::command();
    let command = if cargo {
        command.bin_name("cargo retry-audit")
    } else {
        command
    };
    let matches = command.clone().get_matches_from(args);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Some(Command::Explain { rule }) => print_to_stdout(|out| render::write_explain(rule, out)),
        Some(Command::Rules { format }) => print_to_stdout(match format {
            RulesFormat::Text => render::write_rule_list,
            RulesFormat::Json => render::write_rule_list_json,
        }),
        Some(Command::Lsp { preview }) => return serve_lsp(preview || preview_from_env()),
        Some(Command::Check(args)) => {
            let sub = matches.subcommand_matches("check").unwrap_or(&matches);
            let mut check_command = command
                .find_subcommand("check")
                .cloned()
                .unwrap_or_else(|| command.clone());
            return run_check(&mut check_command, &args, sub, cargo);
        }
        None => {
            let mut command = command;
            return run_check(&mut command, &cli.check, &matches, cargo);
        }
    };
    exit_after_output(result, ExitCode::SUCCESS)
}

/// The check, `retry-audit [OPTIONS] [PATHS]` or `retry-audit check ...`: the combinations of
/// flags clap cannot check are usage errors, then the scan.
fn run_check(
    command: &mut clap::Command,
    args: &CheckArgs,
    matches: &ArgMatches,
    cargo: bool,
) -> ExitCode {
    if let Err(message) = check_conventions(args, matches) {
        command
            .error(clap::error::ErrorKind::ArgumentConflict, message)
            .exit();
    }
    exit_zero(check(args, matches, cargo), args.exit_zero)
}

/// The arguments, and whether this is `cargo retry-audit`: cargo runs the `cargo-retry-audit`
/// binary (this same program, see `src/bin/cargo-retry-audit.rs`) with `retry-audit` as the
/// first argument, which is dropped here.
fn command_line() -> (Vec<std::ffi::OsString>, bool) {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cargo = args
        .first()
        .and_then(|program| std::path::Path::new(program).file_stem())
        .is_some_and(|stem| stem == "cargo-retry-audit");
    if cargo && args.get(1).is_some_and(|arg| arg == "retry-audit") {
        args.remove(1);
    }
    (args, cargo)
}

/// What to scan and with which settings: the paths given (for `cargo retry-audit` without
/// paths, the workspace members), the configuration file, the command-line levels on top.
fn scan_options(
    args: &CheckArgs,
    matches: &ArgMatches,
    workspace: Option<&workspace::Workspace>,
) -> Result<ScanOptions, String> {
    let here = std::path::Path::new(".");
    let command_line = settings(args, matches);
    // Each file's configuration is found from the file (see `config::Configs`), unless one
    // file is named for all or none is wanted.
    let configs = if args.isolated {
        config::Configs::fixed(config::Config::default(), &command_line)
    } else if let Some(path) = &args.config {
        config::Configs::fixed(
            config::load(path).map_err(|e| e.to_string())?,
            &command_line,
        )
    } else {
        config::Configs::discover(&command_line)
    };
    let configs = configs.with_command_line_exclude(command_line_exclude(args)?);
    let (paths, skip_nested_packages) = if let Some(workspace) = workspace {
        // The current directory is the workspace's root (`enter_workspace_root`).
        let cwd = retry_audit::source::paths::absolute(here);
        let paths = workspace
            .members
            .iter()
            .map(
                |member| match retry_audit::source::paths::relative_to(member, &cwd) {
                    relative if relative.as_os_str().is_empty() => PathBuf::from("."),
                    relative => relative,
                },
            )
            .collect();
        (paths, true)
    } else {
        (args.paths.clone(), false)
    };
    // `--force-exclude`: a path named on the command line is excluded as a walked one would be.
    let paths = if args.force_exclude {
        paths
            .into_iter()
            .filter(|path| !is_excluded(&configs, path))
            .collect()
    } else {
        paths
    };
    Ok(ScanOptions {
        paths,
        settings: configs.base_settings().clone(),
        jobs: args.jobs,
        config: Some(Arc::new(configs)),
        skip_nested_packages,
    })
}

/// `--exclude` and `--extend-exclude`, compiled.
fn command_line_exclude(args: &CheckArgs) -> Result<config::CommandLineExclude, String> {
    let globs = |patterns: &[String], flag: &str| {
        config::Globs::from_patterns(patterns).map_err(|e| format!("{flag}: {e}"))
    };
    Ok(config::CommandLineExclude {
        exclude: args
            .exclude
            .as_deref()
            .map(|p| globs(p, "--exclude"))
            .transpose()?,
        extend: globs(&args.extend_exclude, "--extend-exclude")?,
    })
}

/// Whether the exclusions in force for `path` cover it (an invalid configuration excludes
/// nothing here: the scan reports it).
fn is_excluded(configs: &config::Configs, path: &std::path::Path) -> bool {
    configs
        .for_path(path)
        .is_ok_and(|config| config.is_excluded(path))
}

/// Whether this run scans the members of the Cargo workspace: `cargo retry-audit` without paths
/// (and not reading standard input).
fn scans_workspace(args: &CheckArgs, matches: &ArgMatches, cargo: bool) -> bool {
    cargo && !paths_given(matches) && args.stdin_filename.is_none()
}

/// `cargo retry-audit` scanning the workspace works from the workspace's root, as cargo runs
/// `rustc`, so that paths print relative to it from any directory of the workspace, as cargo
/// and clippy print them. The files named by options are taken from where the command ran.
fn enter_workspace_root(
    args: &mut CheckArgs,
    matches: &ArgMatches,
    cargo: bool,
) -> Result<Option<workspace::Workspace>, String> {
    if !scans_workspace(args, matches, cargo) {
        return Ok(None);
    }
    let workspace = workspace::workspace(std::path::Path::new(".")).map_err(|e| e.to_string())?;
    for path in [
        &mut args.output_file,
        &mut args.config,
        &mut args.baseline,
        &mut args.write_baseline,
    ]
    .into_iter()
    .flatten()
    {
        *path = retry_audit::source::paths::absolute(path);
    }
    std::env::set_current_dir(&workspace.root).map_err(|e| {
        format!(
            "cannot work in the workspace root {}: {e}",
            workspace.root.display()
        )
    })?;
    Ok(Some(workspace))
}

/// The default command: scan, render, exit 1 if anything is at error level.
fn check(args: &CheckArgs, matches: &ArgMatches, cargo: bool) -> ExitCode {
    let started = Instant::now();
    cli_output::set_quiet(args.quiet);
    let mut args = args.clone();
    let workspace = match enter_workspace_root(&mut args, matches, cargo) {
        Ok(workspace) => workspace,
        Err(e) => {
            report_error(&format!("error: {e}"));
            return ExitCode::from(2);
        }
    };
    let args = &args;
    let options = match scan_options(args, matches, workspace.as_ref()) {
        Ok(options) => options,
        Err(e) => {
            report_error(&format!("error: {e}"));
            return ExitCode::from(2);
        }
    };
    if args.show_files {
        let mut all_found = true;
        let shown = print_to_stdout(|out| {
            all_found = cli_show::files(&options, out)?;
            Ok(())
        });
        let code = if all_found {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        };
        return exit_after_output(shown, code);
    }
    if args.show_settings {
        let mut out = io::stdout().lock();
        return match cli_show::settings(&options, args.force_exclude, &mut out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                report_error(&format!("error: {e}"));
                ExitCode::from(2)
            }
        };
    }
    if args.watch {
        watch(args, matches, workspace.as_ref());
    }
    let stdin = match stdin_input(args, matches) {
        Ok(stdin) => stdin,
        Err(e) => {
            report_error(&format!("error: {e}"));
            return ExitCode::from(2);
        }
    };
    let report = match scan_or_read(args, &options, stdin.as_ref()) {
        Ok(report) => report,
        Err(e) => {
            report_error(&format!("error: {e}"));
            return ExitCode::from(2);
        }
    };
    if args.diff {
        let writing = Instant::now();
        let code = show_fixes(&report, &options, &report_target(args, false));
        write_stats(args, &report, started, writing.elapsed());
        return failure_exit(&report, args.strict, false).unwrap_or(code);
    }
    // `--fix`: whether a fixed file could not be written (read-only, an I/O error).
    let (report, unwritten) = if args.fix {
        match fix_in_place_or_stdin(report, &options, stdin.as_ref()) {
            Ok(fixed) => fixed,
            Err(code) => return code,
        }
    } else {
        (report, false)
    };
    if let Some(path) = &args.write_baseline {
        // A skipped file has no findings to record: say which, so the baseline is not taken
        // for complete, and let `--strict` fail the run after the baseline is written.
        let _ = render::write_skipped(&report, &mut io::stderr().lock());
        let writing = Instant::now();
        return match baseline::write(&report, path) {
            Ok(recorded) => {
                cli_output::note(&format!(
                    "retry-audit: recorded {} in {}",
                    count(recorded, "finding", "findings"),
                    path.display()
                ));
                write_stats(args, &report, started, writing.elapsed());
                failure_exit(&report, args.strict, unwritten).unwrap_or(ExitCode::SUCCESS)
            }
            Err(e) => {
                report_error(&format!("error: {e}"));
                ExitCode::from(2)
            }
        };
    }
    let mut report = report;
    if let Err(code) = hide_known(&mut report, args) {
        return code;
    }
    let code = if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    let writing = Instant::now();
    let written = write_report(&report, args, &report_target(args, stdin.is_some()));
    write_stats(args, &report, started, writing.elapsed());
    exit_after_output(
        written,
        failure_exit(&report, args.strict, unwritten).unwrap_or(code),
    )
}

/// `--baseline`: the findings it records are not reported (nor counted); `--diff-base`: nor
/// those on lines not changed since its revision; how many on stderr.
fn hide_known(report: &mut ScanReport, args: &CheckArgs) -> Result<(), ExitCode> {
    if let Some(rev) = &args.diff_base {
        match cli_diff_base::since(rev) {
            Ok(changes) => {
                let hidden = changes.filter(report);
                if hidden > 0 {
                    cli_output::note(&format!(
                        "retry-audit: {} on lines not changed since {rev} hidden",
                        count(hidden, "finding", "findings")
                    ));
                }
            }
            Err(e) => {
                report_error(&format!("error: {e}"));
                return Err(ExitCode::from(2));
            }
        }
    }
    if let Some(path) = &args.baseline {
        let filtered = baseline::Baseline::read(path).map(|b| b.filter(report));
        match filtered {
            Ok(filtered) if filtered.hidden + filtered.stale > 0 => cli_output::note(&format!(
                "retry-audit: {} in the baseline hidden, {} no longer found",
                count(filtered.hidden, "finding", "findings"),
                filtered.stale
            )),
            Ok(_) => {}
            Err(e) => {
                report_error(&format!("error: {e}"));
                return Err(ExitCode::from(2));
            }
        }
    }
    Ok(())
}

/// `--watch`: the check and its report, again after every change to the files or their
/// configuration (see [`cli_watch`]), until interrupted. On a terminal, each report replaces
/// the last on the screen.
fn watch(args: &CheckArgs, matches: &ArgMatches, workspace: Option<&workspace::Workspace>) -> ! {
    use std::io::IsTerminal;
    cli_watch::run(
        || match scan_options(args, matches, workspace) {
            Ok(options) => Some(options),
            Err(e) => {
                report_error(&format!("error: {e}"));
                None
            }
        },
        |options| {
            if args.output_file.is_none() && io::stdout().is_terminal() {
                // Clear the screen and go home, as `ruff check --watch` does.
                print!("\x1b[2J\x1b[H");
            }
            let mut report = match scan_or_read(args, options, None) {
                Ok(report) => report,
                Err(e) => {
                    report_error(&format!("error: {e}"));
                    return;
                }
            };
            if hide_known(&mut report, args).is_ok() {
                let written = write_report(&report, args, &report_target(args, false));
                let _ = exit_after_output(written, ExitCode::SUCCESS);
            }
        },
    )
}

/// `--stats`, on standard error after everything but the `--strict` verdict.
fn write_stats(args: &CheckArgs, report: &ScanReport, started: Instant, reporting: Duration) {
    if args.stats {
        report_error(&render::stats(report, reporting, started.elapsed()));
    }
}

/// Status 2 whatever was found: a path given could not be checked (each was said on stderr
/// before the report), `--fix` could not write a fixed file (`unwritten`, said when it
/// happened), or `--strict` and a file was skipped.
fn failure_exit(report: &ScanReport, strict: bool, unwritten: bool) -> Option<ExitCode> {
    let strict = strict_exit(report, strict);
    if report.has_bad_paths() || unwritten {
        Some(ExitCode::from(2))
    } else {
        strict
    }
}

/// `--strict`: a skipped file fails the run with status 2, said last on stderr (the skipped
/// files themselves are listed with their reasons before).
fn strict_exit(report: &ScanReport, strict: bool) -> Option<ExitCode> {
    let skipped = report.counts().skipped;
    (strict && skipped > 0).then(|| {
        report_error(&format!(
            "error: {} could not be checked (--strict)",
            count(skipped, "file", "files")
        ));
        ExitCode::from(2)
    })
}

/// `--diff`: the fixes as a unified diff on stdout, their count on stderr; exit status 1 when
/// there is something to fix.
fn show_fixes(report: &ScanReport, options: &ScanOptions, target: &cli_output::Target) -> ExitCode {
    let _ = render::write_skipped(report, &mut io::stderr().lock());
    let result = cli_output::open(target, Color::Never).and_then(|mut out| {
        let summary = fix::fix_report(
            report,
            options,
            fix::Mode::Diff,
            &mut out,
            &mut io::stderr(),
        )?;
        out.flush().map(|()| summary)
    });
    match result {
        Ok(summary) => {
            cli_output::note(&format!(
                "retry-audit: {} would be applied to {}",
                count(summary.fixes, "fix", "fixes"),
                count(summary.files, "file", "files")
            ));
            if summary.fixes > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => exit_after_output(Err(e), ExitCode::SUCCESS),
    }
}

/// `--fix`: writes the fixed files, then scans again so that what is reported is what is left.
/// Also says whether a fixed file could not be written (`error: not fixed PATH: ...` on stderr,
/// and the run fails with status 2).
fn fix_in_place(report: ScanReport, options: &ScanOptions) -> Result<(ScanReport, bool), ExitCode> {
    let summary = fix::fix_report(
        &report,
        options,
        fix::Mode::Write,
        &mut io::sink(),
        &mut io::stderr(),
    )
    .unwrap_or_default();
    let unwritten = summary.unwritten > 0;
    if summary.files == 0 {
        return Ok((report, unwritten));
    }
    cli_output::note(&format!(
        "retry-audit: applied {} to {}",
        count(summary.fixes, "fix", "fixes"),
        count(summary.files, "file", "files")
    ));
    match scan::scan(options) {
        Ok(report) => Ok((report, unwritten)),
        Err(e) => {
            report_error(&format!("error: {e}"));
            Err(ExitCode::from(2))
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `retry-audit lsp`: exit status 0 after `shutdown` and `exit`, 1 otherwise.
fn serve_lsp(preview: bool) -> ExitCode {
    match lsp::run_stdio(preview) {
        Ok(lsp::Exit::Clean) => ExitCode::SUCCESS,
        Ok(lsp::Exit::Abrupt) => ExitCode::from(1),
        Err(e) => {
            report_error(&format!("error: language server: {e}"));
            ExitCode::from(1)
        }
    }
}

/// Rule levels from the flags, applied in command-line order so that the last one wins.
fn settings(args: &CheckArgs, matches: &ArgMatches) -> Settings {
    let mut flags: Vec<(usize, Level, Deny)> = Vec::new();
    let indices = |id: &str| matches.indices_of(id).into_iter().flatten();
    flags.extend(
        indices("deny")
            .zip(&args.deny)
            .map(|(i, d)| (i, Level::Error, *d)),
    );
    flags.extend(
        indices("warn")
            .zip(&args.warn)
            .map(|(i, r)| (i, Level::Warning, Deny::Rule(*r))),
    );
    flags.extend(
        indices("allow")
            .zip(&args.allow)
            .map(|(i, r)| (i, Level::Allow, Deny::Rule(*r))),
    );
    flags.sort_by_key(|(index, _, _)| *index);
    let mut settings = Settings::default();
    for (_, level, target) in flags {
        match target {
            Deny::Rule(rule) => settings.set_level(rule, level),
            Deny::Warnings => settings.warnings_as_errors = true,
        }
    }
    cli_select::apply(
        &args.select,
        &args.extend_select,
        &args.ignore,
        &mut settings,
    );
    // `--strict` fails on a file that does not parse: every body must be parsed to know.
    settings.full_parse = args.full_parse || args.strict;
    settings.preview = args.preview || preview_from_env();
    settings
}

/// `RETRY_AUDIT_PREVIEW=1` (or `true`): as `--preview`, where flags are awkward to pass (an
/// editor's language-server settings, a CI step).
fn preview_from_env() -> bool {
    std::env::var("RETRY_AUDIT_PREVIEW").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// Skipped files on stderr, findings on the target (standard output, or `--output-file`), the
/// summary after them (human, concise) or on stderr (machine formats); `--statistics` in place
/// of the findings.
fn write_report(
    report: &ScanReport,
    args: &CheckArgs,
    target: &cli_output::Target,
) -> io::Result<()> {
    // stderr is the channel of last resort: if it is closed, the findings on stdout still count.
    let _ = render::write_skipped(report, &mut io::stderr().lock());
    let mut out = cli_output::open(target, args.color)?;
    let out: &mut dyn WriteColor = &mut *out;
    if args.statistics {
        return write_statistics(report, args.format, out);
    }
    match args.format {
        Format::Human => {
            human::render(report, out)?;
            write_summary(report, out)
        }
        Format::Concise => {
            concise::render(report, out)?;
            write_summary(report, out)
        }
        Format::Json => write_machine(report, out, |out| json::render(report, out)),
        Format::Sarif => write_machine(report, out, |out| {
            sarif::render(report, &Root::discover()?, out)
        }),
        Format::Github => write_machine(report, out, |out| {
            github::render(report, &Root::discover()?, out)
        }),
        Format::Gitlab => write_machine(report, out, |out| {
            gitlab::render(report, &Root::discover()?, out)
        }),
        Format::CargoJson => write_machine(report, out, |out| {
            cargo_json::render(report, &std::env::current_dir()?, out)
        }),
    }
}

/// The summary line after the findings of `human` and `concise` (not with `--quiet`).
fn write_summary(report: &ScanReport, out: &mut dyn WriteColor) -> io::Result<()> {
    if !cli_output::quiet() {
        writeln!(out, "{}", render::summary(report))?;
    }
    out.flush()
}

/// The formats read by programs: only what `write` produces on the target, the summary on stderr.
fn write_machine(
    report: &ScanReport,
    out: &mut dyn WriteColor,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write(&mut &mut *out)?;
    out.flush()?;
    cli_output::note(&render::summary(report));
    Ok(())
}

fn print_to_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    write(&mut out)?;
    out.flush()
}

/// A closed pipe (`retry-audit | head`) is not an error; any other output failure is (exit 2).
fn exit_after_output(result: io::Result<()>, code: ExitCode) -> ExitCode {
    match result {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            report_error(&format!("error: cannot write output: {e}"));
            ExitCode::from(2)
        }
        _ => code,
    }
}

/// Writes a line to stderr; unlike `eprintln!`, does not panic when stderr is closed.
fn report_error(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// `--exit-zero`: findings at error level (status 1) do not fail the run; status 2 stays.
fn exit_zero(code: ExitCode, exit_zero: bool) -> ExitCode {
    if exit_zero && code == ExitCode::from(1) {
        ExitCode::SUCCESS
    } else {
        code
    }
}

/// `--jobs N`: a whole number, at least 1 (clap's own message for 0 in a `NonZeroUsize` does not
/// say what is wrong).
fn parse_jobs(text: &str) -> Result<NonZeroUsize, String> {
    let at_least_one = "--jobs must be at least 1 (the number of files checked in parallel)";
    match text.trim().parse::<usize>() {
        Ok(n) => NonZeroUsize::new(n).ok_or_else(|| at_least_one.to_owned()),
        Err(_) => Err(format!("`{text}` is not a number; {at_least_one}")),
    }
}

/// Where the report goes: `--output-file`, else standard output, or standard error when the
/// fixed source read from standard input is on standard output.
fn report_target(args: &CheckArgs, stdin: bool) -> cli_output::Target {
    match &args.output_file {
        Some(path) => cli_output::Target::File(path.clone()),
        None if stdin && args.fix => cli_output::Target::Stderr,
        None => cli_output::Target::Stdout,
    }
}

/// `--statistics`: a count per rule, as text for `human` and `concise` (then the summary line),
/// as one JSON array for `json` (the summary on stderr). The other machine formats are refused
/// before the scan ([`check_conventions`]).
fn write_statistics(
    report: &ScanReport,
    format: Format,
    out: &mut dyn WriteColor,
) -> io::Result<()> {
    if format == Format::Json {
        write_machine(report, out, |out| statistics::render_json(report, out))
    } else {
        statistics::render_text(report, &mut &mut *out)?;
        write_summary(report, out)
    }
}

/// Combinations of flags that clap cannot check by itself: a usage error (exit 2) naming them.
fn check_conventions(args: &CheckArgs, matches: &ArgMatches) -> Result<(), String> {
    cli_stdin::name(
        &args.paths,
        args.stdin_filename.as_deref(),
        paths_given(matches),
    )?;
    if args.watch
        && args
            .paths
            .iter()
            .any(|p| p.as_os_str() == cli_stdin::DEFAULT_NAME)
    {
        return Err("the argument '--watch' cannot be used with `-` (standard input)".into());
    }
    if args.statistics && cli_output::is_machine(args.format) && args.format != Format::Json {
        let format = args
            .format
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned());
        return Err(format!(
            "the argument '--statistics' cannot be used with '--format {format}' (statistics \
             are printed as text, or as JSON with '--format json')"
        ));
    }
    Ok(())
}

/// Whether paths were given on the command line (not the default `.`).
fn paths_given(matches: &ArgMatches) -> bool {
    matches.value_source("paths") == Some(clap::parser::ValueSource::CommandLine)
}

/// Standard input, read when `-` is the path (or `--stdin-filename` is given without paths).
fn stdin_input(args: &CheckArgs, matches: &ArgMatches) -> Result<Option<cli_stdin::Input>, String> {
    match cli_stdin::name(
        &args.paths,
        args.stdin_filename.as_deref(),
        paths_given(matches),
    )? {
        Some(name) => cli_stdin::read(name).map(Some),
        None => Ok(None),
    }
}

/// The scan of the paths (with a progress bar when [`cli_progress::should_show`] says so), or the
/// check of standard input.
fn scan_or_read(
    args: &CheckArgs,
    options: &ScanOptions,
    stdin: Option<&cli_stdin::Input>,
) -> Result<ScanReport, scan::ScanError> {
    use std::io::IsTerminal;
    let excluded = |path: &std::path::Path| {
        args.force_exclude
            && options
                .config
                .as_ref()
                .is_some_and(|configs| is_excluded(configs, path))
    };
    match stdin {
        // `--force-exclude`: an excluded input is not checked (and `--fix` echoes it).
        Some(input) if excluded(&input.path) => Ok(ScanReport::default()),
        Some(input) => cli_stdin::check(input, options),
        // Every path named was excluded: nothing to check (not the current directory).
        None if options.paths.is_empty() => Ok(ScanReport::default()),
        None if cli_progress::should_show(args.format, io::stderr().is_terminal(), args.quiet) => {
            // Dropped, and so cleared, before anything else is written.
            let bar = cli_progress::Bar::new();
            scan::scan_with_progress(options, &bar)
        }
        None => scan::scan(options),
    }
}

/// `--fix`: the files in place, or standard input's fixed source on standard output.
fn fix_in_place_or_stdin(
    report: ScanReport,
    options: &ScanOptions,
    stdin: Option<&cli_stdin::Input>,
) -> Result<(ScanReport, bool), ExitCode> {
    match stdin {
        Some(input) => cli_stdin::fix(input, report, options)
            .map(|report| (report, false))
            .map_err(|e| exit_after_output(Err(e), ExitCode::from(2))),
        None => fix_in_place(report, options),
    }
}
