//! Sanitization: the rules that make a well-framed transaction acceptable, exactly as
//! `agave-transaction-view` 6.1.0 applies them (`sanitize.rs` there), in the same order.
//!
//! Spec: `solana-transaction-format.md`, "Sanitization"; SIMD-0160 (instruction limit), SIMD-0406
//! (accounts per instruction), SIMD-0385 (v1 limits, heap size). Like Agave, this does not check
//! duplicate addresses (Agave leaves that to account locking), not even for v1 where SIMD-0385
//! calls them a sanitization failure.
//!
//! The frame already holds every fact the rules need (counts, lookup totals, and the
//! `InstructionsSummary` gathered while instructions were bounds-checked), so sanitizing is a
//! constant number of comparisons. Only when an instruction or lookup rule fails does it walk the
//! instructions again, to name the first offending one.

use crate::error::SanitizeError;
use crate::error::TransactionViewError;
use crate::instructions_frame::InstructionsSummary;
use crate::limits::{
    MAX_ACCOUNTS_LEGACY_AND_V0, MAX_ACCOUNTS_V1, MAX_SIGNATURES_PER_PACKET,
    MAX_TRANSACTION_SIZE_V1, PACKET_DATA_SIZE,
};
use crate::transaction_config_frame::REQUESTED_HEAP_SIZE_BIT;
use crate::transaction_frame::{FrameCheck, TransactionFrame};
use crate::TransactionVersion;

/// Protocol limits that sanitization enforces, supplied by the caller (they are consensus
/// parameters that change with feature activations). Mirrors `agave_transaction_view::sanitize::
/// SanitizeConfig` field for field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SanitizeConfig {
    /// Smallest v1 requested heap size in bytes (inclusive).
    pub min_requested_heap_size: u32,
    /// Largest v1 requested heap size in bytes (inclusive).
    pub max_requested_heap_size: u32,
    /// Most top-level instructions (SIMD-0160).
    pub max_instructions: usize,
    /// Most accounts in one instruction (SIMD-0406).
    pub max_accounts_per_instruction: usize,
}

impl SanitizeConfig {
    /// Today's mainnet policy: heap size 32 KiB..=256 KiB (`MIN_HEAP_FRAME_BYTES`,
    /// `MAX_HEAP_FRAME_BYTES`), 64 instructions (SIMD-0160), 255 accounts per instruction
    /// (SIMD-0406) — the values Agave's own benchmarks use.
    pub const MAINNET: Self = Self {
        min_requested_heap_size: 32 * 1024,
        max_requested_heap_size: 256 * 1024,
        max_instructions: 64,
        max_accounts_per_instruction: 255,
    };
}

impl Default for SanitizeConfig {
    fn default() -> Self {
        Self::MAINNET
    }
}

/// Sanitizing as the check run inside the frame constructor.
impl FrameCheck<TransactionViewError> for &SanitizeConfig {
    #[inline(always)]
    fn check(
        self,
        frame: &TransactionFrame,
        summary: &InstructionsSummary,
        first_empty_lookup: Option<u8>,
        bytes: &[u8],
    ) -> Result<(), TransactionViewError> {
        Ok(sanitize(frame, summary, first_empty_lookup, bytes, self)?)
    }
}

/// Checks `frame` (parsed from `bytes`, with the instructions `summary` and the index of its first
/// lookup without any index) against the sanitization rules.
#[inline(always)]
pub(crate) fn sanitize(
    frame: &TransactionFrame,
    summary: &InstructionsSummary,
    first_empty_lookup: Option<u8>,
    bytes: &[u8],
    config: &SanitizeConfig,
) -> Result<(), SanitizeError> {
    let version = frame.version;
    let num_required_signatures = frame.num_required_signatures();
    let num_readonly_signed_accounts = frame.num_readonly_signed_accounts();
    let num_readonly_unsigned_accounts = frame.num_readonly_unsigned_accounts();
    let num_static_account_keys = frame.num_static_accounts();
    let num_signatures = frame.num_signatures;

    // Transaction size.
    let max_bytes = match version {
        TransactionVersion::V1 => MAX_TRANSACTION_SIZE_V1,
        _ => PACKET_DATA_SIZE,
    };
    let size_bytes = usize::from(frame.data_length);
    if size_bytes > max_bytes {
        return Err(SanitizeError::TransactionTooLarge {
            size_bytes,
            max_bytes,
        });
    }

    // Message header. Agave compares `num_readonly_unsigned_accounts` with a wrapping u8
    // difference; when there are fewer static keys than required signatures the wrapped value is
    // large, this rule passes, and the signature rule below rejects the transaction instead.
    if num_required_signatures == 0 {
        return Err(SanitizeError::NoRequiredSignatures);
    }
    if num_readonly_signed_accounts >= num_required_signatures {
        return Err(SanitizeError::FeePayerReadonly {
            num_readonly_signed_accounts,
            num_required_signatures,
        });
    }
    if num_readonly_unsigned_accounts
        > num_static_account_keys.wrapping_sub(num_required_signatures)
    {
        return Err(SanitizeError::ReadonlyUnsignedOverlap {
            num_readonly_unsigned_accounts,
            num_static_account_keys,
        });
    }

    // v1 config.
    if let Some(config_frame) = &frame.config() {
        if let Some(requested_bytes) = config_frame.u32_value(bytes, REQUESTED_HEAP_SIZE_BIT) {
            if !(config.min_requested_heap_size..=config.max_requested_heap_size)
                .contains(&requested_bytes)
                || requested_bytes % 1024 != 0
            {
                return Err(SanitizeError::InvalidRequestedHeapSize { requested_bytes });
            }
        }
    }

    // Signatures.
    if num_signatures != num_required_signatures {
        return Err(SanitizeError::SignatureCountMismatch {
            num_signatures,
            num_required_signatures,
        });
    }
    if num_signatures > MAX_SIGNATURES_PER_PACKET {
        return Err(SanitizeError::TooManySignatures { num_signatures });
    }
    if num_static_account_keys < num_signatures {
        return Err(SanitizeError::NotEnoughStaticAccountKeys {
            num_static_account_keys,
            num_signatures,
        });
    }

    // Accounts.
    let max_accounts = match version {
        TransactionVersion::V1 => MAX_ACCOUNTS_V1,
        _ => MAX_ACCOUNTS_LEGACY_AND_V0,
    };
    let total_accounts = u16::from(num_static_account_keys)
        .saturating_add(frame.total_writable_lookup_accounts)
        .saturating_add(frame.total_readonly_lookup_accounts);
    if total_accounts > max_accounts {
        return Err(SanitizeError::TooManyAccounts {
            total_accounts,
            max_accounts,
        });
    }

    // Instructions. Here `num_static_account_keys >= num_signatures >= 1` and
    // `1 <= total_accounts <= 256`.
    if usize::from(frame.num_instructions) > config.max_instructions {
        return Err(SanitizeError::TooManyInstructions {
            num_instructions: frame.num_instructions,
        });
    }
    if summary.max_program_id_index >= num_static_account_keys
        || summary.min_program_id_index == 0
        || u16::from(summary.max_account_index) >= total_accounts
        || usize::from(summary.max_num_accounts) > config.max_accounts_per_instruction
    {
        return Err(first_instruction_error(
            frame,
            bytes,
            config,
            num_static_account_keys,
            total_accounts,
        ));
    }

    // Address table lookups.
    if let Some(lookup) = first_empty_lookup {
        return Err(SanitizeError::EmptyAddressTableLookup { lookup });
    }
    Ok(())
}

/// Walks the instructions to find the first broken rule, in Agave's per-instruction order. Only
/// called once the summary shows that one exists.
#[cold]
#[inline(never)]
fn first_instruction_error(
    frame: &TransactionFrame,
    bytes: &[u8],
    config: &SanitizeConfig,
    num_static_account_keys: u8,
    total_accounts: u16,
) -> SanitizeError {
    for (index, instruction) in frame.instructions().iter(bytes).enumerate() {
        let instruction_index = index as u16;
        if instruction.program_id_index >= num_static_account_keys {
            return SanitizeError::ProgramIdIndexOutOfRange {
                instruction: instruction_index,
                program_id_index: instruction.program_id_index,
            };
        }
        if instruction.program_id_index == 0 {
            return SanitizeError::ProgramIdIsFeePayer {
                instruction: instruction_index,
            };
        }
        if let Some(&account_index) = instruction
            .accounts
            .iter()
            .find(|&&account_index| u16::from(account_index) >= total_accounts)
        {
            return SanitizeError::AccountIndexOutOfRange {
                instruction: instruction_index,
                account_index,
            };
        }
        if instruction.accounts.len() > config.max_accounts_per_instruction {
            return SanitizeError::TooManyInstructionAccounts {
                instruction: instruction_index,
                num_accounts: instruction.accounts.len() as u16,
            };
        }
    }
    unreachable!("the instructions summary reported a broken rule that no instruction breaks")
}
