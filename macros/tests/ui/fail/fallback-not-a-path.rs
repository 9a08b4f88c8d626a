use retry_audit::retryable;

#[retryable(fallback = |item: &str| Ok(item.to_owned()))]
fn price(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

fn main() {}
