//! The compute budget a transaction asks for, read in one walk over its instructions, with
//! Agave's defaults and error rules; the same walk gathers what the cost model and the fee need
//! (precompile signature counts, instruction data length).
//!
//! Rules (legacy and v0; `solana-compute-budget-instruction` 4.0.0,
//! `compute_budget_instruction_details.rs`): an instruction of the ComputeBudget program is read as
//! a borsh enum without requiring that its data be consumed (`try_from_slice_unchecked`):
//! `1` RequestHeapFrame(u32), `2` SetComputeUnitLimit(u32), `3` SetComputeUnitPrice(u64),
//! `4` SetLoadedAccountsDataSizeLimit(u32); anything else, or data too short, is
//! `InvalidInstructionData` at that instruction, and a second instruction of a kind already seen is
//! `DuplicateInstruction` at the second — the first such error in instruction order wins. Then: a
//! requested heap frame outside 32..=256 KiB or not a multiple of 1 KiB is `InvalidInstructionData`
//! at its instruction; a loaded-accounts data limit of 0 is `InvalidLoadedAccountsDataSizeLimit`.
//! Defaults: the unit limit is 3,000 per builtin instruction plus 200,000 per other instruction,
//! capped at 1.4 M like a requested one; price 0; heap 32 KiB; loaded data 64 MiB (requests above
//! it are capped).
//!
//! v1 (SIMD-0385, "TransactionConfigMask"): the config values replace the instructions, which are
//! ignored for configuration even when invalid; an absent value is the minimum: priority fee 0,
//! unit limit 0, loaded data 0, heap 32 KiB. The priority fee is given in lamports, not per unit.

use crate::limits::{
    DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT, HEAP_FRAME_GRANULARITY_BYTES,
    MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT, MAX_COMPUTE_UNIT_LIMIT, MAX_HEAP_FRAME_BYTES,
    MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, MICRO_LAMPORTS_PER_LAMPORT, MIN_HEAP_FRAME_BYTES,
};
use crate::program_id;
use core::fmt;
use kestrel_txview::{SanitizedTransactionView, TransactionVersion};

/// Why a transaction's compute-budget request is invalid (Agave's `TransactionError` variants).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ComputeBudgetError {
    /// `InstructionError(index, InvalidInstructionData)`: undecodable data, an unknown request, or
    /// an invalid heap frame size.
    InvalidInstructionData {
        /// The instruction's index in the transaction.
        instruction_index: u8,
    },
    /// `DuplicateInstruction(index)`: a second request of the same kind.
    DuplicateInstruction {
        /// The second instruction's index.
        instruction_index: u8,
    },
    /// `InvalidLoadedAccountsDataSizeLimit`: a loaded-accounts data limit of 0.
    InvalidLoadedAccountsDataSizeLimit,
}

impl fmt::Display for ComputeBudgetError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidInstructionData { instruction_index } => write!(
                formatter,
                "instruction {instruction_index}: invalid compute budget instruction data"
            ),
            Self::DuplicateInstruction { instruction_index } => write!(
                formatter,
                "instruction {instruction_index}: duplicate compute budget instruction"
            ),
            Self::InvalidLoadedAccountsDataSizeLimit => {
                write!(formatter, "loaded accounts data size limit is 0")
            }
        }
    }
}

impl std::error::Error for ComputeBudgetError {}

/// The budget a transaction runs with.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ComputeBudgetLimits {
    /// Heap frame in bytes.
    pub heap_bytes: u32,
    /// Compute-unit limit (at most 1.4 M).
    pub compute_unit_limit: u32,
    /// Compute-unit price in micro-lamports (legacy, v0; 0 for v1).
    pub compute_unit_price_micro_lamports: u64,
    /// Loaded-accounts data size limit in bytes.
    pub loaded_accounts_data_size_bytes: u32,
    /// Priority fee in lamports: price × limit rounded up (legacy, v0), the config value (v1).
    pub priority_fee_lamports: u64,
}

/// Signatures checked by precompile instructions (the first data byte of each).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PrecompileSignatureCounts {
    /// ed25519 precompile signatures.
    pub ed25519: u64,
    /// secp256k1 precompile signatures.
    pub secp256k1: u64,
    /// secp256r1 precompile signatures.
    pub secp256r1: u64,
}

/// What one walk over the instructions found.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct InstructionDetails {
    /// The compute budget.
    pub limits: ComputeBudgetLimits,
    /// Precompile signature counts (fee and cost).
    pub precompile_signatures: PrecompileSignatureCounts,
    /// Instruction data bytes summed, saturating at u16 (Agave's `instruction_data_len`).
    pub instruction_data_bytes: u16,
}

/// Requests found so far, each with the index of its instruction.
#[derive(Default)]
struct Requests {
    heap_bytes: Option<(u8, u32)>,
    compute_unit_limit: Option<u32>,
    compute_unit_price: Option<u64>,
    loaded_accounts_data_size: Option<u32>,
}

impl InstructionDetails {
    /// Walks `view`'s instructions once.
    pub fn try_new<D: AsRef<[u8]>>(
        view: &SanitizedTransactionView<D>,
    ) -> Result<Self, ComputeBudgetError> {
        let mut requests = Requests::default();
        let mut precompile_signatures = PrecompileSignatureCounts::default();
        let mut instruction_data_bytes = 0u16;
        let mut num_builtin = 0u32;
        let mut num_non_builtin = 0u32;
        let is_v1 = view.version() == TransactionVersion::V1;
        for (index, (program, instruction)) in view.program_instructions_iter().enumerate() {
            // At most 64 instructions once sanitized (SIMD-0160), so the index fits u8 as in Agave.
            let index = index as u8;
            let data = instruction.data;
            instruction_data_bytes = instruction_data_bytes
                .saturating_add(u16::try_from(data.len()).unwrap_or(u16::MAX));
            if program_id::is_builtin(program) {
                num_builtin += 1;
            } else {
                num_non_builtin += 1;
            }
            let signatures = || u64::from(data.first().copied().unwrap_or(0));
            if *program == program_id::COMPUTE_BUDGET {
                if !is_v1 {
                    requests.read(index, data)?;
                }
            } else if *program == program_id::ED25519 {
                precompile_signatures.ed25519 += signatures();
            } else if *program == program_id::SECP256K1 {
                precompile_signatures.secp256k1 += signatures();
            } else if *program == program_id::SECP256R1 {
                precompile_signatures.secp256r1 += signatures();
            }
        }
        let limits = match view.transaction_config() {
            Some(config) => ComputeBudgetLimits {
                heap_bytes: config.requested_heap_size().unwrap_or(MIN_HEAP_FRAME_BYTES),
                compute_unit_limit: config
                    .compute_unit_limit()
                    .unwrap_or(0)
                    .min(MAX_COMPUTE_UNIT_LIMIT),
                compute_unit_price_micro_lamports: 0,
                loaded_accounts_data_size_bytes: config
                    .loaded_accounts_data_size_limit()
                    .unwrap_or(0)
                    .min(MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES),
                priority_fee_lamports: config.priority_fee_lamports().unwrap_or(0),
            },
            None => {
                let default_compute_unit_limit = num_builtin
                    .saturating_mul(MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT)
                    .saturating_add(
                        num_non_builtin.saturating_mul(DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT),
                    );
                requests.into_limits(default_compute_unit_limit)?
            }
        };
        Ok(Self {
            limits,
            precompile_signatures,
            instruction_data_bytes,
        })
    }
}

impl Requests {
    /// Reads one ComputeBudget instruction at `index`.
    fn read(&mut self, index: u8, data: &[u8]) -> Result<(), ComputeBudgetError> {
        let invalid = ComputeBudgetError::InvalidInstructionData {
            instruction_index: index,
        };
        let duplicate = ComputeBudgetError::DuplicateInstruction {
            instruction_index: index,
        };
        let (&discriminant, payload) = data.split_first().ok_or(invalid)?;
        let u32_payload = || {
            payload
                .first_chunk::<4>()
                .map(|bytes| u32::from_le_bytes(*bytes))
                .ok_or(invalid)
        };
        match discriminant {
            1 => {
                let bytes = u32_payload()?;
                if self.heap_bytes.is_some() {
                    return Err(duplicate);
                }
                self.heap_bytes = Some((index, bytes));
            }
            2 => {
                let units = u32_payload()?;
                if self.compute_unit_limit.is_some() {
                    return Err(duplicate);
                }
                self.compute_unit_limit = Some(units);
            }
            3 => {
                let price = payload
                    .first_chunk::<8>()
                    .map(|bytes| u64::from_le_bytes(*bytes))
                    .ok_or(invalid)?;
                if self.compute_unit_price.is_some() {
                    return Err(duplicate);
                }
                self.compute_unit_price = Some(price);
            }
            4 => {
                let bytes = u32_payload()?;
                if self.loaded_accounts_data_size.is_some() {
                    return Err(duplicate);
                }
                self.loaded_accounts_data_size = Some(bytes);
            }
            _ => return Err(invalid),
        }
        Ok(())
    }

    /// Applies the defaults and the post-walk rules (`sanitize_and_convert_to_compute_budget_limits`).
    fn into_limits(
        self,
        default_compute_unit_limit: u32,
    ) -> Result<ComputeBudgetLimits, ComputeBudgetError> {
        let heap_bytes = match self.heap_bytes {
            Some((index, bytes)) => {
                if !(MIN_HEAP_FRAME_BYTES..=MAX_HEAP_FRAME_BYTES).contains(&bytes)
                    || bytes % HEAP_FRAME_GRANULARITY_BYTES != 0
                {
                    return Err(ComputeBudgetError::InvalidInstructionData {
                        instruction_index: index,
                    });
                }
                bytes
            }
            None => MIN_HEAP_FRAME_BYTES,
        };
        let compute_unit_limit = self
            .compute_unit_limit
            .unwrap_or(default_compute_unit_limit)
            .min(MAX_COMPUTE_UNIT_LIMIT);
        let price = self.compute_unit_price.unwrap_or(0);
        let loaded_accounts_data_size_bytes = match self.loaded_accounts_data_size {
            Some(0) => return Err(ComputeBudgetError::InvalidLoadedAccountsDataSizeLimit),
            Some(bytes) => bytes.min(MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES),
            None => MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES,
        };
        Ok(ComputeBudgetLimits {
            heap_bytes,
            compute_unit_limit,
            compute_unit_price_micro_lamports: price,
            loaded_accounts_data_size_bytes,
            priority_fee_lamports: priority_fee_lamports(price, compute_unit_limit),
        })
    }
}

/// `price × limit` micro-lamports in lamports, rounded up, saturating (`get_prioritization_fee`).
pub fn priority_fee_lamports(price_micro_lamports: u64, compute_unit_limit: u32) -> u64 {
    let micro_lamports = u128::from(price_micro_lamports) * u128::from(compute_unit_limit);
    let lamports = micro_lamports.div_ceil(u128::from(MICRO_LAMPORTS_PER_LAMPORT));
    u64::try_from(lamports).unwrap_or(u64::MAX)
}
