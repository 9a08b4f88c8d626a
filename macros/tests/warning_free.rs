//! The expansion of `#[retryable]` is warning-free: every shape of function it takes
//! (`shapes/mod.rs`), compiled with rustc's warnings and clippy's pedantic group denied. `cargo
//! test` compiles it with rustc; `cargo clippy --workspace --all-targets -- -D warnings` (as CI
//! runs it) lints it with clippy. `tests/ui/pass/warning_free.rs` compiles the same shapes through
//! trybuild.
#![deny(warnings, clippy::pedantic)]

mod shapes;

#[test]
fn every_shape_compiles_warning_free_and_runs() {
    shapes::run();
}
