// Fuzzer regression (check_mutated): RA005 inside a loop of a function that also retries by
// recursion; the hoisting fix would leave the key made per recursive attempt.
impl Resolver {
    fn resolve(&self, name: &str) -> Reply {
        let mut attempt = 0;
        loop {
            let idempotency_key = Ulid::new().to_string();
            let sent = self.client.post(&self.url).header("Idempotency-Key", &idempotency_key).send();
            match sent {
                Ok(reply) => return reply,
                Err(_) if attempt < 3 => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(fastrand::u64(0..100 << attempt)));
                }
                Err(_) => {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    return self.resolve(name);
                }
            }
        }
    }
}
