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
//!     let policy = { const POLICY: Policy = Policy::new().attempts(4)...; POLICY };
//!     into_plain(Retry::new(policy).run_sync(&ThreadSleeper, |_| -> Result<T, E> { body }))
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
//!     let mut retry = Retry::new(policy).start_async(&TokioSleeper);
//!     loop {
//!         if let ControlFlow::Break(done) = retry.attempt(async { body }).await {
//!             break into_plain(done);
//!         }
//!     }
//! }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Ident, ItemFn};

use crate::valid::{Config, Jitter, Shape};

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
    let budget = config
        .budget
        .as_ref()
        .map(|budget| quote!(.budget(&#budget)));
    let on_retry = config
        .on_retry
        .as_ref()
        .map(|hook| quote!(.on_retry(#hook)));
    let on_stop = config.on_stop.as_ref().map(|hook| quote!(.on_stop(#hook)));
    let finish = if shape.detailed {
        quote!()
    } else {
        quote!(#rt::__private::into_plain)
    };

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
        quote! {
            let #policy = #policy_expr;
            #key_init
            let #sleeper = #sleep;
            let mut #retry = #new_retry #budget #on_retry #on_stop
                .start_async(#sleeper);
            loop {
                #key_bind
                if let ::core::ops::ControlFlow::Break(#done) = #retry.#attempt.await {
                    break #finish(#done);
                }
            }
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
            let #policy = #policy_expr;
            #key_init
            let #sleeper = &#sleep;
            #finish(
                #new_retry #budget #on_retry #on_stop
                    .run_sync(#sleeper, #closure)
            )
        }
    };

    quote! {
        #(#attrs)*
        #vis #sig {
            #body
        }
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
