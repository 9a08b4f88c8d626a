//! The library's folders import only down the layers, and the runtime stands alone.
//!
//! `source < analysis < checks < report < config < pipeline < fix < cli < lsp`: each top-level
//! module of `src/` may use the ones below it and itself, never one above (a newcomer reading
//! `checks` never has to know the scan, and `report` never runs one). `retry` (the
//! `#[retryable]` runtime) uses nothing else of the crate. This test reads every `crate::…` path
//! of the library's source with `syn` (`use` items and paths in code alike; doc comments are not
//! code) and fails on each one that goes up a layer, naming the file and the path.
#![cfg(feature = "analysis")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The layers, lowest first. A module not listed here fails the test: place it.
const LAYERS: &[&str] = &[
    "source", "analysis", "checks", "report", "config", "pipeline", "fix", "cli", "lsp",
];

/// Standing alone: uses no other module of the crate.
const ALONE: &[&str] = &["retry"];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// Every `crate::first::…` path in a file, with its line.
struct Paths {
    found: Vec<(String, usize)>,
}

impl Paths {
    fn add(&mut self, first: &syn::Ident, second: Option<&syn::Ident>) {
        if first != "crate" {
            return;
        }
        if let Some(second) = second {
            self.found
                .push((second.to_string(), second.span().start().line));
        }
    }
}

impl<'a> Visit<'a> for Paths {
    fn visit_path(&mut self, p: &'a syn::Path) {
        let mut segs = p.segments.iter();
        if let Some(first) = segs.next() {
            self.add(&first.ident, segs.next().map(|s| &s.ident));
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if let syn::UseTree::Path(p) = &u.tree {
            if p.ident == "crate" {
                let mut seconds = Vec::new();
                seconds_of(&p.tree, &mut seconds);
                for s in seconds {
                    self.add(&p.ident, Some(s));
                }
            }
        }
    }
}

/// The first segment(s) under `crate::` of a use tree (`crate::{a::x, b}` → `a`, `b`).
fn seconds_of<'a>(tree: &'a syn::UseTree, out: &mut Vec<&'a syn::Ident>) {
    match tree {
        syn::UseTree::Path(p) => out.push(&p.ident),
        syn::UseTree::Name(n) => out.push(&n.ident),
        syn::UseTree::Rename(r) => out.push(&r.ident),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| seconds_of(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// The library's source files by top-level module (`src/x.rs` and everything under `src/x/`).
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let lib = syn::parse_file(&lib).expect("src/lib.rs parses");
    let mut out = BTreeMap::new();
    for item in &lib.items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let mut files = Vec::new();
        let single = src.join(format!("{name}.rs"));
        if single.is_file() {
            files.push(single);
        }
        let mut stack = vec![src.join(&name)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        files.sort();
        out.insert(name, files);
    }
    out
}

/// Each import of `files` that goes up a layer (or out of a module that stands alone).
fn violations(module: &str, files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (shown, text) in files {
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{shown}: {e}"));
        let mut paths = Paths { found: Vec::new() };
        paths.visit_file(&file);
        for (used, line) in paths.found {
            if used == module {
                continue;
            }
            let wrong = if ALONE.contains(&module) {
                Some("stands alone".to_owned())
            } else {
                match (rank(module), rank(&used)) {
                    (Some(me), Some(it)) if it > me => Some(format!(
                        "goes up: `{module}` is layer {me}, `{used}` layer {it}"
                    )),
                    (_, None) if ALONE.contains(&used.as_str()) => None,
                    (None, _) => Some(format!("`{module}` is in no layer")),
                    _ => None,
                }
            };
            if let Some(why) = wrong {
                out.push(format!("{shown}:{line}: crate::{used} ({why})"));
            }
        }
    }
    out
}

#[test]
fn every_import_of_the_library_goes_down_a_layer_and_the_runtime_stands_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    let mods = modules(&root.join("src"));
    assert!(
        mods.contains_key("analysis") && mods.contains_key("retry"),
        "{mods:?}"
    );
    for (module, paths) in &mods {
        assert!(
            rank(module).is_some() || ALONE.contains(&module.as_str()),
            "src/lib.rs declares `{module}`, which is in no layer of this test: place it"
        );
        let files: Vec<(String, String)> = paths
            .iter()
            .map(|p| {
                let shown = p.strip_prefix(root).unwrap_or(p).display().to_string();
                (shown, std::fs::read_to_string(p).expect("read"))
            })
            .collect();
        all.extend(violations(module, &files));
    }
    assert!(
        all.is_empty(),
        "{} imports go up a layer:\n  {}",
        all.len(),
        all.join("\n  ")
    );
}

#[test]
fn an_import_up_a_layer_is_found_in_use_items_and_in_code() {
    let file = |text: &str| vec![("src/checks/x.rs".to_owned(), text.to_owned())];
    assert!(violations("checks", &file("use crate::analysis::Facts;\nfn f() {}\n")).is_empty());
    let up = violations(
        "checks",
        &file("use crate::{analysis, report::FileError};\nfn f() { crate::pipeline::scan(); }\n"),
    );
    assert_eq!(
        up,
        [
            "src/checks/x.rs:1: crate::report (goes up: `checks` is layer 2, `report` layer 3)",
            "src/checks/x.rs:2: crate::pipeline (goes up: `checks` is layer 2, `pipeline` layer 5)",
        ]
    );
    assert_eq!(
        violations("retry", &file("fn f() { crate::source::x(); }\n")),
        ["src/checks/x.rs:1: crate::source (stands alone)"]
    );
}
