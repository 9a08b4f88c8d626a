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
//! - a constant (`MAX_RETRIES`, `Self::MAX_RETRIES`) is what the crate's `const` items of that
//!   name are given, and unknown when the crate defines none;
//! - anything else (a local, an expression) is unknown, and nothing is concluded;
//! - test code (`#[test]` functions, `#[cfg(test)]` modules, test targets) is not the
//!   crate's configuration.
//!
//! Only crates with such a loop (a few in a large scan) are read again; a name that too many
//! files mention, or a chain that goes on too long, concludes nothing.

use std::collections::HashSet;

use syn::visit::Visit;
use syn::Expr;

use crate::analysis::prefilter::Outline;
use crate::analysis::ValueSource;

/// Most sources followed for one limit.
const MAX_SOURCES: usize = 24;

/// Most files of a crate read for one name.
const MAX_FILES_PER_NAME: usize = 256;

/// One file of the crate as the workspace index holds it: read and lexed once.
#[derive(Clone, Copy)]
pub struct CrateFile<'c> {
    pub text: &'c str,
    /// What it defines, lexed on first need (`None` inside: the lexer could not read it, nor
    /// can the parser: it tells nothing).
    pub outline: &'c std::sync::OnceLock<Option<Outline>>,
    /// Test code as a whole (a test target, a `#[cfg(test)]` module).
    pub test: bool,
}

/// The files of one crate. Nothing is read here: a question parses, from the index's copy of
/// each file that mentions the name asked about, a view of just the definitions that mention
/// it ([`Outline::view`]).
pub struct Crate<'c> {
    files: Vec<CrateFile<'c>>,
    /// Definitions parsed to answer (views, one per file and question).
    parsed: std::cell::Cell<usize>,
}

impl<'c> Crate<'c> {
    #[must_use]
    pub fn new(files: Vec<CrateFile<'c>>) -> Self {
        Crate {
            files,
            parsed: std::cell::Cell::new(0),
        }
    }

    /// How many views of definitions were parsed so far (for `--stats`).
    #[must_use]
    pub fn views_parsed(&self) -> usize {
        self.parsed.get()
    }

    /// The largest value the crate passes to `source` (at least one value found, none
    /// unknown): its default configuration, and its own uses (a health check's one retry).
    #[must_use]
    pub fn largest_by_default(&self, source: &ValueSource) -> Option<u64> {
        // A bug here must not end the scan: it decides nothing.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.largest(source)))
            .ok()
            .flatten()
    }

    fn largest(&self, source: &ValueSource) -> Option<u64> {
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
            let values = self.values_of(&next)?;
            // A constant whose definition the crate does not hold (another crate's) is unknown.
            if values.is_empty() && matches!(next, ValueSource::Const(_)) {
                return None;
            }
            for value in values {
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
    fn values_of(&self, source: &ValueSource) -> Option<Vec<Value>> {
        // A call names the function followed by its arguments (`f(`, `f::<T>(`; rustfmt
        // writes no space between), a field its name.
        let (name, called) = match source {
            ValueSource::Param { function, .. } => (
                function.as_str(),
                Some([format!("{function}("), format!("{function}::<")]),
            ),
            ValueSource::Field(field) | ValueSource::Const(field) => (field.as_str(), None),
        };
        let mentions = |t: &str| match &called {
            Some([call, turbofish]) => t.contains(call.as_str()) || t.contains(turbofish.as_str()),
            None => t.contains(name),
        };
        let candidates: Vec<&CrateFile<'c>> = self
            .files
            .iter()
            .filter(|f| !f.test && mentions(f.text))
            .collect();
        if candidates.len() > MAX_FILES_PER_NAME {
            return None;
        }
        let mut out = Vec::new();
        for file in candidates {
            let Some(outline) = file.outline.get_or_init(|| Outline::of(file.text)).as_ref() else {
                continue;
            };
            let keep: Vec<usize> = outline
                .definitions
                .iter()
                .enumerate()
                .filter(|(_, d)| file.text.get(d.item.0..d.item.1).is_some_and(mentions))
                .map(|(i, _)| i)
                .collect();
            if keep.is_empty() {
                continue;
            }
            let view = outline.view(file.text, &keep);
            if crate::analysis::limits::syntax_depth(&view)
                > crate::analysis::limits::MAX_SYNTAX_DEPTH
            {
                continue;
            }
            self.parsed.set(self.parsed.get() + 1);
            let Ok(parsed) = syn::parse_file(&view) else {
                continue;
            };
            let mut v = Finder {
                source,
                fns: Vec::new(),
                owner: None,
                out: &mut out,
            };
            v.visit_file(&parsed);
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
                        .or_else(|| constant(&p.path))
                        .map_or(Value::Unknown, Value::From)
                }
                _ => duration(e)
                    .map(Value::Int)
                    .or_else(|| constant(&p.path).map(Value::From))
                    .unwrap_or(Value::Unknown),
            },
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Value::From(ValueSource::Field(n.to_string())),
                syn::Member::Unnamed(_) => Value::Unknown,
            },
            e => duration(e).map_or(Value::Unknown, Value::Int),
        }
    }

    /// A `const` item: its value, when it is the constant asked about.
    fn constant(&mut self, ident: &syn::Ident, expr: &'a Expr) {
        if matches!(self.source, ValueSource::Const(name) if ident == name.as_str()) {
            let v = self.value(expr);
            self.out.push(v);
        }
    }

    fn in_fn(
        &mut self,
        sig: &'a syn::Signature,
        attrs: &[syn::Attribute],
        visit: impl FnOnce(&mut Self),
    ) {
        if crate::analysis::test_code::is_test_attr(attrs) {
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
        if crate::analysis::test_code::is_test_attr(&i.attrs) {
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
        if !crate::analysis::test_code::is_test_attr(&i.attrs) {
            syn::visit::visit_item_mod(self, i);
        }
    }

    fn visit_item_const(&mut self, i: &'a syn::ItemConst) {
        let _guard = crate::analysis::limits::enter();
        self.constant(&i.ident, &i.expr);
        syn::visit::visit_item_const(self, i);
    }

    fn visit_impl_item_const(&mut self, i: &'a syn::ImplItemConst) {
        let _guard = crate::analysis::limits::enter();
        self.constant(&i.ident, &i.expr);
        syn::visit::visit_impl_item_const(self, i);
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

/// A constant named by `path` (`MAX_RETRIES`, `limits::MAX_RETRIES`, `Self::MAX_RETRIES`):
/// its last segment written in upper case, as Rust names constants. Its value is what the
/// crate's `const` items of that name say.
fn constant(path: &syn::Path) -> Option<ValueSource> {
    let name = path.segments.last()?.ident.to_string();
    let upper = name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    upper.then_some(ValueSource::Const(name))
}

/// A duration written with literals, as a number that is zero exactly when the duration is
/// (`Duration::from_secs(0)`, `Duration::ZERO`, `Duration::new(1, 0)`, `Duration::default()`).
pub(crate) fn duration(e: &Expr) -> Option<u64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of<'c>(
        texts: &'c [(&'c str, bool)],
        outlines: &'c [std::sync::OnceLock<Option<Outline>>],
    ) -> Crate<'c> {
        Crate::new(
            texts
                .iter()
                .zip(outlines)
                .map(|((text, test), outline)| CrateFile {
                    text,
                    outline,
                    test: *test,
                })
                .collect(),
        )
    }

    #[test]
    fn values_are_read_from_views_of_the_definitions_that_mention_the_name_only() {
        let texts = [
            (
                "struct Config { max_retries: u32 }\nfn unrelated() -> u32 { 7 }\n\
                 fn config() -> Config { Config { max_retries: 3 } }\n",
                false,
            ),
            (
                "impl Client {\n    fn with_defaults() -> Config { Config { max_retries: 5 } }\n}\n",
                false,
            ),
            (
                "#[cfg(test)]\nmod tests {\n    fn t() -> Config { Config { max_retries: 99 } }\n}\n",
                false,
            ),
            ("fn f() -> Config { Config { max_retries: 1000 } }\n", true),
        ];
        let outlines: Vec<std::sync::OnceLock<Option<Outline>>> =
            texts.iter().map(|_| std::sync::OnceLock::new()).collect();
        let krate = crate_of(&texts, &outlines);
        let source = ValueSource::Field("max_retries".to_owned());
        // Test code (a test module, a test target) is not the crate's configuration.
        assert_eq!(krate.largest_by_default(&source), Some(5));
        // One view per file that mentions the name, test targets not read.
        assert_eq!(krate.views_parsed(), 3);
        let view = Outline::of(texts[0].0)
            .expect("lexed")
            .view(texts[0].0, &[1]);
        assert!(!view.contains("unrelated") && view.contains("max_retries: 3"));
        assert_eq!(view.len(), texts[0].0.len());
    }

    #[test]
    fn an_unknown_value_concludes_nothing() {
        let texts = [(
            "fn a() -> Config { Config { max_retries: 2 } }\n\
             fn b(n: u32) -> Config { Config { max_retries: n * 2 } }\n",
            false,
        )];
        let outlines: Vec<std::sync::OnceLock<Option<Outline>>> =
            texts.iter().map(|_| std::sync::OnceLock::new()).collect();
        let krate = crate_of(&texts, &outlines);
        let source = ValueSource::Field("max_retries".to_owned());
        assert_eq!(krate.largest_by_default(&source), None);
    }
}
