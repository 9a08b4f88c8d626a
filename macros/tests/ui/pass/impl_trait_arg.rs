use retry_audit::retryable;

#[retryable]
fn join(parts: impl IntoIterator<Item = u32> + Clone) -> std::io::Result<u32> {
    // The body runs once per attempt: clone what it consumes.
    Ok(parts.clone().into_iter().sum())
}

#[retryable]
async fn greet(name: impl AsRef<str> + Send) -> std::io::Result<String> {
    Ok(format!("hello {}", name.as_ref()))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(join(vec![1, 2, 3]).unwrap(), 6);
    assert_eq!(greet("you").await.unwrap(), "hello you");
}
