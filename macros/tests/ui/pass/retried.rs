use std::time::Duration;

use retry_audit::retry::{Retried, RetryError};
use retry_audit::retryable;

fn no_wait(_: Duration) {}

#[retryable(attempts = 3, budget = none, sleep = no_wait)]
fn third_time(calls: &mut u32) -> Result<Retried<u32>, std::io::Error> {
    *calls += 1;
    if *calls < 3 {
        return Err(std::io::ErrorKind::Interrupted.into());
    }
    Ok(*calls)
}

#[retryable(sleep = no_wait)]
fn first_time() -> Result<Retried<u32>, RetryError<std::io::Error>> {
    Ok(1)
}

#[retryable]
async fn async_first_time() -> std::io::Result<Retried<u32>> {
    Ok(1)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let answer = third_time(&mut 0).unwrap();
    assert_eq!((*answer.value(), answer.attempts(), answer.report().waits()), (3, 3, 2));
    assert!(answer.report().waited() <= Duration::from_millis(300));
    assert_eq!(answer.report().stop_reason(), None);
    let answer = first_time().unwrap();
    assert_eq!((answer.attempts(), answer.report().waits()), (1, 0));
    assert_eq!(async_first_time().await.unwrap().into_value(), 1);
}
