//! `select!` (tokio's, futures') branches: `pattern = future => handler`. Their futures are
//! code like any other: a `sleep(d)` raced against a cancellation token is the loop's wait.
//! The macro's tokens are parsed once per file, before the analysis, so that what is found in
//! them can be pointed at like the rest of the file (the tokens keep their positions).

use std::collections::HashMap;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::visit::Visit;
use syn::Expr;

/// Where a `select!` invocation is: its `!`'s line and column.
pub type SelectKey = (usize, usize);

/// The key of a macro invocation.
#[must_use]
pub fn key_of(m: &syn::Macro) -> SelectKey {
    let at = m.bang_token.span.start();
    (at.line, at.column)
}

/// Whether a macro is a `select!` whose branches are `pattern = future => handler`.
#[must_use]
pub fn is_select(m: &syn::Macro) -> bool {
    m.path
        .segments
        .last()
        .is_some_and(|s| s.ident == "select" || s.ident == "select_biased")
}

/// The futures of every `select!` in `files` (bodies of other macros included, as written).
#[must_use]
pub fn collect(files: &[&syn::File]) -> HashMap<SelectKey, Vec<Expr>> {
    struct V(HashMap<SelectKey, Vec<Expr>>);
    impl<'a> Visit<'a> for V {
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            let _guard = crate::analysis::limits::enter();
            if is_select(m) {
                let futures = futures_of(m.tokens.clone());
                if !futures.is_empty() {
                    self.0.insert(key_of(m), futures);
                }
            }
            syn::visit::visit_macro(self, m);
        }
    }
    let mut v = V(HashMap::new());
    for f in files {
        v.visit_file(f);
    }
    v.0
}

/// The future of each branch (`pat = fut [, if cond] => handler`), parsed; a branch whose future
/// does not parse is left out. `else =>`, `default =>` and `complete =>` branches have none.
fn futures_of(tokens: TokenStream) -> Vec<Expr> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        // The pattern: up to a lone `=` (not `==`, `=>`, `<=`).
        let Some(eq) = (i..trees.len()).find(|&j| is_lone_eq(&trees, j) || is_arrow(&trees, j))
        else {
            break;
        };
        if is_arrow(&trees, eq) {
            // `else => ..`: no future.
            i = skip_handler(&trees, eq + 2);
            continue;
        }
        // The future: up to `=>`, or `, if` before a precondition.
        let Some(arrow) = (eq + 1..trees.len()).find(|&j| is_arrow(&trees, j)) else {
            break;
        };
        let end = (eq + 1..arrow)
            .find(|&j| {
                matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == ',')
                    && matches!(trees.get(j + 1), Some(TokenTree::Ident(id)) if id == "if")
            })
            .unwrap_or(arrow);
        let fut: TokenStream = trees[eq + 1..end].iter().cloned().collect();
        if let Ok(e) = syn::parse2::<Expr>(fut) {
            out.push(e);
        }
        i = skip_handler(&trees, arrow + 2);
    }
    out
}

/// `=` standing alone (the branch's binding), not the start of `==` or `=>`.
fn is_lone_eq(trees: &[TokenTree], j: usize) -> bool {
    matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone)
        && !matches!(j.checked_sub(1).and_then(|k| trees.get(k)), Some(TokenTree::Punct(p)) if p.spacing() == Spacing::Joint && matches!(p.as_char(), '=' | '<' | '>' | '!'))
}

/// `=>` starting at `j`.
fn is_arrow(trees: &[TokenTree], j: usize) -> bool {
    matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Joint)
        && matches!(trees.get(j + 1), Some(TokenTree::Punct(p)) if p.as_char() == '>')
}

/// Past a handler starting at `at`: a `{ .. }` block (and an optional `,`), or tokens up to the
/// next top-level `,`.
fn skip_handler(trees: &[TokenTree], at: usize) -> usize {
    if let Some(TokenTree::Group(g)) = trees.get(at) {
        if g.delimiter() == Delimiter::Brace {
            let next = at + 1;
            return match trees.get(next) {
                Some(TokenTree::Punct(p)) if p.as_char() == ',' => next + 1,
                _ => next,
            };
        }
    }
    (at..trees.len())
        .find(|&j| matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == ','))
        .map_or(trees.len(), |j| j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn futures(src: &str) -> Vec<String> {
        let m: syn::Macro = syn::parse_str(src).unwrap();
        futures_of(m.tokens)
            .iter()
            .map(|e| quote::quote!(#e).to_string())
            .collect()
    }

    #[test]
    fn each_branch_future_is_read() {
        assert_eq!(
            futures(
                "tokio::select! {
                    biased;
                    _ = token.cancelled() => return,
                    res = client.get(url).send(), if ready => { res? }
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    else => break,
                }"
            ),
            [
                "token . cancelled ()",
                "client . get (url) . send ()",
                "tokio :: time :: sleep (Duration :: from_secs (1))"
            ]
        );
        assert_eq!(
            futures(
                "futures::select! {
                    r = fetch(a).fuse() => r,
                    _ = sleep(d).fuse() => {},
                    complete => break,
                }"
            ),
            ["fetch (a) . fuse ()", "sleep (d) . fuse ()"]
        );
    }
}
