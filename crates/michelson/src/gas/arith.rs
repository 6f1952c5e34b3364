//! Saturated arithmetic on milligas, mirroring Octez's `Saturation_repr` (proto_alpha).
//!
//! Octez computes every cost on non-negative OCaml integers that saturate at `max_int`
//! (2^62 - 1 on 64-bit hosts) instead of wrapping: an addition or multiplication that would
//! overflow yields [`SATURATED`], a subtraction that would go below zero yields 0, and an
//! input that is negative is replaced by [`SATURATED`] (`S.safe_int`). A saturated cost is larger
//! than any gas limit, so it always fails with gas exhaustion, never with a wrong small cost.
//!
//! Callers pass sizes as `u64`; every function here is total (no panic, no wrap).

/// The saturation ceiling of Octez's `Saturation_repr`: OCaml's `max_int` on 64-bit hosts,
/// `2^62 - 1`.
pub const SATURATED: u64 = (1 << 62) - 1;

/// `S.safe_int`: a size or constant as a saturated integer (values above the ceiling saturate).
#[inline]
pub const fn safe(value: u64) -> u64 {
    if value >= SATURATED {
        SATURATED
    } else {
        value
    }
}

/// `S.add`: saturating addition.
#[inline]
pub const fn add(left: u64, right: u64) -> u64 {
    let sum = left.saturating_add(right);
    if sum >= SATURATED {
        SATURATED
    } else {
        sum
    }
}

/// `S.sub`: subtraction clamped at zero (`max (x - y) 0`).
#[inline]
pub const fn sub(left: u64, right: u64) -> u64 {
    left.saturating_sub(right)
}

/// `S.mul`: saturating multiplication.
#[inline]
pub const fn mul(left: u64, right: u64) -> u64 {
    match left.checked_mul(right) {
        Some(product) if product < SATURATED => product,
        _ => SATURATED,
    }
}

/// `S.shift_right` (`lsr` in the generated cost code).
#[inline]
pub const fn shift_right(value: u64, bits: u32) -> u64 {
    value >> bits
}

/// `S.numbits`: the number of significant bits of `value` (0 for 0).
#[inline]
pub const fn numbits(value: u64) -> u64 {
    (u64::BITS - value.leading_zeros()) as u64
}

/// `S.Syntax.log2`: Octez's "good enough approximation" `1 + numbits x`, so `log2 0 = 1`,
/// `log2 1 = 2`, `log2 2 = log2 3 = 3`, `log2 4 = 4`. This is what the map, set and multiplication
/// costs use; it is not the mathematical logarithm.
#[inline]
pub const fn log2(value: u64) -> u64 {
    1 + numbits(value)
}

/// `S.sqrt`: integer square root, rounded down.
pub fn isqrt(value: u64) -> u64 {
    if value < 2 {
        return value;
    }
    // Newton's iteration from an over-estimate; converges in a few steps for u64.
    let mut estimate = 1u64 << numbits(value).div_ceil(2);
    loop {
        let next = (estimate + value / estimate) / 2;
        if next >= estimate {
            return estimate;
        }
        estimate = next;
    }
}

/// `max` on saturated integers.
#[inline]
pub const fn max(left: u64, right: u64) -> u64 {
    if left >= right {
        left
    } else {
        right
    }
}

/// `min` on saturated integers.
#[inline]
pub const fn min(left: u64, right: u64) -> u64 {
    if left >= right {
        right
    } else {
        left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_matches_octez_approximation() {
        for (input, expected) in [(0, 1), (1, 2), (2, 3), (3, 3), (4, 4), (255, 9), (256, 10)] {
            assert_eq!(log2(input), expected, "log2({input})");
        }
    }

    #[test]
    fn saturation_edges() {
        assert_eq!(add(SATURATED, 1), SATURATED);
        assert_eq!(add(SATURATED - 2, 1), SATURATED - 1);
        assert_eq!(mul(1 << 40, 1 << 40), SATURATED);
        assert_eq!(mul(0, u64::MAX), 0);
        assert_eq!(mul(3, 5), 15);
        assert_eq!(sub(3, 5), 0);
        assert_eq!(safe(u64::MAX), SATURATED);
    }

    #[test]
    fn isqrt_is_floor_square_root() {
        for value in [0u64, 1, 2, 3, 4, 15, 16, 17, 99, 100, 101, u64::MAX] {
            let root = isqrt(value);
            assert!(root.checked_mul(root).is_some_and(|square| square <= value));
            let next = root + 1;
            assert!(
                next.checked_mul(next).is_none_or(|square| square > value),
                "{value}"
            );
        }
    }
}
