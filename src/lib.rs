//! retry-audit finds retry anti-patterns in Rust source code.
//!
//! The engine (feature `analysis`, on by default) parses each file once with `syn`, extracts a
//! retry-site model (module `model`) per loop, recursion or helper that retries, and runs one
//! small pure check per rule over it (module `checks`). Rule metadata lives in `rules/*.toml`,
//! embedded at build time (module `registry`). Nothing in the engine prints: front ends
//! (modules `scan` and `render`, feature `cli`) turn its `Diagnostic`s into output.
//!
//! The fix is here too, and always built: [`retryable`] and its runtime [`retry`], a retry that
//! keeps every rule by construction. With `default-features = false` it is all this crate is.

#[cfg(feature = "cli")]
pub mod baseline;
#[cfg(feature = "analysis")]
pub mod budget;
#[cfg(feature = "analysis")]
pub mod checks;
#[cfg(feature = "cli")]
pub mod config;
#[cfg(feature = "analysis")]
pub mod defaults;
#[cfg(feature = "analysis")]
pub mod diagnostic;
#[cfg(feature = "analysis")]
pub mod engine;
#[cfg(feature = "analysis")]
pub mod fix;
#[cfg(feature = "cli")]
pub mod lsp;
#[cfg(feature = "analysis")]
pub mod model;
#[cfg(feature = "analysis")]
pub mod prune;
#[cfg(feature = "analysis")]
pub mod registry;
#[cfg(feature = "cli")]
pub mod render;
pub mod retry;
#[cfg(feature = "cli")]
pub mod scan;
#[cfg(feature = "analysis")]
pub mod suppress;
#[cfg(feature = "cli")]
pub mod workspace;

#[cfg(feature = "analysis")]
pub use diagnostic::{Diagnostic, Edit, Elsewhere, Fix, Label, Position, Span};
#[cfg(feature = "analysis")]
pub use engine::{check_source, FileError, Settings};
#[cfg(feature = "analysis")]
pub use registry::{Level, Rule, RuleMeta};

// The runtime (`retry`) is always built, whatever the features; this is its attribute.
pub use retry_audit_macros::retryable;
