//! The server's own wait: `Retry-After` (RFC 9110 §10.2.3: delta-seconds or an HTTP-date) and the
//! millisecond vendor headers `retry-after-ms` and `x-amz-retry-after` (domain.md §2).
//!
//! A wait is never negative: a date in the past means "now". A value too large for a [`Duration`]
//! saturates; the retry loop then stops with "the server's wait does not fit" instead of sleeping.

use std::time::{Duration, SystemTime};

/// Parses a `Retry-After` value: delta-seconds (`"120"`) or an HTTP-date
/// (`"Sun, 06 Nov 1994 08:49:37 GMT"`, and the obsolete RFC 850 and asctime forms), relative to
/// `now`. Returns `None` for anything else (a negative or fractional number, garbage).
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use retry_audit::retry::parse_retry_after;
///
/// let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
/// assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
/// assert_eq!(
///     parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
///     Some(Duration::from_secs(10)),
/// );
/// assert_eq!(parse_retry_after("soon", now), None);
/// ```
#[must_use]
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for a u64: the server asked for an absurd wait; saturate.
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses a millisecond wait (`retry-after-ms: 1500`, `x-amz-retry-after: 1500`); a fractional
/// value (`"1500.5"`) is accepted, a negative one is not.
#[must_use]
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_millis(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let millis: f64 = value.parse().ok()?;
    if !millis.is_finite() || millis < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(millis / 1000.0).unwrap_or(Duration::MAX))
}

/// The server's wait from a set of response headers (names matched case-insensitively): a
/// millisecond header (`retry-after-ms`, `x-amz-retry-after`) wins over `Retry-After`, being more
/// precise. `None` when no header holds a valid value.
#[must_use]
pub fn from_headers<'h>(
    headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    now: SystemTime,
) -> Option<Duration> {
    let mut millis = None;
    let mut seconds = None;
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("retry-after-ms")
            || name.eq_ignore_ascii_case("x-amz-retry-after")
        {
            millis = millis.or_else(|| parse_retry_after_ms(value));
        } else if name.eq_ignore_ascii_case("retry-after") {
            seconds = seconds.or_else(|| parse_retry_after(value, now));
        }
    }
    millis.or(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    /// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
    const RFC_DATE: u64 = 784_111_777;

    #[test]
    fn delta_seconds() {
        let now = SystemTime::now();
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after(" 30 ", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(parse_retry_after("1.5", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(RFC_DATE - 30);
        for form in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_retry_after(form, now),
                Some(Duration::from_secs(30)),
                "{form}"
            );
        }
    }

    #[test]
    fn date_in_the_past_means_now() {
        let now = UNIX_EPOCH + Duration::from_secs(RFC_DATE + 3600);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn milliseconds() {
        assert_eq!(
            parse_retry_after_ms("1500"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after_ms("2.5"),
            Some(Duration::from_micros(2500))
        );
        assert_eq!(parse_retry_after_ms("-1"), None);
        assert_eq!(parse_retry_after_ms("NaN"), None);
        assert_eq!(parse_retry_after_ms("inf"), None);
    }

    #[test]
    fn millisecond_header_wins() {
        let now = SystemTime::now();
        let headers = [("Retry-After", "2"), ("Retry-After-Ms", "250")];
        assert_eq!(from_headers(headers, now), Some(Duration::from_millis(250)));
        let headers = [("content-type", "x"), ("RETRY-AFTER", "2")];
        assert_eq!(from_headers(headers, now), Some(Duration::from_secs(2)));
        let headers = [("retry-after", "later")];
        assert_eq!(from_headers(headers, now), None);
    }
}
