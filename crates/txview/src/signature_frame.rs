//! The signature section of a legacy or v0 transaction: a count, then 64 bytes per signature.
//!
//! Spec: `solana-transaction-format.md`, "Legacy and v0 layout". The count is a compact-u16, but
//! every count a packet can hold (1..=12) fits its first byte, so it is read as one byte as Agave
//! does; a first byte with the top bit set never reaches here (it marks a v1 transaction).
//! v1 signatures come last and are framed by `transaction_frame` from the header's count.

use crate::bytes::{advance, read_byte};
use crate::error::{count_out_of_range, Field, ParseError};
use crate::limits::{MAX_SIGNATURES_PER_PACKET, SIGNATURE_BYTES};

/// Where the signatures are and how many there are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct SignatureFrame {
    /// Number of signatures.
    pub(crate) num_signatures: u8,
    /// Offset of the first signature.
    pub(crate) offset: u16,
}

impl SignatureFrame {
    /// Frames the count and signatures at `offset`, advancing it past them.
    #[inline(always)]
    pub(crate) fn try_new(bytes: &[u8], offset: &mut usize) -> Result<Self, ParseError> {
        let count_offset = *offset;
        let num_signatures = read_byte(bytes, offset, Field::SignatureCount)?;
        if num_signatures == 0 || num_signatures > MAX_SIGNATURES_PER_PACKET {
            *offset = count_offset;
            return Err(count_out_of_range(
                Field::SignatureCount,
                count_offset,
                u16::from(num_signatures),
            ));
        }
        let signatures_offset = *offset;
        advance(
            bytes,
            offset,
            usize::from(num_signatures) * SIGNATURE_BYTES,
            Field::Signatures,
        )?;
        Ok(Self {
            num_signatures,
            // Transactions ending beyond u16::MAX are rejected by `TransactionFrame`, so every
            // offset a frame keeps is exact.
            offset: signatures_offset as u16,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], start: usize, expected: Result<(u8, u16, usize), ParseError>) {
        let mut offset = start;
        let result = SignatureFrame::try_new(bytes, &mut offset)
            .map(|frame| (frame.num_signatures, frame.offset, offset));
        assert_eq!(result, expected);
    }

    fn signatures(count: usize) -> Vec<u8> {
        let mut bytes = vec![count as u8];
        bytes.resize(1 + count * SIGNATURE_BYTES, 7);
        bytes
    }

    #[test]
    fn zero_one_max_and_max_plus_one() {
        check(
            &signatures(0),
            0,
            Err(ParseError::CountOutOfRange {
                field: Field::SignatureCount,
                offset_bytes: 0,
                count: 0,
            }),
        );
        check(&signatures(1), 0, Ok((1, 1, 65)));
        check(&signatures(12), 0, Ok((12, 1, 1 + 12 * 64)));
        check(
            &signatures(13),
            0,
            Err(ParseError::CountOutOfRange {
                field: Field::SignatureCount,
                offset_bytes: 0,
                count: 13,
            }),
        );
    }

    #[test]
    fn truncated_and_empty() {
        check(
            &[],
            0,
            Err(ParseError::Truncated {
                field: Field::SignatureCount,
                offset_bytes: 0,
            }),
        );
        let mut bytes = signatures(2);
        bytes.pop();
        check(
            &bytes,
            0,
            Err(ParseError::Truncated {
                field: Field::Signatures,
                offset_bytes: 1,
            }),
        );
    }

    #[test]
    fn non_zero_offset() {
        let mut bytes = vec![0xEE, 0xEE];
        bytes.extend(signatures(1));
        check(&bytes, 2, Ok((1, 3, 67)));
    }
}
