//! Which rules run and at which level, and how the analysis reads the files.

use std::collections::HashMap;

use crate::analysis;
use crate::checks::registry::{Level, Rule, Tier};

/// Which rules run and at which level.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    overrides: HashMap<Rule, Level>,
    /// `--deny warnings`: every warning is reported as an error.
    pub warnings_as_errors: bool,
    /// Names the team taught the analysis (sleep wrappers, random sources, ...).
    pub extensions: analysis::Extensions,
    /// `--full-parse`: parse every function body, not only those that can matter to a retry
    /// site (see [`crate::analysis::prefilter`]).
    pub full_parse: bool,
    /// The text checked is test code as a whole, as a caller that checks one text alone knows
    /// (a scan decides it for each file from the workspace's layout): its loops wait for the
    /// test's fixtures, they are not retry sites.
    pub test_code: bool,
    /// `--preview` (or `preview = true`): the rules of the preview tier run too.
    pub preview: bool,
    /// Bytes of function bodies parsed at once in a very large file (`None`: the engine's
    /// `WINDOW_BYTES`); tests make it small to compare windows with a whole parse.
    pub parse_window: Option<usize>,
}

impl Settings {
    /// Every rule at its default level, the preview tier included: what `--preview` runs.
    #[must_use]
    pub fn preview() -> Self {
        Settings {
            preview: true,
            ..Settings::default()
        }
    }

    /// Sets a rule's level for this run.
    pub fn set_level(&mut self, rule: Rule, level: Level) {
        self.overrides.insert(rule, level);
    }

    /// The levels set with [`Settings::set_level`], in no particular order.
    pub fn overrides(&self) -> impl Iterator<Item = (Rule, Level)> + '_ {
        self.overrides.iter().map(|(rule, level)| (*rule, *level))
    }

    /// The level a rule runs at (`Allow` = not run): the level set for it, else its default
    /// level when it is stable or preview rules are on, else `Allow`.
    #[must_use]
    pub fn level(&self, rule: Rule) -> Level {
        let level = self.overrides.get(&rule).copied().unwrap_or_else(|| {
            if rule.tier() == Tier::Preview && !self.preview {
                Level::Allow
            } else {
                rule.default_level()
            }
        });
        if self.warnings_as_errors && level == Level::Warning {
            Level::Error
        } else {
            level
        }
    }
}
