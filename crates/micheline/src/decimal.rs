//! Decimal integer literals to `BigInt` in subquadratic time.
//!
//! `num-bigint`'s own decimal parser multiplies the whole accumulated value by a power of ten
//! for every 19 digits, which is quadratic: a 5,000,000-digit literal took 34 s. Here the digits
//! are split in two, each half parsed the same way, and the halves joined with one
//! multiplication by a power of ten, so the cost is that of a few large multiplications. The
//! split is always at a length `BASE_CASE_DIGITS · 2^k`, so the powers of ten needed are
//! computed once, by squaring. The recursion depth is the logarithm of the length (at most 64),
//! not something the input controls beyond that.

use num_bigint::{BigInt, BigUint, Sign};

/// Below this many digits, `num-bigint`'s own parser is as fast (its quadratic term is small).
const BASE_CASE_DIGITS: usize = 1_024;

/// Parses an optional `-` followed by one or more ASCII decimal digits; `None` otherwise.
pub fn parse_decimal(text: &str) -> Option<BigInt> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (Sign::Minus, rest.as_bytes()),
        None => (Sign::Plus, text.as_bytes()),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut powers = Vec::new();
    let magnitude = parse_digits(digits, &mut powers);
    Some(BigInt::from_biguint(sign, magnitude))
}

/// `10^(BASE_CASE_DIGITS · 2^k)` for `k` = 0, 1, ..., computed on demand.
fn power_of_ten(powers: &mut Vec<BigUint>, k: usize) -> &BigUint {
    while powers.len() <= k {
        let next = match powers.last() {
            None => BigUint::from(10u32).pow(BASE_CASE_DIGITS as u32),
            Some(previous) => previous * previous,
        };
        powers.push(next);
    }
    &powers[k]
}

/// The value of `digits` (all ASCII decimal digits, at least one).
fn parse_digits(digits: &[u8], powers: &mut Vec<BigUint>) -> BigUint {
    if digits.len() <= BASE_CASE_DIGITS {
        // Cannot fail: the caller checked that every byte is a decimal digit.
        return BigUint::parse_bytes(digits, 10).unwrap_or_default();
    }
    // The largest split length BASE_CASE_DIGITS · 2^k below the length.
    let mut k = 0;
    while BASE_CASE_DIGITS << (k + 1) < digits.len() {
        k += 1;
    }
    let (high, low) = digits.split_at(digits.len() - (BASE_CASE_DIGITS << k));
    let high = parse_digits(high, powers);
    let low = parse_digits(low, powers);
    high * power_of_ten(powers, k) + low
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) {
        let expected = text.parse::<BigInt>().ok();
        assert_eq!(
            parse_decimal(text),
            expected,
            "{}...",
            &text[..text.len().min(20)]
        );
    }

    #[test]
    fn agrees_with_num_bigint() {
        for text in ["0", "-0", "7", "-948", "0001", "18446744073709551616"] {
            check(text);
        }
        // Lengths around every split point, with leading zeros in the low halves.
        for length in [1_023, 1_024, 1_025, 2_048, 2_049, 5_000, 9_999] {
            let digits: String = (0..length)
                .map(|i| {
                    if i % 7 == 3 {
                        '0'
                    } else {
                        char::from(b'1' + (i % 9) as u8)
                    }
                })
                .collect();
            check(&digits);
            check(&format!("-{digits}"));
            check(&format!("1{}", "0".repeat(length)));
        }
        for bad in ["", "-", "1a", "+1", "--1", " 1"] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
    }
}
