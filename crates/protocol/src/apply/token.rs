//! Moving tez (`token.ml`, `contract_storage.ml`): debits and credits of contracts' spendable
//! balances, fees to the block's accumulator and burns, each with the balance updates a receipt
//! shows. A zero amount moves nothing and shows nothing. Crediting an implicit account that
//! does not exist creates it; an implicit account emptied and not delegated is deleted.

use kestrel_crypto::Destination;

use super::{ApplyError, Fault};
use crate::crypto_fields::Contract;
use crate::ledger::Ledger;
use crate::receipt::{Balance, BalanceUpdate, UpdateOrigin};

/// Where tez go or come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Account {
    /// A contract's spendable balance.
    Contract(Destination),
    /// The block's fees.
    BlockFees,
    /// Burnt storage fees.
    StorageFees,
}

/// Moves `amount` mutez from `from` to `to`.
pub fn transfer(
    ledger: &mut Ledger,
    from: Account,
    to: Account,
    amount: u64,
    origin: UpdateOrigin,
) -> Result<Vec<BalanceUpdate>, Fault> {
    if amount == 0 {
        return Ok(Vec::new());
    }
    if let Account::Contract(contract) = from {
        debit(ledger, &contract, amount)?;
    }
    if let Account::Contract(contract) = to {
        credit(ledger, &contract, amount)?;
    }
    let change = i64::try_from(amount).map_err(|_| ApplyError::BalanceOverflow)?;
    Ok(vec![
        BalanceUpdate {
            balance: balance_of(from),
            change: -change,
            origin,
        },
        BalanceUpdate {
            balance: balance_of(to),
            change,
            origin,
        },
    ])
}

fn balance_of(account: Account) -> Balance {
    match account {
        Account::Contract(contract) => Balance::Contract(Contract(contract)),
        Account::BlockFees => Balance::BlockFees,
        Account::StorageFees => Balance::StorageFees,
    }
}

fn debit(ledger: &mut Ledger, contract: &Destination, amount: u64) -> Result<(), Fault> {
    if !ledger.is_allocated(contract)? {
        return Err(ApplyError::NonExistingContract(*contract).into());
    }
    let balance = ledger.balance(contract)?;
    let left = balance
        .checked_sub(amount)
        .ok_or(ApplyError::BalanceTooLow {
            contract: *contract,
            balance,
            amount,
        })?;
    ledger.set_balance(contract, left)?;
    if let Destination::Implicit(account) = contract {
        if left == 0 && ledger.delegate(contract)?.is_none() {
            ledger.delete_implicit(account)?;
        }
    }
    Ok(())
}

fn credit(ledger: &mut Ledger, contract: &Destination, amount: u64) -> Result<(), Fault> {
    if !ledger.is_allocated(contract)? {
        match contract {
            Destination::Implicit(account) => ledger.allocate_implicit(account)?,
            _ => return Err(ApplyError::NonExistingContract(*contract).into()),
        }
    }
    let balance = ledger.balance(contract)?;
    let total = balance
        .checked_add(amount)
        .ok_or(ApplyError::BalanceOverflow)?;
    ledger.set_balance(contract, total)?;
    Ok(())
}
