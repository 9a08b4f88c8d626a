//! The pipeline: one file's analysis ([`engine`]: parse, sites, facts, checks, suppression) and the
//! scan of many ([`scan`]), the same for the command line and the language server.

pub mod engine;
#[cfg(feature = "cli")]
pub mod scan;
