//! The static account keys of a legacy or v0 transaction: a count, then 32 bytes per key.
//!
//! Spec: `solana-transaction-format.md`, "Legacy and v0 layout" and "Parse-time limits". At most
//! 38 keys fit a packet, so the compact-u16 count always fits its first byte and is read as one.
//! v1 addresses are framed by `transaction_frame` from the fixed prefix's count.

use crate::bytes::{advance, read_byte};
use crate::error::{count_out_of_range, Field, ParseError};
use crate::limits::{ADDRESS_BYTES, MAX_STATIC_ACCOUNTS_PER_PACKET};

/// Where the static keys are and how many there are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct StaticAccountKeysFrame {
    /// Number of static keys.
    pub(crate) num_static_accounts: u8,
    /// Offset of the first key.
    pub(crate) offset: u16,
}

impl StaticAccountKeysFrame {
    /// Frames the count and keys at `offset`, advancing it past them.
    #[inline(always)]
    pub(crate) fn try_new(bytes: &[u8], offset: &mut usize) -> Result<Self, ParseError> {
        let count_offset = *offset;
        let num_static_accounts = read_byte(bytes, offset, Field::StaticAccountKeyCount)?;
        if num_static_accounts == 0 || num_static_accounts > MAX_STATIC_ACCOUNTS_PER_PACKET {
            *offset = count_offset;
            return Err(count_out_of_range(
                Field::StaticAccountKeyCount,
                count_offset,
                u16::from(num_static_accounts),
            ));
        }
        let keys_offset = *offset;
        advance(
            bytes,
            offset,
            usize::from(num_static_accounts) * ADDRESS_BYTES,
            Field::StaticAccountKeys,
        )?;
        Ok(Self {
            num_static_accounts,
            offset: keys_offset as u16,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(count: usize) -> Vec<u8> {
        let mut bytes = vec![count as u8];
        bytes.resize(1 + count * ADDRESS_BYTES, 3);
        bytes
    }

    fn check(bytes: &[u8], start: usize, expected: Result<(u8, u16, usize), ParseError>) {
        let mut offset = start;
        let result = StaticAccountKeysFrame::try_new(bytes, &mut offset)
            .map(|frame| (frame.num_static_accounts, frame.offset, offset));
        assert_eq!(result, expected);
    }

    #[test]
    fn zero_one_max_and_max_plus_one() {
        let out_of_range = |count| {
            Err(ParseError::CountOutOfRange {
                field: Field::StaticAccountKeyCount,
                offset_bytes: 0,
                count,
            })
        };
        check(&keys(0), 0, out_of_range(0));
        check(&keys(1), 0, Ok((1, 1, 33)));
        check(&keys(38), 0, Ok((38, 1, 1 + 38 * 32)));
        check(&keys(39), 0, out_of_range(39));
    }

    #[test]
    fn truncated_and_non_zero_offset() {
        let mut bytes = keys(2);
        bytes.pop();
        check(
            &bytes,
            0,
            Err(ParseError::Truncated {
                field: Field::StaticAccountKeys,
                offset_bytes: 1,
            }),
        );
        let mut bytes = vec![9];
        bytes.extend(keys(3));
        check(&bytes, 1, Ok((3, 2, 2 + 96)));
    }
}
