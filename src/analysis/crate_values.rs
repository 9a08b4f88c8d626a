//! What a crate passes, under its default configuration, to an attempt limit its retry loop
//! reads from a parameter or a field (real code's labels describe the behaviour under the
//! crate's defaults).
//!
//! `HttpService::call(&self, req, max_retries: usize, ..)` retries connection errors up to
//! `max_retries` times; the crate calls it with `self.max_tcp_error_retries`, a field set from
//! `config.max_tcp_error_retries`, whose `impl Default` value is `0`, and from a builder's
//! `with_max_tcp_error_retries(retries)` that only the user calls. Under the defaults the loop
//! never goes round: it is no retry to report. The values are followed through the crate's
//! files, from each parameter to the arguments of the crate's calls of that function, and from
//! each field to the values the crate's struct literals and assignments give a field of that
//! name, until literals are reached:
//! - a parameter of a function the crate never calls (outside tests) is the user's choice, not
//!   a default: it adds no value;
//! - anything else (a local, a constant, an expression) is unknown, and nothing is concluded;
//! - test code (`#[test]` functions, `#[cfg(test)]` modules, test targets) is not the
//!   crate's configuration.
//!
//! Only crates with such a loop (a few in a large scan) are read again; a name that too many
//! files mention, or a chain that goes on too long, concludes nothing.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::path::PathBuf;

use syn::visit::Visit;
use syn::Expr;

use crate::analysis::ValueSource;

/// Most sources followed for one limit.
const MAX_SOURCES: usize = 24;

/// Most files of a crate read for one name.
const MAX_FILES_PER_NAME: usize = 256;

/// A file's modification time and length on disk.
type Stamp = (Option<std::time::SystemTime>, u64);

/// The files of one crate, read and parsed on demand (each at most once).
#[derive(Default)]
pub struct Crate {
    files: Vec<CrateFile>,
}

struct CrateFile {
    path: PathBuf,
    /// Test code as a whole (a test target, a `#[cfg(test)]` module).
    test: bool,
    /// The file's modification time and length on disk when it was listed (see
    /// [`Crate::refresh`]); `None`: not to be kept across refreshes.
    stamp: Option<Stamp>,
    /// Read on demand (`None`: unreadable).
    text: OnceCell<Option<String>>,
    /// Parsed on demand (`None`: not parsed).
    parsed: OnceCell<Option<syn::File>>,
}

impl Crate {
    /// `files`: each file's path and whether it is test code as a whole.
    #[must_use]
    pub fn new(files: Vec<(PathBuf, bool)>) -> Self {
        Crate {
            files: files
                .into_iter()
                .map(|(path, test)| CrateFile {
                    path,
                    test,
                    stamp: None,
                    text: OnceCell::new(),
                    parsed: OnceCell::new(),
                })
                .collect(),
        }
    }

    /// Makes `files` the crate's files (as for [`Crate::new`]), keeping what was read and
    /// parsed of each one unchanged on disk (same modification time and length) since the
    /// last refresh: a language server re-checking one document reads the rest of its crate
    /// once, not on every edit. A file given by [`Crate::set_text`] is read again.
    pub fn refresh(&mut self, files: Vec<(PathBuf, bool)>) {
        let mut old: std::collections::HashMap<PathBuf, CrateFile> =
            std::mem::take(&mut self.files)
                .into_iter()
                .map(|f| (f.path.clone(), f))
                .collect();
        self.files = files
            .into_iter()
            .map(|(path, test)| {
                let stamp = std::fs::metadata(&path)
                    .ok()
                    .map(|m| (m.modified().ok(), m.len()));
                match old.remove(&path) {
                    Some(kept) if stamp.is_some() && kept.stamp == stamp && kept.test == test => {
                        kept
                    }
                    _ => CrateFile {
                        path,
                        test,
                        stamp,
                        text: OnceCell::new(),
                        parsed: OnceCell::new(),
                    },
                }
            })
            .collect();
    }

    /// Reads `path` as `text` (a document open in an editor, newer than the disk).
    pub fn set_text(&mut self, path: &std::path::Path, text: &str) {
        for file in self.files.iter_mut().filter(|f| f.path == path) {
            file.text = OnceCell::from(Some(text.to_owned()));
            file.parsed = OnceCell::new();
            file.stamp = None;
        }
    }

    /// The largest value the crate passes to `source` (at least one value found, none
    /// unknown): its default configuration, and its own uses (a health check's one retry).
    pub fn largest_by_default(&mut self, source: &ValueSource) -> Option<u64> {
        // A bug here must not end the scan: it decides nothing.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.largest(source)))
            .ok()
            .flatten()
    }

    fn largest(&mut self, source: &ValueSource) -> Option<u64> {
        let _guard = crate::analysis::limits::enter();
        let mut queue = vec![source.clone()];
        let mut seen: HashSet<ValueSource> = HashSet::new();
        let mut largest: Option<u64> = None;
        while let Some(next) = queue.pop() {
            if !seen.insert(next.clone()) {
                continue;
            }
            if seen.len() > MAX_SOURCES {
                return None;
            }
            for value in self.values_of(&next)? {
                match value {
                    Value::Int(n) => largest = Some(largest.map_or(n, |l| l.max(n))),
                    Value::From(s) => queue.push(s),
                    Value::Unknown => return None,
                }
            }
        }
        largest
    }

    /// What the crate's code outside tests gives `source`: `None` when too many files would
    /// have to be read.
    fn values_of(&mut self, source: &ValueSource) -> Option<Vec<Value>> {
        // A call names the function followed by its arguments (`f(`, `f::<T>(`; rustfmt
        // writes no space between), a field its name.
        let (name, called) = match source {
            ValueSource::Param { function, .. } => (
                function.as_str(),
                Some([format!("{function}("), format!("{function}::<")]),
            ),
            ValueSource::Field(field) => (field.as_str(), None),
        };
        let mentions = |t: &str| match &called {
            Some([call, turbofish]) => t.contains(call.as_str()) || t.contains(turbofish.as_str()),
            None => t.contains(name),
        };
        let mut candidates = Vec::new();
        for (i, file) in self.files.iter_mut().enumerate() {
            if file.test {
                continue;
            }
            let text = file
                .text
                .get_or_init(|| std::fs::read_to_string(&file.path).ok());
            if text.as_deref().is_some_and(mentions) {
                candidates.push(i);
            }
        }
        if candidates.len() > MAX_FILES_PER_NAME {
            return None;
        }
        let mut out = Vec::new();
        for i in candidates {
            let file = &mut self.files[i];
            let parsed = file.parsed.get_or_init(|| {
                let text = file.text.get()?.as_deref()?;
                if crate::analysis::limits::syntax_depth(text)
                    > crate::analysis::limits::MAX_SYNTAX_DEPTH
                {
                    return None;
                }
                syn::parse_file(text).ok()
            });
            let Some(parsed) = parsed else { continue };
            let mut v = Finder {
                source,
                fns: Vec::new(),
                owner: None,
                out: &mut out,
            };
            v.visit_file(parsed);
        }
        Some(out)
    }
}

/// A value given to a source.
enum Value {
    Int(u64),
    /// Whatever the crate gives another source.
    From(ValueSource),
    Unknown,
}

/// The enclosing function of an expression: its name, its type's name, and its signature.
struct FnCx<'a> {
    sig: &'a syn::Signature,
    owner: Option<String>,
}

/// Finds, in one file, the values given to a source.
struct Finder<'s, 'a> {
    source: &'s ValueSource,
    fns: Vec<FnCx<'a>>,
    /// The type of the `impl` (or the trait) being visited.
    owner: Option<String>,
    out: &'s mut Vec<Value>,
}

impl<'a> Finder<'_, 'a> {
    fn value(&self, e: &'a Expr) -> Value {
        match crate::analysis::strip_conversions(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse().map_or(Value::Unknown, Value::Int),
            Expr::Path(p) => match (p.path.get_ident(), self.fns.last()) {
                (Some(name), Some(f)) => {
                    crate::analysis::param_source(f.sig, f.owner.clone(), &name.to_string())
                        .map_or(Value::Unknown, Value::From)
                }
                _ => duration(e).map_or(Value::Unknown, Value::Int),
            },
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Value::From(ValueSource::Field(n.to_string())),
                syn::Member::Unnamed(_) => Value::Unknown,
            },
            e => duration(e).map_or(Value::Unknown, Value::Int),
        }
    }

    fn in_fn(
        &mut self,
        sig: &'a syn::Signature,
        attrs: &[syn::Attribute],
        visit: impl FnOnce(&mut Self),
    ) {
        if is_test(attrs) {
            return;
        }
        self.fns.push(FnCx {
            sig,
            owner: self.owner.clone(),
        });
        visit(self);
        self.fns.pop();
    }
}

impl<'a> Visit<'a> for Finder<'_, 'a> {
    fn visit_item_fn(&mut self, i: &'a syn::ItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.in_fn(&i.sig, &i.attrs, |v| syn::visit::visit_item_fn(v, i));
    }

    fn visit_impl_item_fn(&mut self, i: &'a syn::ImplItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.in_fn(&i.sig, &i.attrs, |v| syn::visit::visit_impl_item_fn(v, i));
    }

    fn visit_trait_item_fn(&mut self, i: &'a syn::TraitItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.in_fn(&i.sig, &i.attrs, |v| syn::visit::visit_trait_item_fn(v, i));
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        let _guard = crate::analysis::limits::enter();
        if is_test(&i.attrs) {
            return;
        }
        let owner = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let before = std::mem::replace(&mut self.owner, owner);
        syn::visit::visit_item_impl(self, i);
        self.owner = before;
    }

    fn visit_item_trait(&mut self, i: &'a syn::ItemTrait) {
        let _guard = crate::analysis::limits::enter();
        let before = self.owner.replace(i.ident.to_string());
        syn::visit::visit_item_trait(self, i);
        self.owner = before;
    }

    fn visit_item_mod(&mut self, i: &'a syn::ItemMod) {
        let _guard = crate::analysis::limits::enter();
        if !is_test(&i.attrs) {
            syn::visit::visit_item_mod(self, i);
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match (self.source, e) {
            (
                ValueSource::Param {
                    function,
                    index,
                    receiver,
                    arity,
                    ..
                },
                Expr::MethodCall(m),
            ) if *receiver && m.method == function.as_str() && m.args.len() == *arity => {
                let v = self.value(&m.args[*index]);
                self.out.push(v);
            }
            (
                ValueSource::Param {
                    function,
                    owner,
                    index,
                    receiver,
                    arity,
                },
                Expr::Call(c),
            ) => {
                // `Type::name(..)` of the function's type (or `Self::` in its impl), `name(..)`
                // of a free function.
                let named = matches!(&*c.func, Expr::Path(p) if {
                    let segments: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
                    match segments.as_slice() {
                        [.., ty, last] if last.ident == function.as_str() => {
                            owner.as_deref().is_some_and(|o| {
                                ty.ident == o || (ty.ident == "Self" && self.owner.as_deref() == Some(o))
                            })
                        }
                        [last] => last.ident == function.as_str() && owner.is_none(),
                        _ => false,
                    }
                });
                // `Type::method(receiver, ..)` passes the receiver first.
                let at = index + usize::from(*receiver);
                if named && c.args.len() == arity + usize::from(*receiver) {
                    let v = self.value(&c.args[at]);
                    self.out.push(v);
                }
            }
            (ValueSource::Field(field), Expr::Struct(s)) => {
                for f in &s.fields {
                    if matches!(&f.member, syn::Member::Named(n) if n == field.as_str()) {
                        let v = self.value(&f.expr);
                        self.out.push(v);
                    }
                }
            }
            (ValueSource::Field(field), Expr::Assign(a)) => {
                if matches!(crate::analysis::strip_conversions(&a.left), Expr::Field(f)
                    if matches!(&f.member, syn::Member::Named(n) if n == field.as_str()))
                {
                    let v = self.value(&a.right);
                    self.out.push(v);
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
}

/// A duration written with literals, as a number that is zero exactly when the duration is
/// (`Duration::from_secs(0)`, `Duration::ZERO`, `Duration::new(1, 0)`, `Duration::default()`).
fn duration(e: &Expr) -> Option<u64> {
    let literal = |arg: &Expr| match arg {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    let names = |path: &syn::Path| -> Vec<String> {
        path.segments
            .iter()
            .map(|seg| seg.ident.to_string())
            .collect()
    };
    match e {
        Expr::Path(path) => matches!(names(&path.path).as_slice(),
            [.., ty, name] if ty == "Duration" && name == "ZERO")
        .then_some(0),
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return None;
            };
            let names = names(&path.path);
            let [.., ty, function] = names.as_slice() else {
                return None;
            };
            if ty != "Duration" {
                return None;
            }
            let args: Vec<Option<u64>> = call.args.iter().map(literal).collect();
            match (function.as_str(), args.as_slice()) {
                ("default", []) => Some(0),
                (
                    "from_secs" | "from_millis" | "from_micros" | "from_nanos" | "from_mins"
                    | "from_hours",
                    [Some(n)],
                ) => Some(*n),
                ("new", [Some(secs), Some(nanos)]) => Some(secs.saturating_add(*nanos)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `#[test]`, `#[tokio::test]`, `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        path.segments.last().is_some_and(|s| s.ident == "test")
            || (path.is_ident("cfg")
                && a.parse_args::<syn::Meta>()
                    .is_ok_and(|m| m.path().is_ident("test")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &std::path::Path, limit: u32) {
        std::fs::write(
            path,
            format!("fn config() -> Config {{ Config {{ max_retries: {limit} }} }}\n"),
        )
        .expect("writable");
    }

    #[test]
    fn a_refresh_keeps_what_is_unchanged_on_disk_and_reads_the_rest_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (a, b) = (dir.path().join("a.rs"), dir.path().join("b.rs"));
        write(&a, 3);
        write(&b, 5);
        let files = || vec![(a.clone(), false), (b.clone(), false)];
        let source = ValueSource::Field("max_retries".to_owned());
        let parsed = |krate: &Crate| -> Vec<bool> {
            krate
                .files
                .iter()
                .map(|f| f.parsed.get().is_some())
                .collect()
        };

        let mut krate = Crate::default();
        krate.refresh(files());
        assert_eq!(krate.largest_by_default(&source), Some(5));
        assert_eq!(parsed(&krate), [true, true]);

        // Unchanged on disk: kept as read and parsed.
        krate.refresh(files());
        assert_eq!(parsed(&krate), [true, true]);

        // Changed (its length too, so a coarse clock cannot hide it): read again.
        write(&b, 10);
        krate.refresh(files());
        assert_eq!(parsed(&krate), [true, false]);
        assert_eq!(krate.largest_by_default(&source), Some(10));

        // A document's text from the editor counts until the next refresh, which reads the
        // disk again.
        krate.set_text(&b, "fn config() -> Config { Config { max_retries: 1 } }\n");
        assert_eq!(krate.largest_by_default(&source), Some(3));
        krate.refresh(files());
        assert_eq!(parsed(&krate), [true, false]);
        assert_eq!(krate.largest_by_default(&source), Some(10));

        // A file gone from the crate is dropped.
        krate.refresh(vec![(a.clone(), false)]);
        assert_eq!(krate.largest_by_default(&source), Some(3));
    }
}
