use retry_audit::retryable;

#[retryable(attempts = 2)]
async fn fetch(id: u64, name: String) -> std::io::Result<String> {
    tokio::task::yield_now().await;
    Ok(format!("{name}-{id}"))
}

fn assert_send<F: std::future::Future + Send>(future: F) -> F {
    future
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The wrapper's future is `Send` when the body's is: it can be spawned.
    let task = tokio::spawn(assert_send(fetch(7, "item".to_owned())));
    assert_eq!(task.await.unwrap().unwrap(), "item-7");
}
