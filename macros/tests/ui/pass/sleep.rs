use std::sync::Mutex;
use std::time::Duration;

use retry_audit::retryable;

static SLEPT: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

fn record(delay: Duration) {
    SLEPT.lock().unwrap().push(delay);
}

async fn runtime_sleep(delay: Duration) {
    tokio::time::sleep(delay).await;
}

#[retryable(attempts = 3, sleep = record)]
fn sync_call() -> std::io::Result<()> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 2, sleep = runtime_sleep)]
async fn async_call() -> std::io::Result<()> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    sync_call().unwrap_err();
    assert_eq!(SLEPT.lock().unwrap().len(), 2);
    async_call().await.unwrap_err();
}
