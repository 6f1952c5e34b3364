//! The whole-transaction frame: the section frames in wire order, for legacy/v0 and for v1.
//!
//! Spec: `solana-transaction-format.md` (legacy and v0 layout, parse-time limits) and SIMD-0385
//! (v1 layout). A first byte with its top bit set marks a v1 transaction; legacy and v0 start with
//! a signature count below 128. The checks run in Agave's order, so that a packet breaking several
//! rules gets the same kind of error as from `agave-transaction-view`.
//!
//! A frame is counts and a few offsets (24 bytes, `Copy`); the other offsets follow from the
//! counts. It says nothing without the bytes it was parsed from, which the view
//! (`transaction_view`) pairs it with. Every offset is below `u16::MAX`, because a transaction
//! ending beyond that is rejected.
//!
//! Two parsers build it: `try_new_checked` here, which frames section by section with every rule
//! checked and every error exact, and `fast_frame`, which answers the common legacy and v0 shapes
//! in one pass and hands anything else (including every error) to this one.

use crate::address_table_lookup_frame::{AddressTableLookupFrame, AddressTableLookupIterator};
use crate::bytes::{advance, has_remaining};
use crate::error::{truncated, Field, ParseError, TransactionViewError};
use crate::fast_frame;
use crate::instructions_frame::{InstructionLayout, InstructionsFrame, InstructionsSummary};
use crate::limits::{
    ADDRESS_BYTES, HASH_BYTES, MESSAGE_VERSION_PREFIX, SIGNATURE_BYTES, V1_FIXED_PREFIX_BYTES,
    V1_INSTRUCTION_HEADER_BYTES,
};
use crate::message_header_frame::MessageHeaderFrame;
use crate::sanitize::SanitizeConfig;
use crate::signature_frame::SignatureFrame;
use crate::static_account_keys_frame::StaticAccountKeysFrame;
use crate::transaction_config_frame::TransactionConfigFrame;
use crate::TransactionVersion;

/// What to check on a finished frame before it is returned: nothing ([`NoCheck`]), or the
/// sanitization rules. A trait with an always-inlined method rather than a closure, because the
/// compiler did not inline the closure and then had to spill the frame to pass it by reference
/// (about 80 instructions per transaction).
pub(crate) trait FrameCheck<E> {
    /// Checks `frame` (parsed from `bytes`, with its instructions `summary` and the index of its
    /// first lookup without any index).
    fn check(
        self,
        frame: &TransactionFrame,
        summary: &InstructionsSummary,
        first_empty_lookup: Option<u8>,
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
        _first_empty_lookup: Option<u8>,
        _bytes: &[u8],
    ) -> Result<(), ParseError> {
        Ok(())
    }
}

/// Counts and the few offsets of one transaction that cannot be computed from counts; every
/// other section's offset is derived from these (see the methods). Packed into 24 bytes so that
/// a parse writes it out in a few stores and a view stays small (DESIGN.md principle 4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TransactionFrame {
    /// Legacy, v0 or v1.
    pub(crate) version: TransactionVersion,
    /// Signatures present (legacy, v0: the count before them; v1: `num_required_signatures`).
    pub(crate) num_signatures: u8,
    /// `num_required_signatures`, `num_readonly_signed_accounts`,
    /// `num_readonly_unsigned_accounts` and the number of static account keys, in wire order
    /// (legacy and v0 keep them in four consecutive bytes, so the parser copies them in one word).
    pub(crate) header: [u8; 4],
    /// Number of address table lookups (0 unless v0).
    pub(crate) num_address_table_lookups: u8,
    /// Number of instructions.
    pub(crate) num_instructions: u16,
    /// Offset of the first instruction (legacy, v0) or of the first instruction header (v1).
    pub(crate) instructions_offset: u16,
    /// Offset of the first address table lookup (0 unless v0).
    pub(crate) address_table_lookups_offset: u16,
    /// Writable indexes across all lookups.
    pub(crate) total_writable_lookup_accounts: u16,
    /// Readonly indexes across all lookups.
    pub(crate) total_readonly_lookup_accounts: u16,
    /// Bytes the transaction occupies from the start of the buffer.
    pub(crate) data_length: u16,
    /// The v1 config mask (0 for legacy and v0).
    pub(crate) config_mask: u32,
}

/// Index of `num_required_signatures` in [`TransactionFrame::header`].
pub(crate) const NUM_REQUIRED_SIGNATURES: usize = 0;
/// Index of `num_readonly_signed_accounts` in [`TransactionFrame::header`].
pub(crate) const NUM_READONLY_SIGNED_ACCOUNTS: usize = 1;
/// Index of `num_readonly_unsigned_accounts` in [`TransactionFrame::header`].
pub(crate) const NUM_READONLY_UNSIGNED_ACCOUNTS: usize = 2;
/// Index of the static account key count in [`TransactionFrame::header`].
pub(crate) const NUM_STATIC_ACCOUNTS: usize = 3;

const _: () = assert!(core::mem::size_of::<TransactionFrame>() == 24);

/// Offset of the v1 config mask (after the version byte and the three header bytes).
const V1_MASK_OFFSET: usize = 4;
/// Offset of the v1 lifetime specifier (after the mask).
const V1_RECENT_BLOCKHASH_OFFSET: usize = V1_MASK_OFFSET + 4;
/// Offset of the v1 instruction and address counts (after the lifetime specifier).
const V1_COUNTS_OFFSET: usize = V1_RECENT_BLOCKHASH_OFFSET + HASH_BYTES;

impl TransactionFrame {
    /// The fast path (`fast_frame::try_new`): a frame, or `None` when the checked path must
    /// decide. Debug builds check every frame it returns against the checked path.
    #[inline(always)]
    pub(crate) fn try_new_fast<const SANITIZE: bool, const EXACT: bool>(
        bytes: &[u8],
        config: &SanitizeConfig,
    ) -> Option<Self> {
        let frame = fast_frame::try_new::<SANITIZE, EXACT>(bytes, config);
        if cfg!(debug_assertions) {
            if let Some(frame) = frame {
                if SANITIZE {
                    assert_eq!(
                        Self::try_new_checked_sanitized::<EXACT>(bytes, config),
                        Ok(frame)
                    );
                } else {
                    assert_eq!(Self::try_new_checked_unsanitized::<EXACT>(bytes), Ok(frame));
                }
            }
        }
        frame
    }

    /// The checked path without sanitization, out of line: it runs for errors and uncommon
    /// shapes only.
    #[cold]
    #[inline(never)]
    pub(crate) fn try_new_checked_unsanitized<const EXACT: bool>(
        bytes: &[u8],
    ) -> Result<Self, ParseError> {
        Self::try_new_checked::<false, EXACT, ParseError>(bytes, NoCheck)
    }

    /// The checked path with sanitization, out of line.
    #[cold]
    #[inline(never)]
    pub(crate) fn try_new_checked_sanitized<const EXACT: bool>(
        bytes: &[u8],
        config: &SanitizeConfig,
    ) -> Result<Self, TransactionViewError> {
        Self::try_new_checked::<true, EXACT, TransactionViewError>(bytes, config)
    }

    /// Frames the transaction at the start of `bytes` with every rule checked and every error
    /// exact (with `EXACT`, it must fill them: trailing bytes are an error, checked after all other
    /// parse rules as Agave does), then runs `check` on the finished frame with the instructions'
    /// summary (with `SUMMARIZE`; else `InstructionsSummary::EMPTY`) and the first empty lookup.
    /// This is the reference path; `fast_frame` answers the common shapes first.
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
        first_empty_lookup: Option<u8>,
        check: impl FrameCheck<E>,
    ) -> Result<Self, E> {
        let end = usize::from(self.data_length);
        if EXACT && end != bytes.len() {
            return Err(trailing_bytes(end, bytes.len() - end).into());
        }
        check.check(&self, summary, first_empty_lookup, bytes)?;
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
        advance(bytes, &mut offset, HASH_BYTES, Field::RecentBlockhash)?;
        let (instructions, summary) =
            InstructionsFrame::try_new_for_legacy_and_v0::<SUMMARIZE>(bytes, &mut offset)?;
        let address_table_lookups = match message_header.version {
            TransactionVersion::V0 => AddressTableLookupFrame::try_new(bytes, &mut offset)?,
            _ => AddressTableLookupFrame::NONE,
        };
        let frame = Self {
            version: message_header.version,
            num_signatures: signature.num_signatures,
            header: [
                message_header.num_required_signatures,
                message_header.num_readonly_signed_accounts,
                message_header.num_readonly_unsigned_accounts,
                static_account_keys.num_static_accounts,
            ],
            num_address_table_lookups: address_table_lookups.num_address_table_lookups,
            num_instructions: instructions.num_instructions,
            instructions_offset: instructions.offset,
            address_table_lookups_offset: address_table_lookups.offset,
            total_writable_lookup_accounts: address_table_lookups.total_writable_lookup_accounts,
            total_readonly_lookup_accounts: address_table_lookups.total_readonly_lookup_accounts,
            data_length: end_offset(offset)?,
            config_mask: 0,
        };
        frame.finish::<EXACT, E>(
            bytes,
            &summary,
            address_table_lookups.first_empty_lookup,
            check,
        )
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
        let num_instructions = prefix[V1_COUNTS_OFFSET];
        let num_addresses = prefix[V1_COUNTS_OFFSET + 1];
        let mut offset = V1_FIXED_PREFIX_BYTES;
        advance(
            bytes,
            &mut offset,
            usize::from(num_addresses) * ADDRESS_BYTES,
            Field::StaticAccountKeys,
        )?;
        let config = TransactionConfigFrame::try_new(bytes, V1_MASK_OFFSET, mask, &mut offset)?;
        let (instructions, summary) =
            InstructionsFrame::try_new_for_v1::<SUMMARIZE>(bytes, &mut offset, num_instructions)?;
        advance(
            bytes,
            &mut offset,
            usize::from(num_required_signatures) * SIGNATURE_BYTES,
            Field::Signatures,
        )?;
        let data_length = end_offset(offset)?;
        let frame = Self {
            version: TransactionVersion::V1,
            num_signatures: num_required_signatures,
            header: [num_required_signatures, prefix[2], prefix[3], num_addresses],
            num_address_table_lookups: 0,
            num_instructions: instructions.num_instructions,
            instructions_offset: instructions.offset,
            address_table_lookups_offset: 0,
            total_writable_lookup_accounts: 0,
            total_readonly_lookup_accounts: 0,
            data_length,
            config_mask: config.mask,
        };
        frame.finish::<EXACT, E>(bytes, &summary, None, check)
    }

    /// `num_required_signatures` from the header.
    #[inline(always)]
    pub(crate) fn num_required_signatures(&self) -> u8 {
        self.header[NUM_REQUIRED_SIGNATURES]
    }

    /// `num_readonly_signed_accounts` from the header.
    #[inline(always)]
    pub(crate) fn num_readonly_signed_accounts(&self) -> u8 {
        self.header[NUM_READONLY_SIGNED_ACCOUNTS]
    }

    /// `num_readonly_unsigned_accounts` from the header.
    #[inline(always)]
    pub(crate) fn num_readonly_unsigned_accounts(&self) -> u8 {
        self.header[NUM_READONLY_UNSIGNED_ACCOUNTS]
    }

    /// Number of static account keys (v1: addresses).
    #[inline(always)]
    pub(crate) fn num_static_accounts(&self) -> u8 {
        self.header[NUM_STATIC_ACCOUNTS]
    }

    /// Offset of the first message byte: after the signatures for legacy and v0, 0 for v1.
    #[inline(always)]
    pub(crate) fn message_offset(&self) -> usize {
        match self.version {
            TransactionVersion::V1 => 0,
            _ => 1 + usize::from(self.num_signatures) * SIGNATURE_BYTES,
        }
    }

    /// Offset of the first signature: after the count for legacy and v0, at the end for v1.
    #[inline(always)]
    pub(crate) fn signatures_offset(&self) -> usize {
        match self.version {
            TransactionVersion::V1 => {
                usize::from(self.data_length) - usize::from(self.num_signatures) * SIGNATURE_BYTES
            }
            _ => 1,
        }
    }

    /// Offset of the first static account key: after the (version byte,) header and count for
    /// legacy and v0, after the fixed prefix for v1.
    #[inline(always)]
    pub(crate) fn static_account_keys_offset(&self) -> usize {
        match self.version {
            TransactionVersion::Legacy => self.message_offset() + 3 + 1,
            TransactionVersion::V0 => self.message_offset() + 1 + 3 + 1,
            TransactionVersion::V1 => V1_FIXED_PREFIX_BYTES,
        }
    }

    /// Offset of the recent blockhash (v1: lifetime specifier).
    #[inline(always)]
    pub(crate) fn recent_blockhash_offset(&self) -> usize {
        match self.version {
            TransactionVersion::V1 => V1_RECENT_BLOCKHASH_OFFSET,
            _ => {
                self.static_account_keys_offset()
                    + usize::from(self.num_static_accounts()) * ADDRESS_BYTES
            }
        }
    }

    /// The instructions' section frame.
    #[inline(always)]
    pub(crate) fn instructions(&self) -> InstructionsFrame {
        let layout = match self.version {
            TransactionVersion::V1 => InstructionLayout::FixedHeaders {
                payloads_offset: self.instructions_offset
                    + self.num_instructions * V1_INSTRUCTION_HEADER_BYTES as u16,
            },
            _ => InstructionLayout::Compact,
        };
        InstructionsFrame {
            num_instructions: self.num_instructions,
            offset: self.instructions_offset,
            layout,
        }
    }

    /// An iterator over the lookups in `bytes` (the bytes this frame was parsed from).
    #[inline(always)]
    pub(crate) fn address_table_lookups_iter<'a>(
        &self,
        bytes: &'a [u8],
    ) -> AddressTableLookupIterator<'a> {
        AddressTableLookupIterator::new(
            bytes,
            usize::from(self.address_table_lookups_offset),
            self.num_address_table_lookups,
        )
    }

    /// The v1 config frame; `None` for legacy and v0.
    #[inline(always)]
    pub(crate) fn config(&self) -> Option<TransactionConfigFrame> {
        match self.version {
            TransactionVersion::V1 => Some(TransactionConfigFrame {
                mask: self.config_mask,
                values_offset: (V1_FIXED_PREFIX_BYTES
                    + usize::from(self.num_static_accounts()) * ADDRESS_BYTES)
                    as u16,
            }),
            _ => None,
        }
    }

    /// The signed message bytes as `[start, end)`: after the signatures for legacy and v0, before
    /// them for v1.
    #[inline(always)]
    pub(crate) fn message_range(&self) -> (usize, usize) {
        match self.version {
            TransactionVersion::V1 => (0, self.signatures_offset()),
            _ => (self.message_offset(), usize::from(self.data_length)),
        }
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
