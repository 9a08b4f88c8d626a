//! Generated blocks of the documentation (`mod blocks;` in the tests that check one): the text
//! between `<!-- NAME:start -->` and `<!-- NAME:end -->`, in `README.md`, `CONTRIBUTING.md` or
//! any `docs/**/*.md`, found by its markers wherever it is (a block may move from the README to a
//! page of `docs/`). `scripts/docblocks.py` finds them the same way.
//!
//! A stale block fails its test; `BLESS=1` (exactly `1`) rewrites it instead.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

/// The crate's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the run blesses: `BLESS=1`, and no other value.
pub fn blessing() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v == "1")
}

/// `README.md`, `CONTRIBUTING.md`, then every `docs/**/*.md`, sorted.
pub fn doc_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut docs = Vec::new();
    walk(&root().join("docs"), &mut docs);
    docs.sort();
    let mut files = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    files.extend(docs);
    files.into_iter().filter(|f| f.is_file()).collect()
}

/// The documentation file's text, read.
pub fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// One generated block: the file that holds it, its text, and the byte range of the body
/// (between the end of the start marker and the start of the end marker).
pub struct Block {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    pub start: usize,
    pub end: usize,
}

impl Block {
    /// The block `name`; panics when no documentation file, or more than one, holds it.
    pub fn find(name: &str) -> Block {
        let (open, close) = (
            format!("<!-- {name}:start -->"),
            format!("<!-- {name}:end -->"),
        );
        let mut found: Vec<Block> = Vec::new();
        for path in doc_files() {
            let text = read(&path);
            let Some(at) = text.find(&open) else {
                continue;
            };
            let start = at + open.len();
            let end = start
                + text[start..].find(&close).unwrap_or_else(|| {
                    panic!("{}: {open} without {close}", path.display());
                });
            found.push(Block {
                name: name.to_owned(),
                path,
                text,
                start,
                end,
            });
        }
        assert!(
            found.len() <= 1,
            "{open} is in several files: {:?}",
            found.iter().map(|b| &b.path).collect::<Vec<_>>()
        );
        found.pop().unwrap_or_else(|| {
            panic!("no {open} ... {close} block in README.md, CONTRIBUTING.md or docs/**/*.md")
        })
    }

    /// The text between the markers.
    pub fn body(&self) -> &str {
        &self.text[self.start..self.end]
    }

    /// The file's text with the body replaced.
    pub fn with_body(&self, body: &str) -> String {
        format!(
            "{}{body}{}",
            &self.text[..self.start],
            &self.text[self.end..]
        )
    }

    /// Passes when the body is `body`; otherwise rewrites it under `BLESS=1` or panics, saying
    /// to run `bless` and showing what was expected.
    pub fn expect(&self, body: &str, bless: &str) {
        if self.body() == body {
            return;
        }
        if blessing() {
            fs::write(&self.path, self.with_body(body))
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", self.path.display()));
            return;
        }
        panic!(
            "the block `{}` in {} is out of date; run `{bless}` to regenerate it.\n\
             --- in the file ---\n{}\n--- expected ---\n{body}",
            self.name,
            self.path.display(),
            self.body()
        );
    }
}
