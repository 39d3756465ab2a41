//! Byte scans eight bytes at a time ("SWAR": SIMD within a register), in safe code.
//!
//! Eight bytes are loaded into a `u64` (little-endian, so byte `k` of the slice is bits
//! `8k..8k + 8`) and tested together with the classic bit tricks: [`has_zero`] and
//! [`has_less`] return a mask with the high bit (`0x80`) of a byte set where the test holds.
//!
//! Both tricks subtract across the whole word, so a byte that matches borrows from the byte
//! above it, which may then show up as a *false positive*. Such false positives can only appear
//! above (at a higher index than) a true match, never below the first one. So:
//!
//! * the mask is non-zero exactly when some byte matches, and
//! * its lowest set bit ([`first_index`]) is exactly the first matching byte;
//!
//! nothing else about the mask is meaningful. Every scan here only ever uses those two facts.
//!
//! Used by the [`framer`](crate::framer) (finding the LF that ends a frame) and by the
//! text-chunk path (finding where a JSON string needs an escape, or ends).

/// `0x01` in every byte.
const LO: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HI: u64 = 0x8080_8080_8080_8080;

/// `b` in every byte of the word.
pub(crate) const fn splat(b: u8) -> u64 {
    LO * b as u64
}

/// Eight bytes as one word, byte `k` of `chunk` in bits `8k..8k + 8`.
#[inline(always)]
pub(crate) fn load_u64(chunk: &[u8; 8]) -> u64 {
    u64::from_le_bytes(*chunk)
}

/// `0x80` set in (at least) the lowest byte of `v` that is zero; zero when no byte is. See the
/// module documentation for what the other bits mean (nothing).
#[inline(always)]
pub(crate) fn has_zero(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// `0x80` set in (at least) the lowest byte of `v` that is below `n`; zero when no byte is.
/// Bytes with the high bit set never match (`!v` masks them), so `n` must be at most `0x80`.
#[inline(always)]
pub(crate) fn has_less(v: u64, n: u8) -> u64 {
    debug_assert!(n <= 0x80);
    v.wrapping_sub(splat(n)) & !v & HI
}

/// Index (0..8) of the first byte flagged in a non-zero mask from [`has_zero`] / [`has_less`]
/// (or an OR of such masks: each mask's lowest bit is a true match and its false positives lie
/// above it, so the lowest bit of the OR is the first byte that matches any of them).
#[inline(always)]
pub(crate) fn first_index(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// Whether JSON must escape `b` inside a string: `"`, `\` or a control byte below `0x20`.
/// Bytes from `0x80` (UTF-8 lead and continuation bytes) never need it.
#[inline(always)]
pub(crate) fn is_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The [`is_escape`] test on eight bytes at once (see [`first_index`]).
#[inline(always)]
fn escape_mask(x: u64) -> u64 {
    has_less(x, 0x20) | has_zero(x ^ splat(b'"')) | has_zero(x ^ splat(b'\\'))
}

/// Index of the first byte of `bytes` that JSON escapes inside a string (`"`, `\` or a control
/// byte below `0x20`), or `bytes.len()` when there is none.
pub(crate) fn first_escape(bytes: &[u8]) -> usize {
    let (words, tail) = bytes.as_chunks::<8>();
    for (n, word) in words.iter().enumerate() {
        let mask = escape_mask(load_u64(word));
        if mask != 0 {
            return n * 8 + first_index(mask);
        }
    }
    let base = words.len() * 8;
    tail.iter().position(|&b| is_escape(b)).map_or(bytes.len(), |i| base + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(bytes: &[u8]) -> usize {
        bytes.iter().position(|&b| is_escape(b)).unwrap_or(bytes.len())
    }

    /// `first_escape` of `bytes` and of each of its first seven suffixes (so the bytes fall at
    /// every position of a word and of the tail) agrees with the naive scan.
    fn check(bytes: &[u8]) {
        for start in 0..bytes.len().min(8) {
            let s = &bytes[start..];
            assert_eq!(first_escape(s), naive(s), "{s:02x?}");
        }
    }

    #[test]
    fn is_escape_is_what_json_escapes() {
        for b in 0..=255u8 {
            let expected = serde_json::to_string(&char::from(b).to_string()).unwrap().len() != 3;
            // Only ASCII is tested that way; every byte from 0x80 is part of UTF-8 text.
            if b < 0x80 {
                assert_eq!(is_escape(b), expected, "{b:#04x}");
            } else {
                assert!(!is_escape(b), "{b:#04x}");
            }
        }
    }

    #[test]
    fn first_escape_matches_naive_scan_for_every_byte_at_every_position() {
        // Backgrounds next to the matches (0x20 and 0x23 are one above a match, so a borrow
        // turns them into false positives; the others have the high bit set or are plain).
        for bg in [b'a', b' ', b'#', b']', 0x7f, 0x80, 0xa0, 0xff] {
            for len in 0..=19 {
                for p in 0..len {
                    for v in 0..=255u8 {
                        let mut buf = vec![bg; len];
                        buf[p] = v;
                        check(&buf);
                        if p + 1 < len {
                            // A second match right above, and one at the very end.
                            buf[p + 1] = b'"';
                            check(&buf);
                            buf[p + 1] = bg;
                            buf[len - 1] = 0x1f;
                            check(&buf);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn first_escape_matches_naive_scan_on_generated_inputs() {
        const ALPHABET: [u8; 16] =
            [b'a', b' ', b'!', b'#', b'[', b']', b'"', b'\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xa2, 0xdc, 0xff];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 48) as usize;
            // Mostly plain bytes, so the first match lands anywhere.
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r % 8 == 0 { ALPHABET[(r >> 8) as usize % 16] } else { (r >> 16) as u8 | 0x20 }
                })
                .collect();
            check(&bytes);
        }
    }

    #[test]
    fn has_zero_flags_the_first_zero_byte() {
        for p in 0..8 {
            for bg in [0x01u8, 0x80, 0xff] {
                let mut word = [bg; 8];
                word[p] = 0;
                assert_eq!(first_index(has_zero(load_u64(&word))), p);
            }
        }
        assert_eq!(has_zero(splat(0x01)), 0);
        assert_eq!(has_less(splat(0x80), 0x80), 0);
    }
}
