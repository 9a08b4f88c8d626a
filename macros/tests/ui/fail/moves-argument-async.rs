use retry_audit::retryable;

async fn consume(body: Vec<u8>) -> std::io::Result<usize> {
    Ok(body.len())
}

#[retryable]
async fn upload(body: Vec<u8>) -> std::io::Result<usize> {
    consume(body).await
}

fn main() {}
