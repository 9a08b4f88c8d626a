//! Keys made per attempt: a fresh `Uuid::new_v4()` (or ULID, nanoid, timestamp, random string)
//! that ends up as an idempotency/request/dedup key, inside the code that runs once per attempt.

use std::collections::HashMap;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;
use syn::{Expr, Lit};

use super::names;
use super::scope::{Facts, FileScope};
use super::span::LineIndex;
use super::PerAttemptKey;
use crate::source::Span;

/// A fresh-value constructor found in the code.
#[derive(Clone)]
struct Fresh {
    span: Span,
    name: String,
}

/// Finds keys made in `body` (a loop body, a closure passed to a retry helper, a `#[retryable]`
/// function) and sent as a key. Calls to functions of this file that make and send a key are
/// followed one level.
pub fn per_attempt_keys<'a, T: KeyScan<'a>>(
    body: T,
    file: &FileScope<'a>,
    index: &LineIndex<'a>,
    current_fn: &str,
) -> Vec<PerAttemptKey> {
    let _guard = crate::analysis::limits::enter();
    let mut s = Scanner {
        file,
        index,
        bindings: HashMap::new(),
        weak: HashMap::new(),
        keys: Vec::new(),
        follow: true,
        current_fn,
    };
    body.scan(&mut s);
    // Bindings are collected in source order; a second pass sees sinks that use earlier lets.
    body.scan(&mut s);
    let mut keys = s.keys;
    keys.sort_by_key(|k| k.span.start);
    keys.dedup_by_key(|k| k.span.start);
    keys
}

/// A node keys can be scanned in.
pub trait KeyScan<'a>: Copy {
    fn scan(self, s: &mut Scanner<'a, '_>);
}

impl<'a> KeyScan<'a> for &'a syn::Block {
    fn scan(self, s: &mut Scanner<'a, '_>) {
        let _guard = crate::analysis::limits::enter();
        s.visit_block(self);
    }
}

impl<'a> KeyScan<'a> for &'a Expr {
    fn scan(self, s: &mut Scanner<'a, '_>) {
        let _guard = crate::analysis::limits::enter();
        s.visit_expr(self);
    }
}

pub struct Scanner<'a, 'c> {
    file: &'c FileScope<'a>,
    index: &'c LineIndex<'a>,
    /// Local name → the fresh value it holds.
    bindings: HashMap<String, Fresh>,
    /// Fresh values bound to a name like `request_id` (also used for per-attempt trace ids):
    /// reported once passed to a call that is not a header or a log line.
    weak: HashMap<String, Fresh>,
    keys: Vec<PerAttemptKey>,
    /// Follow calls into local functions (off inside a followed function).
    follow: bool,
    /// The function being analysed: a call to it is recursion, not a helper.
    current_fn: &'c str,
}

impl<'a> Scanner<'a, '_> {
    /// The fresh value an expression carries, directly or through a binding.
    fn fresh_in(&self, e: &'a Expr) -> Option<Fresh> {
        struct F<'s, 'a, 'c> {
            s: &'s Scanner<'a, 'c>,
            found: Option<Fresh>,
        }
        impl<'ast> Visit<'ast> for F<'_, '_, '_> {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let _guard = crate::analysis::limits::enter();
                if self.found.is_some() {
                    return;
                }
                match e {
                    Expr::Call(c) => {
                        if let Some(p) = names::callee_path(&c.func) {
                            let full = self.s.file.resolve(p);
                            if let Some(name) = self.s.file.key_constructor(&full) {
                                self.found = Some(Fresh {
                                    span: self.s.index.of(e),
                                    name,
                                });
                                return;
                            }
                        }
                    }
                    Expr::MethodCall(m) => {
                        let n = m.method.to_string();
                        if self.s.file.is_random_key_method(&n) && receiver_is_rng(&m.receiver) {
                            self.found = Some(Fresh {
                                span: self.s.index.of(e),
                                name: "a random string".to_owned(),
                            });
                            return;
                        }
                    }
                    Expr::Macro(m) => {
                        if let Some(name) =
                            names::last(&m.mac.path).and_then(|n| self.s.file.key_macro(&n))
                        {
                            self.found = Some(Fresh {
                                span: self.s.index.of(e),
                                name,
                            });
                            return;
                        }
                        if let Some(f) = self.s.fresh_in_tokens(&m.mac.tokens) {
                            self.found = Some(f);
                            return;
                        }
                    }
                    Expr::Path(p) if p.path.segments.len() == 1 => {
                        let id = p.path.segments[0].ident.to_string();
                        if let Some(f) = self.s.bindings.get(&id) {
                            self.found = Some(f.clone());
                            return;
                        }
                    }
                    // A constructor handed over to be called (`repeat_with(fastrand::alphanumeric)`,
                    // `.unwrap_or_else(Uuid::new_v4)`): called here, each time.
                    Expr::Path(p) => {
                        let full = self.s.file.resolve(&p.path);
                        if let Some(name) = self.s.file.key_constructor(&full) {
                            self.found = Some(Fresh {
                                span: self.s.index.of(e),
                                name,
                            });
                            return;
                        }
                    }
                    Expr::Closure(_) => return,
                    _ => {}
                }
                syn::visit::visit_expr(self, e);
            }
        }
        let mut f = F {
            s: self,
            found: None,
        };
        f.visit_expr(e);
        f.found
    }

    /// A constructor written inside a macro's tokens (`json!({"idempotency_key": Uuid::new_v4()})`,
    /// `format!("{}", Uuid::new_v4())`).
    fn fresh_in_tokens(&self, tokens: &TokenStream) -> Option<Fresh> {
        let _guard = crate::analysis::limits::enter();
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                TokenTree::Ident(id) => {
                    let s = id.to_string();
                    // Path ending at this ident: look back over `::` pairs.
                    let mut path = vec![s.clone()];
                    let mut j = i;
                    while j >= 3 {
                        match (&trees[j - 1], &trees[j - 2], &trees[j - 3]) {
                            (TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(prev))
                                if a.as_char() == ':' && b.as_char() == ':' =>
                            {
                                path.insert(0, prev.to_string());
                                j -= 3;
                            }
                            _ => break,
                        }
                    }
                    // `random::<u128>()`: the arguments follow a turbofish.
                    let args_at = turbofish_end(&trees, i + 1).unwrap_or(i + 1);
                    let is_call = matches!(trees.get(args_at), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Parenthesis);
                    if is_call {
                        let full = self.resolve_segments(&path);
                        if let Some(name) = self.file.key_constructor(&full) {
                            return Some(Fresh {
                                span: self.index.span(id.span()),
                                name,
                            });
                        }
                    } else if path.len() == 1 {
                        if let Some(f) = self.bindings.get(&s) {
                            return Some(f.clone());
                        }
                    }
                }
                TokenTree::Group(g) => {
                    if let Some(f) = self.fresh_in_tokens(&g.stream()) {
                        return Some(f);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn resolve_segments(&self, segs: &[String]) -> Vec<String> {
        match segs.first().and_then(|f| self.file.uses.get(f)) {
            Some(full) => full
                .iter()
                .cloned()
                .chain(segs.iter().skip(1).cloned())
                .collect(),
            None => segs.to_vec(),
        }
    }

    fn report(&mut self, fresh: Fresh, used_as: String) {
        self.keys.push(PerAttemptKey {
            span: fresh.span,
            constructor: fresh.name,
            used_as,
            via: None,
            hoist: None,
        });
    }

    /// `json!({"idempotency_key": key})`: a key-named string followed by a fresh value.
    fn key_in_macro(&mut self, tokens: &TokenStream) {
        let _guard = crate::analysis::limits::enter();
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            let name = match t {
                TokenTree::Literal(l) => l.to_string().trim_matches('"').to_owned(),
                TokenTree::Ident(id) => id.to_string(),
                TokenTree::Group(g) => {
                    self.key_in_macro(&g.stream());
                    continue;
                }
                TokenTree::Punct(_) => continue,
            };
            if !names::is_key_name(&name) {
                continue;
            }
            let rest: TokenStream = trees[i + 1..]
                .iter()
                .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                .cloned()
                .collect();
            if let Some(f) = self.fresh_in_tokens(&rest) {
                self.report(f, format!("`{name}`"));
            }
        }
    }
}

/// Methods that set a request's header: `header-methods` of the vocabulary.
fn is_header_method(name: &str) -> bool {
    crate::analysis::known::builtin().word(crate::analysis::known::List::HeaderMethods, name)
}

/// `x`, `&x`, `x.clone()`, `x.to_string()`, `x.as_str()`: the name passed.
fn passed_name(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Path(p) if p.path.segments.len() == 1 => Some(p.path.segments[0].ident.to_string()),
        Expr::Reference(r) => passed_name(&r.expr),
        Expr::Paren(p) => passed_name(&p.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "clone" | "to_string" | "as_str" | "to_owned" | "into" | "as_ref"
                ) =>
        {
            passed_name(&m.receiver)
        }
        _ => None,
    }
}

fn receiver_is_rng(e: &Expr) -> bool {
    let t = names::text(e).to_ascii_lowercase();
    crate::analysis::known::builtin().part_of(crate::analysis::known::List::RngReceiverWords, &t)
}

fn header_name(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        Expr::Path(p) => names::last(&p.path),
        Expr::Call(c) => c.args.first().and_then(header_name),
        Expr::MethodCall(m) => {
            header_name(&m.receiver).or_else(|| m.args.first().and_then(header_name))
        }
        Expr::Reference(r) => header_name(&r.expr),
        Expr::Paren(p) => header_name(&p.expr),
        _ => None,
    }
}

impl<'a> Visit<'a> for Scanner<'a, '_> {
    fn visit_local(&mut self, l: &'a syn::Local) {
        let _guard = crate::analysis::limits::enter();
        if let Some(init) = &l.init {
            let mut bound = Vec::new();
            super::values::pat_bindings(&l.pat, &mut bound);
            if let Some(f) = self.fresh_in(&init.expr) {
                for b in &bound {
                    if names::is_strong_key_name(b) {
                        self.report(f.clone(), format!("`{b}`"));
                    } else if names::is_key_name(b) {
                        self.weak.insert(b.clone(), f.clone());
                    }
                    self.bindings.insert(b.clone(), f.clone());
                }
            }
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        let name = m.method.to_string();
        let args: Vec<&'a Expr> = m.args.iter().collect();
        match (name.as_str(), args.as_slice()) {
            (h, [k, v]) if is_header_method(h) => {
                if let Some(h) = header_name(k).filter(|h| names::is_strong_key_name(h)) {
                    if let Some(f) = self.fresh_in(v) {
                        self.report(f, format!("the `{h}` header"));
                    }
                }
            }
            (_, [v]) if names::is_key_name(&name) => {
                if let Some(f) = self.fresh_in(v) {
                    self.report(f, format!("`.{name}(..)`"));
                }
            }
            _ => {}
        }
        if !is_header_method(&name) {
            self.weak_args(&name, m.args.iter());
        }
        let on_self = matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"));
        if self.follow && on_self {
            if let Some(k) = self.followed_call(&name, &super::Via::Method, m) {
                self.keys.push(k);
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
        let _guard = crate::analysis::limits::enter();
        if let Some(name) = names::callee_path(&c.func).and_then(names::last) {
            self.weak_args(&name, c.args.iter());
        }
        if self.follow {
            let local = names::callee_path(&c.func).filter(|p| {
                p.segments.len() == 1 || (p.segments.len() == 2 && p.segments[0].ident == "Self")
            });
            if let Some(p) = local {
                let name = names::last(p).unwrap_or_default();
                let via = self.file.via_of(p);
                if let Some(k) = self.followed_call(&name, &via, c) {
                    self.keys.push(k);
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_field_value(&mut self, fv: &'a syn::FieldValue) {
        let _guard = crate::analysis::limits::enter();
        if let syn::Member::Named(id) = &fv.member {
            let n = id.to_string();
            if names::is_key_name(&n) {
                if let Some(f) = self.fresh_in(&fv.expr) {
                    self.report(f, format!("field `{n}`"));
                }
            }
        }
        syn::visit::visit_field_value(self, fv);
    }

    fn visit_expr_macro(&mut self, m: &'a syn::ExprMacro) {
        let _guard = crate::analysis::limits::enter();
        self.key_in_macro(&m.mac.tokens);
        syn::visit::visit_expr_macro(self, m);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

impl<'a> Scanner<'a, '_> {
    /// A `request_id`-named fresh value passed to the operation: sent as a key.
    fn weak_args<I: Iterator<Item = &'a Expr>>(&mut self, callee: &str, args: I) {
        for a in args {
            if let Some(n) = passed_name(a) {
                if let Some(f) = self.weak.get(&n).cloned() {
                    self.report(f, format!("`{n}`, passed to `{callee}`"));
                }
            }
        }
    }

    /// A call to a function of this file that makes and sends a key: reported at the call.
    fn followed_call<T: syn::spanned::Spanned>(
        &self,
        name: &str,
        via: &super::Via,
        call: &T,
    ) -> Option<PerAttemptKey> {
        if name == self.current_fn {
            return None;
        }
        self.file
            .consult(Facts::KEY, || self.key_made_in(name, via, call))
    }

    /// [`Scanner::followed_call`] of a function of the crate: the first key its body makes.
    fn key_made_in<T: syn::spanned::Spanned>(
        &self,
        name: &str,
        via: &super::Via,
        call: &T,
    ) -> Option<PerAttemptKey> {
        let _guard = crate::analysis::limits::enter();
        let f = self.file.function_via(name, Some(via))?;
        let mut inner = Scanner {
            file: self.file,
            index: self.index,
            bindings: HashMap::new(),
            weak: HashMap::new(),
            keys: Vec::new(),
            follow: false,
            current_fn: name,
        };
        inner.visit_block(f.block);
        inner.visit_block(f.block);
        let k = inner.keys.into_iter().next()?;
        Some(PerAttemptKey {
            span: self.index.of(call),
            constructor: k.constructor,
            used_as: format!("{} (in `{name}`)", k.used_as),
            via: Some(k.span),
            hoist: None,
        })
    }
}

/// Where the tokens after a turbofish starting at `at` (`::<u128>`) continue, if one does.
fn turbofish_end(trees: &[TokenTree], at: usize) -> Option<usize> {
    let punct =
        |i: usize, c: char| matches!(trees.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
    if !(punct(at, ':') && punct(at + 1, ':') && punct(at + 2, '<')) {
        return None;
    }
    let mut depth = 0usize;
    for (i, t) in trees.iter().enumerate().skip(at + 2) {
        match t {
            TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if p.as_char() == '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}
