//! A transaction's cost (compute units it reserves in the block), the leader's reward for it, and
//! its priority.
//!
//! Cost (`solana-cost-model` 4.0.0 `cost_model.rs`, non-vote transactions): 720 per transaction
//! signature, 2,400 per ed25519-precompile signature, 6,690 per secp256k1 one and 4,800 per
//! secp256r1 one (that precompile is active), 300 per write lock (after demotion), instruction
//! data bytes / 4, the compute-unit limit, and 8 per 32 KiB page of the loaded-accounts data limit.
//! A simple vote transaction (`solana-transaction` `is_simple_vote_transaction_impl`: legacy,
//! fewer than 3 signatures, exactly one instruction, of the vote program) costs a fixed
//! `SIMPLE_VOTE_USAGE_COST` instead (`CostModel::calculate_cost`, `remove_simple_vote_from_cost_model`
//! inactive on mainnet).
//!
//! Reward (Agave `Bank::calculate_reward_for_transaction`): 5,000 lamports per signature (those of
//! the transaction and of the precompiles) less the 50 % burned, plus the whole priority fee.
//! Priority (Agave `calculate_priority_and_cost`): `reward × 1,000,000 / (cost + 1)`, saturating.

use crate::compute_budget::InstructionDetails;
use crate::limits::{
    ACCOUNT_DATA_COST_PAGE_SIZE, BURN_PERCENT, DEFAULT_HEAP_COST, ED25519_VERIFY_STRICT_COST,
    INSTRUCTION_DATA_BYTES_COST, LAMPORTS_PER_SIGNATURE, PRIORITY_MULTIPLIER,
    SECP256K1_VERIFY_COST, SECP256R1_VERIFY_COST, SIGNATURE_COST, SIMPLE_VOTE_USAGE_COST,
    VOTE_PROGRAM_COMPUTE_UNITS, WRITE_LOCK_UNITS,
};
use crate::program_id;
use kestrel_txview::{SanitizedTransactionView, TransactionVersion};

/// The parts of a transaction's cost, in compute units.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionCost {
    /// Transaction and precompile signatures.
    pub signature: u64,
    /// Write locks.
    pub write_lock: u64,
    /// Instruction data bytes.
    pub data_bytes: u64,
    /// The compute-unit limit.
    pub programs_execution: u64,
    /// Loaded-accounts data limit.
    pub loaded_accounts_data_size: u64,
}

impl TransactionCost {
    /// Cost of a transaction with `num_signatures` signatures and `num_write_locks` writable
    /// accounts whose instructions gave `details`.
    pub fn new(details: &InstructionDetails, num_signatures: u8, num_write_locks: u64) -> Self {
        let precompile = &details.precompile_signatures;
        let signature = u64::from(num_signatures)
            .saturating_mul(SIGNATURE_COST)
            .saturating_add(precompile.secp256k1.saturating_mul(SECP256K1_VERIFY_COST))
            .saturating_add(
                precompile
                    .ed25519
                    .saturating_mul(ED25519_VERIFY_STRICT_COST),
            )
            .saturating_add(precompile.secp256r1.saturating_mul(SECP256R1_VERIFY_COST));
        let pages = u64::from(details.limits.loaded_accounts_data_size_bytes)
            .div_ceil(ACCOUNT_DATA_COST_PAGE_SIZE);
        Self {
            signature,
            write_lock: WRITE_LOCK_UNITS.saturating_mul(num_write_locks),
            data_bytes: u64::from(details.instruction_data_bytes) / INSTRUCTION_DATA_BYTES_COST,
            programs_execution: u64::from(details.limits.compute_unit_limit),
            loaded_accounts_data_size: pages * DEFAULT_HEAP_COST,
        }
    }

    /// The fixed cost of a simple vote transaction, in Agave's parts.
    pub fn simple_vote() -> Self {
        let cost = Self {
            signature: SIGNATURE_COST,
            write_lock: 2 * WRITE_LOCK_UNITS,
            data_bytes: 0,
            programs_execution: VOTE_PROGRAM_COMPUTE_UNITS,
            loaded_accounts_data_size: DEFAULT_HEAP_COST,
        };
        debug_assert_eq!(cost.sum(), SIMPLE_VOTE_USAGE_COST);
        cost
    }

    /// The total.
    pub fn sum(&self) -> u64 {
        self.signature
            .saturating_add(self.write_lock)
            .saturating_add(self.data_bytes)
            .saturating_add(self.programs_execution)
            .saturating_add(self.loaded_accounts_data_size)
    }
}

/// Whether `view` is a simple vote transaction (legacy, 1 or 2 signatures, one instruction, of the
/// vote program).
pub fn is_simple_vote<D: AsRef<[u8]>>(view: &SanitizedTransactionView<D>) -> bool {
    let mut programs = view.program_instructions_iter().map(|(program, _)| program);
    view.version() == TransactionVersion::Legacy
        && view.num_signatures() < 3
        && programs.len() == 1
        && programs.next() == Some(&program_id::VOTE)
}

/// Lamports the leader keeps: the unburned part of the signature fee plus the priority fee.
pub fn reward_lamports(details: &InstructionDetails, num_signatures: u8) -> u64 {
    let precompile = &details.precompile_signatures;
    let signature_fee = u64::from(num_signatures)
        .saturating_add(precompile.ed25519)
        .saturating_add(precompile.secp256k1)
        .saturating_add(precompile.secp256r1)
        .saturating_mul(LAMPORTS_PER_SIGNATURE);
    let burn = signature_fee.saturating_mul(BURN_PERCENT) / 100;
    (signature_fee - burn).saturating_add(details.limits.priority_fee_lamports)
}

/// Agave's priority: `reward × 1,000,000 / (cost + 1)`, saturating.
pub fn priority(reward_lamports: u64, cost: u64) -> u64 {
    reward_lamports.saturating_mul(PRIORITY_MULTIPLIER) / cost.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute_budget::{ComputeBudgetLimits, PrecompileSignatureCounts};

    #[test]
    fn a_plain_transfer_costs_as_agave_says() {
        // One signature, two write locks, one system-program instruction with 12 data bytes:
        // 720 + 600 + 3 + 3,000 + 2,048 pages × 8.
        let details = InstructionDetails {
            limits: ComputeBudgetLimits {
                compute_unit_limit: 3_000,
                loaded_accounts_data_size_bytes: 64 * 1024 * 1024,
                ..ComputeBudgetLimits::default()
            },
            precompile_signatures: PrecompileSignatureCounts::default(),
            instruction_data_bytes: 12,
        };
        let cost = TransactionCost::new(&details, 1, 2);
        assert_eq!(cost.sum(), 720 + 600 + 3 + 3_000 + 16_384);
        assert_eq!(reward_lamports(&details, 1), 2_500);
        assert_eq!(
            priority(2_500, cost.sum()),
            2_500 * 1_000_000 / (cost.sum() + 1)
        );
    }

    #[test]
    fn precompile_signatures_cost_and_pay() {
        let details = InstructionDetails {
            precompile_signatures: PrecompileSignatureCounts {
                ed25519: 2,
                secp256k1: 1,
                secp256r1: 1,
            },
            ..InstructionDetails::default()
        };
        assert_eq!(
            TransactionCost::new(&details, 1, 0).signature,
            720 + 2 * 2_400 + 6_690 + 4_800
        );
        assert_eq!(reward_lamports(&details, 1), 5 * 2_500);
    }

    #[test]
    fn a_simple_vote_costs_3428() {
        assert_eq!(TransactionCost::simple_vote().sum(), 3_428);
    }

    #[test]
    fn priority_saturates() {
        assert_eq!(priority(u64::MAX, 0), u64::MAX);
        assert_eq!(priority(0, u64::MAX), 0);
    }
}
