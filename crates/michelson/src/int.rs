//! Michelson integers with a small-value fast path: an `i64` inline, a shared `BigInt` only when
//! the value does not fit (DESIGN.md, "Integers have a small-value fast path").
//!
//! Invariant: [`Int::Big`] never holds a value that fits in `i64`, so equality and hashing can
//! compare representations.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive};
use std::cmp::Ordering;
use std::rc::Rc;

/// The size of the smaller factor from which [`Int::mul`] multiplies with GMP: below it
/// num-bigint's schoolbook and Karatsuba products are as fast and need no conversion; above it
/// GMP's Toom and FFT products are what Octez's n log n charge for `MUL` assumes (num-bigint took
/// 11× GMP's time for the gas-per-time class's chain of squarings; BENCHMARKS.md, "Michelson:
/// big-integer multiplication").
const GMP_PRODUCT_MIN_BITS: u64 = 64 * 64;

/// `a * b` computed by GMP (a squaring when the factors are equal, as after `DUP`); the
/// conversions each way are linear in the sizes.
fn gmp_product(a: &BigInt, b: &BigInt) -> BigInt {
    crate::gmp_kernels::select();
    let to_gmp = |n: &BigInt| {
        let (sign, digits) = n.to_u64_digits();
        let magnitude = rug::Integer::from_digits(&digits, rug::integer::Order::Lsf);
        if sign == num_bigint::Sign::Minus {
            -magnitude
        } else {
            magnitude
        }
    };
    let product = if a == b {
        rug::Integer::from(to_gmp(a).square_ref())
    } else {
        rug::Integer::from(&to_gmp(a) * &to_gmp(b))
    };
    let sign = match product.cmp0() {
        Ordering::Less => num_bigint::Sign::Minus,
        Ordering::Equal => num_bigint::Sign::NoSign,
        Ordering::Greater => num_bigint::Sign::Plus,
    };
    let digits = product.to_digits::<u32>(rug::integer::Order::Lsf);
    BigInt::from_biguint(sign, num_bigint::BigUint::new(digits))
}

/// An arbitrary-precision integer, inline when it fits in 64 bits.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Int {
    /// A value that fits in `i64`.
    Small(i64),
    /// A value that does not fit in `i64` (never one that does).
    Big(Rc<BigInt>),
}

impl std::fmt::Debug for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_bigint())
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Int::Small(value) => write!(f, "{value}"),
            Int::Big(value) => write!(f, "{value}"),
        }
    }
}

impl From<i64> for Int {
    fn from(value: i64) -> Int {
        Int::Small(value)
    }
}

impl From<BigInt> for Int {
    fn from(value: BigInt) -> Int {
        match value.to_i64() {
            Some(small) => Int::Small(small),
            None => Int::Big(Rc::new(value)),
        }
    }
}

impl From<&BigInt> for Int {
    fn from(value: &BigInt) -> Int {
        match value.to_i64() {
            Some(small) => Int::Small(small),
            None => Int::Big(Rc::new(value.clone())),
        }
    }
}

impl Ord for Int {
    #[inline]
    fn cmp(&self, other: &Int) -> Ordering {
        match (self, other) {
            (Int::Small(a), Int::Small(b)) => a.cmp(b),
            (Int::Big(a), Int::Big(b)) => a.cmp(b),
            // A big value is beyond every `i64` (the invariant), on the side of its sign.
            (Int::Small(_), Int::Big(b)) => {
                if b.is_negative() {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Int::Big(a), Int::Small(_)) => {
                if a.is_negative() {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
        }
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Int) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Int {
    /// Zero.
    pub const ZERO: Int = Int::Small(0);

    /// The value as a `BigInt` (allocates for small values).
    pub fn to_bigint(&self) -> BigInt {
        match self {
            Int::Small(value) => BigInt::from(*value),
            Int::Big(value) => (**value).clone(),
        }
    }

    /// The value as `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Int::Small(value) => Some(*value),
            Int::Big(_) => None,
        }
    }

    /// The value as `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        match self {
            Int::Small(value) => u64::try_from(*value).ok(),
            Int::Big(value) => value.to_u64(),
        }
    }

    /// Whether the value is negative.
    pub fn is_negative(&self) -> bool {
        match self {
            Int::Small(value) => *value < 0,
            Int::Big(value) => value.is_negative(),
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        matches!(self, Int::Small(0))
    }

    /// The sign: -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        match self {
            Int::Small(value) => value.signum() as i32,
            Int::Big(value) => {
                if value.is_negative() {
                    -1
                } else {
                    1
                }
            }
        }
    }

    /// `self + other`.
    #[inline]
    pub fn add(&self, other: &Int) -> Int {
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let Some(sum) = a.checked_add(*b) {
                return Int::Small(sum);
            }
        }
        self.add_slow(other)
    }

    #[cold]
    #[inline(never)]
    fn add_slow(&self, other: &Int) -> Int {
        Int::from(self.to_bigint() + other.to_bigint())
    }

    /// `self - other`.
    #[inline]
    pub fn sub(&self, other: &Int) -> Int {
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let Some(difference) = a.checked_sub(*b) {
                return Int::Small(difference);
            }
        }
        self.sub_slow(other)
    }

    #[cold]
    #[inline(never)]
    fn sub_slow(&self, other: &Int) -> Int {
        Int::from(self.to_bigint() - other.to_bigint())
    }

    /// `self * other`.
    #[inline]
    pub fn mul(&self, other: &Int) -> Int {
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let Some(product) = a.checked_mul(*b) {
                return Int::Small(product);
            }
        }
        self.mul_slow(other)
    }

    #[cold]
    #[inline(never)]
    fn mul_slow(&self, other: &Int) -> Int {
        let (a, b) = (self.to_bigint(), other.to_bigint());
        if a.bits().min(b.bits()) >= GMP_PRODUCT_MIN_BITS {
            Int::from(gmp_product(&a, &b))
        } else {
            Int::from(a * b)
        }
    }

    /// `-self`.
    pub fn neg(&self) -> Int {
        if let Int::Small(a) = self {
            if let Some(negated) = a.checked_neg() {
                return Int::Small(negated);
            }
        }
        Int::from(-self.to_bigint())
    }

    /// `|self|`.
    pub fn abs(&self) -> Int {
        if self.is_negative() {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// Euclidean division as Michelson defines it: the remainder is non-negative;
    /// `None` when `other` is zero.
    pub fn ediv(&self, other: &Int) -> Option<(Int, Int)> {
        if other.is_zero() {
            return None;
        }
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let (Some(quotient), Some(remainder)) =
                (a.checked_div_euclid(*b), a.checked_rem_euclid(*b))
            {
                return Some((Int::Small(quotient), Int::Small(remainder)));
            }
        }
        let a = self.to_bigint();
        let b = other.to_bigint();
        let (mut quotient, mut remainder) = a.div_rem(&b);
        if remainder.is_negative() {
            if b.is_positive() {
                quotient -= 1;
                remainder += &b;
            } else {
                quotient += 1;
                remainder -= &b;
            }
        }
        Some((Int::from(quotient), Int::from(remainder)))
    }

    /// Whether the value is zero or more and below `2^bits`... used by shifts; `None` if negative.
    pub fn bits(&self) -> u64 {
        match self {
            Int::Small(value) => 64 - value.unsigned_abs().leading_zeros() as u64,
            Int::Big(value) => value.bits(),
        }
    }

    /// Whether the integer is zero, for big values (never zero by the invariant).
    pub fn is_big(&self) -> bool {
        matches!(self, Int::Big(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of about `bits` bits with a mixed bit pattern, of the given sign.
    fn sample(bits: u32, negative: bool) -> Int {
        let mut n = BigInt::from(0x9e37_79b9_7f4a_7c15_u64);
        while n.bits() < u64::from(bits) {
            n = &n * &n + BigInt::from(0x2545_f491_u32);
        }
        Int::from(if negative { -n } else { n })
    }

    #[test]
    fn order_equals_num_bigint_order() {
        let values = [
            sample(100, true),
            sample(70, true),
            Int::from(i64::MIN),
            Int::from(-1),
            Int::ZERO,
            Int::from(i64::MAX),
            sample(70, false),
            sample(100, false),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(a.cmp(b), a.to_bigint().cmp(&b.to_bigint()), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn large_products_through_gmp_equal_num_bigint() {
        for (bits_a, bits_b) in [
            (4_096, 4_096),
            (5_000, 70_000),
            (100_000, 100_000),
            (4_000, 9_000),
            // GMP's FFT product, over the basecase kernels `gmp_kernels` may select.
            (400_000, 400_000),
        ] {
            for (neg_a, neg_b) in [(false, false), (true, false), (false, true), (true, true)] {
                let (a, b) = (sample(bits_a, neg_a), sample(bits_b, neg_b));
                assert_eq!(a.mul(&b).to_bigint(), a.to_bigint() * b.to_bigint());
                assert_eq!(a.mul(&a).to_bigint(), a.to_bigint() * a.to_bigint());
            }
        }
    }
}
