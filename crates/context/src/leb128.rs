//! Unsigned LEB128 (the "variable-length mode" of tezos-context-hash-SPEC.md, "Integers"), used by
//! the hash encodings and by the pack file. Reading is bounded: at most ten bytes for a `u64`.

/// The longest LEB128 encoding of a `u64`: ceil(64 / 7) bytes.
pub const LEB128_U64_MAX_BYTES: usize = 10;

/// Appends the LEB128 encoding of `value` to `out`.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a LEB128 `u64` from `bytes` at `*offset`, advancing it. `None` when the input ends, the
/// encoding is longer than ten bytes, overflows 64 bits, or is not minimal (a trailing zero byte),
/// so that every value has exactly one accepted encoding.
#[inline]
pub fn read_u64(bytes: &[u8], offset: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for index in 0..LEB128_U64_MAX_BYTES {
        let byte = *bytes.get(*offset + index)?;
        let payload = u64::from(byte & 0x7f);
        let shift = 7 * index as u32;
        if index == LEB128_U64_MAX_BYTES - 1 && payload > 1 {
            return None;
        }
        value |= payload << shift;
        if byte & 0x80 == 0 {
            if byte == 0 && index > 0 {
                return None;
            }
            *offset += index + 1;
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: u64, expected: &[u8]) {
        let mut out = Vec::new();
        write_u64(&mut out, value);
        assert_eq!(out, expected, "{value}");
        let mut offset = 0;
        assert_eq!(read_u64(&out, &mut offset), Some(value));
        assert_eq!(offset, expected.len());
    }

    #[test]
    fn vectors() {
        check(0, &[0]);
        check(1, &[1]);
        check(127, &[127]);
        check(128, &[0x80, 1]);
        // The spec's example: 1298532 is \228\160\079.
        check(1_298_532, &[228, 160, 79]);
        // The spec's inode example prints \160\194\030 under "length 50000": those bytes are 500000.
        check(500_000, &[160, 194, 30]);
        check(50_000, &[208, 134, 3]);
        check(
            u64::MAX,
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1],
        );
    }

    #[test]
    fn rejects_bad_encodings() {
        for bad in [
            &[][..],
            &[0x80],
            &[0x80, 0],
            &[0xff; 11],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2],
        ] {
            let mut offset = 0;
            assert_eq!(read_u64(bad, &mut offset), None, "{bad:?}");
        }
    }
}
