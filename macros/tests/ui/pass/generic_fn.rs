use std::fmt::Display;

use retry_audit::retry::Transient;
use retry_audit::retryable;

#[retryable]
fn render<T: Display, E>(value: &T, check: fn(&T) -> Result<(), E>) -> Result<String, E>
where
    E: Transient,
{
    check(value)?;
    Ok(value.to_string())
}

#[retryable]
async fn render_async<'a, T>(value: &'a T) -> Result<&'a T, std::io::Error>
where
    T: Display + Sync,
{
    Ok(value)
}

fn main() {
    let ok = |_: &u32| Ok::<(), std::io::Error>(());
    assert_eq!(render(&5, ok).unwrap(), "5");
    let value = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(render_async(&"x"));
    assert_eq!(*value.unwrap(), "x");
}
