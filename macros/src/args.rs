//! Phase 1, parse: the attribute's arguments as written, `name = value` pairs with their spans.
//! Nothing is checked here beyond the syntax; [`crate::valid`] gives each value its meaning.
//!
//! ```text
//! #[retryable(attempts = 4, deadline = "10s", retry_on = [429, 503], idempotency_key = key)]
//!             ^^^^^^^^   ^ ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
//!             name       value: any expression (a literal, an array, a path, `key = expr`)
//! ```

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::{token, Expr, Path, Token};

/// One argument as written.
pub(crate) struct Arg {
    /// The argument's name (a path, so that `a::b = 1` is reported as unknown, not as a syntax
    /// error).
    pub path: Path,
    pub value: Value,
}

pub(crate) enum Value {
    /// `name = expr`
    Expr(Expr),
    /// `name` alone.
    Missing,
    /// `name(...)`: not a form any argument takes.
    List,
}

/// Parses the attribute's arguments with `syn::meta::parser`.
pub(crate) fn parse(args: TokenStream) -> syn::Result<Vec<Arg>> {
    let mut out = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let value = if meta.input.peek(Token![=]) {
            Value::Expr(meta.value()?.parse()?)
        } else if meta.input.peek(token::Paren) {
            let content;
            syn::parenthesized!(content in meta.input);
            content.parse::<TokenStream>()?;
            Value::List
        } else {
            Value::Missing
        };
        out.push(Arg {
            path: meta.path,
            value,
        });
        Ok(())
    });
    parser.parse2(args)?;
    Ok(out)
}
