//! Zarith arbitrary-precision integers, `n` (naturals) and `z` (integers): little-endian groups of
//! 7 bits, the high bit of each byte saying another byte follows; for `z` the first byte carries
//! the sign in bit 6 and only 6 bits of magnitude. A final zero byte (other than a lone zero) is
//! rejected as `Trailing_zero`, so each number has exactly one encoding.

use crate::error::{DecodeError, DecodeErrorKind};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;

/// Decodes an `n` starting at `*offset`, advancing the offset past it.
pub fn read_n(input: &[u8], offset: &mut usize) -> Result<BigUint, DecodeError> {
    let start = *offset;
    let end = group_end(input, start)?;
    let bytes = &input[start..end];
    let mut digits = Vec::with_capacity(bytes.len());
    for &byte in bytes {
        digits.push(byte & 0x7f);
    }
    *offset = end;
    Ok(BigUint::from_radix_le(&digits, 128).unwrap_or_default())
}

/// Decodes a `z` starting at `*offset`, advancing the offset past it.
pub fn read_z(input: &[u8], offset: &mut usize) -> Result<BigInt, DecodeError> {
    let start = *offset;
    let end = group_end(input, start)?;
    let bytes = &input[start..end];
    let negative = bytes[0] & 0x40 != 0;
    // The first byte holds 6 bits of magnitude, each later byte 7: shift the later groups by 6.
    let mut magnitude = BigUint::from(bytes[0] & 0x3f);
    if bytes.len() > 1 {
        let mut digits = Vec::with_capacity(bytes.len() - 1);
        for &byte in &bytes[1..] {
            digits.push(byte & 0x7f);
        }
        let high = BigUint::from_radix_le(&digits, 128).unwrap_or_default();
        magnitude += high << 6u32;
    }
    *offset = end;
    let sign = if negative { Sign::Minus } else { Sign::Plus };
    Ok(BigInt::from_biguint(sign, magnitude))
}

/// The end of the byte group starting at `start`: one past the first byte without its high bit.
fn group_end(input: &[u8], start: usize) -> Result<usize, DecodeError> {
    let mut index = start;
    loop {
        let Some(&byte) = input.get(index) else {
            return Err(DecodeError::new(
                DecodeErrorKind::NotEnoughData,
                input.len(),
            ));
        };
        if byte & 0x80 == 0 {
            if byte == 0 && index > start {
                return Err(DecodeError::new(DecodeErrorKind::TrailingZero, index));
            }
            return Ok(index + 1);
        }
        index += 1;
    }
}

/// Appends the `n` encoding of `value` to `out`.
pub fn write_n(value: &BigUint, out: &mut Vec<u8>) {
    if value.is_zero() {
        out.push(0);
        return;
    }
    let digits = value.to_radix_le(128);
    let last = digits.len() - 1;
    for (index, digit) in digits.iter().enumerate() {
        out.push(if index == last { *digit } else { digit | 0x80 });
    }
}

/// Appends the `z` encoding of `value` to `out`.
pub fn write_z(value: &BigInt, out: &mut Vec<u8>) {
    let magnitude = value.magnitude();
    let sign_bit = if value.sign() == Sign::Minus { 0x40 } else { 0 };
    let low6 = (magnitude & BigUint::from(0x3fu8))
        .to_u32_digits()
        .first()
        .copied()
        .unwrap_or(0) as u8;
    let high: BigUint = magnitude >> 6u32;
    if high.is_zero() {
        out.push(sign_bit | low6);
        return;
    }
    out.push(0x80 | sign_bit | low6);
    write_n(&high, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_z(value: i64, hex: &str) {
        let mut out = Vec::new();
        write_z(&BigInt::from(value), &mut out);
        let encoded: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(encoded, hex, "encoding {value}");
        let mut offset = 0;
        assert_eq!(read_z(&out, &mut offset), Ok(BigInt::from(value)));
        assert_eq!(offset, out.len());
    }

    #[test]
    fn z_known_values() {
        check_z(0, "00");
        check_z(63, "3f");
        check_z(64, "8001");
        check_z(-1, "41");
        check_z(-64, "c001");
        check_z(-65537, "c18008");
        check_z(165316510, "9e9ed49d01");
    }

    #[test]
    fn trailing_zero_rejected() {
        let mut offset = 0;
        let error = read_n(&[0x83, 0x00], &mut offset).unwrap_err();
        assert_eq!(error.kind, DecodeErrorKind::TrailingZero);
        assert_eq!(error.offset, 1);
    }
}
