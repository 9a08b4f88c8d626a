use retry_audit::retryable;

fn cached(item: &str) -> Option<String> {
    Some(item.to_owned())
}

#[retryable(fallback = cached)]
fn price(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

fn main() {}
