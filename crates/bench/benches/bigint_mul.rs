//! Big-integer multiplication across libraries (BENCHMARKS.md, "Michelson: big-integer
//! multiplication"): the gas-per-time class `mul` squares 7 twenty-four times (`DUP; MUL`), and
//! Octez charges each product `55 + 0.8125 · a · log2(1 + a)` milligas-scale units in the operands'
//! byte sizes, a model calibrated on GMP's FFT multiplication. This times the same chain of
//! squarings in each candidate library, and the last squaring alone, to choose the one Michelson
//! uses for large products.
//!
//! `cargo bench -p kestrel-bench --bench bigint_mul` prints one line per library. Not criterion:
//! each chain takes seconds in the slower libraries.

use dashu_int::ops::BitTest;
use std::time::{Duration, Instant};

/// Squarings in the chain (the gas-per-time class's 24 × `DUP; MUL`).
const SQUARINGS: u32 = 24;

/// Times `SQUARINGS` successive squarings starting from 7: the whole chain, and the last one.
/// `bits` gives the result's size so that the work cannot be optimised away.
fn chain<T>(
    seven: T,
    square: impl Fn(&T) -> T,
    bits: impl Fn(&T) -> u64,
) -> (Duration, Duration, u64) {
    let started = Instant::now();
    let mut value = seven;
    let mut last = Duration::ZERO;
    for _ in 0..SQUARINGS {
        let step = Instant::now();
        value = square(&value);
        last = step.elapsed();
    }
    (started.elapsed(), last, bits(&value))
}

fn report(name: &str, (total, last, bits): (Duration, Duration, u64)) {
    println!(
        "{name:<12} chain {:>9.3} ms   last squaring {:>9.3} ms   result {bits} bits",
        total.as_secs_f64() * 1e3,
        last.as_secs_f64() * 1e3
    );
}

fn main() {
    let requested: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| requested.is_empty() || requested.iter().any(|r| r == name);
    if wanted("rug") {
        report(
            "rug (GMP)",
            chain(
                rug::Integer::from(7),
                |v| rug::Integer::from(v * v),
                |v| u64::from(v.significant_bits()),
            ),
        );
    }
    if wanted("malachite") {
        report(
            "malachite",
            chain(
                malachite_nz::natural::Natural::from(7u32),
                |v| v * v,
                // Whole limbs: enough to keep the result alive.
                |v| v.limb_count() * 64,
            ),
        );
    }
    if wanted("dashu") {
        report(
            "dashu",
            chain(
                dashu_int::UBig::from(7u32),
                |v| v * v,
                |v| v.bit_len() as u64,
            ),
        );
    }
    if wanted("num-bigint") {
        report(
            "num-bigint",
            chain(num_bigint::BigInt::from(7), |v| v * v, |v| v.bits()),
        );
    }
}
