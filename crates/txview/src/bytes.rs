//! Bounds-checked primitive reads shared by the frame modules: single bytes, compact-u16
//! ("short_vec") lengths, and skipping fixed-size arrays.
//!
//! Spec: `solana-transaction-format.md`, "Compact u16". Every function takes `offset <=
//! bytes.len()` (callers keep that invariant: offsets only ever advance past checked ranges) and
//! leaves `offset` unchanged on error.

use crate::error::{invalid_compact_u16, truncated, Field, ParseError};

/// Whether `length` bytes remain at `offset`. Caller guarantees `offset <= bytes.len()`, so the
/// subtraction cannot wrap; a huge `length` (from a multiplied count) simply fails.
#[inline(always)]
pub(crate) fn has_remaining(bytes: &[u8], offset: usize, length: usize) -> bool {
    length <= bytes.len() - offset
}

/// Skips `length` bytes of `field`, failing if the packet ends first.
#[inline(always)]
pub(crate) fn advance(
    bytes: &[u8],
    offset: &mut usize,
    length: usize,
    field: Field,
) -> Result<(), ParseError> {
    if !has_remaining(bytes, *offset, length) {
        return Err(truncated(field, *offset));
    }
    *offset += length;
    Ok(())
}

/// Reads one byte of `field`.
#[inline(always)]
pub(crate) fn read_byte(bytes: &[u8], offset: &mut usize, field: Field) -> Result<u8, ParseError> {
    match bytes.get(*offset) {
        Some(&byte) => {
            *offset += 1;
            Ok(byte)
        }
        None => Err(truncated(field, *offset)),
    }
}

/// Reads a compact-u16 of at most two bytes, as Agave's `optimized_read_compressed_u16` does:
/// a packet (at most 1232 bytes for the formats that use compact-u16) never needs a length of
/// 16384 or more, so a third byte is rejected, and so is a non-minimal second byte of 0.
#[inline(always)]
pub(crate) fn read_compact_u16(
    bytes: &[u8],
    offset: &mut usize,
    field: Field,
) -> Result<u16, ParseError> {
    let start = *offset;
    let Some(&first) = bytes.get(start) else {
        return Err(truncated(field, start));
    };
    if first & 0x80 == 0 {
        *offset = start + 1;
        return Ok(u16::from(first));
    }
    let Some(&second) = bytes.get(start + 1) else {
        return Err(truncated(field, start));
    };
    if second == 0 || second & 0x80 != 0 {
        return Err(invalid_compact_u16(field, start));
    }
    *offset = start + 2;
    Ok(u16::from(first & 0x7F) | (u16::from(second) << 7))
}

/// Decodes a compact-u16 that parsing has already validated (iteration re-reads lengths instead of
/// storing them, which is what keeps views allocation-free). Out-of-range indexing here is a bug
/// in this crate, never an input condition.
#[inline(always)]
pub(crate) fn read_validated_compact_u16(bytes: &[u8], offset: &mut usize) -> usize {
    let first = bytes[*offset];
    if first & 0x80 == 0 {
        *offset += 1;
        return usize::from(first);
    }
    let second = bytes[*offset + 1];
    *offset += 2;
    usize::from(first & 0x7F) | (usize::from(second) << 7)
}

/// Writes `value` as a compact-u16 (1 to 3 bytes), for the builder.
pub(crate) fn write_compact_u16(out: &mut Vec<u8>, value: u16) {
    let mut rest = value;
    loop {
        let low = (rest & 0x7F) as u8;
        rest >>= 7;
        if rest == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Field = Field::InstructionCount;

    fn check_compact(input: &[u8], expected: Result<(u16, usize), ParseError>) {
        let mut offset = 0;
        let result = read_compact_u16(input, &mut offset, F).map(|value| (value, offset));
        assert_eq!(result, expected, "input {input:02x?}");
        if result.is_err() {
            assert_eq!(offset, 0, "offset must not move on error");
        }
    }

    #[test]
    fn compact_u16_edges() {
        let invalid = Err(ParseError::InvalidCompactU16 {
            field: F,
            offset_bytes: 0,
        });
        let short = Err(ParseError::Truncated {
            field: F,
            offset_bytes: 0,
        });
        check_compact(&[], short);
        check_compact(&[0x00], Ok((0, 1)));
        check_compact(&[0x01], Ok((1, 1)));
        check_compact(&[0x7F], Ok((127, 1)));
        check_compact(&[0x80, 0x01], Ok((128, 2)));
        check_compact(&[0xFF, 0x7F], Ok((16383, 2)));
        check_compact(&[0x80], short);
        check_compact(&[0x80, 0x00], invalid);
        check_compact(&[0xFF, 0xFF, 0x03], invalid);
    }

    #[test]
    fn compact_u16_non_zero_offset_and_round_trip() {
        for value in 0..=16383u16 {
            let mut encoded = vec![0xAA];
            write_compact_u16(&mut encoded, value);
            let mut offset = 1;
            assert_eq!(read_compact_u16(&encoded, &mut offset, F), Ok(value));
            assert_eq!(offset, encoded.len());
            let mut offset = 1;
            assert_eq!(
                read_validated_compact_u16(&encoded, &mut offset),
                usize::from(value)
            );
            assert_eq!(offset, encoded.len());
        }
        let mut three = Vec::new();
        write_compact_u16(&mut three, u16::MAX);
        assert_eq!(three, [0xFF, 0xFF, 0x03]);
    }

    #[test]
    fn advance_edges() {
        let bytes = [0u8; 4];
        let mut offset = 1;
        assert!(advance(&bytes, &mut offset, 3, F).is_ok());
        assert_eq!(offset, 4);
        assert!(advance(&bytes, &mut offset, 0, F).is_ok());
        assert_eq!(
            advance(&bytes, &mut offset, 1, F),
            Err(ParseError::Truncated {
                field: F,
                offset_bytes: 4
            })
        );
        let mut offset = 0;
        assert!(advance(&bytes, &mut offset, usize::MAX, F).is_err());
        assert!(read_byte(&bytes, &mut 4, F).is_err());
    }
}
