//! trybuild UI tests of `#[retryable]`: `ui/pass/*.rs` compile and run; `ui/fail/*.rs`, one file
//! per mistake named after it, fail with exactly the errors pinned in the `.stderr` beside it (one
//! error per mistake: no cascade). `TRYBUILD=overwrite cargo test -p retry-audit-macros --test ui`
//! rewrites the `.stderr` files; review their diff like code.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
