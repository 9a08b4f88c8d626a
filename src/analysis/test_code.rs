//! The one decision of which code is test code, inside a file: an attribute that marks it. The
//! analysis reads no loop or recursion of test code as a retry (it waits for the test's own
//! fixtures), the pre-filter keeps no test body for a loop, and the crate's values ignore what
//! tests pass. Whole files are decided by the workspace index
//! (`crate::pipeline::index::CrateIndex::new`) with this same rule on `mod` declarations.

/// Whether an attribute marks test code: its path ends in `test` (`#[test]`,
/// `#[tokio::test]`), or it is a `#[cfg(..)]` whose predicate names the `test` option and no
/// `not(..)` (`cfg(test)`, `cfg(any(test, feature = "testing"))`; not `cfg(not(test))`, nor
/// `cfg(feature = "test")`, a feature that happens to be called so). `path` is the attribute's
/// path, `args` the identifiers of its arguments in order, `negated` whether they hold `not(`.
#[must_use]
pub fn marks_test<'w>(
    path: &[&str],
    mut args: impl Iterator<Item = &'w str>,
    negated: bool,
) -> bool {
    path.last() == Some(&"test") || (path == ["cfg"] && !negated && args.any(|w| w == "test"))
}

/// [`marks_test`] for any of a parsed item's attributes.
#[must_use]
pub fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path: Vec<String> = a
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let (idents, negated) = match &a.meta {
            syn::Meta::List(list) => {
                let mut idents = Vec::new();
                let negated = walk(list.tokens.clone(), &mut idents);
                (idents, negated)
            }
            _ => (Vec::new(), false),
        };
        marks_test(&path, idents.iter().map(String::as_str), negated)
    })
}

/// Collects the identifiers of `tokens`, nested groups included; whether `not(` is among them.
fn walk(tokens: proc_macro2::TokenStream, idents: &mut Vec<String>) -> bool {
    let _guard = crate::analysis::limits::enter();
    let mut negated = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(t) = tokens.next() {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                let word = i.to_string();
                if word == "not"
                    && matches!(tokens.peek(), Some(proc_macro2::TokenTree::Group(g))
                        if g.delimiter() == proc_macro2::Delimiter::Parenthesis)
                {
                    negated = true;
                }
                idents.push(word);
            }
            proc_macro2::TokenTree::Group(g) => negated |= walk(g.stream(), idents),
            _ => {}
        }
    }
    negated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(attr: &str) -> bool {
        let item: syn::ItemFn = syn::parse_str(&format!("{attr} fn f() {{}}")).expect("parses");
        is_test_attr(&item.attrs)
    }

    #[test]
    fn test_attributes_and_cfg_test_mark_test_code_and_nothing_else_does() {
        for yes in [
            "#[test]",
            "#[tokio::test]",
            "#[cfg(test)]",
            "#[cfg(any(test, feature = \"testing\"))]",
            "#[cfg(all(test, unix))]",
        ] {
            assert!(marks(yes), "{yes}");
        }
        for no in [
            "#[cfg(not(test))]",
            "#[cfg(feature = \"test\")]",
            "#[cfg(feature = \"latest\")]",
            "#[inline]",
            "#[cfg_attr(test, allow(dead_code))]",
        ] {
            assert!(!marks(no), "{no}");
        }
    }
}
