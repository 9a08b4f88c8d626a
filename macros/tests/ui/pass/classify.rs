use retry_audit::retry::Decision;
use retry_audit::retryable;

mod errors {
    pub fn classify(error: &String) -> retry_audit::retry::Decision {
        if error == "busy" {
            retry_audit::retry::Decision::RETRY
        } else {
            retry_audit::retry::Decision::Stop
        }
    }
}

fn never(_: &&'static str) -> Decision {
    Decision::Stop
}

// `String` implements no `Transient`: the classifier decides.
#[retryable(classify = errors::classify)]
fn reserve(seat: u32) -> Result<u32, String> {
    if seat == 0 {
        return Err("no such seat".to_owned());
    }
    Ok(seat)
}

#[retryable(classify = never)]
async fn reserve_async() -> Result<(), &'static str> {
    Err("full")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(reserve(0).unwrap_err(), "no such seat");
    assert_eq!(reserve(3).unwrap(), 3);
    assert_eq!(reserve_async().await.unwrap_err(), "full");
}
