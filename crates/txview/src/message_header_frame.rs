//! The message header of a legacy or v0 transaction: an optional version byte (`0x80 | version`),
//! then `num_required_signatures`, `num_readonly_signed_accounts`, `num_readonly_unsigned_accounts`.
//!
//! Spec: `solana-transaction-format.md`, "Legacy and v0 layout". Only version 0 follows the prefix
//! here; v1 transactions start with their version byte and are framed by `transaction_frame`.

use crate::bytes::read_byte;
use crate::error::{Field, ParseError};
use crate::limits::MESSAGE_VERSION_PREFIX;
use crate::TransactionVersion;

/// The header's values and where the message starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct MessageHeaderFrame {
    /// Offset of the first message byte (the signed bytes start here).
    pub(crate) offset: u16,
    /// Legacy or v0.
    pub(crate) version: TransactionVersion,
    /// Signatures the message requires.
    pub(crate) num_required_signatures: u8,
    /// Readonly accounts among the signers.
    pub(crate) num_readonly_signed_accounts: u8,
    /// Readonly accounts among the non-signers.
    pub(crate) num_readonly_unsigned_accounts: u8,
}

impl MessageHeaderFrame {
    /// Frames the header at `offset`, advancing it past the header.
    #[inline(always)]
    pub(crate) fn try_new(bytes: &[u8], offset: &mut usize) -> Result<Self, ParseError> {
        let message_offset = *offset;
        let prefix = read_byte(bytes, offset, Field::MessageHeader)?;
        let (version, num_required_signatures) = if prefix & MESSAGE_VERSION_PREFIX != 0 {
            let version = prefix & !MESSAGE_VERSION_PREFIX;
            if version != 0 {
                return Err(unsupported_version(message_offset, version));
            }
            (
                TransactionVersion::V0,
                read_byte(bytes, offset, Field::MessageHeader)?,
            )
        } else {
            (TransactionVersion::Legacy, prefix)
        };
        let num_readonly_signed_accounts = read_byte(bytes, offset, Field::MessageHeader)?;
        let num_readonly_unsigned_accounts = read_byte(bytes, offset, Field::MessageHeader)?;
        Ok(Self {
            offset: message_offset as u16,
            version,
            num_required_signatures,
            num_readonly_signed_accounts,
            num_readonly_unsigned_accounts,
        })
    }
}

#[cold]
#[inline(never)]
fn unsupported_version(offset_bytes: usize, version: u8) -> ParseError {
    ParseError::UnsupportedVersion {
        offset_bytes,
        version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        bytes: &[u8],
        start: usize,
        expected: Result<(TransactionVersion, [u8; 3], usize), ParseError>,
    ) {
        let mut offset = start;
        let result = MessageHeaderFrame::try_new(bytes, &mut offset).map(|frame| {
            assert_eq!(usize::from(frame.offset), start);
            (
                frame.version,
                [
                    frame.num_required_signatures,
                    frame.num_readonly_signed_accounts,
                    frame.num_readonly_unsigned_accounts,
                ],
                offset,
            )
        });
        assert_eq!(result, expected, "input {bytes:02x?}");
    }

    #[test]
    fn legacy_and_v0() {
        check(
            &[5, 1, 2],
            0,
            Ok((TransactionVersion::Legacy, [5, 1, 2], 3)),
        );
        check(
            &[0x80, 5, 1, 2],
            0,
            Ok((TransactionVersion::V0, [5, 1, 2], 4)),
        );
        check(
            &[0xFF, 0x7F, 0, 0xFF],
            1,
            Ok((TransactionVersion::Legacy, [0x7F, 0, 0xFF], 4)),
        );
    }

    #[test]
    fn truncated_and_bad_version() {
        let truncated = |offset_bytes| {
            Err(ParseError::Truncated {
                field: Field::MessageHeader,
                offset_bytes,
            })
        };
        check(&[], 0, truncated(0));
        check(&[5, 0], 0, truncated(2));
        check(&[0x80, 5, 1], 0, truncated(3));
        check(
            &[0x81, 1, 0, 0],
            0,
            Err(ParseError::UnsupportedVersion {
                offset_bytes: 0,
                version: 1,
            }),
        );
        check(
            &[0xFF],
            0,
            Err(ParseError::UnsupportedVersion {
                offset_bytes: 0,
                version: 0x7F,
            }),
        );
    }
}
