// The braces of a one-expression body are not `unused_braces` (the expansion wraps them in
// nothing), but braces that are unnecessary in the user's own code still are.
#![deny(unused_braces)]

use retry_audit::retryable;

fn len(n: usize) -> std::io::Result<usize> {
    Ok(n)
}

#[retryable]
fn sync_call() -> std::io::Result<usize> { len({ 4 }) }

#[retryable(idempotency_key = key)]
fn with_key() -> std::io::Result<usize> { len({ key.as_str().len() }) }

#[retryable]
async fn async_call() -> std::io::Result<usize> { len({ 4 }) }

fn main() {}
