//! Unix seconds, and their UTC calendar form.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time in Unix seconds.
pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `YYYY-MM-DD HH:MM:SSZ` (UTC) for Unix seconds `at`.
pub fn format_time(at: i64) -> String {
    utc(at, ' ')
}

/// `YYYY-MM-DDTHH:MM:SSZ`: RFC 3339, UTC, to the second, for Unix seconds `at`.
pub fn rfc3339(at: i64) -> String {
    utc(at, 'T')
}

/// The UTC date and time of Unix seconds `at`, `sep` between them.
fn utc(at: i64, sep: char) -> String {
    let days = at.div_euclid(86_400);
    let secs = at.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}{sep}{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00Z");
        assert_eq!(format_time(1_796_192_790), "2026-12-02 06:26:30Z");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00:00Z");
    }

    #[test]
    fn dates_in_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_185_563), "2026-12-02T04:26:03Z");
    }
}
