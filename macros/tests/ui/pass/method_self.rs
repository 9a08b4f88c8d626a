use retry_audit::retryable;

struct Client {
    base: String,
}

impl Client {
    #[retryable(attempts = 2)]
    fn url(&self, path: &str) -> std::io::Result<String> {
        Ok(format!("{}/{path}", self.base))
    }

    #[retryable(attempts = 2)]
    async fn get(&self, path: &str) -> std::io::Result<String> {
        let url = self.url(path)?;
        Ok(url)
    }

    // A borrow of `&self` in the `Ok` value is fine: `self` is only read.
    #[retryable]
    fn base(&self) -> std::io::Result<&str> {
        Ok(&self.base)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let client = Client {
        base: "https://api".to_owned(),
    };
    assert_eq!(client.get("items").await.unwrap(), "https://api/items");
    assert_eq!(client.base().unwrap(), "https://api");
}
