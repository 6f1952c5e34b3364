//! Views: a transaction's bytes (borrowed or owned) paired with its frame, with accessors that
//! borrow from the bytes. Whether the transaction has been sanitized is part of the type
//! (`TransactionView<D, false>` / `TransactionView<D, true>`).
//!
//! Callers guarantee nothing beyond handing over the bytes: `D: AsRef<[u8]>` must return the same
//! bytes each time it is asked (every std container does). Nothing here allocates or copies.

use crate::address_table_lookup_frame::{AddressTableLookupFrame, AddressTableLookupIterator};
use crate::error::{SanitizeError, TransactionViewError};
use crate::instructions_frame::{InstructionLayout, InstructionsIterator, InstructionsSummary};
use crate::limits::{ADDRESS_BYTES, HASH_BYTES, SIGNATURE_BYTES};
use crate::sanitize::{sanitize, SanitizeConfig};
use crate::transaction_config_frame::TransactionConfigView;
use crate::transaction_frame::TransactionFrame;
use crate::{Address, Hash, ParseError, Signature, TransactionVersion};
use core::fmt;

/// A transaction not (yet) sanitized: framed, so every accessor is in bounds, but its counts and
/// indexes are unchecked against each other.
pub type UnsanitizedTransactionView<D> = TransactionView<D, false>;
/// A transaction that passed sanitization.
pub type SanitizedTransactionView<D> = TransactionView<D, true>;

/// A transaction's bytes and its frame. `D` is any byte container: `&[u8]`, `Vec<u8>`,
/// `Box<[u8]>`, `Arc<[u8]>`, ...
#[derive(Clone)]
pub struct TransactionView<D, const SANITIZED: bool> {
    data: D,
    frame: TransactionFrame,
}

impl<D: AsRef<[u8]>> TransactionView<D, false> {
    /// Frames `data`, which must hold exactly one transaction and nothing after it.
    // Always inlined, as `try_new_sanitized`: see there.
    #[inline(always)]
    pub fn try_new_unsanitized(data: D) -> Result<Self, ParseError> {
        // Each branch builds the whole result, so the fast one writes the view in place rather
        // than a frame that is then moved next to the data (about 30 instructions per call).
        match TransactionFrame::try_new_fast::<false, true>(data.as_ref(), &SanitizeConfig::MAINNET)
        {
            Some(frame) => Ok(Self { data, frame }),
            None => Self::try_new_unsanitized_checked::<true>(data).map(|(view, _)| view),
        }
    }

    /// The checked path of the unsanitized constructors (with `EXACT`, the buffer must hold
    /// exactly the transaction), out of line.
    #[cold]
    #[inline(never)]
    fn try_new_unsanitized_checked<const EXACT: bool>(
        data: D,
    ) -> Result<(Self, usize), ParseError> {
        let frame = TransactionFrame::try_new_checked_unsanitized::<EXACT>(data.as_ref())?;
        let consumed_bytes = usize::from(frame.data_length);
        Ok((Self { data, frame }, consumed_bytes))
    }

    /// Frames the transaction at the start of `data`, returning the view and the number of bytes
    /// it occupies (where the next item in the buffer starts). The view's [`Self::data`] ends there.
    #[inline]
    pub fn try_new_unsanitized_from_prefix(data: D) -> Result<(Self, usize), ParseError> {
        match TransactionFrame::try_new_fast::<false, false>(
            data.as_ref(),
            &SanitizeConfig::MAINNET,
        ) {
            Some(frame) => {
                let consumed_bytes = usize::from(frame.data_length);
                Ok((Self { data, frame }, consumed_bytes))
            }
            None => Self::try_new_unsanitized_checked::<false>(data),
        }
    }

    /// Checks the sanitization rules without consuming the view. Walks the instructions once
    /// (unsanitized parsing does not gather what their rules need).
    #[inline]
    pub fn check_sanitized(&self, config: &SanitizeConfig) -> Result<(), SanitizeError> {
        let bytes = self.data.as_ref();
        let frame = &self.frame;
        let summary = InstructionsSummary::of(&frame.instructions(), bytes);
        let first_empty_lookup = AddressTableLookupFrame::first_empty_lookup_of(
            bytes,
            usize::from(frame.address_table_lookups_offset),
            frame.num_address_table_lookups,
        );
        sanitize(frame, &summary, first_empty_lookup, bytes, config)
    }

    /// Sanitizes the view. On failure the view is dropped, as Agave's `sanitize` does; use
    /// [`Self::check_sanitized`] first to keep it.
    #[inline]
    pub fn sanitize(
        self,
        config: &SanitizeConfig,
    ) -> Result<SanitizedTransactionView<D>, SanitizeError> {
        self.check_sanitized(config)?;
        Ok(TransactionView {
            data: self.data,
            frame: self.frame,
        })
    }
}

impl<D: AsRef<[u8]>> TransactionView<D, true> {
    /// Frames and sanitizes `data`, which must hold exactly one transaction.
    // Always inlined: with `#[inline]` the compiler kept this constructor out of line in the
    // criterion benchmark (not in the profiling driver), and the call, the saved registers and
    // the result written through a pointer cost about a fifth of a mainnet transaction's parse.
    // The fast path is a few hundred instructions of code; the checked path stays out of line.
    #[inline(always)]
    pub fn try_new_sanitized(
        data: D,
        config: &SanitizeConfig,
    ) -> Result<Self, TransactionViewError> {
        match TransactionFrame::try_new_fast::<true, true>(data.as_ref(), config) {
            Some(frame) => Ok(Self { data, frame }),
            None => Self::try_new_sanitized_checked::<true>(data, config).map(|(view, _)| view),
        }
    }

    /// The checked path of the sanitized constructors (with `EXACT`, the buffer must hold exactly
    /// the transaction), out of line.
    #[cold]
    #[inline(never)]
    fn try_new_sanitized_checked<const EXACT: bool>(
        data: D,
        config: &SanitizeConfig,
    ) -> Result<(Self, usize), TransactionViewError> {
        let frame = TransactionFrame::try_new_checked_sanitized::<EXACT>(data.as_ref(), config)?;
        let consumed_bytes = usize::from(frame.data_length);
        Ok((Self { data, frame }, consumed_bytes))
    }

    /// Frames and sanitizes the transaction at the start of `data`, returning the view and the
    /// number of bytes it occupies.
    #[inline]
    pub fn try_new_sanitized_from_prefix(
        data: D,
        config: &SanitizeConfig,
    ) -> Result<(Self, usize), TransactionViewError> {
        match TransactionFrame::try_new_fast::<true, false>(data.as_ref(), config) {
            Some(frame) => {
                let consumed_bytes = usize::from(frame.data_length);
                Ok((Self { data, frame }, consumed_bytes))
            }
            None => Self::try_new_sanitized_checked::<false>(data, config),
        }
    }

    /// Total accounts: static keys plus looked-up ones (at most 256 once sanitized).
    #[inline]
    pub fn total_num_accounts(&self) -> u16 {
        u16::from(self.num_static_account_keys())
            + self.total_writable_lookup_accounts()
            + self.total_readonly_lookup_accounts()
    }

    /// Accounts the transaction asks to lock writable: static keys less both readonly groups,
    /// plus writable lookups (before demotion of reserved keys and programs).
    #[inline]
    pub fn num_requested_write_locks(&self) -> u64 {
        let static_writable = u16::from(self.num_static_account_keys())
            - u16::from(self.frame.num_readonly_signed_accounts())
            - u16::from(self.frame.num_readonly_unsigned_accounts());
        u64::from(static_writable + self.total_writable_lookup_accounts())
    }

    /// The fee payer: the first static key.
    #[inline]
    pub fn fee_payer(&self) -> &Address {
        &self.static_account_keys()[0]
    }

    /// Instructions paired with their program's address.
    #[inline]
    pub fn program_instructions_iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (&Address, crate::Instruction<'_>)> + Clone {
        let keys = self.static_account_keys();
        self.instructions_iter().map(move |instruction| {
            (
                &keys[usize::from(instruction.program_id_index)],
                instruction,
            )
        })
    }
}

impl<D: AsRef<[u8]>, const SANITIZED: bool> TransactionView<D, SANITIZED> {
    /// The transaction's bytes (without any trailing bytes of the buffer).
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.data.as_ref()[..usize::from(self.frame.data_length)]
    }

    /// The signed message bytes: everything after the signatures (legacy, v0) or before them (v1).
    #[inline]
    pub fn message_data(&self) -> &[u8] {
        let (start, end) = self.frame.message_range();
        &self.data.as_ref()[start..end]
    }

    /// The container the view was made from.
    #[inline]
    pub fn inner_data(&self) -> &D {
        &self.data
    }

    /// Gives the container back.
    #[inline]
    pub fn into_inner_data(self) -> D {
        self.data
    }

    /// Legacy, v0 or v1.
    #[inline]
    pub fn version(&self) -> TransactionVersion {
        self.frame.version
    }

    /// Number of signatures present.
    #[inline]
    pub fn num_signatures(&self) -> u8 {
        self.frame.num_signatures
    }

    /// `num_required_signatures` from the header.
    #[inline]
    pub fn num_required_signatures(&self) -> u8 {
        self.frame.num_required_signatures()
    }

    /// `num_readonly_signed_accounts` from the header.
    #[inline]
    pub fn num_readonly_signed_static_accounts(&self) -> u8 {
        self.frame.num_readonly_signed_accounts()
    }

    /// `num_readonly_unsigned_accounts` from the header.
    #[inline]
    pub fn num_readonly_unsigned_static_accounts(&self) -> u8 {
        self.frame.num_readonly_unsigned_accounts()
    }

    /// Number of static account keys (v1: addresses).
    #[inline]
    pub fn num_static_account_keys(&self) -> u8 {
        self.frame.num_static_accounts()
    }

    /// Number of instructions.
    #[inline]
    pub fn num_instructions(&self) -> u16 {
        self.frame.num_instructions
    }

    /// Number of address table lookups (0 unless v0).
    #[inline]
    pub fn num_address_table_lookups(&self) -> u8 {
        self.frame.num_address_table_lookups
    }

    /// Writable indexes across all lookups.
    #[inline]
    pub fn total_writable_lookup_accounts(&self) -> u16 {
        self.frame.total_writable_lookup_accounts
    }

    /// Readonly indexes across all lookups.
    #[inline]
    pub fn total_readonly_lookup_accounts(&self) -> u16 {
        self.frame.total_readonly_lookup_accounts
    }

    /// The signatures.
    #[inline]
    pub fn signatures(&self) -> &[Signature] {
        let start = self.frame.signatures_offset();
        let length = usize::from(self.frame.num_signatures) * SIGNATURE_BYTES;
        self.data.as_ref()[start..start + length].as_chunks().0
    }

    /// The static account keys (v1: addresses).
    #[inline]
    pub fn static_account_keys(&self) -> &[Address] {
        let start = self.frame.static_account_keys_offset();
        let length = usize::from(self.frame.num_static_accounts()) * ADDRESS_BYTES;
        self.data.as_ref()[start..start + length].as_chunks().0
    }

    /// The recent blockhash (v1: lifetime specifier).
    #[inline]
    pub fn recent_blockhash(&self) -> &Hash {
        let start = self.frame.recent_blockhash_offset();
        self.data.as_ref()[start..]
            .first_chunk::<HASH_BYTES>()
            .expect("the frame checked the blockhash range")
    }

    /// The instructions, in order.
    #[inline]
    pub fn instructions_iter(&self) -> InstructionsIterator<'_> {
        self.frame.instructions().iter(self.data.as_ref())
    }

    /// Instruction `index`'s program id index, account count and data length, in O(1) for v1
    /// (fixed-size headers); `None` for legacy and v0, whose instructions must be walked, or when
    /// `index` is out of range.
    #[inline]
    pub fn v1_instruction_header(&self, index: u8) -> Option<(u8, u8, u16)> {
        let instructions = &self.frame.instructions();
        if u16::from(index) >= instructions.num_instructions
            || instructions.layout == InstructionLayout::Compact
        {
            return None;
        }
        let start = usize::from(instructions.offset) + usize::from(index) * 4;
        let header = self.data.as_ref().get(start..start + 4)?;
        Some((
            header[0],
            header[1],
            u16::from_le_bytes([header[2], header[3]]),
        ))
    }

    /// The address table lookups, in order (none unless v0).
    #[inline]
    pub fn address_table_lookup_iter(&self) -> AddressTableLookupIterator<'_> {
        self.frame.address_table_lookups_iter(self.data.as_ref())
    }

    /// The v1 config values; `None` for legacy and v0.
    #[inline]
    pub fn transaction_config(&self) -> Option<TransactionConfigView<'_>> {
        self.frame.config().map(|frame| TransactionConfigView {
            frame,
            bytes: self.data.as_ref(),
        })
    }

    /// Whether account `index` signs the transaction.
    #[inline]
    pub fn is_signer(&self, index: usize) -> bool {
        index < usize::from(self.num_required_signatures())
    }

    /// Whether static key `index` is the program of some instruction.
    #[inline]
    pub fn is_invoked(&self, index: usize) -> bool {
        self.instructions_iter()
            .any(|instruction| usize::from(instruction.program_id_index) == index)
    }
}

impl<D: AsRef<[u8]>, const SANITIZED: bool> fmt::Debug for TransactionView<D, SANITIZED> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("TransactionView")
            .field("sanitized", &SANITIZED)
            .field("version", &self.version())
            .field("signatures", &self.signatures())
            .field("static_account_keys", &self.static_account_keys())
            .field("recent_blockhash", &self.recent_blockhash())
            .field(
                "instructions",
                &self.instructions_iter().collect::<Vec<_>>(),
            )
            .field(
                "address_table_lookups",
                &self.address_table_lookup_iter().collect::<Vec<_>>(),
            )
            .finish()
    }
}
