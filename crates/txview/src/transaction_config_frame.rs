//! The v1 transaction config: a u32 LE mask (`TransactionConfigMask`) in the fixed prefix, and one
//! 4-byte LE word per set bit (`ConfigValues`) after the addresses.
//!
//! Spec: SIMD-0385 "TransactionConfigMask": bits 0 and 1 together hold the priority fee (u64, both
//! bits or neither), bit 2 the compute-unit limit, bit 3 the loaded-accounts-data-size limit, bit 4
//! the requested heap size; other bits are invalid. Agave checks the mask while parsing and reports
//! a bad one as a sanitize error; so does this frame (`ParseError::class`).

use crate::bytes::advance;
use crate::error::{Field, ParseError};
use crate::limits::{V1_ALLOWED_CONFIG_MASK, V1_CONFIG_VALUE_BYTES};

/// Mask bit of the low word of the priority fee.
pub(crate) const PRIORITY_FEE_BIT: u32 = 0;
/// Mask bit of the compute-unit limit.
pub(crate) const COMPUTE_UNIT_LIMIT_BIT: u32 = 2;
/// Mask bit of the loaded-accounts-data-size limit.
pub(crate) const LOADED_ACCOUNTS_DATA_SIZE_LIMIT_BIT: u32 = 3;
/// Mask bit of the requested heap size.
pub(crate) const REQUESTED_HEAP_SIZE_BIT: u32 = 4;

/// The mask and where its values are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TransactionConfigFrame {
    /// The config mask.
    pub(crate) mask: u32,
    /// Offset of the first config value word.
    pub(crate) values_offset: u16,
}

impl TransactionConfigFrame {
    /// Checks `mask` (read at `mask_offset`) and frames its value words at `offset`, advancing it
    /// past them.
    #[inline(always)]
    pub(crate) fn try_new(
        bytes: &[u8],
        mask_offset: usize,
        mask: u32,
        offset: &mut usize,
    ) -> Result<Self, ParseError> {
        if mask & !V1_ALLOWED_CONFIG_MASK != 0 {
            return Err(invalid_mask(mask_offset, mask, false));
        }
        if (mask & 1) != ((mask >> 1) & 1) {
            return Err(invalid_mask(mask_offset, mask, true));
        }
        let values_offset = *offset;
        advance(
            bytes,
            offset,
            mask.count_ones() as usize * V1_CONFIG_VALUE_BYTES,
            Field::ConfigValues,
        )?;
        Ok(Self {
            mask,
            values_offset: values_offset as u16,
        })
    }

    /// Offset of the first word of the value whose lowest mask bit is `bit`, if that bit is set.
    #[inline(always)]
    fn word_offset(&self, bit: u32) -> Option<usize> {
        if self.mask & (1 << bit) == 0 {
            return None;
        }
        let word_index = (self.mask & ((1 << bit) - 1)).count_ones() as usize;
        Some(usize::from(self.values_offset) + word_index * V1_CONFIG_VALUE_BYTES)
    }

    /// The u32 value at `bit` in `bytes` (the bytes this frame was parsed from).
    #[inline(always)]
    pub(crate) fn u32_value(&self, bytes: &[u8], bit: u32) -> Option<u32> {
        let offset = self.word_offset(bit)?;
        let (word, _) = bytes[offset..].split_first_chunk::<4>()?;
        Some(u32::from_le_bytes(*word))
    }

    /// The u64 value at bits `bit` and `bit + 1` in `bytes`.
    #[inline(always)]
    pub(crate) fn u64_value(&self, bytes: &[u8], bit: u32) -> Option<u64> {
        let offset = self.word_offset(bit)?;
        let (word, _) = bytes[offset..].split_first_chunk::<8>()?;
        Some(u64::from_le_bytes(*word))
    }
}

#[cold]
#[inline(never)]
fn invalid_mask(offset_bytes: usize, mask: u32, partial_priority_fee: bool) -> ParseError {
    if partial_priority_fee {
        ParseError::PartialPriorityFeeBits { offset_bytes, mask }
    } else {
        ParseError::UnknownConfigMaskBits { offset_bytes, mask }
    }
}

/// The config values of a v1 transaction, read from the packet on demand.
#[derive(Copy, Clone, Debug)]
pub struct TransactionConfigView<'a> {
    pub(crate) frame: TransactionConfigFrame,
    pub(crate) bytes: &'a [u8],
}

impl TransactionConfigView<'_> {
    /// The raw `TransactionConfigMask`.
    pub fn mask(&self) -> u32 {
        self.frame.mask
    }

    /// Total priority fee in lamports (mask bits 0 and 1), if requested.
    pub fn priority_fee_lamports(&self) -> Option<u64> {
        self.frame.u64_value(self.bytes, PRIORITY_FEE_BIT)
    }

    /// Compute-unit limit (mask bit 2), if requested.
    pub fn compute_unit_limit(&self) -> Option<u32> {
        self.frame.u32_value(self.bytes, COMPUTE_UNIT_LIMIT_BIT)
    }

    /// Loaded-accounts-data-size limit in bytes (mask bit 3), if requested.
    pub fn loaded_accounts_data_size_limit(&self) -> Option<u32> {
        self.frame
            .u32_value(self.bytes, LOADED_ACCOUNTS_DATA_SIZE_LIMIT_BIT)
    }

    /// Requested heap size in bytes (mask bit 4), if requested.
    pub fn requested_heap_size(&self) -> Option<u32> {
        self.frame.u32_value(self.bytes, REQUESTED_HEAP_SIZE_BIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mask: u32, values: &[u32]) -> Result<(TransactionConfigFrame, Vec<u8>), ParseError> {
        let mut bytes = vec![0xAA; 3];
        for value in values {
            bytes.extend(value.to_le_bytes());
        }
        let mut offset = 3;
        let frame = TransactionConfigFrame::try_new(&bytes, 1, mask, &mut offset)?;
        assert_eq!(offset, 3 + 4 * mask.count_ones() as usize);
        Ok((frame, bytes))
    }

    #[test]
    fn masks() {
        // Zero bits, one bit, all bits, and the first invalid bit.
        let (frame, bytes) = check(0, &[]).unwrap();
        assert_eq!(frame.u32_value(&bytes, COMPUTE_UNIT_LIMIT_BIT), None);
        let (frame, bytes) = check(0b100, &[77]).unwrap();
        assert_eq!(frame.u32_value(&bytes, COMPUTE_UNIT_LIMIT_BIT), Some(77));
        let (frame, bytes) = check(0b1_1111, &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(
            frame.u64_value(&bytes, PRIORITY_FEE_BIT),
            Some(1 | (2 << 32))
        );
        assert_eq!(frame.u32_value(&bytes, COMPUTE_UNIT_LIMIT_BIT), Some(3));
        assert_eq!(
            frame.u32_value(&bytes, LOADED_ACCOUNTS_DATA_SIZE_LIMIT_BIT),
            Some(4)
        );
        assert_eq!(frame.u32_value(&bytes, REQUESTED_HEAP_SIZE_BIT), Some(5));
        let (frame, bytes) = check(0b1_0000, &[32 * 1024]).unwrap();
        assert_eq!(
            frame.u32_value(&bytes, REQUESTED_HEAP_SIZE_BIT),
            Some(32768)
        );
        assert_eq!(
            check(0b10_0000, &[0]),
            Err(ParseError::UnknownConfigMaskBits {
                offset_bytes: 1,
                mask: 0b10_0000
            })
        );
        assert_eq!(
            check(0b01, &[0]),
            Err(ParseError::PartialPriorityFeeBits {
                offset_bytes: 1,
                mask: 1
            })
        );
        assert!(check(0b10, &[0]).is_err());
        assert!(check(u32::MAX, &[]).is_err());
    }

    #[test]
    fn truncated_values() {
        let mut bytes = vec![0u8; 8];
        assert_eq!(
            TransactionConfigFrame::try_new(&bytes, 0, 0b1100, &mut 0),
            Ok(TransactionConfigFrame {
                mask: 0b1100,
                values_offset: 0
            })
        );
        bytes.truncate(7);
        assert_eq!(
            TransactionConfigFrame::try_new(&bytes, 0, 0b1100, &mut 0),
            Err(ParseError::Truncated {
                field: Field::ConfigValues,
                offset_bytes: 0
            })
        );
    }
}
