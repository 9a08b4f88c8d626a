use retry_audit::retry::{Retried, RetryError, StopReason};
use retry_audit::retryable;

fn no_wait(_: std::time::Duration) {}

async fn no_wait_async(_: std::time::Duration) {}

fn cached(item: &str, n: u32) -> std::io::Result<String> {
    Ok(format!("cached {item} {n}"))
}

#[retryable(attempts = 2, fallback = cached, sleep = no_wait)]
fn plain(item: &str, n: u32) -> std::io::Result<String> {
    let _ = (item, n);
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(attempts = 2, fallback = cached, sleep = no_wait)]
fn reported(item: &str, n: u32) -> Result<Retried<String>, RetryError<std::io::Error>> {
    let _ = (item, n);
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

#[retryable(fallback = cached, sleep = no_wait)]
fn not_found(item: &str, n: u32) -> Result<Retried<String>, RetryError<std::io::Error>> {
    let _ = (item, n);
    Err(std::io::ErrorKind::NotFound.into())
}

async fn cached_async(owned: String) -> std::io::Result<usize> {
    Ok(owned.len())
}

#[retryable(attempts = 2, fallback = cached_async, sleep = no_wait_async)]
async fn by_value(owned: String) -> Result<Retried<usize>, std::io::Error> {
    let _ = &owned;
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

struct Client {
    down: bool,
}

impl Client {
    fn stale(&mut self, id: u32) -> std::io::Result<u32> {
        self.down = false;
        Ok(id + 1000)
    }

    #[retryable(attempts = 2, fallback = Self::stale, sleep = no_wait)]
    fn fresh(&mut self, id: u32) -> std::io::Result<u32> {
        if self.down {
            return Err(std::io::ErrorKind::ConnectionRefused.into());
        }
        Ok(id)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(plain("book", 1).unwrap(), "cached book 1");
    let answer = reported("book", 2).unwrap();
    assert!(answer.is_degraded());
    assert_eq!(answer.attempts(), 2);
    assert_eq!(answer.report().stop_reason(), Some(StopReason::AttemptsExhausted));
    // A permanent error is an answer: no fallback.
    let err = not_found("book", 3).unwrap_err();
    assert_eq!((err.reason(), err.is_degraded()), (StopReason::Permanent, false));
    let answer = by_value("four".to_owned()).await.unwrap();
    assert_eq!((*answer.value(), answer.is_degraded()), (4, true));
    let mut client = Client { down: true };
    assert_eq!(client.fresh(7).unwrap(), 1007);
    assert_eq!(client.fresh(7).unwrap(), 7);
}
