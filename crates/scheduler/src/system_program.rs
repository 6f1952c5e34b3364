//! What the stage reads from System program instructions without executing them: the durable-nonce
//! marker (a transaction that names a nonce instead of a recent blockhash) and the account data a
//! transaction may allocate (counted against the block's data-growth limit).
//!
//! Durable nonce (Agave `SVMMessage::get_durable_nonce`, `solana-svm-transaction` 5.0.0, with
//! `require_static_nonce_account` active on mainnet): the first instruction is the System
//! program's AdvanceNonceAccount (data starting with the bincode discriminant `4u32` LE, trailing
//! bytes allowed), and its first account is a static key locked writable; that account is the
//! nonce account. Whether it holds the transaction's nonce is the caller's to say (the stage has no
//! accounts: [`crate::BlockhashSource::durable_nonce_last_valid_slot`]).
//!
//! Allocation (`solana-cost-model` 4.0.0 `CostModel::calculate_allocated_accounts_data_size`):
//! each System program instruction is decoded as bincode's `SystemInstruction` (fixed-width
//! integers, at most 1,232 bytes read, trailing bytes allowed, strings valid UTF-8);
//! CreateAccount, CreateAccountWithSeed, Allocate and AllocateWithSeed add their `space`; any
//! instruction that does not decode, asks for more than 10 MiB, or is an allocating kind not yet
//! activated (CreateAccountAllowPrefund) means the transaction will fail, so it allocates 0; the
//! sum is capped at 20 MiB per transaction.

use crate::limits::{
    MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION, MAX_PERMITTED_DATA_LENGTH,
    PACKET_DATA_SIZE,
};
use crate::program_id;
use kestrel_txview::{Address, ResolvedTransactionView};

/// `SystemInstruction` discriminants (bincode's `u32` variant index).
mod discriminant {
    pub(super) const CREATE_ACCOUNT: u32 = 0;
    pub(super) const ASSIGN: u32 = 1;
    pub(super) const TRANSFER: u32 = 2;
    pub(super) const CREATE_ACCOUNT_WITH_SEED: u32 = 3;
    pub(super) const ADVANCE_NONCE_ACCOUNT: u32 = 4;
    pub(super) const WITHDRAW_NONCE_ACCOUNT: u32 = 5;
    pub(super) const INITIALIZE_NONCE_ACCOUNT: u32 = 6;
    pub(super) const AUTHORIZE_NONCE_ACCOUNT: u32 = 7;
    pub(super) const ALLOCATE: u32 = 8;
    pub(super) const ALLOCATE_WITH_SEED: u32 = 9;
    pub(super) const ASSIGN_WITH_SEED: u32 = 10;
    pub(super) const TRANSFER_WITH_SEED: u32 = 11;
    pub(super) const UPGRADE_NONCE_ACCOUNT: u32 = 12;
}

/// The nonce account of a durable-nonce transaction, `None` for any other.
pub(crate) fn durable_nonce_account<'v, D: AsRef<[u8]>>(
    view: &'v ResolvedTransactionView<'_, D>,
) -> Option<&'v Address> {
    let (program, instruction) = view.program_instructions_iter().next()?;
    if *program != program_id::SYSTEM
        || instruction.data.get(..4) != Some(&discriminant::ADVANCE_NONCE_ACCOUNT.to_le_bytes())
    {
        return None;
    }
    let index = usize::from(*instruction.accounts.first()?);
    (index < usize::from(view.num_static_account_keys()) && view.is_writable(index))
        .then(|| &view.static_account_keys()[index])
}

/// A bincode reader over instruction data with Agave's read limit.
struct Reader<'a> {
    data: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, length: usize) -> Option<&'a [u8]> {
        let end = self.offset.checked_add(length)?;
        if end > PACKET_DATA_SIZE {
            return None;
        }
        let bytes = self.data.get(self.offset..end)?;
        self.offset = end;
        Some(bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A bincode `String`: a `u64` length, then that many bytes of UTF-8.
    fn string(&mut self) -> Option<()> {
        let length = usize::try_from(self.u64()?).ok()?;
        core::str::from_utf8(self.take(length)?).ok().map(|_| ())
    }
}

/// What one System instruction allocates: `Ok(space)`, or `Err(())` when it will fail.
fn instruction_allocation(data: &[u8]) -> Result<u64, ()> {
    const ADDRESS: usize = 32;
    let mut reader = Reader { data, offset: 0 };
    let mut read = || -> Option<u64> {
        use discriminant::*;
        match reader.u32()? {
            CREATE_ACCOUNT => {
                reader.u64()?;
                let space = reader.u64()?;
                reader.take(ADDRESS)?;
                Some(space)
            }
            CREATE_ACCOUNT_WITH_SEED => {
                reader.take(ADDRESS)?;
                reader.string()?;
                reader.u64()?;
                let space = reader.u64()?;
                reader.take(ADDRESS)?;
                Some(space)
            }
            ALLOCATE => reader.u64(),
            ALLOCATE_WITH_SEED => {
                reader.take(ADDRESS)?;
                reader.string()?;
                let space = reader.u64()?;
                reader.take(ADDRESS)?;
                Some(space)
            }
            ASSIGN | INITIALIZE_NONCE_ACCOUNT | AUTHORIZE_NONCE_ACCOUNT => {
                reader.take(ADDRESS).map(|_| 0)
            }
            TRANSFER | WITHDRAW_NONCE_ACCOUNT => reader.u64().map(|_| 0),
            ADVANCE_NONCE_ACCOUNT | UPGRADE_NONCE_ACCOUNT => Some(0),
            ASSIGN_WITH_SEED => {
                reader.take(ADDRESS)?;
                reader.string()?;
                reader.take(ADDRESS).map(|_| 0)
            }
            TRANSFER_WITH_SEED => {
                reader.u64()?;
                reader.string()?;
                reader.take(ADDRESS).map(|_| 0)
            }
            // CreateAccountAllowPrefund (13) is not active on mainnet; anything else does not
            // decode.
            _ => None,
        }
    };
    match read() {
        Some(space) if space <= MAX_PERMITTED_DATA_LENGTH => Ok(space),
        _ => Err(()),
    }
}

/// Bytes of account data `view`'s System instructions may allocate.
pub(crate) fn allocated_data_bytes<D: AsRef<[u8]>>(view: &ResolvedTransactionView<'_, D>) -> u64 {
    let mut total = 0u64;
    for (program, instruction) in view.program_instructions_iter() {
        if *program != program_id::SYSTEM {
            continue;
        }
        match instruction_allocation(instruction.data) {
            Ok(space) => total = total.saturating_add(space),
            Err(()) => return 0,
        }
    }
    total.min(MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION)
}

#[cfg(test)]
mod tests {
    use super::instruction_allocation;

    fn create_account(space: u64) -> Vec<u8> {
        let mut data = 0u32.to_le_bytes().to_vec();
        data.extend(1u64.to_le_bytes());
        data.extend(space.to_le_bytes());
        data.extend([7; 32]);
        data
    }

    fn allocate_with_seed(seed: &[u8], space: u64) -> Vec<u8> {
        let mut data = 9u32.to_le_bytes().to_vec();
        data.extend([1; 32]);
        data.extend((seed.len() as u64).to_le_bytes());
        data.extend(seed);
        data.extend(space.to_le_bytes());
        data.extend([2; 32]);
        data
    }

    #[test]
    fn allocations_decode_as_bincode_does() {
        let ten_mib = 10 * 1024 * 1024;
        let cases: Vec<(Vec<u8>, Result<u64, ()>)> = vec![
            (create_account(0), Ok(0)),
            (create_account(ten_mib), Ok(ten_mib)),
            (create_account(ten_mib + 1), Err(())),
            // One byte short of the owner.
            (create_account(5)[..51].to_vec(), Err(())),
            // Trailing bytes are allowed.
            ([create_account(5), vec![0xEE]].concat(), Ok(5)),
            (
                [8u32.to_le_bytes().to_vec(), 77u64.to_le_bytes().to_vec()].concat(),
                Ok(77),
            ),
            (allocate_with_seed(b"seed", 3), Ok(3)),
            (allocate_with_seed(&[0xFF, 0xFE], 3), Err(())),
            // A seed that makes the read pass 1,232 bytes.
            (allocate_with_seed(&[b'a'; 1_200], 3), Err(())),
            (
                [2u32.to_le_bytes().to_vec(), 1u64.to_le_bytes().to_vec()].concat(),
                Ok(0),
            ),
            (2u32.to_le_bytes().to_vec(), Err(())),
            (4u32.to_le_bytes().to_vec(), Ok(0)),
            (13u32.to_le_bytes().to_vec(), Err(())),
            (vec![4, 0, 0], Err(())),
        ];
        for (data, expected) in cases {
            assert_eq!(instruction_allocation(&data), expected, "{data:?}");
        }
    }
}
