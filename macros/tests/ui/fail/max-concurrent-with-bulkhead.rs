use retry_audit::retry::Bulkhead;
use retry_audit::retryable;

static RENDERER: Bulkhead = Bulkhead::new(20);

#[retryable(bulkhead = RENDERER, max_concurrent = 10)]
fn render() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
