//! The deterministic generator the differential tests and the scheduler benchmarks draw from
//! (xorshift64*, Vigna 2016): a failure or a workload reproduces from its seed, and no test
//! depends on a random-number crate's version. Not for the serialization suite, whose spec fixes
//! its own generator (`serialization::rng`).

/// xorshift64* over a non-zero 64-bit state.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound.max(1) as u64) as usize
    }

    /// True once in `one_in` draws on average.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// One byte.
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// `length` bytes.
    pub fn bytes(&mut self, length: usize) -> Vec<u8> {
        (0..length).map(|_| self.byte()).collect()
    }

    /// 32 bytes: an address, key or hash.
    pub fn address(&mut self) -> [u8; 32] {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_sequence_is_xorshift64_star() {
        // First outputs from seed 1, computed by hand from the three shifts and the multiplier.
        let mut rng = Rng(1);
        let state = {
            let mut x: u64 = 1;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x
        };
        assert_eq!(rng.next_u64(), state.wrapping_mul(0x2545_F491_4F6C_DD1D));
        assert_eq!(Rng(5).below(0), 0);
        assert!((0..1000).all(|_| rng.below(7) < 7));
    }
}
