//! [`IdempotencyKey`]: made once per operation, before the first attempt, and sent by every attempt
//! (domain.md §4).

use std::fmt::{self, Write as _};

/// An idempotency key: a string that makes a write safe to resend, because the server applies a
/// given key at most once.
///
/// `#[retryable(idempotency_key = key)]` creates one before the first attempt and binds `key` (as
/// `&IdempotencyKey`) in the body, so every attempt sends the same value. It is string-like:
/// [`Display`](fmt::Display), [`AsRef<str>`], [`IdempotencyKey::as_str`] (and, with the `http`
/// feature, `TryFrom<&IdempotencyKey>` for `http::HeaderValue`).
///
/// ```
/// use retry_audit::retry::IdempotencyKey;
///
/// let random = IdempotencyKey::random();
/// assert_eq!(random.as_str().len(), 36); // a UUID v4: 8-4-4-4-12 hex digits
/// let domain = IdempotencyKey::new(format!("order-summary:{}", 42));
/// assert_eq!(domain.to_string(), "order-summary:42");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// A random key: 128 bits formatted as a UUID v4 (122 random bits, the version and variant
    /// bits set), from the `fastrand` generator of this thread. The generator is seeded from the
    /// OS hasher state, the thread and the clock: unique in practice, but not a secret — do not use
    /// it as a token.
    #[must_use]
    pub fn random() -> Self {
        let bits = fastrand::u128(..);
        // Version 4 (random) and the RFC 9562 variant.
        let bits = (bits & !(0xF << 76)) | (0x4 << 76);
        let bits = (bits & !(0x3 << 62)) | (0x2 << 62);
        // Written straight into its final buffer: one allocation, of 36 bytes.
        let mut key = String::with_capacity(36);
        let _ = write!(
            key,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            bits >> 96,
            (bits >> 80) & 0xFFFF,
            (bits >> 64) & 0xFFFF,
            (bits >> 48) & 0xFFFF,
            bits & 0xFFFF_FFFF_FFFF
        );
        IdempotencyKey(key)
    }

    /// A key chosen by the caller: a domain key (`"order-summary:{order_id}"`) or a hash of the
    /// canonical payload. Keep personal data out of it.
    #[must_use]
    pub fn new(key: impl Into<String>) -> Self {
        IdempotencyKey(key.into())
    }

    /// The key as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for IdempotencyKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<String> for IdempotencyKey {
    fn from(key: String) -> Self {
        IdempotencyKey(key)
    }
}

impl From<&str> for IdempotencyKey {
    fn from(key: &str) -> Self {
        IdempotencyKey(key.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_keys_are_uuid_v4_and_distinct() {
        let a = IdempotencyKey::random();
        let b = IdempotencyKey::random();
        assert_ne!(a, b);
        let s = a.as_str();
        let groups: Vec<_> = s.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert_eq!(&s[14..15], "4", "version nibble in {s}");
        assert!(
            matches!(&s[19..20], "8" | "9" | "a" | "b"),
            "variant in {s}"
        );
        assert!(s.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()));
    }
}
