use retry_audit::retry::{Decision, Transient};
use retry_audit::retryable;

#[derive(Debug)]
struct HttpError(u16);

impl Transient for HttpError {
    fn decision(&self) -> Decision {
        Decision::for_status(self.0)
    }
    fn status(&self) -> Option<u16> {
        Some(self.0)
    }
}

#[retryable(retry_on = [408, 429, 503])]
fn call() -> Result<(), HttpError> {
    Err(HttpError(500))
}

fn main() {
    assert_eq!(call().unwrap_err().0, 500);
}
