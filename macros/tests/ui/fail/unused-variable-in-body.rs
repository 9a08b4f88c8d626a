// The user's own lints still apply in the body, at the user's lines: the expansion allows nothing
// on the body (a blanket `#[allow]` would hide real warnings such as these).
#![deny(unused_variables)]

use retry_audit::retryable;

#[retryable]
fn sync_call() -> std::io::Result<()> {
    let unused = 1;
    Ok(())
}

#[retryable]
async fn async_call() -> std::io::Result<()> {
    let unused_async = 1;
    Ok(())
}

#[retryable(idempotency_key = key)]
fn with_key() -> std::io::Result<String> {
    let unused_with_key = 1;
    Ok(key.to_string())
}

fn main() {}
