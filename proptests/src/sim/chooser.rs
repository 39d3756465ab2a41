//! Where the simulation's nondeterminism comes from: one trait, two sources.

/// Makes every nondeterministic decision of the simulation.
pub trait Chooser {
    /// A number in `0..n` (`n >= 1`).
    fn below(&mut self, n: usize) -> usize;

    /// Whether the source is used up (the byte-stream source ends the run then).
    fn exhausted(&self) -> bool {
        false
    }

    /// True with probability `num / den`.
    fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = (hi - lo).saturating_add(1);
        let span = usize::try_from(span).unwrap_or(usize::MAX);
        lo + self.below(span.max(1)) as u64
    }

    /// One of `items` (not empty).
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A seeded PRNG (SplitMix64): the source for property runs and soak runs.
#[derive(Debug, Clone)]
pub struct Seeded {
    state: u64,
}

impl Seeded {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> Seeded {
        Seeded { state: seed ^ 0x5851_f42d_4c95_7f2d }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Chooser for Seeded {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        (self.next() % n as u64) as usize
    }
}

/// Reads decisions from a byte string (the fuzzer's input). Once the bytes are used up every
/// decision is 0 and [`Chooser::exhausted`] is true.
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    /// A source reading `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, pos: 0 }
    }
}

impl Chooser for Bytes<'_> {
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let need = if n <= 1 << 8 {
            1
        } else if n <= 1 << 16 {
            2
        } else {
            4
        };
        let mut v: usize = 0;
        for _ in 0..need {
            let b = self.data.get(self.pos).copied().unwrap_or(0);
            self.pos += 1;
            v = (v << 8) | usize::from(b);
        }
        v % n
    }

    fn exhausted(&self) -> bool {
        self.pos >= self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_is_deterministic_and_in_range() {
        let mut a = Seeded::new(7);
        let mut b = Seeded::new(7);
        for n in 1..500 {
            let x = a.below(n);
            assert_eq!(x, b.below(n));
            assert!(x < n);
        }
        assert!(!a.exhausted());
    }

    #[test]
    fn bytes_run_out() {
        let mut c = Bytes::new(&[3, 255]);
        assert_eq!(c.below(10), 3);
        assert_eq!(c.below(256), 255);
        assert!(c.exhausted());
        assert_eq!(c.below(10), 0);
    }
}
