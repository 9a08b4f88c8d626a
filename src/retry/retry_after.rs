//! The server's own wait (domain.md §2), in priority order: `Retry-After` (RFC 9110 §10.2.3:
//! delta-seconds or an HTTP-date) and the millisecond vendor headers `retry-after-ms` and
//! `x-amz-retry-after`; then the provider's rate-limit reset headers, when the response says the
//! limit was hit: `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` (durations such as
//! `1s`, `6m0s`), `anthropic-ratelimit-*-reset` (RFC 3339 instants), `x-ratelimit-reset` /
//! `ratelimit-reset` (seconds, or an epoch time).
//!
//! A wait is never negative: a date in the past means "now". A value too large for a [`Duration`]
//! saturates; the retry loop then stops with "the server's wait does not fit" instead of sleeping.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Parses a Go-style duration, as the `x-ratelimit-reset-*` headers of `OpenAI` write them: one or more
/// decimal numbers, each with a unit among `h`, `m`, `s`, `ms`, `us` (or `µs`) and `ns` (`"1s"`,
/// `"6m0s"`, `"1h2m3.5s"`, `"20ms"`). A bare number is taken as seconds. `None` for anything else
/// (a sign, an unknown unit, garbage).
///
/// ```
/// use std::time::Duration;
/// use retry_audit::retry::parse_go_duration;
///
/// assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
/// assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
/// assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
/// assert_eq!(parse_go_duration("soon"), None);
/// ```
#[must_use]
pub fn parse_go_duration(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if let Some(seconds) = parse_seconds(value) {
        return Some(seconds);
    }
    let mut rest = value;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(number_len);
        if number.is_empty() || number == "." {
            return None;
        }
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let nanos_per_unit: f64 = match unit {
            "h" => 3_600e9,
            "m" => 60e9,
            "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" | "μs" => 1e3,
            "ns" => 1.0,
            _ => return None,
        };
        let number: f64 = number.parse().ok()?;
        let part =
            Duration::try_from_secs_f64(number * nanos_per_unit / 1e9).unwrap_or(Duration::MAX);
        total = total.saturating_add(part);
        rest = tail;
    }
    Some(total)
}

/// A non-negative decimal number of seconds (`"30"`, `"1.5"`).
fn parse_seconds(value: &str) -> Option<Duration> {
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let only_decimal = value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && value.bytes().filter(|&b| b == b'.').count() == 1
        && value.len() > 1;
    if !only_decimal {
        return None;
    }
    let secs: f64 = value.parse().ok()?;
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Parses an RFC 3339 instant (`"2024-05-01T12:00:30Z"`, `"2024-05-01T14:00:30.5+02:00"`), as
/// Anthropic's `anthropic-ratelimit-*-reset` headers write them. `None` for anything else.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use retry_audit::retry::parse_rfc3339;
///
/// assert_eq!(
///     parse_rfc3339("1994-11-06T08:49:37Z"),
///     Some(UNIX_EPOCH + Duration::from_secs(784_111_777)),
/// );
/// assert_eq!(parse_rfc3339("06 Nov 1994"), None);
/// ```
#[must_use]
pub fn parse_rfc3339(value: &str) -> Option<SystemTime> {
    let b = value.trim().as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if b.len() < 20
        || separators.iter().any(|&(i, c)| b[i] != c)
        || !matches!(b[10], b'T' | b't' | b' ')
    {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let fraction = std::str::from_utf8(&b[start..i.min(start + 9)]).ok()?;
        let scale = 10u32.pow(9 - u32::try_from(fraction.len()).ok()?);
        nanos = fraction.parse::<u32>().ok()? * scale;
    }
    let offset = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let hours = digits(i + 1..i + 3)?;
            let minutes = digits(i + 4..i + 6)?;
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'+' {
                offset
            } else {
                -offset
            }
        }
        _ => return None,
    };
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let seconds = u64::try_from(seconds).ok()?;
    Some(UNIX_EPOCH + Duration::new(seconds, nanos))
}

/// `x-ratelimit-reset` / `ratelimit-reset`: delta-seconds, or (a value from 2001 on) an epoch
/// time in seconds.
fn parse_reset_seconds_or_epoch(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let seconds = parse_seconds(value)?;
    if seconds >= Duration::from_secs(1_000_000_000) {
        let at = UNIX_EPOCH.checked_add(seconds)?;
        return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
    }
    Some(seconds)
}

/// One rate limit's reset, and whether its remaining count (if sent) is zero.
#[derive(Default)]
struct Limit {
    name: String,
    reset: Option<Duration>,
    remaining: Option<bool>,
}

/// The header families of the reset headers: which limit a header belongs to, and whether it is
/// the reset (with its parsed value) or the remaining count.
enum LimitHeader<'h> {
    Reset(&'h str, Option<Duration>),
    Remaining(&'h str, bool),
}

fn limit_header<'h>(name: &'h str, value: &str, now: SystemTime) -> Option<LimitHeader<'h>> {
    let lower_starts = |prefix: &str| {
        name.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    // The prefix and the suffix, not overlapping.
    let between = |prefix: &str, suffix: &str| {
        let end = name.len().checked_sub(suffix.len())?;
        let inner = name.get(prefix.len()..end)?;
        (lower_starts(prefix) && name[end..].eq_ignore_ascii_case(suffix)).then_some(inner)
    };
    let exhausted = || value.trim().parse::<u64>().ok().map(|n| n == 0);
    if name.eq_ignore_ascii_case("x-ratelimit-reset")
        || name.eq_ignore_ascii_case("ratelimit-reset")
    {
        return Some(LimitHeader::Reset(
            "",
            parse_reset_seconds_or_epoch(value, now),
        ));
    }
    if name.eq_ignore_ascii_case("x-ratelimit-remaining")
        || name.eq_ignore_ascii_case("ratelimit-remaining")
    {
        return Some(LimitHeader::Remaining("", exhausted()?));
    }
    if lower_starts("x-ratelimit-reset-") {
        let limit = &name["x-ratelimit-reset-".len()..];
        return Some(LimitHeader::Reset(limit, parse_go_duration(value)));
    }
    if lower_starts("x-ratelimit-remaining-") {
        let limit = &name["x-ratelimit-remaining-".len()..];
        return Some(LimitHeader::Remaining(limit, exhausted()?));
    }
    if let Some(limit) = between("anthropic-ratelimit-", "-reset") {
        let wait = parse_rfc3339(value).map(|at| at.duration_since(now).unwrap_or(Duration::ZERO));
        return Some(LimitHeader::Reset(limit, wait));
    }
    if let Some(limit) = between("anthropic-ratelimit-", "-remaining") {
        return Some(LimitHeader::Remaining(limit, exhausted()?));
    }
    None
}

/// The wait until the rate limit that stopped the request reopens, from the provider's reset
/// headers (names matched case-insensitively):
///
/// - `x-ratelimit-reset-requests`, `x-ratelimit-reset-tokens` (`OpenAI`; any
///   `x-ratelimit-reset-<limit>`): durations such as `"1s"`, `"6m0s"`;
/// - `anthropic-ratelimit-requests-reset`, `anthropic-ratelimit-tokens-reset`,
///   `...-input-tokens-reset`, `...-output-tokens-reset`: RFC 3339 instants;
/// - `x-ratelimit-reset`, `ratelimit-reset` (IETF draft, GitHub): delta-seconds, or an epoch time
///   in seconds (a value from 2001 on).
///
/// Each limit's `...remaining...` header, when sent, says which limit was hit: the wait is the
/// latest reset among the limits whose remaining count is 0; when no remaining count is 0, the
/// latest among the limits that sent none; otherwise `None` (what stopped the request is not a
/// window that reopens: use the backoff). This header reader does not read `Retry-After`, which
/// comes first ([`wait_from_headers`]).
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use retry_audit::retry::reset_from_headers;
///
/// let headers = [
///     ("x-ratelimit-remaining-requests", "59"),
///     ("x-ratelimit-reset-requests", "1s"),
///     ("x-ratelimit-remaining-tokens", "0"),
///     ("x-ratelimit-reset-tokens", "6m0s"),
/// ];
/// assert_eq!(
///     reset_from_headers(headers, SystemTime::now()),
///     Some(Duration::from_secs(360)),
/// );
/// ```
#[must_use]
pub fn reset_from_headers<'h>(
    headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    now: SystemTime,
) -> Option<Duration> {
    let mut limits: Vec<Limit> = Vec::new();
    for (name, value) in headers {
        let Some(header) = limit_header(name, value, now) else {
            continue;
        };
        let key = match &header {
            LimitHeader::Reset(limit, _) | LimitHeader::Remaining(limit, _) => *limit,
        };
        let index = limits
            .iter()
            .position(|l| l.name.eq_ignore_ascii_case(key))
            .unwrap_or_else(|| {
                limits.push(Limit {
                    name: key.to_owned(),
                    ..Limit::default()
                });
                limits.len() - 1
            });
        let limit = &mut limits[index];
        match header {
            LimitHeader::Reset(_, wait) => limit.reset = limit.reset.or(wait),
            LimitHeader::Remaining(_, zero) => limit.remaining = Some(zero),
        }
    }
    let latest = |pick: &dyn Fn(&Limit) -> bool| {
        limits
            .iter()
            .filter(|l| pick(l))
            .filter_map(|l| l.reset)
            .max()
    };
    latest(&|l| l.remaining == Some(true)).or_else(|| {
        if limits
            .iter()
            .any(|l| l.remaining.is_some() && l.reset.is_some())
        {
            latest(&|l| l.remaining.is_none())
        } else {
            latest(&|_| true)
        }
    })
}

/// The server's wait for a response with `status` and `headers`, in the order of domain.md §2:
/// `Retry-After` (and its millisecond variants, [`from_headers`]) first; then, for a `429`, the
/// rate-limit reset headers ([`reset_from_headers`]). `None` means "use the backoff".
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use retry_audit::retry::wait_from_headers;
///
/// let now = SystemTime::now();
/// let headers = [("x-ratelimit-reset-requests", "2s")];
/// assert_eq!(wait_from_headers(429, headers, now), Some(Duration::from_secs(2)));
/// let both = [("retry-after", "1"), ("x-ratelimit-reset-requests", "2s")];
/// assert_eq!(wait_from_headers(429, both, now), Some(Duration::from_secs(1)));
/// assert_eq!(wait_from_headers(503, headers, now), None, "a 503 is not a rate limit");
/// ```
#[must_use]
pub fn wait_from_headers<'h>(
    status: u16,
    headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    now: SystemTime,
) -> Option<Duration> {
    let headers: Vec<(&str, &str)> = headers.into_iter().collect();
    from_headers(headers.iter().copied(), now).or_else(|| {
        if status == 429 {
            reset_from_headers(headers.iter().copied(), now)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn go_durations() {
        let d = parse_go_duration;
        assert_eq!(d("1s"), Some(Duration::from_secs(1)));
        assert_eq!(d("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(d("1h2m3.5s"), Some(Duration::from_millis(3_723_500)));
        assert_eq!(d("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(d("250us"), Some(Duration::from_micros(250)));
        assert_eq!(d("7"), Some(Duration::from_secs(7)));
        assert_eq!(d("0.5"), Some(Duration::from_millis(500)));
        for bad in ["", "s", "-1s", "1x", "1.2.3s", "..s", "1 s"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_instants() {
        let base = UNIX_EPOCH + Duration::from_secs(RFC_DATE);
        assert_eq!(parse_rfc3339("1994-11-06T08:49:37Z"), Some(base));
        assert_eq!(parse_rfc3339("1994-11-06t08:49:37z"), Some(base));
        assert_eq!(parse_rfc3339("1994-11-06T10:49:37+02:00"), Some(base));
        assert_eq!(parse_rfc3339("1994-11-06T07:49:37-01:00"), Some(base));
        assert_eq!(
            parse_rfc3339("1994-11-06T08:49:37.25Z"),
            Some(base + Duration::from_millis(250))
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T00:00:00Z"),
            Some(UNIX_EPOCH + Duration::from_secs(1_709_164_800))
        );
        for bad in [
            "1994-11-06",
            "1994-11-06T08:49:37",
            "1994-13-06T08:49:37Z",
            "1994-11-06T08:49:37.Z",
            "1994-11-06T08:49:37+0200",
            "Sun, 06 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn reset_headers_of_each_family() {
        let now = UNIX_EPOCH + Duration::from_secs(RFC_DATE - 30);
        let reset = |headers: &[(&str, &str)]| reset_from_headers(headers.iter().copied(), now);
        assert_eq!(
            reset(&[("X-RateLimit-Reset-Requests", "1s")]),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            reset(&[("anthropic-ratelimit-tokens-reset", "1994-11-06T08:49:37Z")]),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            reset(&[("anthropic-ratelimit-tokens-reset", "1994-11-06T08:48:37Z")]),
            Some(Duration::ZERO),
            "a reset in the past means now"
        );
        assert_eq!(
            reset(&[("ratelimit-reset", "12")]),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            reset(&[("x-ratelimit-reset", "1.5")]),
            Some(Duration::from_millis(1500))
        );
        // An epoch time (GitHub): 20 s from now; one in the past means now.
        let now_2023 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let epoch = |value: &str| reset_from_headers([("x-ratelimit-reset", value)], now_2023);
        assert_eq!(epoch("1700000020"), Some(Duration::from_secs(20)));
        assert_eq!(epoch("1699999999"), Some(Duration::ZERO));
        assert_eq!(reset(&[("x-ratelimit-reset", "soon")]), None);
        assert_eq!(reset(&[("content-type", "text/plain")]), None);
    }

    #[test]
    fn the_remaining_counts_pick_the_limit_that_was_hit() {
        let now = SystemTime::now();
        let reset = |headers: &[(&str, &str)]| reset_from_headers(headers.iter().copied(), now);
        let requests_hit = [
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-tokens", "1500"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ];
        assert_eq!(reset(&requests_hit), Some(Duration::from_secs(1)));
        // Without remaining counts: the latest reset, so that every limit has reopened.
        let unknown = [
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ];
        assert_eq!(reset(&unknown), Some(Duration::from_secs(360)));
        // Every limit has room left: what stopped the request is something else.
        let room = [
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "1s"),
        ];
        assert_eq!(reset(&room), None);
    }

    #[test]
    fn retry_after_comes_before_the_reset_and_only_429_reads_the_reset() {
        let now = SystemTime::now();
        let both = [("x-ratelimit-reset", "30"), ("Retry-After", "2")];
        assert_eq!(
            wait_from_headers(429, both, now),
            Some(Duration::from_secs(2))
        );
        let reset = [("x-ratelimit-reset", "30")];
        assert_eq!(
            wait_from_headers(429, reset, now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(wait_from_headers(503, reset, now), None);
        assert_eq!(
            wait_from_headers(503, [("retry-after", "4")], now),
            Some(Duration::from_secs(4))
        );
    }
}
