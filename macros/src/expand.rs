//! Phase 3, expand: the function with its body moved into the runtime's retry loop. The expansion
//! is thin on purpose: every decision (classify, wait, stop) is made by `retry_audit::retry`.
//!
//! Sync, before / after:
//!
//! ```text
//! #[retryable(attempts = 4)]
//! fn get(c: &Client) -> Result<T, E> { body }
//!
//! fn get(c: &Client) -> Result<T, E> {
//!     let span = call_span("get"); let entered = span.enter(); // `tracing`, if on
//!     let policy = { const POLICY: Policy = Policy::new().attempts(4)...; POLICY };
//!     let done = Retry::new(policy)
//!         .budget({ static SLOT: Slot<RetryBudget> = Slot::new(); SLOT.budget(module_path!()) })
//!         .run_sync_with_report(&ThreadSleeper, |_| -> Result<T, E> { body });
//!     // with `fallback = cached`:
//!     let done = match done { Err(e) if e.allows_fallback() => e.degrade(cached(c)), d => d };
//!     into_plain(done)
//! }
//! ```
//!
//! The closure's braces are the function's own (an idempotency key's binding goes first inside
//! them): no block is wrapped in another, so nothing of the expansion warns at the user's tokens.
//!
//! Async: the body becomes an `async` block run once per iteration of a loop in the function
//! itself (a closure returning a future could not borrow the arguments, and an async closure
//! makes the function's future lose `Send`):
//!
//! ```text
//! async fn get(c: &Client) -> Result<T, E> {
//!     let span = call_span("get");
//!     let mut retry = Retry::new(policy).budget(..).start_async(&TokioSleeper);
//!     let done = loop {
//!         if let ControlFlow::Break(done) = span.instrument(retry.attempt(async { body })).await {
//!             break reported(done, &retry);
//!         }
//!     };
//!     into_plain(done)
//! }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Ident, ItemFn};

use crate::valid::{Budget, Bulkhead, Config, Forward, Jitter, Shape};

/// Identifiers of the wrapper's own locals: `mixed_site` hygiene keeps them out of the body's
/// reach, and the body's names out of theirs.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

pub(crate) fn expand(item: ItemFn, config: &Config, shape: &Shape) -> TokenStream {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = item;
    let rt = quote!(::retry_audit::retry);
    let policy = local("__retry_policy");
    let retry = local("__retry");
    let key_value = local("__retry_key");
    let sleeper = local("__retry_sleeper");
    let done = local("__retry_done");
    let entered = local("__retry_entered");
    let span = local("__retry_span");

    let policy_expr = policy_expr(config);
    let key_init = config.idempotency_key.as_ref().map(|(_, init)| {
        let value = if let Some(expr) = init {
            quote!(#rt::IdempotencyKey::new(#expr))
        } else {
            quote!(#rt::IdempotencyKey::random())
        };
        quote!(let #key_value: #rt::IdempotencyKey = #value;)
    });
    let key_bind: Option<syn::Stmt> = config
        .idempotency_key
        .as_ref()
        .map(|(ident, _)| syn::parse_quote!(let #ident = &#key_value;));
    let new_retry = if let Some(classify) = &config.classify {
        quote!(#rt::Retry::with_classifier(#policy, #classify))
    } else {
        quote!(#rt::Retry::new(#policy))
    };
    let builders = builders(config);
    let finish = match (shape.retried, shape.detailed) {
        (false, false) => quote!(#rt::__private::into_plain),
        (false, true) => quote!(#rt::__private::into_detailed),
        (true, false) => quote!(#rt::__private::into_retried),
        (true, true) => quote!(#rt::__private::into_full),
    };
    let name = &shape.name;
    let fallback = config
        .fallback
        .as_ref()
        .map(|path| fallback(path, shape, &done, &span));

    let body = if shape.is_async {
        let sleep = config.sleep.as_ref().map_or_else(
            || {
                quote!(#rt::__private::default_async_sleeper(
                    &#rt::__private::DefaultAsyncSleeper
                ))
            },
            |path| quote!(&#path),
        );
        let ascribe = shape.body_type.as_ref().map_or_else(
            || quote!(#rt::__private::ascribe),
            |ty| quote!(#rt::__private::ascribe::<#ty, _>),
        );
        let attempt = ascribe_attempt(&ascribe, &block, config.attempt_timeout_ms.is_some());
        // Each round (an attempt and its wait) and the fallback run in the call's span; the
        // attempts stay blocks of the function's own loop, so a body that moves an argument gets
        // rustc's own "value moved here, in previous iteration of loop".
        quote! {
            let #span = #rt::__private::call_span(#name);
            let #policy = #policy_expr;
            #key_init
            let #sleeper = #sleep;
            let mut #retry = #new_retry #builders
                .start_async(#sleeper);
            let #done = loop {
                #key_bind
                if let ::core::ops::ControlFlow::Break(#done) =
                    #span.instrument(#retry.#attempt).await
                {
                    break #rt::__private::reported(#done, &#retry);
                }
            };
            #fallback
            #finish(#done)
        }
    } else {
        let sleep = config.sleep.as_ref().map_or_else(
            || quote!(#rt::__private::DefaultSleeper),
            |path| quote!(#path),
        );
        let annotation = shape.body_type.as_ref().map(|ty| quote!(-> #ty));
        let block = closure_body(*block, key_bind);
        // The closure runs once per attempt, so it must be `FnMut`: a body that moves an argument
        // out fails here, with rustc's "closure is `FnOnce` because it moves the variable".
        let closure = quote_spanned! {Span::mixed_site()=>
            |_| #annotation #block
        };
        quote! {
            let #span = #rt::__private::call_span(#name);
            let #entered = #span.enter();
            let #policy = #policy_expr;
            #key_init
            let #sleeper = &#sleep;
            let #done = #new_retry #builders
                .run_sync_with_report(#sleeper, #closure);
            #fallback
            #finish(#done)
        }
    };

    quote! {
        #(#attrs)*
        #vis #sig {
            #body
        }
    }
}

/// The builder calls after `Retry::new`: the budget, the breaker, the bulkhead, the fallback's
/// notice, the hooks.
fn builders(config: &Config) -> TokenStream {
    let rt = quote!(::retry_audit::retry);
    let key = config
        .budget_key
        .as_ref()
        .map_or_else(|| quote!(::core::module_path!()), |key| quote!(#key));
    let slot = local("__RETRY_SLOT");
    let budget = match &config.budget {
        Budget::Shared => Some(quote! {
            .budget({
                static #slot: #rt::__private::Slot<#rt::RetryBudget> = #rt::__private::Slot::new();
                #slot.budget(#key)
            })
        }),
        Budget::Static(path) => {
            let path = reference(path);
            Some(quote!(.budget(#path)))
        }
        Budget::Off => None,
    };
    // A call refused before any attempt fails with `E::from(Rejected)`: named at the argument
    // that asks for it, so that a missing `From` is reported there.
    let breaker = config.breaker.as_ref().map(|(path, span)| {
        let from = quote_spanned!(*span=> ::core::convert::From::from);
        let path = reference(path);
        quote!(.breaker_with(#path, #from))
    });
    let bulkhead = config.bulkhead.as_ref().map(|(bulkhead, span)| {
        let from = quote_spanned!(*span=> ::core::convert::From::from);
        match bulkhead {
            Bulkhead::Shared(n) => quote! {
                .bulkhead_with({
                    static #slot: #rt::__private::Slot<#rt::Bulkhead> = #rt::__private::Slot::new();
                    #slot.bulkhead(#key, #n)
                }, #from)
            },
            Bulkhead::Static(path) => {
                let path = reference(path);
                quote!(.bulkhead_with(#path, #from))
            }
        }
    });
    let fallback = config
        .fallback
        .as_ref()
        .map(|_| quote!(.fallback_follows()));
    let on_retry = config
        .on_retry
        .as_ref()
        .map(|hook| quote!(.on_retry(#hook)));
    let on_stop = config.on_stop.as_ref().map(|hook| quote!(.on_stop(#hook)));
    quote!(#budget #breaker #bulkhead #fallback #on_retry #on_stop)
}

/// `&PATH`, spanned on the path: a `static` of the wrong type is reported on it.
fn reference(path: &syn::Path) -> TokenStream {
    let at = syn::spanned::Spanned::span(path);
    quote_spanned!(at=> &#path)
}

/// The fallback, called once with the function's arguments when the retry gave up on a transient
/// failure (or was refused). The call is spanned on the fallback's path, arguments included, so
/// that a fallback whose signature differs is reported on it.
fn fallback(path: &syn::Path, shape: &Shape, done: &Ident, span: &Ident) -> TokenStream {
    let rt = quote!(::retry_audit::retry);
    let at = syn::spanned::Spanned::span(path);
    let args = shape.params.iter().filter_map(|param| match param {
        Ok(Forward::Receiver(token)) => {
            let token = syn::Token![self](token.span.located_at(at));
            Some(quote!(#token))
        }
        Ok(Forward::Named(ident)) => {
            let mut ident = ident.clone();
            ident.set_span(ident.span().located_at(at));
            Some(quote!(#ident))
        }
        Err(_) => None,
    });
    let call = quote_spanned!(at=> #path(#(#args),*));
    let stopped = local("__retry_stopped");
    // Sync: the call's span is entered already.
    let degraded = if shape.is_async {
        let answer = Ident::new("__retry_answer", Span::mixed_site().located_at(at));
        // Awaited in a block of its own: a fallback that is not async is one error, rustc's "is
        // not a future", on its name.
        let awaited = quote_spanned!(at=> #call.await);
        let awaited = quote!(#span.instrument(async { #awaited }).await);
        quote! {{
            let #answer = #awaited;
            #span.in_scope(|| #stopped.degrade(#answer))
        }}
    } else {
        quote!(#stopped.degrade(#call))
    };
    quote! {
        let #done = match #rt::__private::falls_back(#done) {
            ::core::result::Result::Ok(#done) => #done,
            ::core::result::Result::Err(#stopped) => #degraded,
        };
    }
}

/// The body of the sync closure: the function's own block, its braces and statements, with the
/// key's binding put first. Not the block inside another one: braces around a block of one
/// expression on one line (`fn ping() -> Result<(), E> { Ok(()) }`) are rustc's `unused_braces`,
/// reported at the user's braces, which `cargo fix` would then remove (issue 14).
fn closure_body(mut block: syn::Block, key_bind: Option<syn::Stmt>) -> syn::Block {
    if let Some(bind) = key_bind {
        block.stmts.insert(0, bind);
    }
    block
}

/// The call of one async attempt: the body as an `async` block, its output type fixed, and, with
/// `attempt_timeout`, the conversion of a timeout into the function's error (`From::from`, checked
/// once, where it is named).
fn ascribe_attempt(ascribe: &TokenStream, block: &syn::Block, timeout: bool) -> TokenStream {
    if timeout {
        quote!(attempt_with_timeout(#ascribe(async #block), ::core::convert::From::from))
    } else {
        quote!(attempt(#ascribe(async #block)))
    }
}

/// The policy as a `const` (so the runtime's own checks also run at compile time), inside a
/// block so that its name is not visible to the body.
fn policy_expr(config: &Config) -> TokenStream {
    let rt = quote!(::retry_audit::retry);
    let millis = |ms: u64| quote!(::core::time::Duration::from_millis(#ms));
    let attempts = config.attempts;
    let deadline = millis(config.deadline_ms);
    let base = millis(config.base_ms);
    let cap = millis(config.cap_ms);
    let jitter = match config.jitter {
        Jitter::Full => quote!(#rt::Jitter::Full),
        Jitter::Decorrelated => quote!(#rt::Jitter::Decorrelated),
    };
    let timeout = config.attempt_timeout_ms.map(|ms| {
        let ms = millis(ms);
        quote!(.attempt_timeout(#ms))
    });
    // An idempotency key makes the write idempotent in effect: ambiguous failures may be resent.
    let idempotent =
        (config.idempotent || config.idempotency_key.is_some()).then(|| quote!(.idempotent(true)));
    let retry_on = config
        .retry_on
        .as_ref()
        .map(|statuses| quote!(.retry_on(&[#(#statuses),*])));
    let name = local("POLICY");
    quote! {{
        const #name: #rt::Policy = #rt::Policy::new()
            .attempts(#attempts)
            .deadline(#deadline)
            .backoff(#base, #cap)
            .jitter(#jitter)
            #timeout
            #idempotent
            #retry_on;
        #name
    }}
}
