//! The rules: each one a small pure check over a [`RetrySite`](crate::model::RetrySite), in its
//! own file. Detection only: messages come from `rules/*.toml`, printing from the front ends.

use crate::diagnostic::Diagnostic;
use crate::engine::Settings;
use crate::model::FileModel;

/// Runs every enabled rule over the model of one file.
#[must_use]
pub fn run(model: &FileModel, settings: &Settings) -> Vec<Diagnostic> {
    let _ = (model, settings);
    Vec::new()
}
