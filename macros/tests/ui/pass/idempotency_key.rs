use retry_audit::retryable;

fn send(key: &str) -> std::io::Result<String> {
    Ok(key.to_owned())
}

#[retryable(idempotency_key = key)]
fn charge(cents: u64) -> std::io::Result<String> {
    let _ = cents;
    // `key` is a `&IdempotencyKey`: `Display` and `AsRef<str>`.
    send(key.as_ref())
}

#[retryable(idempotency_key = request_key = format!("order:{order_id}"))]
async fn place(order_id: u64) -> std::io::Result<String> {
    send(request_key.as_str())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(charge(100).unwrap().len(), 36);
    assert_eq!(place(9).await.unwrap(), "order:9");
}
