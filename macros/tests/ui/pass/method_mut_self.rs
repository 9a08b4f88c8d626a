use retry_audit::retryable;

struct Session {
    reconnects: u32,
}

impl Session {
    // Each attempt re-borrows `self` mutably, and sees what earlier attempts left.
    #[retryable(attempts = 3, base = "1ms", cap = "1ms")]
    fn send(&mut self) -> std::io::Result<u32> {
        self.reconnects += 1;
        if self.reconnects < 3 {
            return Err(std::io::ErrorKind::NotConnected.into());
        }
        Ok(self.reconnects)
    }

    #[retryable(attempts = 3, base = "1ms", cap = "1ms")]
    async fn send_async(&mut self, extra: &mut Vec<u32>) -> std::io::Result<u32> {
        self.reconnects += 1;
        extra.push(self.reconnects);
        if extra.len() < 2 {
            return Err(std::io::ErrorKind::NotConnected.into());
        }
        Ok(self.reconnects)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut session = Session { reconnects: 0 };
    assert_eq!(session.send().unwrap(), 3);
    let mut extra = Vec::new();
    assert_eq!(session.send_async(&mut extra).await.unwrap(), 5);
    assert_eq!(extra, [4, 5]);
}
