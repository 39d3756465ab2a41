//! Leaf values of the generator: the PRNG, strings, numbers, arbitrary JSON, shuffled text.

use serde_json::{Number, Value};

use super::{Flat, number_from_i128};

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// An index into a slice of length `len` (`len > 0`).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// `true` with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// A number in the inclusive range `lo..=hi`.
    pub fn range_i128(&mut self, lo: i128, hi: i128) -> i128 {
        assert!(lo <= hi);
        let span = (hi - lo) as u128 + 1;
        let bits = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        // `span` is at most 2^65, so the modulo bias is negligible for a test generator.
        lo + (bits % span) as i128
    }

    /// A random element of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
}

/// The seed of instance `index` of definition `def` in a run seeded with `base`: a run is
/// reproducible from `base`, and one instance from the seed printed for it.
pub fn seed_for(base: u64, def: &str, index: u64) -> u64 {
    // FNV-1a over the name, mixed with the base and the index.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in def.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut r = Rng::new(base ^ h.rotate_left(17) ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next_u64()
}

/// Characters strings are drawn from: ASCII, JSON-significant and control characters, and
/// non-ASCII (U+2028/U+2029 line separators, BOM, combining marks, RTL, astral emoji).
const CHARS: &[char] = &[
    'a',
    'b',
    'c',
    'x',
    'y',
    'z',
    'A',
    'Z',
    '0',
    '1',
    '9',
    ' ',
    '_',
    '-',
    '.',
    ',',
    ':',
    '/',
    '\\',
    '"',
    '\'',
    '{',
    '}',
    '[',
    ']',
    '\n',
    '\r',
    '\t',
    '\u{0}',
    '\u{1}',
    '\u{1f}',
    '\u{7f}',
    'é',
    'ß',
    'Ω',
    '中',
    '文',
    '\u{2028}',
    '\u{2029}',
    '\u{feff}',
    '\u{301}',
    'ש',
    '🦀',
    '😀',
    '\u{10ffff}',
];

/// Whole strings that tend to confuse decoders.
const SPECIAL_STRINGS: &[&str] = &[
    "",
    "null",
    "true",
    "0",
    "-1",
    "1.5e3",
    "{}",
    "[]",
    "_meta",
    "type",
    "/home/user/project/src/main.rs",
    "C:\\Users\\me\\file.txt",
    "file:///tmp/a%20b.txt",
    "text",
    "stdio",
    "\u{2028}\u{2029}",
    "🦀🦀",
    "a\"b\\c",
    "line1\nline2",
];

/// A random string: a special one, or 0 to 11 random characters.
pub fn random_string(rng: &mut Rng) -> String {
    if rng.chance(1, 5) {
        return (*rng.pick(SPECIAL_STRINGS)).to_owned();
    }
    let n = rng.below(12) as usize;
    (0..n).map(|_| *rng.pick(CHARS)).collect()
}

pub(super) fn random_key(rng: &mut Rng) -> String {
    const KEYS: &[&str] = &["zed.dev/trace", "traceparent", "vendor", "x", "_private", "nested", "k"];
    if rng.chance(1, 2) { (*rng.pick(KEYS)).to_owned() } else { random_string(rng) }
}

/// A finite double, sometimes integral (and then sometimes written as an integer).
pub(super) fn gen_double(flat: &Flat<'_>, rng: &mut Rng) -> Value {
    let v = match rng.below(6) {
        0 => return Value::from(rng.range_i128(-1000, 1000) as i64),
        1 => rng.range_i128(-1_000_000, 1_000_000) as f64,
        2 => {
            let m = rng.range_i128(-999_999_999_999, 999_999_999_999) as f64;
            m / 10f64.powi(rng.below(9) as i32)
        }
        3 => *rng.pick(&[0.0, -0.0, 0.1, 0.5, 1.0, -1.5, 1e-300, 1e300, f64::MAX, f64::MIN_POSITIVE]),
        _ => loop {
            let f = f64::from_bits(rng.next_u64());
            if f.is_finite() {
                break f;
            }
        },
    };
    let v = match (flat.minimum, flat.maximum) {
        (Some(lo), _) if v < lo => lo,
        (_, Some(hi)) if v > hi => hi,
        _ => v,
    };
    Number::from_f64(v).map_or(Value::from(0), Value::Number)
}

/// Arbitrary JSON of at most `depth` levels of nesting.
pub fn arbitrary_json(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth == 0 { 6 } else { 8 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(1, 2)),
        2 => number_from_i128(match rng.below(3) {
            0 => rng.range_i128(-100, 100),
            1 => rng.range_i128(i128::from(i64::MIN), i128::from(i64::MAX)),
            _ => rng.range_i128(0, i128::from(u64::MAX)),
        }),
        3 => gen_double(&Flat::default(), rng),
        4 | 5 => Value::String(random_string(rng)),
        6 => Value::Array((0..rng.below(4)).map(|_| arbitrary_json(rng, depth - 1)).collect()),
        _ => Value::Object((0..rng.below(4)).map(|_| (random_key(rng), arbitrary_json(rng, depth - 1))).collect()),
    }
}

/// Writes `value` as compact JSON with the keys of every object in a random order (serde_json's
/// map is sorted), so that decoders see discriminators first, last and in between.
pub fn to_text_shuffled(value: &Value, rng: &mut Rng) -> String {
    let mut out = String::new();
    write_shuffled(value, rng, &mut out);
    out
}

fn write_shuffled(value: &Value, rng: &mut Rng, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_shuffled(item, rng, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            for i in (1..entries.len()).rev() {
                let j = rng.index(i + 1);
                entries.swap(i, j);
            }
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_shuffled(v, rng, out);
            }
            out.push('}');
        }
        leaf => out.push_str(&leaf.to_string()),
    }
}
