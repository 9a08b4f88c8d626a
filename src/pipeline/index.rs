//! The index of the workspace, made once per scan (and kept by the language server): each file
//! read once and lexed once into an [`Outline`] of what it defines, grouped by crate, with the
//! one decision of which files are test code as a whole. A file's analysis reads the rest of its
//! crate through here: the other files that define a name it could not find
//! ([`CrateIndex::providers`]), views of just the definitions it follows into
//! ([`CrateIndex::views`]), and the values the crate passes to a limit or a wait
//! ([`CrateIndex::largest_by_default`]). Nothing here parses a whole file: the one parse of each
//! file is its own analysis's ([`super::engine`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::analysis::crate_values::{Crate, CrateFile};
use crate::analysis::prefilter::{self, Outline};
use crate::analysis::{name_key, ValueSource};
use crate::report::FileError;

/// Most files of its crate one file's analysis reads definitions from.
pub const MAX_IMPORTS: usize = 8;

/// Where the pipeline reads files: the disk, or the disk under an editor's open documents.
pub trait Sources: Sync {
    /// The bytes of the file at `path`.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
}

/// Files read from the disk.
pub struct Disk;

impl Sources for Disk {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}

/// One file, read and lexed once.
#[derive(Clone, Debug)]
pub struct IndexedFile {
    pub path: PathBuf,
    /// Its text (a byte-order mark included), or why it could not be read.
    pub text: Result<Arc<str>, FileError>,
    /// What it defines, lexed on first need (`None`: not read, or not lexed with confidence):
    /// most files of a scan are never asked.
    outline: std::sync::OnceLock<Option<Outline>>,
    /// Test code as a whole: an integration test or benchmark of a package, or a module that
    /// only test code declares (see [`CrateIndex::new`]).
    pub test_code: bool,
    /// Bytes read.
    pub bytes: usize,
}

impl IndexedFile {
    /// Reads `path` from `sources` once and lexes it.
    #[must_use]
    pub fn read(path: PathBuf, sources: &dyn Sources) -> IndexedFile {
        match sources.read(&path) {
            Ok(bytes) => IndexedFile::from_bytes(path, bytes),
            Err(e) => IndexedFile {
                path,
                text: Err(FileError::Io(e.to_string())),
                outline: std::sync::OnceLock::new(),
                test_code: false,
                bytes: 0,
            },
        }
    }

    /// A file whose bytes are at hand.
    #[must_use]
    pub fn from_bytes(path: PathBuf, bytes: Vec<u8>) -> IndexedFile {
        let len = bytes.len();
        let text = String::from_utf8(bytes).map_err(|e| FileError::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        });
        IndexedFile {
            path,
            text: text.map(Arc::from),
            outline: std::sync::OnceLock::new(),
            test_code: false,
            bytes: len,
        }
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref().ok()
    }

    /// What the file defines (its [`Outline`]), lexed the first time it is asked for.
    #[must_use]
    pub fn outline(&self) -> Option<&Outline> {
        self.outline
            .get_or_init(|| self.text().and_then(|t| Outline::of(without_bom(t))))
            .as_ref()
    }
}

/// `text` without a byte-order mark (positions in an [`Outline`] are counted without it, as
/// the parser counts them).
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The files of one crate (the nearest directory above them with a `Cargo.toml`; files outside
/// any crate make one of their own), with their names indexed.
pub struct CrateIndex {
    pub root: Option<PathBuf>,
    pub files: Vec<IndexedFile>,
    /// A name (`name`, and `Type::name` for a method) → the files that define it, each once;
    /// made the first time a file's analysis looks for a name it does not define.
    names: std::sync::OnceLock<HashMap<u64, Vec<usize>>>,
    /// The values the crate passes, by source, once asked.
    values: Mutex<HashMap<ValueSource, Option<u64>>>,
    /// Views of definitions parsed for other files' analyses (for `--stats`).
    views_parsed: AtomicUsize,
}

impl CrateIndex {
    /// Indexes the files of one crate and decides which are test code as a whole: under a
    /// `tests` or `benches` directory of a package (cargo's layout), or a module its parent
    /// module declares only for test code (`#[cfg(test)] mod test_util;`), or a module inside
    /// one. A parent module file that is not among `files` is read from `sources` for that.
    #[must_use]
    pub fn new(root: Option<PathBuf>, mut files: Vec<IndexedFile>, sources: &dyn Sources) -> Self {
        let decided: Vec<bool> = {
            let mut tests = TestCode::new(&files, sources);
            files.iter().map(|f| tests.is_test(&f.path, 0)).collect()
        };
        for (file, test) in files.iter_mut().zip(decided) {
            file.test_code = test;
        }
        CrateIndex {
            root,
            files,
            names: std::sync::OnceLock::new(),
            values: Mutex::new(HashMap::new()),
            views_parsed: AtomicUsize::new(0),
        }
    }

    /// The other files whose definitions the analysis of file `me` brings into view: for each
    /// name it looked for and did not find, the one other file of the crate that defines it (a
    /// name defined in several is left unknown), at most [`MAX_IMPORTS`], in path order.
    #[must_use]
    pub fn providers(&self, me: usize, missed: &[String]) -> Vec<usize> {
        let names = self.names.get_or_init(|| names_of(&self.files));
        let mut from: Vec<usize> = missed
            .iter()
            .filter_map(|name| match names.get(&name_key(name)).map(Vec::as_slice) {
                Some([only]) if *only != me => Some(*only),
                _ => None,
            })
            .collect();
        from.sort_by(|a, b| self.files[*a].path.cmp(&self.files[*b].path));
        from.dedup();
        from.truncate(MAX_IMPORTS);
        from
    }

    /// For each of `providers`, its display path and a view of the definitions reachable by
    /// name from the identifiers `mentioned` (the file that asks: its own text): those named
    /// there, and those that they name in turn. Everything else is blanked, so the view parses
    /// to just them, at their places.
    #[must_use]
    pub fn views(&self, providers: &[usize], mentioned: &HashSet<&str>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for &p in providers {
            let file = &self.files[p];
            let (Some(text), Some(outline)) = (file.text(), file.outline()) else {
                continue;
            };
            let text = without_bom(text);
            let keep = reachable(text, outline, mentioned);
            if keep.is_empty() {
                continue;
            }
            out.push((file.path.display().to_string(), outline.view(text, &keep)));
        }
        out
    }

    /// Whether the compiler reads file `i` as Rust: it is outside any package (what it is, is
    /// unknown), a target's root (`src/lib.rs`, `src/main.rs`, `build.rs`, a file directly in
    /// `src/bin/`, `tests/`, `benches/` or `examples/`), or a module its parent module declares
    /// (`mod name;`). A file none of these reaches (a test's data, an `include!` fragment, a
    /// template) is not compiled, and its syntax is nobody's concern.
    #[must_use]
    pub fn is_compiled(&self, i: usize) -> bool {
        let Some(root) = &self.root else {
            return true;
        };
        let path = &self.files[i].path;
        let Ok(inside) = path.strip_prefix(root) else {
            return true;
        };
        let parts: Vec<&str> = inside.iter().filter_map(|p| p.to_str()).collect();
        // `src/bin/tool/main.rs` and `tests/suite/main.rs` are roots too.
        let root_file = matches!(
            parts.as_slice(),
            ["build.rs"]
                | ["src", "lib.rs" | "main.rs"]
                | ["src", "bin", _]
                | ["tests" | "benches" | "examples", _]
                | ["src", "bin", _, "main.rs"]
                | ["tests" | "benches" | "examples", _, "main.rs"]
        );
        if root_file {
            return true;
        }
        let Some((name, parent)) = parent_module(path, &mut HashMap::new()) else {
            return false;
        };
        let declared = |outline: &Outline| outline.mod_decls.iter().any(|(m, _)| *m == name);
        match self.files.iter().find(|f| f.path == parent) {
            Some(f) => f.outline().is_some_and(declared),
            None => std::fs::read_to_string(&parent)
                .ok()
                .and_then(|t| Outline::of(without_bom(&t)))
                .is_some_and(|o| declared(&o)),
        }
    }

    /// Counts `n` views parsed for another file's analysis.
    pub fn count_views(&self, n: usize) {
        self.views_parsed.fetch_add(n, Ordering::Relaxed);
    }

    /// Views of definitions parsed for other files' analyses so far.
    #[must_use]
    pub fn views_parsed(&self) -> usize {
        self.views_parsed.load(Ordering::Relaxed)
    }

    /// The largest value the crate passes to `source` under its default configuration (see
    /// [`crate::analysis::crate_values`]), worked out once per source.
    #[must_use]
    pub fn largest_by_default(&self, source: &ValueSource) -> Option<u64> {
        let _guard = crate::analysis::limits::enter();
        if let Some(known) = self.values.lock().ok().and_then(|v| v.get(source).copied()) {
            return known;
        }
        let krate = Crate::new(
            self.files
                .iter()
                .filter_map(|f| {
                    Some(CrateFile {
                        text: without_bom(f.text()?),
                        outline: &f.outline,
                        test: f.test_code,
                    })
                })
                .collect(),
        );
        let largest = krate.largest_by_default(source);
        self.count_views(krate.views_parsed());
        if let Ok(mut values) = self.values.lock() {
            values.insert(source.clone(), largest);
        }
        largest
    }
}

/// The crate's index of names: each definition's name (and `Type::name` for a method) → the
/// files that define it, each once.
fn names_of(files: &[IndexedFile]) -> HashMap<u64, Vec<usize>> {
    let mut names: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        let Some(outline) = file.outline() else {
            continue;
        };
        let mut keys: Vec<u64> = outline
            .definitions
            .iter()
            .flat_map(|d| {
                let qualified = d
                    .owner
                    .as_ref()
                    .map(|o| name_key(&format!("{o}::{}", d.name)));
                std::iter::once(name_key(&d.name)).chain(qualified)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            names.entry(key).or_default().push(i);
        }
    }
    names
}

/// The definitions of `outline` named by `mentioned`, and those they name, to a fixed point.
fn reachable(text: &str, outline: &Outline, mentioned: &HashSet<&str>) -> Vec<usize> {
    let mut keep: Vec<bool> = outline
        .definitions
        .iter()
        .map(|d| mentioned.contains(d.name.as_str()))
        .collect();
    let mut frontier: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
    while let Some(i) = frontier.pop() {
        let (from, to) = outline.definitions[i].item;
        let Some(item) = text.get(from..to) else {
            continue;
        };
        let named: HashSet<&str> = identifiers(item).collect();
        for (j, d) in outline.definitions.iter().enumerate() {
            if !keep[j] && named.contains(d.name.as_str()) {
                keep[j] = true;
                frontier.push(j);
            }
        }
    }
    (0..keep.len()).filter(|&i| keep[i]).collect()
}

/// The identifiers of `text` (comments and literals skipped); none when it does not lex.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    prefilter::lex(text.as_bytes())
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t.kind == prefilter::Kind::Ident)
        .map(move |t| &text[t.start..t.end])
}

/// The one decision of which files are test code as a whole.
struct TestCode<'f> {
    /// The outlines of the crate's files, by path.
    outlines: HashMap<&'f Path, Option<&'f Outline>>,
    /// Parent module files read for the decision (not among the crate's files).
    read: HashMap<PathBuf, Option<Outline>>,
    /// The answer for each parent module file.
    parents: HashMap<PathBuf, bool>,
    /// The parent module file of each directory's modules (see [`parent_module`]).
    dirs: HashMap<PathBuf, Option<PathBuf>>,
    /// For each directory, the root files of the test and benchmark targets its `Cargo.toml`
    /// declares (`[[test]] path = "src/tests/mod.rs"`); `None` where it holds no manifest.
    targets: HashMap<PathBuf, Option<Vec<PathBuf>>>,
    sources: &'f dyn Sources,
}

impl<'f> TestCode<'f> {
    fn new(files: &'f [IndexedFile], sources: &'f dyn Sources) -> Self {
        TestCode {
            outlines: files
                .iter()
                .map(|f| (f.path.as_path(), f.outline()))
                .collect(),
            read: HashMap::new(),
            parents: HashMap::new(),
            dirs: HashMap::new(),
            targets: HashMap::new(),
            sources,
        }
    }

    fn is_test(&mut self, path: &Path, depth: usize) -> bool {
        (depth == 0 && (in_test_target(path) || self.is_declared_test_root(path)))
            || self.is_test_module(path, depth)
    }

    /// Whether `path` is the root of a test or benchmark target its package's `Cargo.toml`
    /// declares with a path of its own (`[[test]] name = "all" path = "src/tests/mod.rs"`):
    /// cargo builds that file, and the modules it declares, for tests only.
    fn is_declared_test_root(&mut self, path: &Path) -> bool {
        let normal = |p: &Path| -> PathBuf {
            p.components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect()
        };
        let wanted = normal(path);
        for dir in path.ancestors().skip(1) {
            if !self.targets.contains_key(dir) {
                let roots = self
                    .sources
                    .read(&dir.join("Cargo.toml"))
                    .ok()
                    .map(|bytes| declared_test_roots(&String::from_utf8_lossy(&bytes)));
                self.targets.insert(dir.to_path_buf(), roots);
            }
            if let Some(Some(roots)) = self.targets.get(dir) {
                // The package's manifest: the nearest one decides.
                return roots.iter().any(|r| normal(&dir.join(r)) == wanted);
            }
        }
        false
    }

    /// Whether the module of the file `path` is declared for test code only in its parent
    /// module's file, or its parent module is (up to 16 levels).
    fn is_test_module(&mut self, path: &Path, depth: usize) -> bool {
        let _guard = crate::analysis::limits::enter();
        if depth > 16 {
            return false;
        }
        let Some((name, parent)) = parent_module(path, &mut self.dirs) else {
            return false;
        };
        let declared = self.with_outline(&parent, |outline| {
            outline.is_some_and(|o| o.mod_decls.iter().any(|(m, test)| *m == name && *test))
        });
        if declared {
            return true;
        }
        if let Some(known) = self.parents.get(&parent) {
            return *known;
        }
        let answer = self.is_declared_test_root(&parent) || self.is_test_module(&parent, depth + 1);
        self.parents.insert(parent, answer);
        answer
    }

    fn with_outline<R>(&mut self, path: &Path, f: impl FnOnce(Option<&Outline>) -> R) -> R {
        if let Some(known) = self.outlines.get(path) {
            return f(*known);
        }
        if !self.read.contains_key(path) {
            let outline = self
                .sources
                .read(path)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| Outline::of(without_bom(&t)));
            self.read.insert(path.to_path_buf(), outline);
        }
        f(self.read.get(path).and_then(Option::as_ref))
    }
}

/// Whether the file at `path` is test code as a whole, decided from the disk as
/// [`CrateIndex::new`] decides it for a crate's files.
#[must_use]
pub fn is_test_file(path: &Path) -> bool {
    let file = IndexedFile::read(path.to_path_buf(), &Disk);
    CrateIndex::new(None, vec![file], &Disk).files[0].test_code
}

/// The `path`s of the `[[test]]` and `[[bench]]` targets a `Cargo.toml` declares (a manifest
/// that does not parse declares none).
fn declared_test_roots(manifest: &str) -> Vec<PathBuf> {
    let Ok(table) = manifest.parse::<toml::Table>() else {
        return Vec::new();
    };
    ["test", "bench"]
        .iter()
        .filter_map(|kind| table.get(*kind).and_then(toml::Value::as_array))
        .flatten()
        .filter_map(|target| target.get("path").and_then(toml::Value::as_str))
        .map(PathBuf::from)
        .collect()
}

/// In a package's integration tests or benchmarks: under a `tests` or `benches` directory whose
/// parent holds a `Cargo.toml` (cargo's layout).
fn in_test_target(path: &Path) -> bool {
    path.ancestors().skip(1).any(|dir| {
        matches!(
            dir.file_name().and_then(|n| n.to_str()),
            Some("tests" | "benches")
        ) && dir
            .parent()
            .is_some_and(|pkg| pkg.join("Cargo.toml").is_file())
    })
}

/// The module name of the file `path` and the file of its parent module: `a/x.rs` and
/// `a/x/mod.rs` are module `x` of the module whose submodules live in `a` (`a/mod.rs`,
/// `a/lib.rs`, `a/main.rs`, or `a.rs` beside it, the first that exists).
fn parent_module(
    path: &Path,
    dirs: &mut HashMap<PathBuf, Option<PathBuf>>,
) -> Option<(String, PathBuf)> {
    let stem = path.file_stem()?.to_str()?;
    let dir = path.parent()?;
    let (name, parent_dir) = match stem {
        "lib" | "main" => return None,
        "mod" => (dir.file_name()?.to_str()?, dir.parent()?),
        name => (name, dir),
    };
    if let Some(known) = dirs.get(parent_dir) {
        return known.clone().map(|parent| (name.to_owned(), parent));
    }
    let mut candidates = vec![
        parent_dir.join("mod.rs"),
        parent_dir.join("lib.rs"),
        parent_dir.join("main.rs"),
    ];
    if let (Some(up), Some(dir_name)) = (parent_dir.parent(), parent_dir.file_name()) {
        let mut sibling = dir_name.to_os_string();
        sibling.push(".rs");
        candidates.push(up.join(sibling));
    }
    let parent = candidates.into_iter().find(|p| p.is_file());
    dirs.insert(parent_dir.to_path_buf(), parent.clone());
    Some((name.to_owned(), parent?))
}

/// The crate each directory is in: the nearest directory at or above it holding a `Cargo.toml`
/// (`None` outside any crate), remembered per directory so each is looked at once.
#[derive(Debug, Default)]
pub struct CrateRoots {
    seen: HashMap<PathBuf, Option<PathBuf>>,
}

impl CrateRoots {
    /// The crate root of `dir`.
    pub fn of(&mut self, dir: &Path) -> Option<PathBuf> {
        let _guard = crate::analysis::limits::enter();
        if let Some(root) = self.seen.get(dir) {
            return root.clone();
        }
        let root = if dir.join("Cargo.toml").is_file() {
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|up| self.of(up))
        };
        self.seen.insert(dir.to_path_buf(), root.clone());
        root
    }

    /// The crate root of the file `path`.
    pub fn of_file(&mut self, path: &Path) -> Option<PathBuf> {
        path.parent().and_then(|dir| self.of(dir))
    }
}

/// `paths` grouped by crate ([`CrateRoots`]), crates and their files in
/// path order.
#[must_use]
pub fn crates_of(paths: Vec<PathBuf>) -> Vec<(Option<PathBuf>, Vec<PathBuf>)> {
    let mut roots = CrateRoots::default();
    let mut crates: HashMap<Option<PathBuf>, Vec<PathBuf>> = HashMap::new();
    for path in paths {
        let root = roots.of_file(&path);
        crates.entry(root).or_default().push(path);
    }
    let mut crates: Vec<(Option<PathBuf>, Vec<PathBuf>)> = crates.into_iter().collect();
    for (_, files) in &mut crates {
        files.sort();
    }
    crates.sort();
    crates
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Texts(HashMap<PathBuf, &'static str>);

    impl Sources for Texts {
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            self.0
                .get(path)
                .map(|t| t.as_bytes().to_vec())
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
    }

    fn index(files: &[(&str, &'static str)]) -> CrateIndex {
        let texts = Texts(files.iter().map(|(p, t)| (PathBuf::from(p), *t)).collect());
        let indexed = files
            .iter()
            .map(|(p, _)| IndexedFile::read(PathBuf::from(p), &texts))
            .collect();
        CrateIndex::new(None, indexed, &texts)
    }

    #[test]
    fn a_name_defined_in_one_other_file_is_found_there_and_only_what_it_reaches_is_shown() {
        let krate = index(&[
            (
                "a.rs",
                "fn run() { loop { if backoff_ms(1) > 0 { break; } } }\n",
            ),
            (
                "b.rs",
                "pub fn backoff_ms(n: u32) -> u64 { base() * u64::from(n) }\n\
                 fn base() -> u64 { BASE }\nconst BASE: u64 = 100;\nfn unrelated() {}\n\
                 impl Client { fn send(&self) {} }\n",
            ),
            ("c.rs", "fn base() -> u64 { 1 }\n"),
        ]);
        assert_eq!(krate.providers(0, &["backoff_ms".to_owned()]), [1]);
        // Defined in two files: unknown; defined only here: nothing to bring.
        assert!(krate.providers(0, &["base".to_owned()]).is_empty());
        assert!(krate.providers(1, &["backoff_ms".to_owned()]).is_empty());
        assert_eq!(krate.providers(0, &["Client::send".to_owned()]), [1]);
        let mentioned: HashSet<&str> = identifiers("fn run() { backoff_ms(1) }").collect();
        let views = krate.views(&[1], &mentioned);
        let (path, view) = &views[0];
        assert_eq!(path, "b.rs");
        assert!(
            view.contains("fn backoff_ms") && view.contains("fn base") && view.contains("BASE")
        );
        assert!(!view.contains("unrelated") && !view.contains("send"));
        // Positions are kept: the view is the file with the rest blanked.
        assert_eq!(view.lines().count(), 5);
        assert!(syn::parse_file(view).is_ok());
    }

    #[test]
    fn modules_declared_for_test_code_only_are_test_code_with_what_is_inside_them() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/util")).expect("dirs");
        let write = |p: &str, t: &str| std::fs::write(root.join(p), t).expect("write");
        write("Cargo.toml", "[package]\nname = \"x\"\n");
        write(
            "src/lib.rs",
            "mod server;\n#[cfg(test)]\nmod test_util;\n#[cfg(not(test))]\nmod real;\n\
             #[cfg(any(test, feature = \"testing\"))]\n#[allow(dead_code)]\npub(crate) mod mocks;\n\
             #[cfg(test)]\nmod util;\n",
        );
        for f in [
            "src/server.rs",
            "src/test_util.rs",
            "src/real.rs",
            "src/mocks.rs",
            "src/util/mod.rs",
        ] {
            write(f, "fn f() {}\n");
        }
        write("src/util/deep.rs", "fn f() {}\n");
        std::fs::create_dir_all(root.join("tests")).expect("dirs");
        write("tests/it.rs", "fn f() {}\n");
        let paths = [
            "src/server.rs",
            "src/test_util.rs",
            "src/real.rs",
            "src/mocks.rs",
            "src/util/deep.rs",
            "tests/it.rs",
        ];
        // The crate's own lib.rs is not among the files: it is read for the decision.
        let files = paths
            .iter()
            .map(|p| IndexedFile::read(root.join(p), &Disk))
            .collect();
        let krate = CrateIndex::new(Some(root.to_path_buf()), files, &Disk);
        let test: Vec<bool> = krate.files.iter().map(|f| f.test_code).collect();
        assert_eq!(test, [false, true, false, true, true, true]);
    }

    #[test]
    fn only_files_the_compiler_reads_are_compiled() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        for d in ["src/bin", "src/data", "tests/suite", "include"] {
            std::fs::create_dir_all(root.join(d)).expect("dirs");
        }
        let write = |p: &str, t: &str| std::fs::write(root.join(p), t).expect("write");
        write("Cargo.toml", "[package]\nname = \"x\"\n");
        write("src/lib.rs", "mod a;\n");
        write("src/a.rs", "fn f() {}\n");
        write("src/data/fixture.rs", "this is not rust\n");
        write("src/bin/tool.rs", "fn main() {}\n");
        write("tests/suite/main.rs", "fn t() {}\n");
        write("include/snippet.rs", "1 + 1\n");
        write("build.rs", "fn main() {}\n");
        let paths = [
            "src/lib.rs",
            "src/a.rs",
            "src/data/fixture.rs",
            "src/bin/tool.rs",
            "tests/suite/main.rs",
            "include/snippet.rs",
            "build.rs",
        ];
        let files = paths
            .iter()
            .map(|p| IndexedFile::read(root.join(p), &Disk))
            .collect();
        let krate = CrateIndex::new(Some(root.to_path_buf()), files, &Disk);
        let compiled: Vec<bool> = (0..paths.len()).map(|i| krate.is_compiled(i)).collect();
        assert_eq!(compiled, [true, true, false, true, true, false, true]);
        // Outside any package, nothing says what a file is: it is taken for Rust.
        let loose = CrateIndex::new(
            None,
            vec![IndexedFile::read(root.join("include/snippet.rs"), &Disk)],
            &Disk,
        );
        assert!(loose.is_compiled(0));
    }
}
