//! Where the report goes and what else is said: `--output-file`, `--quiet`, and colour from
//! `--color` and the environment (`NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR`).

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use codespan_reporting::term::termcolor::{
    Ansi, BufferedStandardStream, ColorChoice, NoColor, WriteColor,
};

use super::{Color, Format};

/// `--quiet`: set once, before anything is written.
static QUIET: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A line that is neither a finding nor a problem (the summary, how many fixes were applied,
/// what the baseline hid): on standard error, unless `--quiet`.
pub(crate) fn note(line: &str) {
    if !quiet() {
        let _ = writeln!(io::stderr(), "{line}");
    }
}

/// The formats read by programs, which never get a progress bar and whose standard output holds
/// nothing but their document.
pub(crate) fn is_machine(format: Format) -> bool {
    !matches!(format, Format::Human | Format::Concise)
}

/// Where the report is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Stdout,
    /// Standard error: the report of `--fix` on standard input, whose fixed source is on stdout.
    Stderr,
    /// `--output-file FILE`.
    File(PathBuf),
}

/// The colour variables, as the de-facto standards define them: `NO_COLOR` set and not empty
/// turns colour off (no-color.org); `CLICOLOR_FORCE` set, not empty and not `0` turns it on even
/// when the output is not a terminal, and `CLICOLOR=0` off (bixense.com/clicolors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ColorEnv {
    pub no_color: bool,
    pub force: bool,
    pub clicolor_off: bool,
}

impl ColorEnv {
    pub(crate) fn from_env() -> ColorEnv {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        ColorEnv {
            no_color: var("NO_COLOR").is_some(),
            force: var("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
            clicolor_off: var("CLICOLOR").is_some_and(|v| v == "0"),
        }
    }
}

/// Whether to colour: `--color always` or `never` has the last word; with `auto` (the default),
/// `NO_COLOR` wins over `CLICOLOR_FORCE`, which wins over `CLICOLOR=0`, which wins over whether
/// the output is a terminal.
pub(crate) fn color_choice(flag: Color, env: ColorEnv, terminal: bool) -> ColorChoice {
    match flag {
        Color::Always => ColorChoice::Always,
        Color::Never => ColorChoice::Never,
        Color::Auto if env.no_color => ColorChoice::Never,
        Color::Auto if env.force => ColorChoice::Always,
        Color::Auto if env.clicolor_off || !terminal => ColorChoice::Never,
        // termcolor's `Auto` also turns colour off for TERM=dumb.
        Color::Auto => ColorChoice::Auto,
    }
}

/// Opens the report's destination, coloured as `color` and the environment say (colour only
/// ever matters to the `human` and `concise` formats). A file is created (with its missing parent
/// directories) or truncated; its errors name it.
pub(crate) fn open(target: &Target, color: Color) -> io::Result<Box<dyn WriteColor>> {
    let env = ColorEnv::from_env();
    Ok(match target {
        Target::Stdout => Box::new(BufferedStandardStream::stdout(color_choice(
            color,
            env,
            io::stdout().is_terminal(),
        ))),
        Target::Stderr => Box::new(BufferedStandardStream::stderr(color_choice(
            color,
            env,
            io::stderr().is_terminal(),
        ))),
        Target::File(path) => {
            let file = create(path).map_err(|e| named(path, &e))?;
            let out = Named {
                inner: BufWriter::new(file),
                path: path.clone(),
            };
            match color_choice(color, env, false) {
                ColorChoice::Never => Box::new(NoColor::new(out)),
                _ => Box::new(Ansi::new(out)),
            }
        }
    })
}

fn create(path: &Path) -> io::Result<File> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    File::create(path)
}

/// An error about the output file, saying which file.
fn named(path: &Path, error: &io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// A writer whose errors name the file written.
struct Named<W> {
    inner: W,
    path: PathBuf,
}

impl<W: Write> Write for Named<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| named(&self.path, &e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| named(&self.path, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_no_color_then_clicolor_force_then_the_terminal() {
        let none = ColorEnv::default();
        let no_color = ColorEnv {
            no_color: true,
            ..none
        };
        let force = ColorEnv {
            force: true,
            ..none
        };
        let both = ColorEnv {
            no_color: true,
            force: true,
            clicolor_off: false,
        };
        let off = ColorEnv {
            clicolor_off: true,
            ..none
        };
        for tty in [false, true] {
            for env in [none, no_color, force, both, off] {
                assert_eq!(color_choice(Color::Always, env, tty), ColorChoice::Always);
                assert_eq!(color_choice(Color::Never, env, tty), ColorChoice::Never);
            }
            assert_eq!(color_choice(Color::Auto, no_color, tty), ColorChoice::Never);
            assert_eq!(color_choice(Color::Auto, both, tty), ColorChoice::Never);
            assert_eq!(color_choice(Color::Auto, force, tty), ColorChoice::Always);
            assert_eq!(color_choice(Color::Auto, off, tty), ColorChoice::Never);
        }
        assert_eq!(color_choice(Color::Auto, none, false), ColorChoice::Never);
        assert_eq!(color_choice(Color::Auto, none, true), ColorChoice::Auto);
    }

    #[test]
    fn machine_formats_are_all_but_human_and_concise() {
        for (format, machine) in [
            (Format::Human, false),
            (Format::Concise, false),
            (Format::Json, true),
            (Format::Sarif, true),
            (Format::Github, true),
            (Format::Gitlab, true),
            (Format::CargoJson, true),
        ] {
            assert_eq!(is_machine(format), machine, "{format:?}");
        }
    }
}
