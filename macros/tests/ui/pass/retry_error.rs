use retry_audit::retry::{RetryError, StopReason};
use retry_audit::retryable;

fn parse(text: &str) -> std::io::Result<u32> {
    text.parse()
        .map_err(|_| std::io::ErrorKind::InvalidData.into())
}

// Declared `RetryError<E>`: the body fails with `E` (`?` converts into `io::Error`), the caller
// gets the reason and the attempt count.
#[retryable(attempts = 2)]
fn number(text: &str) -> Result<u32, RetryError<std::io::Error>> {
    let n = parse(text)?;
    Ok(n)
}

#[retryable(attempts = 2)]
async fn number_async(text: &str) -> Result<u32, RetryError<std::io::Error>> {
    Ok(parse(text)?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(number("12").unwrap(), 12);
    let err = number("x").unwrap_err();
    assert_eq!(err.reason(), StopReason::Permanent);
    assert_eq!(err.attempts(), 1);
    assert_eq!(
        number_async("x").await.unwrap_err().reason(),
        StopReason::Permanent
    );
}
