use retry_audit::retryable;

struct Cache {
    value: String,
}

impl Cache {
    #[retryable]
    fn refresh(&mut self) -> std::io::Result<&str> {
        self.value.push('x');
        Ok(&self.value)
    }
}

fn main() {}
