use retry_audit::retry::Decision;
use retry_audit::retryable;

fn classify(_: &std::io::Error) -> Decision {
    Decision::Stop
}

#[retryable(retry_on = [503], classify = classify)]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
