//! Every recursive function of the analysis enters the depth budget.
//!
//! A file of ordinary code once aborted the whole scan: a walk followed a constant to itself
//! (`const LIMBS: usize = LIMBS;`) until the stack overflowed. The budget (`src/analysis/limits.rs`) makes
//! one file "too complex to analyse" instead, but only for walks that call `limits::enter()`.
//! This test reads the analysis's own source with `syn`, builds its call graph by name (an
//! over-approximation: a method call may reach any method of that name), finds the functions on
//! a cycle (recursion, direct or through others, the `syn::visit` default walks included), and
//! fails for each one that does not take the budget.
#![cfg(feature = "analysis")]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A function of the analysis: where it is, and what it calls.
#[derive(Debug)]
struct Func {
    /// `file.rs: Type::name` or `file.rs: name`.
    label: String,
    /// The module it is in (the file's name, or its directory's for `mod.rs`).
    module: String,
    name: String,
    /// The type or trait of the `impl` it is in (`None` for free functions).
    owner: Option<String>,
    /// Whether it is a method of an `impl Visit for ..` (the default walk calls them back).
    visitor_impl: Option<usize>,
    calls: Vec<Call>,
    guarded: bool,
    /// Whether it takes `self`, and how many other parameters.
    receiver: bool,
    arity: usize,
}

#[derive(Debug)]
enum Call {
    /// `name(..)` or `module::name(..)`: a free function (of that module, when named); the
    /// number of arguments (`None` when the function is passed as a value: `.map(walk)`).
    Free(String, Option<usize>, Option<String>),
    /// `Self::name(..)`, `Type::name(..)`.
    Assoc(String, String, Option<usize>),
    /// `x.name(..)`: any method of that name taking `self` and this many more arguments.
    Method(String, usize),
    /// `syn::visit::visit_*(..)`: every visitor method of the same impl.
    DefaultWalk,
}

/// The crates the analysis calls into: a path that starts with one of them is not a call of ours.
const EXTERNAL: &[&str] = &[
    "std",
    "core",
    "alloc",
    "syn",
    "quote",
    "proc_macro2",
    "toml",
    "serde",
    "fastrand",
];

struct Collector<'f> {
    file: String,
    module: String,
    funcs: &'f mut Vec<Func>,
    owner: Vec<Option<String>>,
    visitor: Vec<Option<usize>>,
    next_visitor: &'f mut usize,
    /// Index of the function whose body is being read.
    current: Vec<usize>,
    /// The names bound in it (parameters, `let`s, patterns): a path `x` that is one of them
    /// is a variable, not a function passed as a value.
    bindings: Vec<BTreeSet<String>>,
}

fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => None,
    }
}

impl Collector<'_> {
    fn function(&mut self, sig: &syn::Signature, block: &syn::Block, is_method: bool) {
        let name = sig.ident.to_string();
        let receiver = sig.receiver().is_some();
        let arity = sig.inputs.len() - usize::from(receiver);
        let owner = if is_method {
            self.owner.last().cloned().flatten()
        } else {
            None
        };
        let label = match &owner {
            Some(o) => format!("{}: {o}::{name}", self.file),
            None => format!("{}: {name}", self.file),
        };
        self.funcs.push(Func {
            label,
            module: self.module.clone(),
            name,
            owner,
            visitor_impl: if is_method {
                self.visitor.last().copied().flatten()
            } else {
                None
            },
            calls: Vec::new(),
            guarded: false,
            receiver,
            arity,
        });
        self.current.push(self.funcs.len() - 1);
        let mut bound = BTreeSet::new();
        for input in &sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                if let syn::Pat::Ident(i) = &*t.pat {
                    bound.insert(i.ident.to_string());
                }
            }
        }
        self.bindings.push(bound);
        // Items nested in the body are functions of their own, outside any impl.
        self.owner.push(None);
        self.visitor.push(None);
        self.visit_block(block);
        self.visitor.pop();
        self.owner.pop();
        self.current.pop();
        self.bindings.pop();
    }

    fn call(&mut self, call: Call) {
        if let Some(&i) = self.current.last() {
            self.funcs[i].calls.push(call);
        }
    }

    /// A path used as a call with `args` arguments, or as a value (`.map(Self::walk)`).
    fn path(&mut self, path: &syn::Path, args: Option<usize>) {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let Some(last) = segs.last().cloned() else {
            return;
        };
        if segs.len() >= 3 && segs[0] == "syn" && segs[1] == "visit" && last.starts_with("visit_") {
            self.call(Call::DefaultWalk);
            return;
        }
        if segs.len() >= 2 && last == "enter" && segs[segs.len() - 2] == "limits" {
            if let Some(&i) = self.current.last() {
                self.funcs[i].guarded = true;
            }
            return;
        }
        // A function of another crate (`syn::parse_file`, `std::mem::take`) is not ours.
        if segs.len() >= 2 && EXTERNAL.contains(&segs[0].as_str()) {
            return;
        }
        if segs.len() >= 2 {
            let ty = &segs[segs.len() - 2];
            if ty.chars().next().is_some_and(char::is_uppercase) {
                let ty = if ty == "Self" {
                    self.owner.iter().rev().flatten().next().cloned()
                } else {
                    Some(ty.clone())
                };
                if let Some(ty) = ty {
                    self.call(Call::Assoc(ty, last, args));
                    return;
                }
            }
        }
        let variable = segs.len() == 1
            && args.is_none()
            && self.bindings.last().is_some_and(|b| b.contains(&last));
        if variable {
            return;
        }
        let module = (segs.len() >= 2).then(|| segs[segs.len() - 2].clone());
        self.call(Call::Free(last, args, module));
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.sig, &f.block, false);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.sig, &f.block, true);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig, block, true);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let visitor = i.trait_.as_ref().is_some_and(|(_, path, _)| {
            path.segments
                .last()
                .is_some_and(|s| s.ident == "Visit" || s.ident == "VisitMut")
        });
        self.owner.push(type_name(&i.self_ty));
        self.visitor.push(visitor.then(|| {
            *self.next_visitor += 1;
            *self.next_visitor
        }));
        syn::visit::visit_item_impl(self, i);
        self.visitor.pop();
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.owner.push(Some(t.ident.to_string()));
        self.visitor.push(None);
        syn::visit::visit_item_trait(self, t);
        self.visitor.pop();
        self.owner.pop();
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // Unit tests are not the analysis.
        let is_test = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if !is_test {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.call(Call::Method(m.method.to_string(), m.args.len()));
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            self.path(&p.path, Some(c.args.len()));
            for a in &c.args {
                self.visit_expr(a);
            }
        } else {
            syn::visit::visit_expr_call(self, c);
        }
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if let Some(b) = self.bindings.last_mut() {
            b.insert(p.ident.to_string());
        }
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        self.path(&p.path, None);
        syn::visit::visit_expr_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `format!`, `matches!`, `assert!` arguments are expressions: read them as such.
        if let Ok(args) = m.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for e in &args {
                self.visit_expr(e);
            }
        }
    }
}

/// The source files of the modules built with the `analysis` feature (as `src/lib.rs` declares
/// them), with the files of their submodules.
fn analysis_files(root: &Path) -> Vec<PathBuf> {
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let lib = syn::parse_file(&lib).expect("src/lib.rs parses");
    let mut files = Vec::new();
    for item in &lib.items {
        let syn::Item::Mod(m) = item else { continue };
        let analysis = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string().replace(' ', "") == "feature=\"analysis\"")
        });
        if !analysis {
            continue;
        }
        let name = m.ident.to_string();
        let single = root.join(format!("src/{name}.rs"));
        if single.is_file() {
            files.push(single);
        }
        let dir = root.join(format!("src/{name}"));
        if dir.is_dir() {
            let mut stack = vec![dir];
            while let Some(d) = stack.pop() {
                // Submodules only the command line builds (`#[cfg(feature = "cli")] pub mod x;`
                // in the folder's `mod.rs`) are not the analysis.
                let cli_only = cli_submodules(&d.join("mod.rs"));
                for entry in std::fs::read_dir(&d).expect("read_dir") {
                    let path = entry.expect("entry").path();
                    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                    if stem.is_some_and(|s| cli_only.contains(&s)) {
                        continue;
                    }
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push(path);
                    }
                }
            }
        }
    }
    files.sort();
    files
}

/// The submodules a `mod.rs` declares under `#[cfg(feature = "cli")]`.
fn cli_submodules(mod_rs: &Path) -> BTreeSet<String> {
    let Ok(text) = std::fs::read_to_string(mod_rs) else {
        return BTreeSet::new();
    };
    let file = syn::parse_file(&text).expect("mod.rs parses");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if m.attrs.iter().any(is_cli_cfg) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn is_cli_cfg(a: &syn::Attribute) -> bool {
    a.path().is_ident("cfg")
        && a.meta
            .require_list()
            .is_ok_and(|l| l.tokens.to_string().replace(' ', "") == "feature=\"cli\"")
}

/// Tarjan's strongly connected components, iteratively.
fn cyclic(edges: &[Vec<usize>]) -> Vec<bool> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut out = vec![false; n];
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if *k < edges[v].len() {
                let w = edges[v][*k];
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut members = Vec::new();
                    loop {
                        let w = stack.pop().expect("on the stack");
                        on_stack[w] = false;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let self_loop = members.len() == 1 && edges[v].contains(&v);
                    if members.len() > 1 || self_loop {
                        for m in members {
                            out[m] = true;
                        }
                    }
                }
            }
        }
    }
    out
}

/// The call graph of `files` ((module name, label, source) each): how many functions are
/// recursive, and those on a cycle that no guarded function breaks, with their callees on it.
fn unguarded_cycles(files: &[(String, String, String)]) -> (usize, BTreeMap<String, Vec<String>>) {
    let mut funcs = Vec::new();
    let mut next_visitor = 0;
    for (module, shown, text) in files {
        let file = syn::parse_file(text).expect("the analysis parses");
        let mut c = Collector {
            file: shown.clone(),
            module: module.clone(),
            funcs: &mut funcs,
            owner: vec![None],
            visitor: vec![None],
            next_visitor: &mut next_visitor,
            current: Vec::new(),
            bindings: Vec::new(),
        };
        c.visit_file(&file);
    }
    let mut free: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut methods: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut assoc: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    let mut visitors: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, f) in funcs.iter().enumerate() {
        match &f.owner {
            None => free.entry(&f.name).or_default().push(i),
            Some(owner) => {
                methods.entry(&f.name).or_default().push(i);
                assoc.entry((owner, &f.name)).or_default().push(i);
            }
        }
        if let Some(v) = f.visitor_impl {
            visitors.entry(v).or_default().push(i);
        }
    }
    // Called with `args` arguments in all (`self` included), or passed as a value (`None`).
    let takes = |j: usize, args: Option<usize>| {
        let g = &funcs[j];
        args.is_none_or(|n| n == g.arity + usize::from(g.receiver))
    };
    let named = |map: Option<&Vec<usize>>| map.map_or(&[][..], Vec::as_slice).to_vec();
    let edges: Vec<Vec<usize>> = funcs
        .iter()
        .map(|f| {
            let mut to = BTreeSet::new();
            for call in &f.calls {
                let targets: Vec<usize> = match call {
                    // Only free functions: a method is reached through calls of its own.
                    // `names::text(..)` is the `text` of module `names`; `super::`, `crate::`
                    // and a bare name may be any.
                    Call::Free(name, args, module) => named(free.get(name.as_str()))
                        .into_iter()
                        .filter(|&j| {
                            module.as_deref().is_none_or(|m| {
                                matches!(m, "super" | "crate" | "self") || funcs[j].module == m
                            })
                        })
                        .filter(|&j| takes(j, *args))
                        .collect(),
                    // `Type::f` may also be a free function imported under that path.
                    Call::Assoc(ty, name, args) => named(
                        assoc
                            .get(&(ty.as_str(), name.as_str()))
                            .or_else(|| free.get(name.as_str())),
                    )
                    .into_iter()
                    .filter(|&j| takes(j, *args))
                    .collect(),
                    Call::Method(name, args) => named(methods.get(name.as_str()))
                        .into_iter()
                        .filter(|&j| funcs[j].receiver && funcs[j].arity == *args)
                        .collect(),
                    Call::DefaultWalk => named(f.visitor_impl.and_then(|v| visitors.get(&v))),
                };
                to.extend(targets);
            }
            to.into_iter().collect()
        })
        .collect();
    // Every cycle must pass through a guarded function: with those taken out, no cycle is left
    // (so between two guards the stack grows by a bounded number of frames).
    let recursive = cyclic(&edges).iter().filter(|&&c| c).count();
    let unguarded: Vec<Vec<usize>> = edges
        .iter()
        .enumerate()
        .map(|(i, to)| {
            if funcs[i].guarded {
                Vec::new()
            } else {
                to.iter().copied().filter(|&j| !funcs[j].guarded).collect()
            }
        })
        .collect();
    let on_cycle = cyclic(&unguarded);
    let missing = funcs
        .iter()
        .enumerate()
        .filter(|&(i, _)| on_cycle[i])
        .map(|(i, f)| {
            let callees = unguarded[i]
                .iter()
                .filter(|&&j| on_cycle[j])
                .map(|&j| funcs[j].label.clone())
                .collect();
            (f.label.clone(), callees)
        })
        .collect();
    (recursive, missing)
}

#[test]
fn an_unguarded_cycle_is_found_and_a_guard_anywhere_on_it_breaks_it() {
    let source = |text: &str| vec![("m".to_owned(), "m.rs".to_owned(), text.to_owned())];
    // Mutual recursion, a visitor whose override the default walk calls back, and a function
    // whose local variable shares a function's name (not a call).
    let (recursive, missing) = unguarded_cycles(&source(
        "fn a(x: u8) { b(x) }\n\
         fn b(x: u8) { if x > 0 { a(x - 1) } }\n\
         fn text(e: &E) -> String { let text = e.to_string(); text }\n\
         struct V;\n\
         impl<'a> Visit<'a> for V { fn visit_expr(&mut self, e: &'a Expr) { syn::visit::visit_expr(self, e) } }\n",
    ));
    assert_eq!(recursive, 3, "{missing:?}");
    assert_eq!(
        missing.keys().map(String::as_str).collect::<Vec<_>>(),
        ["m.rs: V::visit_expr", "m.rs: a", "m.rs: b"]
    );
    let (_, missing) = unguarded_cycles(&source(
        "fn a(x: u8) { let _guard = crate::analysis::limits::enter(); b(x) }\n\
         fn b(x: u8) { if x > 0 { a(x - 1) } }\n\
         struct V;\n\
         impl<'a> Visit<'a> for V { fn visit_expr(&mut self, e: &'a Expr) { let _g = limits::enter(); syn::visit::visit_expr(self, e) } }\n",
    ));
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn every_recursive_function_of_the_analysis_takes_the_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = analysis_files(root);
    assert!(
        paths.iter().any(|f| f.ends_with("src/analysis/mod.rs")),
        "the analysis modules were not found: {paths:?}"
    );
    let files: Vec<(String, String, String)> = paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("read");
            let shown = path
                .strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string();
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            let module = match stem.as_deref() {
                Some("mod") => path
                    .parent()
                    .and_then(Path::file_name)
                    .map(|d| d.to_string_lossy().into_owned()),
                other => other.map(str::to_owned),
            }
            .unwrap_or_default();
            (module, shown, text)
        })
        .collect();
    let (recursive, missing) = unguarded_cycles(&files);
    assert!(
        recursive > 10,
        "only {recursive} recursive functions found: the call graph is not being read"
    );
    let mut listing = String::new();
    for (f, callees) in &missing {
        writeln!(listing, "  {f}\n      calls {}", callees.join(", ")).expect("a String");
    }
    assert!(
        missing.is_empty(),
        "{} of the {recursive} recursive functions of the analysis are on a cycle that never calls \
         `limits::enter()`:\n{listing}",
        missing.len()
    );
}
