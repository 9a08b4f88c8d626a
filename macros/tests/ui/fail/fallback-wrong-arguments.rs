use retry_audit::retryable;

fn cached(item: u32) -> std::io::Result<String> {
    Ok(item.to_string())
}

#[retryable(fallback = cached)]
fn price(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

fn main() {}
