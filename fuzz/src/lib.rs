//! The fuzz harness of retry-audit's per-file checker, shared by the libFuzzer targets
//! (`fuzz_targets/`), the stable random-input driver (`src/bin/drive.rs`) and this crate's tests.
//!
//! Two targets:
//!
//! - [`run_bytes`]: arbitrary bytes to [`retry_audit::pipeline::engine::check_bytes`], every rule on.
//!   Seeded with the files of `fixtures/`, most inputs are near-Rust; libFuzzer's byte mutations
//!   reach the tokenizer, the parser, the nesting guard and the UTF-8 check.
//! - [`run_mutated`]: the input is a *program* of source mutations ([`mutate`]) applied to one of
//!   the fixtures: lines deleted, duplicated, swapped, spliced from another fixture, wrapped in
//!   loops, closures and blocks (deeply, too), identifiers and numbers replaced by the words and
//!   values the rules look at, suppression comments, CRLF, a BOM, non-ASCII text. Inputs that
//!   still parse reach the retry-site model and every check; each is checked twice (the output
//!   must be deterministic).
//!
//! Both run the checker the way `retry-audit` does (on a thread with [`engine::PARSE_STACK`]),
//! and a crash is a panic anywhere in it or a broken [`invariants`] check: spans inside the file
//! and on character boundaries, positions that match the offsets, diagnostics sorted and
//! without duplicates, levels as configured, fixes whose edits are in bounds and whose result
//! still parses and no longer has the finding.

pub mod invariants;
pub mod mutate;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use retry_audit::checks::Settings;
use retry_audit::pipeline::engine;
use retry_audit::{Level, Rule};

/// A source file the mutations start from.
#[derive(Debug)]
pub struct Seed {
    /// Relative to the repository root.
    pub name: String,
    pub text: String,
}

/// The repository root (the parent of this crate).
#[must_use]
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/ has a parent")
        .to_path_buf()
}

/// The seeds: every `.rs` file under `fixtures/` and `tests/adversarial/` (but not
/// `tests/adversarial/known/`, inputs that still crash), sorted by path, read once. Non-UTF-8
/// files are left out (they seed [`run_bytes`] only).
pub fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = repo_root();
        let mut paths = Vec::new();
        for dir in ["fixtures", "tests/adversarial"] {
            rust_files(&root.join(dir), &mut paths);
        }
        paths.sort();
        let seeds: Vec<Seed> = paths
            .into_iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                let name = path
                    .strip_prefix(&root)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                Some(Seed { name, text })
            })
            .collect();
        assert!(
            !seeds.is_empty(),
            "no seed files under {}/fixtures",
            root.display()
        );
        seeds
    })
}

/// Every `.rs` file under `dir`, recursively, but not in directories named `known` (a missing
/// directory has none).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "known") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every rule on: those off by default run as warnings.
#[must_use]
pub fn all_rules() -> Settings {
    let mut settings = Settings::preview();
    for &rule in Rule::ALL {
        if settings.level(rule) == Level::Allow {
            settings.set_level(rule, Level::Warning);
        }
    }
    settings
}

/// Runs `f` on a thread with the stack `retry-audit` parses on, and re-raises its panic here.
pub fn on_big_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("fuzz-check".to_owned())
            .stack_size(engine::PARSE_STACK)
            .spawn_scoped(s, || {
                retry_audit::analysis::limits::thread_started_with_stack(engine::PARSE_STACK);
                f()
            })
            .expect("spawn the checker thread");
        match handle.join() {
            Ok(result) => result,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Whether the build tracks source positions: `proc-macro2` drops them under `--cfg fuzzing`
/// (what `cargo fuzz` sets unless given `--no-cfg-fuzzing`), and every span would be `0..0`,
/// making the position checks vacuous and the fixes point at the start of the file.
fn assert_positions_tracked() {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let source = "fn f() -> u32 {\n    loop {\n        match op() {\n            Ok(v) => return v,\n            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),\n        }\n    }\n}\n";
        let found = on_big_stack(|| engine::check_source(source, &all_rules()))
            .expect("the self-test source parses");
        assert!(
            found.iter().any(|d| d.primary.span.start > 0),
            "spans are all 0..0: build without `--cfg fuzzing` (cargo fuzz --no-cfg-fuzzing)"
        );
    });
}

/// Target `check_bytes`: the bytes as a file, every rule on. Panics on a crash.
pub fn run_bytes(data: &[u8]) {
    assert_positions_tracked();
    let settings = all_rules();
    on_big_stack(|| {
        let result = engine::check_bytes(data, &settings);
        invariants::check(data, &settings, &result);
        let mut whole = settings.clone();
        whole.full_parse = true;
        let full = engine::check_bytes(data, &whole);
        if full.is_ok() {
            assert_eq!(result, full, "the pre-filter changed the findings");
        }
    });
}

/// Target `check_mutated`: a fixture changed by the mutation program `data`. Returns whether the
/// mutant parsed (for the driver's statistics). Panics on a crash.
#[must_use = "whether the mutant parsed"]
pub fn run_mutated(data: &[u8]) -> bool {
    assert_positions_tracked();
    on_big_stack(|| {
        let mutant = mutate::Mutant::build(data, seeds());
        let result = engine::check_source(&mutant.text, &mutant.settings);
        invariants::check(mutant.text.as_bytes(), &mutant.settings, &result);
        let again = engine::check_source(&mutant.text, &mutant.settings);
        assert_eq!(result, again, "two runs on the same text differ");
        // The pre-filter (src/prune.rs) must not change a finding: a file that parses whole
        // gives the same answer with every body parsed. (A syntax error inside a blanked body
        // is the one difference allowed: the pre-filtered run does not see it.)
        let mut whole = mutant.settings.clone();
        whole.full_parse = true;
        let full = engine::check_source(&mutant.text, &whole);
        if full.is_ok() {
            assert_eq!(result, full, "the pre-filter changed the findings");
        }
        result.is_ok()
    })
}
