use retry_audit::retryable;

#[retryable]
fn read(path: &str) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

fn main() {
    assert_eq!(
        read("/no/such/file").unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
}
