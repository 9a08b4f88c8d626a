//! Nothing: this package exists for its dependency graph (see Cargo.toml).
