//! Which failures retry, how long to wait (jittered exponential backoff, capped `Retry-After`), and how a deadline bounds both.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::Settings;

/// Whether an HTTP status is worth sending again: 408, 409, 429 and every 5xx.
/// The rest of the 4xx range is the request being wrong, and sending it again will not fix it.
pub fn status_retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP date (IMF-fixdate). A date in the
/// past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX)));
    }
    // Some providers send fractional seconds.
    if let Ok(secs) = v.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (the weekday is optional).
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let s = match s.split_once(',') {
        Some((_, rest)) => rest.trim(),
        None => s,
    };
    let mut parts = s.split_ascii_whitespace();
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()?.to_ascii_lowercase().as_str() {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let h: u64 = hms.next()?.parse().ok()?;
    let m: u64 = hms.next()?.parse().ok()?;
    let sec: u64 = hms.next()?.parse().ok()?;
    let zone = parts.next()?;
    if !(zone.eq_ignore_ascii_case("GMT") || zone.eq_ignore_ascii_case("UTC")) {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 || !(1970..=9999).contains(&year) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + sec;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A small xorshift64* generator for backoff jitter. Not for anything that needs to be unpredictable.
#[derive(Clone, Debug)]
pub struct Jitter(u64);

impl Jitter {
    pub fn seeded(seed: u64) -> Jitter {
        Jitter(seed.max(1))
    }

    /// Seeded from the clock and a process-wide counter, so parallel callers diverge.
    pub fn from_entropy() -> Jitter {
        static COUNTER: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let n = COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        Jitter::seeded(splitmix(nanos ^ n))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, max]`.
    pub fn below(&mut self, max: Duration) -> Duration {
        let nanos = max.as_nanos().min(u128::from(u64::MAX)) as u64;
        if nanos == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.next_u64() % nanos.saturating_add(1))
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Full-jitter exponential backoff before retry number `retry` (0 for the first retry):
/// uniform in `[0, min(backoff_max, backoff_base * 2^retry)]`.
pub fn backoff(retry: u32, settings: &Settings, rng: &mut Jitter) -> Duration {
    let factor = 1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX);
    let ceiling = settings
        .backoff_base
        .checked_mul(factor)
        .unwrap_or(settings.backoff_max)
        .min(settings.backoff_max);
    rng.below(ceiling)
}

/// The wait before retry number `retry`: the provider's `Retry-After` (capped) when it gave one,
/// otherwise the jittered backoff.
pub fn retry_delay(
    retry_after: Option<Duration>,
    retry: u32,
    settings: &Settings,
    rng: &mut Jitter,
) -> Duration {
    match retry_after {
        Some(d) => d.min(settings.retry_after_cap),
        None => backoff(retry, settings, rng),
    }
}

/// Why the retry loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The failure is not one that retrying can fix.
    NotRetryable,
    /// `max_retries` retries have been made (or retrying is disabled).
    OutOfRetries,
    /// Waiting would end past the deadline.
    Deadline,
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    RetryAfter(Duration),
    Stop(Stop),
}

/// Decides whether attempt number `attempts_made` (1-based) is followed by another.
pub fn plan(
    attempts_made: u32,
    retryable: bool,
    retry_after: Option<Duration>,
    settings: &Settings,
    deadline: Option<Instant>,
    rng: &mut Jitter,
) -> Next {
    if !retryable {
        return Next::Stop(Stop::NotRetryable);
    }
    if attempts_made > settings.max_retries {
        return Next::Stop(Stop::OutOfRetries);
    }
    let delay = retry_delay(retry_after, attempts_made.saturating_sub(1), settings, rng);
    if let Some(deadline) = deadline {
        let now = Instant::now();
        // Sleeping to (or past) the deadline would leave no time for the request itself.
        if now.checked_add(delay).is_none_or(|wake| wake >= deadline) {
            return Next::Stop(Stop::Deadline);
        }
    }
    Next::RetryAfter(delay)
}

/// One request's timeout: the smaller of the configured timeout and the time left before the
/// deadline. `None` when the deadline has already passed.
pub fn request_timeout(
    timeout: Duration,
    deadline: Option<Instant>,
    now: Instant,
) -> Option<Duration> {
    match deadline {
        None => Some(timeout),
        Some(d) => {
            let left = d.checked_duration_since(now)?;
            if left.is_zero() {
                None
            } else {
                Some(timeout.min(left))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        for s in [408, 409, 429, 500, 502, 503, 504, 599] {
            assert!(status_retryable(s), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422, 200, 301] {
            assert!(!status_retryable(s), "{s}");
        }
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("", now), None);
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn http_date_epoch_math() {
        let t = parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT").unwrap();
        assert_eq!(t, UNIX_EPOCH);
        let t = parse_http_date("29 Feb 2024 12:00:00 GMT").unwrap();
        assert_eq!(
            t.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            1_709_208_000
        );
        assert!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT").is_none());
        assert!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST").is_none());
    }

    #[test]
    fn retry_after_is_capped_and_beats_backoff() {
        let s = Settings {
            retry_after_cap: Duration::from_millis(50),
            ..Settings::default()
        };
        let mut rng = Jitter::seeded(1);
        assert_eq!(
            retry_delay(Some(Duration::from_secs(3600)), 0, &s, &mut rng),
            Duration::from_millis(50)
        );
        assert_eq!(
            retry_delay(Some(Duration::from_millis(10)), 5, &s, &mut rng),
            Duration::from_millis(10)
        );
    }

    #[test]
    fn backoff_is_jittered_and_bounded() {
        let s = Settings::default();
        let mut rng = Jitter::seeded(42);
        let mut distinct = std::collections::HashSet::new();
        for retry in 0..40 {
            let d = backoff(retry, &s, &mut rng);
            let ceiling = (s.backoff_base * 2u32.pow(retry.min(20))).min(s.backoff_max);
            assert!(d <= ceiling, "{d:?} > {ceiling:?}");
            distinct.insert(d);
        }
        assert!(distinct.len() > 30);
        let zero = Settings {
            backoff_base: Duration::ZERO,
            ..Settings::default()
        };
        assert_eq!(backoff(3, &zero, &mut rng), Duration::ZERO);
    }

    #[test]
    fn plan_rules() {
        let s = Settings {
            max_retries: 2,
            backoff_base: Duration::from_millis(1),
            ..Settings::default()
        };
        let mut rng = Jitter::from_entropy();
        assert_eq!(
            plan(1, false, None, &s, None, &mut rng),
            Next::Stop(Stop::NotRetryable)
        );
        assert!(matches!(
            plan(1, true, None, &s, None, &mut rng),
            Next::RetryAfter(_)
        ));
        assert!(matches!(
            plan(2, true, None, &s, None, &mut rng),
            Next::RetryAfter(_)
        ));
        assert_eq!(
            plan(3, true, None, &s, None, &mut rng),
            Next::Stop(Stop::OutOfRetries)
        );
        let off = Settings {
            max_retries: 0,
            ..s.clone()
        };
        assert_eq!(
            plan(1, true, None, &off, None, &mut rng),
            Next::Stop(Stop::OutOfRetries)
        );
        let soon = Some(Instant::now() + Duration::from_millis(20));
        assert_eq!(
            plan(1, true, Some(Duration::from_secs(5)), &s, soon, &mut rng),
            Next::Stop(Stop::Deadline)
        );
    }

    #[test]
    fn timeouts_respect_the_deadline() {
        let now = Instant::now();
        let t = Duration::from_secs(60);
        assert_eq!(request_timeout(t, None, now), Some(t));
        assert_eq!(
            request_timeout(t, Some(now + Duration::from_secs(2)), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            request_timeout(
                Duration::from_secs(1),
                Some(now + Duration::from_secs(2)),
                now
            ),
            Some(Duration::from_secs(1))
        );
        assert_eq!(request_timeout(t, Some(now), now), None);
        assert_eq!(
            request_timeout(t, Some(now), now + Duration::from_secs(1)),
            None
        );
    }
}
