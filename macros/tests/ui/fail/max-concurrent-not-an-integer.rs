use retry_audit::retryable;

#[retryable(max_concurrent = "20")]
fn render() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
