//! The whole-transaction frame: the section frames in wire order, for legacy/v0 and for v1.
//!
//! Spec: `solana-transaction-format.md` (legacy and v0 layout, parse-time limits) and SIMD-0385
//! (v1 layout). A first byte with its top bit set marks a v1 transaction; legacy and v0 start with
//! a signature count below 128. The checks run in Agave's order, so that a packet breaking several
//! rules gets the same kind of error as from `agave-transaction-view`.
//!
//! A frame is offsets and counts only (about 40 bytes, `Copy`); it says nothing without the bytes it
//! was parsed from, which the view (`transaction_view`) pairs it with. Every offset is below
//! `u16::MAX`, because a transaction ending beyond that is rejected.

use crate::address_table_lookup_frame::AddressTableLookupFrame;
use crate::bytes::{advance, has_remaining};
use crate::error::{truncated, Field, ParseError};
use crate::instructions_frame::{InstructionsFrame, InstructionsSummary};
use crate::limits::{
    ADDRESS_BYTES, HASH_BYTES, MESSAGE_VERSION_PREFIX, SIGNATURE_BYTES, V1_FIXED_PREFIX_BYTES,
};
use crate::message_header_frame::MessageHeaderFrame;
use crate::signature_frame::SignatureFrame;
use crate::static_account_keys_frame::StaticAccountKeysFrame;
use crate::transaction_config_frame::TransactionConfigFrame;
use crate::TransactionVersion;

/// What to check on a finished frame before it is returned: nothing ([`NoCheck`]), or the
/// sanitization rules. A trait with an always-inlined method rather than a closure, because the
/// compiler did not inline the closure and then had to spill the frame to pass it by reference
/// (about 80 instructions per transaction).
pub(crate) trait FrameCheck<E> {
    /// Checks `frame` (parsed from `bytes`, with its instructions `summary`).
    fn check(
        self,
        frame: &TransactionFrame,
        summary: &InstructionsSummary,
        bytes: &[u8],
    ) -> Result<(), E>;
}

/// Accepts every frame (unsanitized parsing).
pub(crate) struct NoCheck;

impl FrameCheck<ParseError> for NoCheck {
    #[inline(always)]
    fn check(
        self,
        _frame: &TransactionFrame,
        _summary: &InstructionsSummary,
        _bytes: &[u8],
    ) -> Result<(), ParseError> {
        Ok(())
    }
}

/// Offsets and counts of every section of one transaction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TransactionFrame {
    pub(crate) signature: SignatureFrame,
    pub(crate) message_header: MessageHeaderFrame,
    pub(crate) static_account_keys: StaticAccountKeysFrame,
    pub(crate) recent_blockhash_offset: u16,
    pub(crate) instructions: InstructionsFrame,
    pub(crate) address_table_lookups: AddressTableLookupFrame,
    /// Present for v1 only.
    pub(crate) config: Option<TransactionConfigFrame>,
    /// Bytes the transaction occupies from the start of the buffer.
    pub(crate) data_length: u16,
}

impl TransactionFrame {
    /// Frames the transaction at the start of `bytes` (with `EXACT`, it must fill them: trailing
    /// bytes are an error, checked after all other parse rules as Agave does), then runs `check`
    /// on the finished frame and, with `SUMMARIZE`, the instructions' sanitization summary (else
    /// `InstructionsSummary::EMPTY`). Sanitizing inside the constructor, while the counts are
    /// still in registers, spares copying the frame through an intermediate `Result`.
    #[inline(always)]
    pub(crate) fn try_new_checked<const SUMMARIZE: bool, const EXACT: bool, E: From<ParseError>>(
        bytes: &[u8],
        check: impl FrameCheck<E>,
    ) -> Result<Self, E> {
        let Some(&first) = bytes.first() else {
            return Err(truncated(Field::SignatureCount, 0).into());
        };
        if first & MESSAGE_VERSION_PREFIX == 0 {
            Self::try_new_legacy_or_v0::<SUMMARIZE, EXACT, E>(bytes, check)
        } else {
            Self::try_new_v1::<SUMMARIZE, EXACT, E>(bytes, check)
        }
    }

    /// The last step of both layouts: the trailing-bytes rule, then `check`.
    #[inline(always)]
    fn finish<const EXACT: bool, E: From<ParseError>>(
        self,
        bytes: &[u8],
        summary: &InstructionsSummary,
        check: impl FrameCheck<E>,
    ) -> Result<Self, E> {
        let end = usize::from(self.data_length);
        if EXACT && end != bytes.len() {
            return Err(trailing_bytes(end, bytes.len() - end).into());
        }
        check.check(&self, summary, bytes)?;
        Ok(self)
    }

    #[inline(always)]
    fn try_new_legacy_or_v0<const SUMMARIZE: bool, const EXACT: bool, E: From<ParseError>>(
        bytes: &[u8],
        check: impl FrameCheck<E>,
    ) -> Result<Self, E> {
        let mut offset = 0;
        let signature = SignatureFrame::try_new(bytes, &mut offset)?;
        let message_header = MessageHeaderFrame::try_new(bytes, &mut offset)?;
        let static_account_keys = StaticAccountKeysFrame::try_new(bytes, &mut offset)?;
        let recent_blockhash_offset = offset;
        advance(bytes, &mut offset, HASH_BYTES, Field::RecentBlockhash)?;
        let (instructions, summary) =
            InstructionsFrame::try_new_for_legacy_and_v0::<SUMMARIZE>(bytes, &mut offset)?;
        let address_table_lookups = match message_header.version {
            TransactionVersion::V0 => AddressTableLookupFrame::try_new(bytes, &mut offset)?,
            _ => AddressTableLookupFrame::NONE,
        };
        let frame = Self {
            signature,
            message_header,
            static_account_keys,
            recent_blockhash_offset: recent_blockhash_offset as u16,
            instructions,
            address_table_lookups,
            config: None,
            data_length: end_offset(offset)?,
        };
        frame.finish::<EXACT, E>(bytes, &summary, check)
    }

    #[inline(always)]
    fn try_new_v1<const SUMMARIZE: bool, const EXACT: bool, E: From<ParseError>>(
        bytes: &[u8],
        check: impl FrameCheck<E>,
    ) -> Result<Self, E> {
        if !has_remaining(bytes, 0, V1_FIXED_PREFIX_BYTES) {
            return Err(truncated(Field::MessageHeader, 0).into());
        }
        let Some(prefix) = bytes.first_chunk::<V1_FIXED_PREFIX_BYTES>() else {
            return Err(truncated(Field::MessageHeader, 0).into());
        };
        let version = prefix[0] & !MESSAGE_VERSION_PREFIX;
        if version != 1 {
            return Err(unsupported_version(version).into());
        }
        let num_required_signatures = prefix[1];
        let mask = u32::from_le_bytes([prefix[4], prefix[5], prefix[6], prefix[7]]);
        const MASK_OFFSET: usize = 4;
        const RECENT_BLOCKHASH_OFFSET: usize = MASK_OFFSET + 4;
        const COUNTS_OFFSET: usize = RECENT_BLOCKHASH_OFFSET + HASH_BYTES;
        let num_instructions = prefix[COUNTS_OFFSET];
        let num_addresses = prefix[COUNTS_OFFSET + 1];
        let mut offset = V1_FIXED_PREFIX_BYTES;
        advance(
            bytes,
            &mut offset,
            usize::from(num_addresses) * ADDRESS_BYTES,
            Field::StaticAccountKeys,
        )?;
        let config = TransactionConfigFrame::try_new(bytes, MASK_OFFSET, mask, &mut offset)?;
        let (instructions, summary) =
            InstructionsFrame::try_new_for_v1::<SUMMARIZE>(bytes, &mut offset, num_instructions)?;
        let signatures_offset = offset;
        advance(
            bytes,
            &mut offset,
            usize::from(num_required_signatures) * SIGNATURE_BYTES,
            Field::Signatures,
        )?;
        let data_length = end_offset(offset)?;
        let frame = Self {
            signature: SignatureFrame {
                num_signatures: num_required_signatures,
                offset: signatures_offset as u16,
            },
            message_header: MessageHeaderFrame {
                offset: 0,
                version: TransactionVersion::V1,
                num_required_signatures,
                num_readonly_signed_accounts: prefix[2],
                num_readonly_unsigned_accounts: prefix[3],
            },
            static_account_keys: StaticAccountKeysFrame {
                num_static_accounts: num_addresses,
                offset: V1_FIXED_PREFIX_BYTES as u16,
            },
            recent_blockhash_offset: RECENT_BLOCKHASH_OFFSET as u16,
            instructions,
            address_table_lookups: AddressTableLookupFrame::NONE,
            config: Some(config),
            data_length,
        };
        frame.finish::<EXACT, E>(bytes, &summary, check)
    }

    /// The signed message bytes as `[start, end)`: after the signatures for legacy and v0, before
    /// them for v1.
    #[inline(always)]
    pub(crate) fn message_range(&self) -> (usize, usize) {
        let end = match self.message_header.version {
            TransactionVersion::V1 => self.signature.offset,
            _ => self.data_length,
        };
        (usize::from(self.message_header.offset), usize::from(end))
    }
}

/// The transaction's end as a u16, or the error Agave gives for a transaction ending beyond it.
#[inline(always)]
fn end_offset(offset: usize) -> Result<u16, ParseError> {
    match u16::try_from(offset) {
        Ok(end) => Ok(end),
        Err(_) => Err(offset_overflow(offset)),
    }
}

#[cold]
#[inline(never)]
fn offset_overflow(offset_bytes: usize) -> ParseError {
    ParseError::OffsetOverflow {
        field: Field::Transaction,
        offset_bytes,
    }
}

#[cold]
#[inline(never)]
fn unsupported_version(version: u8) -> ParseError {
    ParseError::UnsupportedVersion {
        offset_bytes: 0,
        version,
    }
}

#[cold]
#[inline(never)]
fn trailing_bytes(offset_bytes: usize, trailing_bytes: usize) -> ParseError {
    ParseError::TrailingBytes {
        offset_bytes,
        trailing_bytes,
    }
}
