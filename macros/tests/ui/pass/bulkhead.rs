use retry_audit::retry::{shared_bulkhead, Bulkhead};
use retry_audit::retryable;

static RENDERER: Bulkhead = Bulkhead::new(4);

#[retryable(max_concurrent = 20)]
fn shared() -> std::io::Result<u32> {
    Ok(shared_bulkhead(module_path!(), 20).in_flight())
}

#[retryable(max_concurrent = 5, budget_key = "ui::pass::renderer")]
async fn keyed() -> std::io::Result<u32> {
    Ok(shared_bulkhead("ui::pass::renderer", 5).in_flight())
}

#[retryable(bulkhead = RENDERER)]
fn named() -> std::io::Result<u32> {
    Ok(RENDERER.in_flight())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The attempt holds a permit while it runs, and gives it back.
    assert_eq!(shared().unwrap(), 1);
    assert_eq!(keyed().await.unwrap(), 1);
    assert_eq!(named().unwrap(), 1);
    assert_eq!(RENDERER.in_flight(), 0);
}
