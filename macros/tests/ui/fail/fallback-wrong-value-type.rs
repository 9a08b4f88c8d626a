use retry_audit::retryable;

async fn cached(item: &str) -> std::io::Result<usize> {
    Ok(item.len())
}

#[retryable(fallback = cached)]
async fn price(item: &str) -> std::io::Result<String> {
    Ok(item.to_owned())
}

fn main() {}
