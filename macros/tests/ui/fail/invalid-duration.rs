use retry_audit::retryable;

#[retryable(deadline = "10 sec")]
fn call() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
