//! Storage accounting of originated contracts (`Fees.record_paid_storage_space`,
//! `Contract_storage.set_paid_storage_space_and_return_fees_to_pay`): when a contract uses more
//! bytes than it has paid for, the difference is paid (and burnt by the caller).

use kestrel_crypto::ContractHash;

use crate::ledger::{Ledger, LedgerError};

/// Records that `contract` has paid for all it uses: returns its size and the bytes newly paid.
pub fn record(ledger: &mut Ledger, contract: &ContractHash) -> Result<(u64, u64), LedgerError> {
    let used = ledger.used_bytes(contract)?;
    let paid = ledger.paid_bytes(contract)?;
    let newly_paid = used.saturating_sub(paid);
    if newly_paid > 0 {
        ledger.set_paid_bytes(contract, used)?;
    }
    Ok((saturate(used), saturate(newly_paid)))
}

/// Adds `diff_bytes` (negative when freed) to what `contract` uses.
pub fn add_used(
    ledger: &mut Ledger,
    contract: &ContractHash,
    diff_bytes: i128,
) -> Result<(), LedgerError> {
    // Every originated contract's used bytes are set at origination: adding nothing changes
    // nothing (a transfer that keeps its values' sizes is the common case).
    if diff_bytes == 0 {
        return Ok(());
    }
    let used = i128::try_from(ledger.used_bytes(contract)?).unwrap_or(i128::MAX);
    let updated = u128::try_from(used.saturating_add(diff_bytes)).unwrap_or(0);
    ledger.set_used_bytes(contract, updated)
}

fn saturate(bytes: u128) -> u64 {
    u64::try_from(bytes).unwrap_or(u64::MAX)
}
