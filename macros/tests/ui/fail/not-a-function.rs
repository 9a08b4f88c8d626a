use retry_audit::retryable;

#[retryable]
struct Client;

fn main() {}
