//! The pseudo-random generator every implementation draws its test data from
//! (`specs/serialization-benchmarks.md`, "Random generator (xorshift128)"), and the word list the
//! catrank snippets are made of. Because every implementation consumes the generator in the same
//! order, they build identical requests.

/// The xorshift128 generator of the spec, with its fixed seed.
#[derive(Clone, Debug)]
pub struct Xorshift128 {
    x: u32,
    y: u32,
    z: u32,
    w: u32,
}

impl Default for Xorshift128 {
    fn default() -> Self {
        Self::new()
    }
}

impl Xorshift128 {
    /// The generator at the spec's seed (`x=0x1d2acd47, y=0x58ca3e14, z=0xf563f232, w=0x0bc76199`).
    pub fn new() -> Self {
        Self {
            x: 0x1d2a_cd47,
            y: 0x58ca_3e14,
            z: 0xf563_f232,
            w: 0x0bc7_6199,
        }
    }

    /// The next raw 32-bit draw.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let t = self.x ^ (self.x << 11);
        self.x = self.y;
        self.y = self.z;
        self.z = self.w;
        self.w = self.w ^ (self.w >> 19) ^ t ^ (t >> 8);
        self.w
    }

    /// `rand(range)`: a draw in `0..range`; `range` must not be 0.
    #[inline]
    pub fn next_less_than(&mut self, range: u32) -> u32 {
        self.next_u32() % range
    }

    /// `rand_double(range)`: a draw in `0.0..=range`.
    #[inline]
    pub fn next_double(&mut self, range: f64) -> f64 {
        f64::from(self.next_u32()) * range / f64::from(u32::MAX)
    }

    /// `rand_bool`: whether the next draw is odd.
    #[inline]
    pub fn next_bool(&mut self) -> bool {
        self.next_u32() % 2 == 1
    }

    /// A draw in `0..items.len()` used as an index; `items` must not be empty.
    #[inline]
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let count = u32::try_from(items.len()).unwrap_or(u32::MAX);
        items[self.next_less_than(count) as usize]
    }
}

/// The words catrank snippets are made of, each with its trailing space (spec, "WORDS").
pub const WORDS: [&str; 13] = [
    "foo ", "bar ", "baz ", "qux ", "quux ", "corge ", "grault ", "garply ", "waldo ", "fred ",
    "plugh ", "xyzzy ", "thud ",
];

/// Car makes, in the spec's order.
pub const MAKES: [&str; 5] = ["Toyota", "GM", "Ford", "Honda", "Tesla"];

/// Car models, in the spec's order.
pub const MODELS: [&str; 6] = ["Camry", "Prius", "Volt", "Accord", "Leaf", "Model S"];

/// The prefix of every catrank URL.
pub const URL_PREFIX: &str = "http://example.com/";

/// Integer division as the eval benchmark defines it: `i32::MAX` where Rust's would trap.
pub fn checked_divide(left: i32, right: i32) -> i32 {
    left.checked_div(right).unwrap_or(i32::MAX)
}

/// Integer remainder as the eval benchmark defines it: `i32::MAX` where Rust's would trap.
pub fn checked_modulus(left: i32, right: i32) -> i32 {
    left.checked_rem(right).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_draws_follow_the_recurrence() {
        // The recurrence computed by hand for the first draw from the spec's seed.
        let (x, w) = (0x1d2a_cd47_u32, 0x0bc7_6199_u32);
        let t = x ^ (x << 11);
        let expected = w ^ (w >> 19) ^ t ^ (t >> 8);
        let mut rng = Xorshift128::new();
        assert_eq!(rng.next_u32(), expected);
        // The generator shifts its state: the second draw mixes the old `y` in.
        let y = 0x58ca_3e14_u32;
        let t2 = y ^ (y << 11);
        let expected2 = expected ^ (expected >> 19) ^ t2 ^ (t2 >> 8);
        assert_eq!(rng.next_u32(), expected2);
    }

    #[test]
    fn division_edge_cases_return_max() {
        assert_eq!(checked_divide(7, 0), i32::MAX);
        assert_eq!(checked_divide(i32::MIN, -1), i32::MAX);
        assert_eq!(checked_divide(-7, 2), -3);
        assert_eq!(checked_modulus(7, 0), i32::MAX);
        assert_eq!(checked_modulus(i32::MIN, -1), i32::MAX);
        assert_eq!(checked_modulus(-7, 2), -1);
    }
}
