use retry_audit::retryable;

fn cached(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

#[retryable(fallback = cached)]
async fn price(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

fn main() {}
