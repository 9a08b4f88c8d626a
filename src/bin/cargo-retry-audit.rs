//! `cargo retry-audit`: cargo runs `cargo-retry-audit retry-audit [ARGS]...` for it. This is the
//! `retry-audit` command line itself (`src/main.rs`), which recognises the name it is run under:
//! it drops the `retry-audit` argument and, when no paths are given, scans the members of the
//! Cargo workspace around the current directory instead of `.`.

#[path = "../main.rs"]
mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
