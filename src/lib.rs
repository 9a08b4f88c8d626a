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

// The layers, each importing only those below it (`tests/layers.rs` holds this):
// source < analysis < checks < report < config < pipeline < fix < cli < lsp; `retry` stands alone.
#[cfg(feature = "analysis")]
pub mod analysis;
#[cfg(feature = "analysis")]
pub mod checks;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod config;
#[cfg(feature = "analysis")]
pub mod fix;
#[cfg(feature = "cli")]
pub mod lsp;
#[cfg(feature = "analysis")]
pub mod pipeline;
#[cfg(feature = "analysis")]
pub mod report;
pub mod retry;
// `retry_audit::tower::RetryLayer` and `retry_audit::reqwest_middleware::RetryMiddleware`: the
// runtime as client middleware (the code lives in `retry`, which stands alone).
#[cfg(feature = "reqwest-middleware")]
pub use retry::reqwest_middleware;
#[cfg(feature = "tower")]
pub use retry::tower;
#[cfg(feature = "analysis")]
pub mod source;

#[cfg(feature = "analysis")]
pub use checks::diagnostic::{Diagnostic, Elsewhere, Label};
#[cfg(feature = "analysis")]
pub use checks::registry::{Level, Rule, RuleMeta};
#[cfg(feature = "analysis")]
pub use checks::Settings;
#[cfg(feature = "analysis")]
pub use pipeline::engine::check_source;
#[cfg(feature = "analysis")]
pub use report::FileError;
#[cfg(feature = "analysis")]
pub use source::{Edit, Fix, Position, Span};

// The runtime (`retry`) is always built, whatever the features; this is its attribute.
pub use retry_audit_macros::retryable;
