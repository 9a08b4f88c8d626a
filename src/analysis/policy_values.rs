//! A retry policy's value written in the code: the `impl Default` of a `RetryPolicy`, a
//! `const DEFAULT_BACKOFF: Backoff = Backoff::Exponential(2)`, a constructor's `Self { .. }`.
//! Defaults decide what users get, so such a value is a policy site of its own, reported where
//! it is written.
//!
//! The value is read by its fields, named as retry policies name them (`max_delay: None`,
//! `jitter: false`, `backoff_coefficient: 2.0`, `max_attempts`, `expiration_time`), and by the
//! variant or type it names (`Exponential`, `Linear`, `FixedInterval`). A policy type that is an
//! iterator of waits (`impl Iterator for ExponentialBackoff`) never ends by itself. Only types
//! named for retrying or backoff are read, and a value that says nothing about its waits is not
//! a site.

use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Expr, ImplItem, Item, Lit, Stmt};

use super::estimate::Estimator;
use super::known::{self, List};
use super::names;
use super::scope::FileScope;
use super::span::LineIndex;
use super::values::{Locals, LoopFacts};
use super::{Bound, BoundKind, Delay, DelayKind, RetrySite};

/// What a field of a policy value is for, by the words of its name (`max_delay_ms`,
/// `backoff_coefficient`, `jitter_range`, `max_elapsed_time`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    /// The factor the wait is multiplied by (growing above 1).
    Growth,
    /// Names the strategy (`strategy: RetryStrategy::ExponentialBackoff`).
    Strategy,
    /// The first (or only) wait.
    Delay,
    /// The longest single wait.
    Cap,
    /// Randomness added to the wait.
    Jitter,
    /// The number of attempts.
    Attempts,
    /// The time all attempts may take.
    Deadline,
}

fn role(field: &str) -> Option<Role> {
    let n = field.to_ascii_lowercase();
    let words: Vec<&str> = n.split('_').filter(|w| !w.is_empty()).collect();
    let v = known::builtin();
    let has = |list: List| words.iter().any(|w| v.word(list, w));
    let wait = has(List::WaitFieldWords);
    if has(List::JitterFieldWords) {
        Some(Role::Jitter)
    } else if has(List::GrowthFieldWords) || v.word(List::GrowthFieldNames, &n) {
        Some(Role::Growth)
    } else if has(List::DeadlineFieldWords) {
        Some(Role::Deadline)
    } else if (wait && has(List::WaitCapFieldWords)) || v.word(List::CapFieldNames, &n) {
        Some(Role::Cap)
    } else if has(List::AttemptLimitFieldWords)
        || (has(List::MaxFieldWords) && has(List::AttemptFieldWords))
    {
        // A limit: `max_retries`, `max_attempt`, `retry_limit` (not the count so far, `attempt`).
        Some(Role::Attempts)
    } else if has(List::StrategyFieldWords) || v.word(List::StrategyFieldNames, &n) {
        Some(Role::Strategy)
    } else if wait || v.word(List::DelayFieldNames, &n) {
        Some(Role::Delay)
    } else if has(List::CapFieldWords) {
        Some(Role::Cap)
    } else {
        None
    }
}

/// The sites of the policy values written in these items (the file, and the bodies of item
/// macros).
pub(super) fn sites(
    files: &[&syn::File],
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> Vec<RetrySite> {
    let mut finder = Finder {
        iterators: Vec::new(),
        defaults: HashMap::new(),
        constructors: HashMap::new(),
        other_impls: Vec::new(),
        values: Vec::new(),
        builder_structs: Vec::new(),
        test_depth: 0,
    };
    for f in files {
        finder.visit_file(f);
    }
    // A type not named for retrying that is a schedule of waits (`FixedInterval`) is a policy.
    for i in std::mem::take(&mut finder.other_impls) {
        if let Some(ty) = type_name(&i.self_ty).filter(|t| finder.iterators.contains(t)) {
            let trait_name = i
                .trait_
                .as_ref()
                .and_then(|(_, p, _)| p.segments.last())
                .map(|s| s.ident.to_string());
            finder.values_of(i, &ty, trait_name.as_deref());
        }
    }
    // A policy type used inside another policy's value (`backoff: Backoff::default()`) is a
    // part of it, reported through it.
    let parts: Vec<String> = finder
        .values
        .iter()
        .filter(|v| {
            finder.values.iter().any(|other| {
                other.ty != v.ty
                    && matches!(other.expr, Expr::Struct(s) if s.fields.iter().any(|f| {
                        names::text(&f.expr)
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .any(|w| w == v.ty)
                    }))
            })
        })
        .map(|v| v.ty.clone())
        .collect();
    let locals = Locals::default();
    let facts = LoopFacts::default();
    let est = Estimator {
        file: scope,
        locals: &locals,
        facts: &facts,
        env: HashMap::new(),
    };
    // A random number drawn anywhere in the file (not a field named `jitter`).
    if finder.values.is_empty() {
        return Vec::new();
    }
    let file_is_random = index
        .source()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| names::is_random_root(w) || known::builtin().word(List::RandomFileWords, w));
    let builders: HashMap<String, syn::ExprStruct> = finder
        .builder_structs
        .iter()
        .map(|s| (s.ident.to_string(), builder_defaults(s)))
        .collect();
    let cx = Cx {
        est: &est,
        defaults: &finder.defaults,
        constructors: &finder.constructors,
        builders: &builders,
        file_is_random,
    };
    finder
        .values
        .iter()
        .filter(|v| !parts.contains(&v.ty))
        .filter_map(|v| {
            let endless = finder.iterators.contains(&v.ty);
            site_of(&v.ty, v.expr, &v.holder, &v.params, endless, &cx, index)
        })
        .collect()
}

/// A policy value written in the file.
struct Value<'a> {
    ty: String,
    expr: &'a Expr,
    /// The function or constant holding it.
    holder: String,
    /// The parameters of the constructor holding it.
    params: Vec<String>,
}

/// What reading a value needs: numbers, the defaults of the file's policy types, and whether
/// the file draws random numbers anywhere.
struct Cx<'c, 'a> {
    est: &'c Estimator<'c, 'a>,
    defaults: &'c HashMap<String, &'a Expr>,
    /// The constructors of the file's policy types: (type, name) → parameters and the literal
    /// they return.
    constructors: &'c HashMap<(String, String), (Vec<String>, &'a syn::ExprStruct)>,
    /// The defaults `#[derive(Builder)]` gives the file's policy types, as the literal a
    /// builder with no setter called builds.
    builders: &'c HashMap<String, syn::ExprStruct>,
    file_is_random: bool,
}

/// Where policy values are written, and which policy types are iterators of waits.
struct Finder<'a> {
    /// Types with `impl Iterator for T` yielding `Duration`s: schedules of waits.
    iterators: Vec<String>,
    /// Each type's `impl Default` value.
    defaults: HashMap<String, &'a Expr>,
    /// Constructors returning a literal of their type (in `Ok(..)` or `Some(..)` too).
    constructors: HashMap<(String, String), (Vec<String>, &'a syn::ExprStruct)>,
    /// Impl blocks of types not named for retrying, kept until every iterator is known.
    other_impls: Vec<&'a syn::ItemImpl>,
    values: Vec<Value<'a>>,
    /// Policy types with `#[derive(Builder)]` (`derive_builder`), whose field attributes give
    /// the defaults.
    builder_structs: Vec<&'a syn::ItemStruct>,
    test_depth: usize,
}

impl<'a> Value<'a> {
    fn constant(ty: String, expr: &'a Expr, name: &syn::Ident) -> Self {
        Value {
            ty,
            expr,
            holder: name.to_string(),
            params: Vec::new(),
        }
    }
}

impl<'a> Finder<'a> {
    /// The policy values of an impl block of policy type `ty`: `impl Default`'s value, the
    /// values of constructors (no `self`, returning `Self`) that spell out every field, and
    /// associated constants of the type.
    fn values_of(&mut self, i: &'a syn::ItemImpl, ty: &str, trait_name: Option<&str>) {
        let default = trait_name == Some("Default");
        for item in &i.items {
            match item {
                ImplItem::Fn(f) if !super::site::is_test_attr(&f.attrs) => {
                    let constructor = f.sig.receiver().is_none() && returns_self(&f.sig, ty);
                    let Some(value) = tail(&f.block) else {
                        continue;
                    };
                    if f.sig.receiver().is_none() {
                        if let Some(literal) = literal_of(value, ty) {
                            let mut params = Vec::new();
                            for p in &f.sig.inputs {
                                if let syn::FnArg::Typed(t) = p {
                                    super::values::pat_bindings(&t.pat, &mut params);
                                }
                            }
                            self.constructors.insert(
                                (ty.to_owned(), f.sig.ident.to_string()),
                                (params, literal),
                            );
                        }
                    }
                    if default {
                        self.defaults.insert(ty.to_owned(), value);
                    }
                    // A constructor that fills the rest from the default changes a knob, and one
                    // that calls another constructor is that one: both are reported where the
                    // default or the other constructor is written.
                    let spelled_out = matches!(value, Expr::Struct(s) if s.rest.is_none());
                    if default || (constructor && spelled_out) {
                        let mut params = Vec::new();
                        for p in &f.sig.inputs {
                            if let syn::FnArg::Typed(t) = p {
                                super::values::pat_bindings(&t.pat, &mut params);
                            }
                        }
                        self.values.push(Value {
                            ty: ty.to_owned(),
                            expr: value,
                            holder: f.sig.ident.to_string(),
                            params,
                        });
                    }
                }
                ImplItem::Const(c) => {
                    if let Some(t) = type_name(&c.ty).filter(|t| is_policy_type(t) || t == "Self") {
                        let t = if t == "Self" { ty.to_owned() } else { t };
                        self.values.push(Value::constant(t, &c.expr, &c.ident));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `impl Iterator for T { type Item = Duration; .. }`.
fn yields_durations(i: &syn::ItemImpl) -> bool {
    i.items.iter().any(|item| {
        matches!(item, ImplItem::Type(t) if t.ident == "Item"
            && type_name(&t.ty).as_deref() == Some("Duration"))
    })
}

impl<'a> Visit<'a> for Finder<'a> {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        let _guard = crate::analysis::limits::enter();
        let test = super::site::is_test_attr(&m.attrs);
        self.test_depth += usize::from(test);
        syn::visit::visit_item_mod(self, m);
        self.test_depth -= usize::from(test);
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        let _guard = crate::analysis::limits::enter();
        let Some(ty) = type_name(&i.self_ty) else {
            return;
        };
        let trait_name = i
            .trait_
            .as_ref()
            .and_then(|(_, p, _)| p.segments.last())
            .map(|s| s.ident.to_string());
        if trait_name.as_deref() == Some("Iterator") && yields_durations(i) {
            self.iterators.push(ty.clone());
        }
        if self.test_depth > 0 {
            return;
        }
        if is_policy_type(&ty) {
            self.values_of(i, &ty, trait_name.as_deref());
        } else {
            self.other_impls.push(i);
        }
    }
    fn visit_trait_item_const(&mut self, c: &'a syn::TraitItemConst) {
        let _guard = crate::analysis::limits::enter();
        // A trait's default constant (`const BACKOFF: Backoff = Backoff::Exponential(2);`).
        if let (Some((_, value)), Some(t)) = (&c.default, type_name(&c.ty)) {
            if self.test_depth == 0 && is_policy_type(&t) {
                self.values.push(Value::constant(t, value, &c.ident));
            }
        }
    }

    fn visit_item_struct(&mut self, s: &'a syn::ItemStruct) {
        let _guard = crate::analysis::limits::enter();
        if self.test_depth == 0
            && is_policy_type(&s.ident.to_string())
            && derives(&s.attrs, "Builder")
        {
            self.builder_structs.push(s);
        }
    }

    fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
        let _guard = crate::analysis::limits::enter();
        if let Some(t) = type_name(&c.ty) {
            if self.test_depth == 0 && is_policy_type(&t) {
                self.values.push(Value::constant(t, &c.expr, &c.ident));
            }
        }
    }

    fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
        let _guard = crate::analysis::limits::enter();
        if let Some(t) = type_name(&s.ty) {
            if self.test_depth == 0 && is_policy_type(&t) {
                self.values.push(Value::constant(t, &s.expr, &s.ident));
            }
        }
    }

    fn visit_item(&mut self, i: &'a Item) {
        let _guard = crate::analysis::limits::enter();
        // Items inside functions are visited too; test functions are skipped.
        if let Item::Fn(f) = i {
            if super::site::is_test_attr(&f.attrs) {
                return;
            }
        }
        syn::visit::visit_item(self, i);
    }
}

/// The last segment of a type's path (through references).
fn type_name(ty: &syn::Type) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => None,
    }
}

/// A type named for retrying or backoff, and not for a retry's state or its errors.
fn is_policy_type(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    v.part_of(List::PolicyTypeWords, &n) && !v.part_of(List::NotPolicyTypeWords, &n)
}

fn returns_self(sig: &syn::Signature, ty: &str) -> bool {
    match &sig.output {
        syn::ReturnType::Type(_, t) => {
            type_name(t).is_some_and(|name| name == "Self" || name == ty)
        }
        syn::ReturnType::Default => false,
    }
}

/// The literal of type `ty` a constructor returns: `Self { .. }`, in `Ok(..)` or `Some(..)`.
fn literal_of<'e>(value: &'e Expr, ty: &str) -> Option<&'e syn::ExprStruct> {
    let _guard = crate::analysis::limits::enter();
    match value {
        Expr::Struct(s) => names::last(&s.path)
            .filter(|n| n == "Self" || n == ty)
            .map(|_| s),
        Expr::Call(c) if c.args.len() == 1 => {
            let wrapper = names::callee_path(&c.func).and_then(names::last)?;
            if wrapper == "Ok" || wrapper == "Some" {
                literal_of(&c.args[0], ty)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A call of one of the file's constructors of `ty` (`T::new(..)`, `Self::new(..)`, through
/// `.expect(..)`, `.unwrap()` or `?`): its parameters, its literal and the arguments.
fn constructor_call<'e, 'a: 'e>(
    value: &'e Expr,
    ty: &str,
    cx: &Cx<'_, 'a>,
) -> Option<(&'a syn::ExprStruct, Vec<String>, Vec<&'e Expr>)> {
    let _guard = crate::analysis::limits::enter();
    match value {
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "expect" | "unwrap" | "unwrap_or_else" | "unwrap_or" | "unwrap_or_default"
            ) =>
        {
            constructor_call(&m.receiver, ty, cx)
        }
        Expr::Try(t) => constructor_call(&t.expr, ty, cx),
        Expr::Call(c) => {
            let path = names::callee_path(&c.func)?;
            let n = path.segments.len();
            if n < 2 {
                return None;
            }
            let owner = path.segments[n - 2].ident.to_string();
            let owner = if owner == "Self" {
                ty.to_owned()
            } else {
                owner
            };
            let name = path.segments[n - 1].ident.to_string();
            let (params, literal) = cx.constructors.get(&(owner, name))?;
            Some((*literal, params.clone(), c.args.iter().collect()))
        }
        _ => None,
    }
}

/// Whether `#[derive(..)]` among the attributes names `name` (`Builder`, `derive_builder::Builder`).
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("derive")
            && a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|paths| {
                paths
                    .iter()
                    .any(|p| names::last(p).as_deref() == Some(name))
            })
    })
}

/// The literal a `derive_builder` builder builds when no setter is called: each field with
/// `#[builder(default = "expr")]` (or `default = expr`) holds that value, an `Option` field
/// with a bare `#[builder(default)]` holds `None`; fields without a default are left out
/// (unknown).
fn builder_defaults(s: &syn::ItemStruct) -> syn::ExprStruct {
    let mut fields = syn::punctuated::Punctuated::<syn::FieldValue, syn::Token![,]>::new();
    for field in &s.fields {
        let Some(ident) = &field.ident else { continue };
        let mut value: Option<Expr> = None;
        for a in field.attrs.iter().filter(|a| a.path().is_ident("builder")) {
            // Unknown keys (`setter(..)`, `field(..)`) are skipped, not errors.
            let _ = a.parse_nested_meta(|meta| {
                if meta.path.is_ident("default") {
                    if meta.input.peek(syn::Token![=]) {
                        let given: Expr = meta.value()?.parse()?;
                        value = match &given {
                            Expr::Lit(syn::ExprLit {
                                lit: Lit::Str(text),
                                ..
                            }) => text.parse::<Expr>().ok(),
                            _ => Some(given),
                        };
                    } else if type_name(&field.ty).as_deref() == Some("Option") {
                        value = Some(syn::parse_quote!(None));
                    }
                } else if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                    // Skip the rest of this entry: `= value` or `(..)`.
                    if meta.input.peek(syn::Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    } else {
                        meta.parse_nested_meta(|_| Ok(()))?;
                    }
                }
                Ok(())
            });
        }
        if let Some(expr) = value {
            fields.push(syn::FieldValue {
                attrs: Vec::new(),
                member: syn::Member::Named(ident.clone()),
                colon_token: Some(syn::token::Colon::default()),
                expr,
            });
        }
    }
    let ty = &s.ident;
    syn::ExprStruct {
        attrs: Vec::new(),
        qself: None,
        path: syn::parse_quote!(#ty),
        brace_token: syn::token::Brace::default(),
        fields,
        dot2_token: None,
        rest: None,
    }
}

/// The value a `derive_builder` chain of policy type `ty` builds: `Self::builder().build()`,
/// `Backoff::builder().limit(3).build().unwrap()`, `BackoffBuilder::default().build()?`: the
/// type's builder defaults with each setter's argument in its field.
fn built_value(value: &Expr, ty: &str, cx: &Cx<'_, '_>) -> Option<syn::ExprStruct> {
    let _guard = crate::analysis::limits::enter();
    match value {
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "expect" | "unwrap" | "unwrap_or_default"
            ) =>
        {
            built_value(&m.receiver, ty, cx)
        }
        Expr::Try(t) => built_value(&t.expr, ty, cx),
        Expr::MethodCall(m) if m.method == "build" && m.args.is_empty() => {
            let mut literal = cx.builders.get(ty)?.clone();
            // The setters, from the last one called back to the builder's root.
            let mut setters: Vec<(&syn::Ident, &Expr)> = Vec::new();
            let mut at = &*m.receiver;
            loop {
                match at {
                    Expr::MethodCall(s) if s.args.len() == 1 => {
                        setters.push((&s.method, &s.args[0]));
                        at = &s.receiver;
                    }
                    Expr::Call(c) if c.args.is_empty() => {
                        let path = names::callee_path(&c.func)?;
                        let n = path.segments.len();
                        let (owner, name) = match n {
                            2.. => (
                                path.segments[n - 2].ident.to_string(),
                                path.segments[n - 1].ident.to_string(),
                            ),
                            _ => return None,
                        };
                        let builder = format!("{ty}Builder");
                        let root = (name == "builder" && (owner == "Self" || owner == ty))
                            || (owner == builder && matches!(name.as_str(), "default" | "new"));
                        if !root {
                            return None;
                        }
                        break;
                    }
                    _ => return None,
                }
            }
            for (name, arg) in setters.into_iter().rev() {
                let field = literal
                    .fields
                    .iter_mut()
                    .find(|f| matches!(&f.member, syn::Member::Named(n) if n == name));
                match field {
                    Some(f) => f.expr = arg.clone(),
                    None => literal.fields.push(syn::FieldValue {
                        attrs: Vec::new(),
                        member: syn::Member::Named(name.clone()),
                        colon_token: Some(syn::token::Colon::default()),
                        expr: arg.clone(),
                    }),
                }
            }
            Some(literal)
        }
        _ => None,
    }
}

/// The value a block ends with.
fn tail(block: &syn::Block) -> Option<&Expr> {
    match block.stmts.last() {
        Some(Stmt::Expr(e, None)) => Some(e),
        _ => None,
    }
}

/// What a policy value says: its growth, jitter, cap and bound, when it says anything about its
/// waits.
fn site_of(
    ty: &str,
    value: &Expr,
    holder: &str,
    params: &[String],
    endless: bool,
    cx: &Cx<'_, '_>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let head = index.of(value);
    let facts = match value {
        Expr::Struct(s) => struct_facts(ty, s, params, &HashMap::new(), endless, cx)?,
        // `Self::builder().build().unwrap()` of a `#[derive(Builder)]` type: the field
        // defaults its attributes give, with the setters called on the way.
        Expr::MethodCall(_) | Expr::Try(_) if built_value(value, ty, cx).is_some() => {
            let literal = built_value(value, ty, cx)?;
            struct_facts(ty, &literal, &[], &HashMap::new(), endless, cx)?
        }
        // `ExponentialBackoff::new(Duration::from_millis(300), 2., Some(..), None)`, a
        // constructor of the file: its literal with the arguments for its parameters.
        Expr::Call(_) | Expr::MethodCall(_) | Expr::Try(_)
            if constructor_call(value, ty, cx).is_some() =>
        {
            let (literal, ctor_params, args) = constructor_call(value, ty, cx)?;
            let bound: HashMap<String, &Expr> = ctor_params.iter().cloned().zip(args).collect();
            struct_facts(ty, literal, &ctor_params, &bound, endless, cx)?
        }
        // `Backoff::Exponential(2)`, `Self::Linear(Duration::from_millis(10))`: a variant
        // carrying its wait (a bare `Self::Exponential` is a mode, read where it is used).
        // When it carries settings of its own (`Strategy::ExponentialBackoff(Default::default())`,
        // a struct, a call), their jitter and cap are not read here: unknown, and unknown is
        // silent.
        Expr::Call(c) if !c.args.is_empty() => {
            let plain = c.args.iter().all(plain_value);
            Facts {
                kind: variant_kind(value)?,
                jitter: (plain && !cx.file_is_random).then_some(false),
                capped: plain.then_some(false),
                unbounded: Some(endless),
            }
        }
        _ => return None,
    };
    let kind = facts.kind;
    // Unknown is silent: as if jittered, capped and bounded.
    let jitter = facts.jitter.unwrap_or(true);
    let capped = facts.capped.unwrap_or(true);
    let unbounded = facts.unbounded.unwrap_or(false);
    let delay = Delay {
        span: head,
        kind,
        jitter,
        capped,
        fallback: None,
        blocking: false,
        longest_secs: None,
        ceiling: false,
    };
    // The attempts are the callers' to set.
    Some(RetrySite::policy(
        head,
        if unbounded {
            Bound::Unbounded
        } else {
            Bound::Bounded(BoundKind::Caller)
        },
        vec![delay.uncapped_for_callers()],
        holder.to_owned(),
        None,
        false,
    ))
}

/// How the waits of a type of this file go, read from its own code: a method that takes
/// `&mut self` and returns a `Duration` (`fn next_delay(&mut self) -> Duration { let d =
/// self.base * 2u32.saturating_pow(self.attempt); self.attempt += 1; d.min(self.cap) }`), its
/// returned values' growth and randomness. `None` when the type has no such method here, or
/// when what it returns is not read (unknown: silent).
#[derive(Clone, Copy)]
struct OwnSchedule {
    kind: DelayKind,
    random: bool,
}

fn own_schedule(ty: &str, scope: &FileScope<'_>) -> Option<OwnSchedule> {
    let _guard = crate::analysis::limits::enter();
    let mut found: Option<OwnSchedule> = None;
    for f in schedule_methods(ty, scope) {
        let locals = Locals::of_fn(f);
        let facts = LoopFacts::collect(f.block, &[]);
        let name = f.sig.ident.to_string();
        let values = super::values::ValueCx {
            file: scope,
            locals: &locals,
            facts: &facts,
            params: None,
            depth: 0,
            current_fn: &name,
        };
        // The state it keeps for the next call, stored multiplied (`self.delay = (self.delay
        // as f64 * self.factor) as i64`, `self.current = Some(next)` where `next` doubles the
        // last): each wait is made from a larger one.
        let stores_multiplied = stores_multiplied(f.block, &locals);
        for e in super::values::returned_exprs(f.block) {
            let t = values.taint(e);
            let mut kind = super::site::kind_of(t.growth, t.counter, t.opaque);
            if kind == DelayKind::Unknown {
                return None;
            }
            if stores_multiplied {
                kind = DelayKind::Growing;
            }
            let here = OwnSchedule {
                kind,
                random: t.random,
            };
            found = Some(match found {
                Some(prev) if prev.kind == DelayKind::Growing => OwnSchedule {
                    random: prev.random && here.random,
                    ..prev
                },
                Some(prev) => OwnSchedule {
                    kind: here.kind,
                    random: prev.random && here.random,
                },
                None => here,
            });
        }
    }
    found
}

/// Whether a method body stores into a field of `self` a value made by multiplying (`self.d =
/// self.d * f`, `self.d *= 2`, `self.d <<= 1`, `.saturating_mul(2)`, `.mul_f64(f)`, `.pow(n)`),
/// directly or through one of the body's `let`s (`self.current = Some(next)`).
fn stores_multiplied(body: &syn::Block, locals: &Locals<'_>) -> bool {
    use syn::visit::Visit;
    struct Mul(bool);
    impl<'v> Visit<'v> for Mul {
        fn visit_expr_binary(&mut self, b: &'v syn::ExprBinary) {
            let _guard = crate::analysis::limits::enter();
            self.0 |= matches!(
                b.op,
                syn::BinOp::Mul(_)
                    | syn::BinOp::Shl(_)
                    | syn::BinOp::MulAssign(_)
                    | syn::BinOp::ShlAssign(_)
            );
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'v syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            self.0 |= matches!(
                m.method.to_string().as_str(),
                "saturating_mul"
                    | "checked_mul"
                    | "wrapping_mul"
                    | "mul_f64"
                    | "mul_f32"
                    | "pow"
                    | "saturating_pow"
                    | "checked_pow"
                    | "powi"
                    | "powf"
            );
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    struct Stores<'l, 'a> {
        locals: &'l Locals<'a>,
        found: bool,
    }
    impl<'v> Visit<'v> for Stores<'_, '_> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            let (target, value, compound) = match e {
                Expr::Assign(a) => (&*a.left, &*a.right, false),
                Expr::Binary(b)
                    if matches!(b.op, syn::BinOp::MulAssign(_) | syn::BinOp::ShlAssign(_)) =>
                {
                    (&*b.left, &*b.right, true)
                }
                _ => {
                    syn::visit::visit_expr(self, e);
                    return;
                }
            };
            let on_self = matches!(target, Expr::Field(f)
                if matches!(&*f.base, Expr::Path(p) if p.path.is_ident("self")));
            if on_self {
                let multiplied = |v: &Expr| {
                    let mut m = Mul(false);
                    m.visit_expr(v);
                    m.0
                };
                let through_let = self.locals.lets.iter().any(|(n, vs)| {
                    super::values::mentions(value, n) && vs.iter().any(|v| multiplied(v))
                });
                self.found |= compound || multiplied(value) || through_let;
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = Stores {
        locals,
        found: false,
    };
    v.visit_block(body);
    v.found
}

/// The methods of the type `ty` of this file that give its next wait: they take `&mut self`
/// and return a `Duration` (`fn next_delay(&mut self) -> Duration`).
fn schedule_methods<'s, 'a>(
    ty: &'s str,
    scope: &'s FileScope<'a>,
) -> impl Iterator<Item = &'s crate::analysis::scope::LocalFn<'a>> + 's {
    scope.fns.values().flatten().filter(move |f| {
        let takes_mut_self = matches!(
            f.sig.inputs.first(),
            Some(syn::FnArg::Receiver(r)) if r.mutability.is_some() && r.reference.is_some()
        );
        let returns_duration = match &f.sig.output {
            syn::ReturnType::Type(_, t) => {
                matches!(&**t, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Duration"))
            }
            syn::ReturnType::Default => false,
        };
        f.owner.is_some_and(|o| o == ty) && takes_mut_self && returns_duration
    })
}

/// Whether an expression makes a `Duration` (`Duration::from_millis(100)`,
/// `std::time::Duration::from_secs(3)`, `Duration::ZERO`).
fn is_duration(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Call(c) => names::callee_path(&c.func).is_some_and(|p| {
            let segments = names::segments(p);
            segments.len() >= 2 && segments[segments.len() - 2] == "Duration"
        }),
        Expr::Path(p) => {
            let segments = names::segments(&p.path);
            segments.len() >= 2 && segments[segments.len() - 2] == "Duration"
        }
        Expr::Paren(p) => is_duration(&p.expr),
        _ => false,
    }
}

/// A number, a name or a duration made of numbers (`2`, `BASE`, `Duration::from_millis(10)`):
/// a value that carries no settings of its own.
fn plain_value(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Unary(u) => plain_value(&u.expr),
        Expr::Paren(p) => plain_value(&p.expr),
        Expr::Call(c) => {
            names::callee_path(&c.func)
                .and_then(names::last)
                .is_some_and(|n| n.starts_with("from_"))
                && c.args.iter().all(plain_value)
        }
        _ => false,
    }
}

/// The growth a variant or type name says: `Exponential`, `Linear`, `Fibonacci` grow; `Fixed`,
/// `Constant` do not.
fn growth_word(text: &str) -> Option<DelayKind> {
    let t = text.to_ascii_lowercase();
    let v = known::builtin();
    if v.part_of(List::GrowingVariantWords, &t) {
        Some(DelayKind::Growing)
    } else if v.part_of(List::ConstantVariantWords, &t) {
        Some(DelayKind::Constant)
    } else {
        None
    }
}

/// The growth of an enum value (`Backoff::Exponential(2)`): its variant's name.
fn variant_kind(value: &Expr) -> Option<DelayKind> {
    let path = match value {
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => &p.path,
            _ => return None,
        },
        Expr::Path(p) => &p.path,
        _ => return None,
    };
    // A variant: `Type::Variant` (not a constructor such as `Backoff::new`).
    if path.segments.len() < 2 {
        return None;
    }
    let variant = names::last(path)?;
    if !variant.chars().next().is_some_and(char::is_uppercase) {
        return None;
    }
    growth_word(&variant)
}

/// What a policy value says; `None` for what it leaves unknown (a field set from a
/// constructor's parameter), which no rule reports.
struct Facts {
    kind: DelayKind,
    jitter: Option<bool>,
    capped: Option<bool>,
    unbounded: Option<bool>,
}

/// The facts of a struct literal of policy type `ty`. `params`: the parameters of the
/// constructor holding it (their values are the caller's).
fn struct_facts<'e>(
    ty: &str,
    s: &'e syn::ExprStruct,
    params: &[String],
    args: &HashMap<String, &'e Expr>,
    endless: bool,
    cx: &Cx<'_, '_>,
) -> Option<Facts> {
    let est = cx.est;
    let mut fields: HashMap<Role, &Expr> = HashMap::new();
    for f in &s.fields {
        if let syn::Member::Named(n) = &f.member {
            if let Some(r) = role(&n.to_string()) {
                // A parameter of a constructor called with arguments: the argument.
                let value = super::values::place_key(&f.expr)
                    .and_then(|k| args.get(&k).copied())
                    .unwrap_or(&f.expr);
                // A growth is a number; a field named like one that holds a duration (`base:
                // Duration::from_millis(100)`) is the first wait.
                let r = if r == Role::Growth && is_duration(value) {
                    Role::Delay
                } else {
                    r
                };
                fields.entry(r).or_insert(value);
            }
        }
    }
    // A field holding a variant that names how waits go (`backoff_type:
    // RetryBackoffType::Exponential`) chooses the strategy, whatever the field is called: the
    // value says what it is.
    if let std::collections::hash_map::Entry::Vacant(slot) = fields.entry(Role::Strategy) {
        let given = |e: &'e Expr| {
            super::values::place_key(e)
                .and_then(|k| args.get(&k).copied())
                .unwrap_or(e)
        };
        if let Some(value) = s
            .fields
            .iter()
            .map(|f| given(&f.expr))
            .find(|v| variant_kind(v).is_some())
        {
            slot.insert(value);
        }
    }
    let from_param = |e: &Expr| {
        super::values::place_key(e).is_some_and(|k| params.contains(&k) && !args.contains_key(&k))
    };
    // A constructor that only stores its parameters says nothing of a default.
    if !fields.is_empty() && fields.values().all(|e| from_param(e)) {
        return None;
    }
    // A field set from a parameter: unknown.
    let known = |r: Role| fields.get(&r).copied().filter(|e| !from_param(e));
    let unknown = |r: Role| fields.get(&r).is_some_and(|e| from_param(e));
    // One attempt, or none: not a retry.
    if known(Role::Attempts)
        .and_then(|e| est.eval(e))
        .is_some_and(|n| n <= 1.0)
    {
        return None;
    }
    let delay = known(Role::Delay);
    let own = own_schedule(ty, cx.est.file);
    let factor = known(Role::Growth).and_then(|e| est.eval(e));
    let strategy = known(Role::Strategy).and_then(|e| strategy_kind(e, cx));
    let kind = match (factor, strategy, growth_word(ty)) {
        (Some(f), _, _) if f > 1.0 => DelayKind::Growing,
        (_, Some(k), _) | (_, _, Some(k)) => k,
        (Some(f), _, _) if (f - 1.0).abs() < f64::EPSILON => DelayKind::Constant,
        // Only a wait, known and not zero, and no cap nor growth: the same wait every time,
        // unless the type's own code gives its waits (a method that gives the next one), which
        // decides, read below. A cap without a growth the value names says nothing we can read.
        (None, None, None)
            if !fields.contains_key(&Role::Cap)
                && !fields.contains_key(&Role::Growth)
                && schedule_methods(ty, cx.est.file).next().is_none()
                && delay.and_then(|d| est.eval(d)).is_some_and(|ms| ms > 0.0) =>
        {
            DelayKind::Constant
        }
        // Nothing in the value says how its waits go: the type's own code may (a method of
        // it that gives the next wait from its fields).
        _ => match own {
            Some(o) => o.kind,
            None => return None,
        },
    };
    if !fields.contains_key(&Role::Delay)
        && !fields.contains_key(&Role::Growth)
        && strategy.is_none()
        && growth_word(ty).is_none()
        && own.is_none()
    {
        // A type name alone, with fields about something else.
        return None;
    }
    // A strategy that carries settings of its own (`strategy:
    // Strategy::ExponentialBackoff(Default::default())`): its jitter and cap are not read here.
    // So does one made by a constructor of another crate (`backoff:
    // exponential_backoff::Backoff::new(retries, min, max)`): its jitter and cap are that
    // crate's.
    let carried = known(Role::Strategy).is_some_and(|e| match e {
        Expr::Call(c) => !c.args.iter().all(plain_value) || made_by_other_crate(c, cx),
        _ => false,
    });
    let jitter = if unknown(Role::Jitter) || (carried && known(Role::Jitter).is_none()) {
        None
    } else {
        match known(Role::Jitter) {
            Some(j) => Some(is_real_jitter(j, delay, est)),
            // The type's own method gives the waits: random if it draws them so.
            None if own.is_some() => own.map(|o| o.random),
            // No jitter field: none, unless the file draws random numbers somewhere (the
            // function that reads the policy may add it).
            None => (!cx.file_is_random).then_some(false),
        }
    };
    // The type's own method gives the waits: a cap the value does not name is that code's.
    let capped = if unknown(Role::Cap)
        || (carried && known(Role::Cap).is_none())
        || (own.is_some() && known(Role::Cap).is_none())
    {
        None
    } else {
        Some(known(Role::Cap).is_some_and(|c| !is_none_or_max(c)))
    };
    let limit = |r: Role| {
        if unknown(r) {
            None
        } else {
            Some(known(r).map(is_none_or_max))
        }
    };
    // Unbounded when both the attempts and the time are explicitly unlimited, or when an
    // endless schedule limits neither. (`max_retries: None` alone may be a reconnect policy
    // meant to go on for ever: a supervisor's, which is not reported.)
    let unbounded = match (limit(Role::Attempts), limit(Role::Deadline)) {
        (None, _) | (_, None) => None,
        (Some(Some(a)), Some(Some(d))) => Some(a && d),
        (Some(Some(a)), Some(None)) => Some(a && endless),
        (Some(None), Some(Some(d))) => Some(d && endless),
        (Some(None), Some(None)) => Some(endless),
    };
    Some(Facts {
        kind,
        jitter,
        capped,
        unbounded,
    })
}

/// A call whose path resolves into another crate (`exponential_backoff::Backoff::new`, through
/// the file's `use`): not this crate's type or variant, whose code is read here.
fn made_by_other_crate(c: &syn::ExprCall, cx: &Cx<'_, '_>) -> bool {
    let Some(path) = names::callee_path(&c.func) else {
        return false;
    };
    let full = cx.est.file.resolve(path);
    full.len() >= 3 && !matches!(full[0].as_str(), "crate" | "self" | "super" | "Self")
}

/// The growth a strategy field names: its variant (`RetryStrategy::ExponentialBackoff`), or the
/// default of a policy type of the file (`Backoff::default()` where `impl Default for Backoff`
/// is `Backoff::Exponential`).
fn strategy_kind(e: &Expr, cx: &Cx<'_, '_>) -> Option<DelayKind> {
    if let Some(k) = growth_word(&names::text(e)) {
        return Some(k);
    }
    let Expr::Call(c) = e else {
        return None;
    };
    let path = names::callee_path(&c.func)?;
    let n = path.segments.len();
    if n >= 2 && path.segments[n - 1].ident == "default" {
        let ty = path.segments[n - 2].ident.to_string();
        return cx.defaults.get(&ty).and_then(|v| variant_kind(v));
    }
    None
}

/// `None`, `Duration::MAX`, `u64::MAX`, `MaxRetries::Infinite`, `Unlimited`: no limit.
fn is_none_or_max(e: &Expr) -> bool {
    let text = names::text(e);
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().any(|w| {
        matches!(
            *w,
            "None" | "MAX" | "Infinite" | "Unlimited" | "Forever" | "INFINITY" | "Unbounded"
        )
    })
}

/// Whether a jitter field adds real randomness: not `false`, `0`, `None`, `Jitter::None`, and
/// not a range of a few percent of the wait (`0..30` ms on 1 000 ms is a constant plus noise).
fn is_real_jitter(j: &Expr, delay: Option<&Expr>, est: &Estimator<'_, '_>) -> bool {
    match j {
        Expr::Lit(l) => match &l.lit {
            Lit::Bool(b) => b.value,
            Lit::Int(i) => i.base10_digits() != "0",
            Lit::Float(f) => f.base10_parse::<f64>().is_ok_and(|v| v != 0.0),
            _ => true,
        },
        Expr::Range(r) => {
            let lo = r.start.as_deref().and_then(|e| est.eval(e)).unwrap_or(0.0);
            let hi = r.end.as_deref().and_then(|e| est.eval(e));
            let base = delay.and_then(|d| est.eval(d));
            match (hi, base) {
                // A factor the wait is multiplied by (`0.85..=1.15`): a spread of a tenth or
                // more is jitter.
                (Some(hi), _) if lo > 0.0 && hi <= 2.0 => hi - lo >= 0.1,
                // Milliseconds added: a tenth of the wait or more is jitter, less is noise.
                (Some(hi), Some(base)) => hi > 0.1 * base,
                (Some(hi), None) => hi > 0.0,
                _ => true,
            }
        }
        other => !is_none_or_max(other) && !names::text(other).contains("Jitter :: None"),
    }
}
