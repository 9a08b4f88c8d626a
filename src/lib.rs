//! retry-audit: finds retry anti-patterns in Rust source code.
//!
//! The engine (feature `analysis`, on by default) parses each file once with `syn`, extracts a
//! [retry-site model](model) per loop, recursion or helper that retries, and runs one small pure
//! check per rule over it (see [`checks`]). Rule metadata lives in `rules/*.toml`, embedded at build
//! time ([`registry`]). Nothing in the engine prints: front ends render [`Diagnostic`]s.

#[cfg(feature = "analysis")]
pub mod checks;
#[cfg(feature = "analysis")]
pub mod diagnostic;
#[cfg(feature = "analysis")]
pub mod engine;
#[cfg(feature = "analysis")]
pub mod model;
#[cfg(feature = "analysis")]
pub mod registry;
#[cfg(feature = "cli")]
pub mod render;
#[cfg(feature = "cli")]
pub mod scan;

#[cfg(feature = "analysis")]
pub use diagnostic::{Diagnostic, Label, Position, Span};
#[cfg(feature = "analysis")]
pub use engine::{check_source, FileError, Settings};
#[cfg(feature = "analysis")]
pub use registry::{Level, Rule, RuleMeta};
