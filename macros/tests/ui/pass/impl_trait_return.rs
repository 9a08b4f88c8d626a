use std::fmt::Display;

use retry_audit::retryable;

// An `impl Trait` in the return type cannot be named inside the wrapper; the body's type is then
// inferred.
#[retryable]
fn label() -> std::io::Result<impl Display> {
    Ok(42)
}

#[retryable]
async fn label_async() -> std::io::Result<impl Display> {
    Ok("forty-two")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(label().unwrap().to_string(), "42");
    assert_eq!(label_async().await.unwrap().to_string(), "forty-two");
}
