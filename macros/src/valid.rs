//! Phase 2, validate: every argument checked against the rules of a compliant retry, and the
//! function's signature checked against what the wrapper needs. All errors are collected (serde's
//! `Ctxt` idea) and reported together, each spanned on the offending tokens.

use std::collections::BTreeSet as Set;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{
    Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lifetime, Lit, Path, PathArguments,
    ReturnType, Type,
};

use crate::args::{Arg, Value};

/// The checked arguments, defaults filled in. Durations are in milliseconds.
pub(crate) struct Config {
    pub attempts: u32,
    pub deadline_ms: u64,
    pub base_ms: u64,
    pub cap_ms: u64,
    pub jitter: Jitter,
    pub attempt_timeout_ms: Option<u64>,
    pub retry_on: Option<Vec<u16>>,
    pub classify: Option<Path>,
    pub idempotency_key: Option<(Ident, Option<Expr>)>,
    pub idempotent: bool,
    pub budget: Budget,
    /// The key of the upstream's shared budget and bulkhead (default: the module path).
    pub budget_key: Option<String>,
    pub breaker: Option<(Path, Span)>,
    pub bulkhead: Option<(Bulkhead, Span)>,
    pub fallback: Option<Path>,
    pub on_retry: Option<Path>,
    pub on_stop: Option<Path>,
    pub sleep: Option<Path>,
}

#[derive(Clone, Copy)]
pub(crate) enum Jitter {
    Full,
    Decorrelated,
}

/// Where retries are drawn from.
pub(crate) enum Budget {
    /// The upstream's shared budget (by `budget_key`, else by module path).
    Shared,
    /// `budget = none`.
    Off,
    /// `budget = PATH`: a `static RetryBudget`.
    Static(Path),
}

/// How the calls in flight are capped.
pub(crate) enum Bulkhead {
    /// `max_concurrent = N`: the upstream's shared bulkhead.
    Shared(u32),
    /// `bulkhead = PATH`: a `static Bulkhead`.
    Static(Path),
}

/// How the fallback is called: the function's own parameters, in order.
pub(crate) enum Forward {
    /// `self`, `&self` or `&mut self`.
    Receiver(syn::Token![self]),
    Named(Ident),
}

/// What the wrapper needs to know about the function.
pub(crate) struct Shape {
    pub is_async: bool,
    /// The body's own result type (`Result<T, E>` even when the function returns
    /// `Result<T, RetryError<E>>`), or `None` when it cannot be named (`impl Trait` inside).
    pub body_type: Option<Type>,
    /// The function returns `Result<T, RetryError<E>>`: pass the runtime's error through.
    pub detailed: bool,
    /// The function returns `Result<Retried<T>, _>`: pass the report of a success through.
    pub retried: bool,
    /// The function's name, for its `tracing` span.
    pub name: String,
    /// The parameters, forwarded to the fallback (`None` for one without a name).
    pub params: Vec<Result<Forward, Span>>,
}

/// Collects errors; `finish` combines them into one `syn::Error` (one `compile_error!` each).
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, span: impl ToTokens, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new_spanned(span, message));
    }

    pub fn push_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    pub fn extend(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub fn finish(self) -> syn::Result<()> {
        let mut errors = self.0.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            first.combine(error);
        }
        Err(first)
    }
}

const MAX_ATTEMPTS: u64 = 10;
const MAX_CONCURRENT: u64 = 1_000_000;
const MAX_DEADLINE_MS: u64 = 60 * 60 * 1000;
const MAX_CAP_MS: u64 = 5 * 60 * 1000;

/// Every argument, with the example shown when one is written wrongly.
const ARGUMENTS: &[(&str, &str)] = &[
    ("attempts", "attempts = 3"),
    ("deadline", "deadline = \"10s\""),
    ("base", "base = \"100ms\""),
    ("cap", "cap = \"5s\""),
    ("jitter", "jitter = \"full\""),
    ("attempt_timeout", "attempt_timeout = \"2s\""),
    ("retry_on", "retry_on = [429, 503]"),
    ("classify", "classify = path::to::classify"),
    ("idempotency_key", "idempotency_key = key"),
    ("idempotent", "idempotent = true"),
    (
        "budget",
        "budget = PATH_TO_STATIC_BUDGET` or `budget = none",
    ),
    ("budget_key", "budget_key = \"payments\""),
    ("breaker", "breaker = PATH_TO_STATIC_BREAKER"),
    ("max_concurrent", "max_concurrent = 20"),
    ("bulkhead", "bulkhead = PATH_TO_STATIC_BULKHEAD"),
    ("fallback", "fallback = path::to::fallback"),
    ("on_retry", "on_retry = path::to::hook"),
    ("on_stop", "on_stop = path::to::hook"),
    ("sleep", "sleep = path::to::sleep"),
];

/// Names people reach for, and the argument that means it.
const NEAR_MISSES: &[(&str, &str)] = &[
    ("max_attempts", "attempts"),
    ("retries", "attempts"),
    ("max_retries", "attempts"),
    ("tries", "attempts"),
    ("timeout", "deadline` or `attempt_timeout"),
    ("max_elapsed", "deadline"),
    ("delay", "base"),
    ("initial_delay", "base"),
    ("backoff", "base` and `cap"),
    ("max_delay", "cap"),
    ("retry_if", "classify"),
    ("when", "classify"),
    ("key", "idempotency_key"),
    ("circuit_breaker", "breaker"),
    ("concurrency", "max_concurrent"),
    ("max_in_flight", "max_concurrent"),
    ("limit", "max_concurrent"),
    ("no_budget", "budget = none"),
    ("on_failure", "fallback"),
    ("or_else", "fallback"),
];

/// Checks the arguments.
pub(crate) fn config(args: Vec<Arg>, is_async: bool, errors: &mut Errors) -> Config {
    let mut config = Config {
        attempts: 3,
        deadline_ms: 10_000,
        base_ms: 100,
        cap_ms: 5_000,
        jitter: Jitter::Full,
        attempt_timeout_ms: None,
        retry_on: None,
        classify: None,
        idempotency_key: None,
        idempotent: false,
        budget: Budget::Shared,
        budget_key: None,
        breaker: None,
        bulkhead: None,
        fallback: None,
        on_retry: None,
        on_stop: None,
        sleep: None,
    };
    let mut seen = Set::new();
    // Spans of the arguments that other checks refer to.
    let mut base_span = None;
    let mut cap_span = None;
    let mut retry_on_span = None;
    let mut classify_span = None;
    let mut budget_key_span = None;

    for arg in args {
        let Some(name) = arg.path.get_ident().map(ToString::to_string) else {
            errors.push(
                &arg.path,
                unknown_message(&arg.path.to_token_stream().to_string()),
            );
            continue;
        };
        let Some(&(_, example)) = ARGUMENTS.iter().find(|(known, _)| *known == name) else {
            errors.push(&arg.path, unknown_message(&name));
            continue;
        };
        if !seen.insert(name.clone()) {
            errors.push(
                &arg.path,
                format_args!("duplicate `{name}` argument: give each argument once"),
            );
            continue;
        }
        let value = match arg.value {
            Value::Expr(expr) => expr,
            Value::Missing => {
                errors.push(
                    &arg.path,
                    format_args!("`{name}` needs a value: `{example}`"),
                );
                continue;
            }
            Value::List => {
                errors.push(
                    &arg.path,
                    format_args!("write `{name}` as `name = value`: `{example}`"),
                );
                continue;
            }
        };
        match name.as_str() {
            "attempts" => {
                if let Some(n) = attempts(&value, errors) {
                    config.attempts = n;
                }
            }
            "deadline" => {
                if let Some(ms) = duration(&name, &value, errors) {
                    if ms == 0 {
                        errors.push(&value, "`deadline` must be more than 0: it bounds the whole operation, waits included");
                    } else if ms > MAX_DEADLINE_MS {
                        errors.push(&value, "`deadline` is at most \"60m\": past an hour a retry loop is a job queue in disguise; use one");
                    } else {
                        config.deadline_ms = ms;
                    }
                }
            }
            "base" => {
                if let Some(ms) = duration(&name, &value, errors) {
                    if ms == 0 {
                        errors.push(&value, "`base` must be more than 0: retrying without a wait is the worst retry-storm amplifier; typical values are \"100ms\" to \"500ms\"");
                    } else {
                        config.base_ms = ms;
                        base_span = Some(value.span());
                    }
                }
            }
            "cap" => {
                if let Some(ms) = duration(&name, &value, errors) {
                    if ms > MAX_CAP_MS {
                        errors.push(&value, "`cap` is at most \"5m\": a longer single wait outlives any caller; typical caps are \"3s\" to \"30s\"");
                    } else {
                        config.cap_ms = ms;
                        cap_span = Some(value.span());
                    }
                }
            }
            "jitter" => {
                if let Some(jitter) = jitter(&value, errors) {
                    config.jitter = jitter;
                }
            }
            "attempt_timeout" => {
                if let Some(ms) = duration(&name, &value, errors) {
                    if !is_async {
                        errors.push(&arg.path, "`attempt_timeout` needs an `async fn`: a blocking call cannot be cut from outside; set the client's own timeout inside the body instead");
                    } else if ms == 0 {
                        errors.push(&value, "`attempt_timeout` must be more than 0");
                    } else {
                        config.attempt_timeout_ms = Some(ms);
                    }
                }
            }
            "retry_on" => {
                retry_on_span = Some(arg.path.span());
                config.retry_on = retry_on(&value, errors);
            }
            "classify" => {
                classify_span = Some(arg.path.span());
                config.classify = path(&name, &value, example, errors);
            }
            "idempotency_key" => config.idempotency_key = key(&value, errors),
            "idempotent" => match &value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => config.idempotent = b.value,
                _ => errors.push(&value, "`idempotent` must be `true` or `false`"),
            },
            "budget" => {
                if is_none(&value) {
                    config.budget = Budget::Off;
                } else if let Some(path) = path(&name, &value, example, errors) {
                    config.budget = Budget::Static(path);
                }
            }
            "budget_key" => {
                budget_key_span = Some(arg.path.span());
                config.budget_key = budget_key(&value, errors);
            }
            "breaker" => {
                config.breaker =
                    path(&name, &value, example, errors).map(|path| (path, arg.path.span()));
            }
            "max_concurrent" => {
                if let Some(n) = max_concurrent(&value, errors) {
                    config.bulkhead = bulkhead_once(
                        config.bulkhead.take(),
                        (Bulkhead::Shared(n), arg.path.span()),
                        errors,
                    );
                }
            }
            "bulkhead" => {
                if let Some(path) = path(&name, &value, example, errors) {
                    config.bulkhead = bulkhead_once(
                        config.bulkhead.take(),
                        (Bulkhead::Static(path), arg.path.span()),
                        errors,
                    );
                }
            }
            "fallback" => config.fallback = path(&name, &value, example, errors),
            "on_retry" => config.on_retry = path(&name, &value, example, errors),
            "on_stop" => config.on_stop = path(&name, &value, example, errors),
            "sleep" => config.sleep = path(&name, &value, example, errors),
            _ => unreachable!("every name of ARGUMENTS is matched"),
        }
    }

    if config.cap_ms < config.base_ms {
        let (span, message) = match (cap_span, base_span) {
            (Some(span), _) => (span, format!("`cap` ({}) is shorter than `base` ({}): the backoff must be able to reach `base`", show(config.cap_ms), show(config.base_ms))),
            (None, Some(span)) => (span, format!("`base` ({}) is longer than the default `cap` ({}): raise `cap` too", show(config.base_ms), show(config.cap_ms))),
            (None, None) => unreachable!("the defaults keep cap >= base"),
        };
        errors.push_at(span, message);
    }
    if let (Some(_), Some(span)) = (retry_on_span, classify_span) {
        errors.push_at(span, "`classify` and `retry_on` cannot be combined: with `classify` your function decides which errors are retried, so check the status there");
    }
    if let Some(span) = budget_key_span {
        let shared_bulkhead = matches!(config.bulkhead, Some((Bulkhead::Shared(_), _)));
        match &config.budget {
            Budget::Static(_) if !shared_bulkhead => errors.push_at(span, "`budget_key` names the shared budget of an upstream, and `budget = PATH` names another budget: remove one of them"),
            Budget::Off if !shared_bulkhead => errors.push_at(span, "`budget_key` is unused: with `budget = none` there is no shared budget to key (it also keys `max_concurrent`)"),
            _ => {}
        }
    }
    config
}

/// `none`, as in `budget = none`.
fn is_none(value: &Expr) -> bool {
    matches!(value, Expr::Path(p) if p.qself.is_none() && p.path.is_ident("none"))
}

fn budget_key(value: &Expr, errors: &mut Errors) -> Option<String> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    {
        let key = lit.value();
        if key.trim().is_empty() {
            errors.push(
                value,
                "`budget_key` is empty: name the upstream, such as \"payments\"",
            );
            return None;
        }
        return Some(key);
    }
    errors.push(value, "`budget_key` must be a string naming the upstream, such as `budget_key = \"payments\"`: the functions that share it share one budget");
    None
}

fn max_concurrent(value: &Expr, errors: &mut Errors) -> Option<u32> {
    let Expr::Lit(ExprLit {
        lit: Lit::Int(int), ..
    }) = value
    else {
        errors.push(value, "`max_concurrent` must be an integer literal such as 20: the calls in flight to the upstream at once");
        return None;
    };
    match int.base10_parse::<u64>() {
        Ok(0) => errors.push(value, "`max_concurrent = 0` would never let a call out: write at least 1 (20 is a common limit for one HTTP upstream)"),
        Ok(n @ 1..=MAX_CONCURRENT) => return u32::try_from(n).ok(),
        _ => errors.push(value, "`max_concurrent` is at most 1000000"),
    }
    None
}

/// One bulkhead: `max_concurrent` and `bulkhead` name the same thing.
fn bulkhead_once(
    before: Option<(Bulkhead, Span)>,
    new: (Bulkhead, Span),
    errors: &mut Errors,
) -> Option<(Bulkhead, Span)> {
    if before.is_some() {
        errors.push_at(new.1, "`max_concurrent` and `bulkhead` cannot be combined: `max_concurrent = N` makes the upstream's bulkhead, `bulkhead = PATH` names one; keep one");
        return before;
    }
    Some(new)
}

/// Checks that the fallback can be called with the function's parameters.
pub(crate) fn fallback(config: &Config, shape: &Shape, errors: &mut Errors) {
    if config.fallback.is_none() {
        return;
    }
    for param in &shape.params {
        if let Err(span) = param {
            errors.push_at(*span, "`fallback` is called with this function's arguments, by name: give this argument a name (a pattern cannot be passed on)");
        }
    }
}

fn unknown_message(name: &str) -> String {
    let hint = NEAR_MISSES
        .iter()
        .find(|(miss, _)| *miss == name)
        .map(|(_, meant)| format!("; did you mean `{meant}`?"))
        .unwrap_or_default();
    let all = ARGUMENTS
        .iter()
        .map(|(known, _)| format!("`{known}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("unknown argument `{name}`{hint} (expected one of {all})")
}

fn show(ms: u64) -> String {
    if ms.is_multiple_of(60_000) {
        format!("\"{}m\"", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("\"{}s\"", ms / 1000)
    } else {
        format!("\"{ms}ms\"")
    }
}

fn attempts(value: &Expr, errors: &mut Errors) -> Option<u32> {
    let Expr::Lit(ExprLit {
        lit: Lit::Int(int), ..
    }) = value
    else {
        errors.push(value, "`attempts` must be an integer literal from 1 to 10 (the first attempt included); an unbounded retry cannot be written");
        return None;
    };
    match int.base10_parse::<u64>() {
        Ok(0) => errors.push(value, "`attempts = 0` would never run the body: `attempts` counts every attempt, the first included (1 to 10)"),
        Ok(n @ 1..=MAX_ATTEMPTS) => return u32::try_from(n).ok(),
        _ => errors.push(value, format_args!("`attempts = {}` is too many: at most 10 (3 is the common default, gRPC caps at 5); more attempts only multiply the load on a failing service", int.base10_digits())),
    }
    None
}

/// A duration string: a whole number followed by `ms`, `s` or `m`.
fn duration(name: &str, value: &Expr, errors: &mut Errors) -> Option<u64> {
    let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    else {
        errors.push(
            value,
            format_args!("`{name}` must be a duration string such as \"250ms\", \"2s\" or \"1m\""),
        );
        return None;
    };
    let text = lit.value();
    let parsed = parse_duration_ms(&text);
    if parsed.is_none() {
        errors.push(value, format_args!("invalid duration {text:?}: write a whole number followed by `ms`, `s` or `m`, such as \"250ms\", \"2s\" or \"1m\""));
    }
    parsed
}

fn parse_duration_ms(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

fn jitter(value: &Expr, errors: &mut Errors) -> Option<Jitter> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    {
        match lit.value().as_str() {
            "full" => return Some(Jitter::Full),
            "decorrelated" => return Some(Jitter::Decorrelated),
            "none" => {
                errors.push(value, "`jitter = \"none\"` is not allowed: clients that failed together would retry together, in waves (a retry storm); use \"full\" (the default) or \"decorrelated\"");
                return None;
            }
            _ => {}
        }
    }
    errors.push(
        value,
        "`jitter` must be \"full\" (the default) or \"decorrelated\"",
    );
    None
}

fn retry_on(value: &Expr, errors: &mut Errors) -> Option<Vec<u16>> {
    let Expr::Array(array) = value else {
        errors.push(
            value,
            "`retry_on` must be a list of status codes such as [429, 503]",
        );
        return None;
    };
    if array.elems.is_empty() {
        errors.push(value, "`retry_on = []` retries nothing: list the transient statuses, such as [429, 503], or remove `retry_on`");
        return None;
    }
    let mut statuses = Vec::new();
    let mut ok = true;
    for elem in &array.elems {
        let status = match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Int(int), ..
            }) => int.base10_parse::<u16>().ok(),
            _ => None,
        };
        let Some(status) = status else {
            errors.push(elem, "expected an HTTP status code such as 503");
            ok = false;
            continue;
        };
        let problem = match status {
            408 | 429 | 500..=599 => None,
            400..=499 => Some(format!("`{status}` is a permanent error: a 4xx other than 408 and 429 means the request itself is wrong, so resending it cannot succeed and only burns quota")),
            _ => Some(format!("`{status}` is not an error status: `retry_on` lists 408, 429 and 5xx statuses")),
        };
        if let Some(problem) = problem {
            errors.push(elem, problem);
            ok = false;
        } else if statuses.contains(&status) {
            errors.push(
                elem,
                format_args!("duplicate status `{status}` in `retry_on`"),
            );
            ok = false;
        } else {
            statuses.push(status);
        }
    }
    ok.then_some(statuses)
}

fn path(name: &str, value: &Expr, example: &str, errors: &mut Errors) -> Option<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Some(p.path.clone()),
        _ => {
            errors.push(value, format_args!("`{name}` must be a path (`{example}`)"));
            None
        }
    }
}

fn key(value: &Expr, errors: &mut Errors) -> Option<(Ident, Option<Expr>)> {
    let single_ident = |expr: &Expr| match expr {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident().cloned(),
        _ => None,
    };
    if let Some(ident) = single_ident(value) {
        return Some((ident, None));
    }
    if let Expr::Assign(assign) = value {
        if let Some(ident) = single_ident(&assign.left) {
            return Some((ident, Some((*assign.right).clone())));
        }
    }
    errors.push(value, "`idempotency_key` names the binding the body uses: `idempotency_key = key` (a random key) or `idempotency_key = key = format!(\"order:{}\", id)`");
    None
}

/// Checks the function: not `const`, returns `Result`, and its `Ok` value does not borrow from a
/// `&mut` parameter (each attempt re-borrows it, so a borrow cannot outlive the attempt).
pub(crate) fn shape(item: &ItemFn, errors: &mut Errors) -> Option<Shape> {
    let sig = &item.sig;
    if let Some(constness) = &sig.constness {
        errors.push(
            constness,
            "`#[retryable]` cannot be used on a `const fn`: it waits between attempts",
        );
    }
    let ReturnType::Type(_, ty) = &sig.output else {
        errors.push(
            &sig.ident,
            "`#[retryable]` needs a function that returns `Result<T, E>`: it retries when the body returns `Err`; this one returns `()`",
        );
        return None;
    };
    let Some(result) = result_path(ty) else {
        errors.push(
            ty,
            "`#[retryable]` needs a function that returns `Result<T, E>`: it retries when the body returns `Err`",
        );
        return None;
    };
    if let Some(param) = mut_borrow_returned(item, ty) {
        errors.push(
            ty,
            format_args!("the `Ok` value of a `#[retryable]` function cannot borrow from the `&mut` parameter `{param}`: each attempt re-borrows `{param}`, and a borrow taken by one attempt cannot outlive it; return an owned value, or take `{param}` by shared reference"),
        );
        return None;
    }
    let (body_type, detailed, retried) = body_type(ty, result);
    let params = sig
        .inputs
        .iter()
        .map(|input| match input {
            FnArg::Receiver(receiver) => Ok(Forward::Receiver(receiver.self_token)),
            FnArg::Typed(typed) => match &*typed.pat {
                syn::Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                    Ok(Forward::Named(ident.ident.clone()))
                }
                other => Err(other.span()),
            },
        })
        .collect();
    Some(Shape {
        is_async: sig.asyncness.is_some(),
        body_type: (!contains_impl_trait(&body_type)).then_some(body_type),
        detailed,
        retried,
        name: sig.ident.to_string(),
        params,
    })
}

/// The path of a `Result<..>` or `path::Result<..>` return type.
fn result_path(ty: &Type) -> Option<&Path> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            (last.ident == "Result").then_some(&p.path)
        }
        Type::Paren(inner) => result_path(&inner.elem),
        Type::Group(inner) => result_path(&inner.elem),
        _ => None,
    }
}

/// The type argument of `Wrapper<T>` when `ty`'s last segment is named `wrapper`.
fn unwrap_type<'t>(ty: &'t Type, wrapper: &str) -> Option<&'t Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

/// The body's own type, `Result<T, E>`, for a declared `Result<T | Retried<T>, E |
/// RetryError<E>>`, and which of the two wrappers were declared (`RetryError`, `Retried`).
fn body_type(ty: &Type, result: &Path) -> (Type, bool, bool) {
    let Some(last) = result.segments.last() else {
        return (ty.clone(), false, false);
    };
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return (ty.clone(), false, false);
    };
    let mut types = args.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    // `Result<T, E>`, or an alias with the error fixed (`io::Result<T>`).
    let (Some(ok), err, None) = (types.next(), types.next(), types.next()) else {
        return (ty.clone(), false, false);
    };
    let retried = unwrap_type(ok, "Retried");
    let detailed = err.and_then(|err| unwrap_type(err, "RetryError"));
    if retried.is_none() && detailed.is_none() {
        return (ty.clone(), false, false);
    }
    let ok = retried.unwrap_or(ok);
    let arguments = match detailed.or(err) {
        Some(err) => syn::parse_quote!(<#ok, #err>),
        None => syn::parse_quote!(<#ok>),
    };
    let mut body = result.clone();
    if let Some(last) = body.segments.last_mut() {
        last.arguments = PathArguments::AngleBracketed(arguments);
    }
    (
        syn::parse_quote!(#body),
        detailed.is_some(),
        retried.is_some(),
    )
}

fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl Visit<'_> for Finder {
        fn visit_type_impl_trait(&mut self, _: &syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

/// The name of a `&mut` parameter that the return type borrows from, following the elision
/// rules: elided output lifetimes come from `self` when there is a `self` reference, else from the
/// only input lifetime; a named output lifetime comes from the parameter with that lifetime.
fn mut_borrow_returned(item: &ItemFn, output: &Type) -> Option<String> {
    // (parameter name, its lifetime if named, whether it is `&mut`)
    let mut refs: Vec<(String, Option<String>, bool)> = Vec::new();
    let mut elided_source = None;
    let mut input_lifetimes = 0;
    for input in &item.sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                if let Some((_, lifetime)) = &receiver.reference {
                    let mutable = receiver.mutability.is_some();
                    refs.push((
                        "self".into(),
                        lifetime.as_ref().map(|l| l.ident.to_string()),
                        mutable,
                    ));
                    elided_source = Some(refs.len() - 1);
                }
                input_lifetimes += 1;
            }
            FnArg::Typed(typed) => {
                let name = typed.pat.to_token_stream().to_string();
                let mut counter = Lifetimes::default();
                counter.visit_type(&typed.ty);
                input_lifetimes += counter.count;
                if let Type::Reference(reference) = &*typed.ty {
                    refs.push((
                        name,
                        reference.lifetime.as_ref().map(|l| l.ident.to_string()),
                        reference.mutability.is_some(),
                    ));
                }
            }
        }
    }
    if elided_source.is_none() && input_lifetimes == 1 && refs.len() == 1 {
        elided_source = Some(0);
    }
    let mut used = Lifetimes::default();
    used.visit_type(output);
    if used.elided {
        if let Some((name, _, true)) = elided_source.map(|i| &refs[i]) {
            return Some(name.clone());
        }
    }
    refs.into_iter()
        .find(|(_, lifetime, mutable)| {
            *mutable && lifetime.as_ref().is_some_and(|l| used.named.contains(l))
        })
        .map(|(name, _, _)| name)
}

/// The lifetimes a type mentions: named ones, and whether any is elided (`&T`, `'_`).
#[derive(Default)]
struct Lifetimes {
    named: Set<String>,
    elided: bool,
    count: usize,
}

impl Visit<'_> for Lifetimes {
    fn visit_type_reference(&mut self, reference: &syn::TypeReference) {
        if reference.lifetime.is_none() {
            self.elided = true;
            self.count += 1;
        }
        syn::visit::visit_type_reference(self, reference);
    }

    fn visit_lifetime(&mut self, lifetime: &Lifetime) {
        self.count += 1;
        if lifetime.ident == "_" {
            self.elided = true;
        } else if lifetime.ident != "static" {
            self.named.insert(lifetime.ident.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration_ms;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms("2s"), Some(2000));
        assert_eq!(parse_duration_ms("1m"), Some(60_000));
        assert_eq!(parse_duration_ms("0s"), Some(0));
        for bad in [
            "",
            "s",
            "2",
            "2 s",
            "1.5s",
            "2h",
            "-1s",
            "99999999999999999999m",
        ] {
            assert_eq!(parse_duration_ms(bad), None, "{bad}");
        }
    }
}
