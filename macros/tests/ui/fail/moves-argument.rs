use retry_audit::retryable;

fn consume(body: Vec<u8>) -> std::io::Result<usize> {
    Ok(body.len())
}

#[retryable]
fn upload(body: Vec<u8>) -> std::io::Result<usize> {
    consume(body)
}

fn main() {}
