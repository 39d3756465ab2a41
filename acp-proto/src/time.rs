//! The core's own notion of time.
//!
//! The core never reads a clock: every call that can change state takes `now`. Adapters map
//! their clock onto [`Instant`] (see [`Instant::from_std`]); tests and simulations construct any
//! time they like. Durations are plain [`std::time::Duration`]s.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time: nanoseconds since an arbitrary epoch chosen by the caller.
///
/// Monotonic by contract: callers must never pass a smaller `now` than before. The connection
/// clamps time that goes backwards (treating it as the latest time seen), so a misbehaving clock
/// cannot make a deadline fire twice or un-fire.
///
/// ```
/// use acp_proto::Instant;
/// use std::time::Duration;
/// let t0 = Instant::ZERO;
/// let t1 = t0 + Duration::from_millis(1500);
/// assert_eq!(t1 - t0, Duration::from_millis(1500));
/// assert_eq!(t1.to_string(), "+1.500000s");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant (about 584 years after the epoch).
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// An instant `millis` milliseconds after the epoch.
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Maps a `std::time::Instant` onto this time base, given the `std` instant chosen as epoch.
    /// Instants before the epoch map to [`Instant::ZERO`].
    pub fn from_std(epoch: std::time::Instant, t: std::time::Instant) -> Instant {
        Instant::ZERO + t.saturating_duration_since(epoch)
    }

    /// Maps this instant back onto `std::time::Instant`, given the same epoch.
    pub fn to_std(self, epoch: std::time::Instant) -> std::time::Instant {
        epoch + Duration::from_nanos(self.0)
    }

    /// The time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(nanos))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturates at [`Instant::MAX`] instead of overflowing.
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Instant {
    type Output = Duration;
    /// Saturates at zero when `rhs` is later than `self`.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Instant {
    /// Seconds since the epoch with microsecond precision, e.g. `+1.250000s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let micros = self.0 / 1_000;
        write!(f, "+{}.{:06}s", micros / 1_000_000, micros % 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Instant::ZERO - Instant::from_millis(5), Duration::ZERO);
        assert_eq!(Instant::ZERO + Duration::MAX, Instant::MAX);
        let mut t = Instant::from_millis(1);
        t += Duration::from_millis(2);
        assert_eq!(t, Instant::from_millis(3));
        assert_eq!(t.as_nanos(), 3_000_000);
    }

    #[test]
    fn std_mapping_round_trips() {
        let epoch = std::time::Instant::now();
        let later = epoch + Duration::from_millis(42);
        let t = Instant::from_std(epoch, later);
        assert_eq!(t, Instant::from_millis(42));
        assert_eq!(t.to_std(epoch), later);
        assert_eq!(Instant::from_std(later, epoch), Instant::ZERO);
    }

    #[test]
    fn displays_seconds() {
        assert_eq!(Instant::from_nanos(1_250_000_000).to_string(), "+1.250000s");
        assert_eq!(format!("{:?}", Instant::ZERO), "+0.000000s");
    }
}
