//! A sanitized view plus the addresses its lookups loaded (supplied by the caller, who reads them
//! from the lookup tables), giving each account's key and its writable and signer role.
//!
//! Rules (Agave's `ResolvedTransactionView`, 6.1.0): account order is static keys, then every
//! loaded writable address, then every loaded readonly one. An account is writable when its
//! position asks for it (`solana-transaction-format.md`, "Account roles") and it is not a reserved
//! key; a program account is then demoted to readonly unless the upgradeable BPF loader is among the
//! accounts. A v0 transaction must be given loaded addresses (possibly empty); their counts must
//! match the lookup totals.
//!
//! Nothing here allocates: the writable roles are a 256-bit set (account indexes are u8).

use crate::error::ResolveError;
use crate::limits::BPF_LOADER_UPGRADEABLE_ID;
use crate::transaction_view::SanitizedTransactionView;
use crate::{Address, TransactionVersion};
use core::ops::Deref;

/// Addresses loaded from lookup tables, in transaction order: all writable ones, then all readonly.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedAddresses<'a> {
    /// Addresses loaded writable.
    pub writable: &'a [Address],
    /// Addresses loaded readonly.
    pub readonly: &'a [Address],
}

/// What an account may do in the transaction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AccountRole {
    /// The account signs the transaction.
    pub signer: bool,
    /// The account is locked writable.
    pub writable: bool,
}

/// A sanitized view with its lookups resolved.
#[derive(Clone, Debug)]
pub struct ResolvedTransactionView<'a, D: AsRef<[u8]>> {
    view: SanitizedTransactionView<D>,
    loaded: LoadedAddresses<'a>,
    /// Bit `i` set when account `i` is writable.
    writable: [u64; 4],
}

impl<D: AsRef<[u8]>> Deref for ResolvedTransactionView<'_, D> {
    type Target = SanitizedTransactionView<D>;

    fn deref(&self) -> &Self::Target {
        &self.view
    }
}

impl<'a, D: AsRef<[u8]>> ResolvedTransactionView<'a, D> {
    /// Resolves `view` with the addresses its lookups loaded. `is_reserved` says whether an address
    /// is a reserved account key (never writable), e.g. a lookup in the node's reserved-key set.
    pub fn try_new(
        view: SanitizedTransactionView<D>,
        loaded: Option<LoadedAddresses<'a>>,
        is_reserved: impl Fn(&Address) -> bool,
    ) -> Result<Self, ResolveError> {
        let expected_writable = view.total_writable_lookup_accounts();
        let expected_readonly = view.total_readonly_lookup_accounts();
        let loaded = match loaded {
            None if view.version() == TransactionVersion::V0 => {
                return Err(ResolveError::MissingLoadedAddresses)
            }
            None => LoadedAddresses::default(),
            Some(loaded) => loaded,
        };
        if loaded.writable.len() != usize::from(expected_writable)
            || loaded.readonly.len() != usize::from(expected_readonly)
        {
            return Err(ResolveError::LoadedAddressCountMismatch {
                expected_writable,
                expected_readonly,
                supplied_writable: loaded.writable.len(),
                supplied_readonly: loaded.readonly.len(),
            });
        }
        let writable = writable_set(&view, loaded, is_reserved);
        Ok(Self {
            view,
            loaded,
            writable,
        })
    }

    /// The sanitized view back.
    pub fn into_view(self) -> SanitizedTransactionView<D> {
        self.view
    }

    /// The loaded addresses.
    pub fn loaded_addresses(&self) -> LoadedAddresses<'a> {
        self.loaded
    }

    /// Number of accounts: static keys plus loaded addresses.
    pub fn num_accounts(&self) -> usize {
        usize::from(self.view.num_static_account_keys())
            + self.loaded.writable.len()
            + self.loaded.readonly.len()
    }

    /// All account keys in transaction order.
    pub fn account_keys(&self) -> impl ExactSizeIterator<Item = &Address> + Clone {
        let keys = self.view.static_account_keys();
        let loaded = self.loaded;
        (0..self.num_accounts()).map(move |index| account_key_at(keys, loaded, index))
    }

    /// Account `index`'s key.
    pub fn account_key(&self, index: usize) -> Option<&Address> {
        (index < self.num_accounts())
            .then(|| account_key_at(self.view.static_account_keys(), self.loaded, index))
    }

    /// Whether account `index` is locked writable.
    pub fn is_writable(&self, index: usize) -> bool {
        index < 256 && self.writable[index / 64] & (1 << (index % 64)) != 0
    }

    /// Whether account `index` signs.
    pub fn is_signer(&self, index: usize) -> bool {
        self.view.is_signer(index)
    }

    /// Account `index`'s role, or `None` beyond the accounts.
    pub fn account_role(&self, index: usize) -> Option<AccountRole> {
        (index < self.num_accounts()).then(|| AccountRole {
            signer: self.is_signer(index),
            writable: self.is_writable(index),
        })
    }
}

fn account_key_at<'k>(
    static_keys: &'k [Address],
    loaded: LoadedAddresses<'k>,
    index: usize,
) -> &'k Address {
    if let Some(key) = static_keys.get(index) {
        return key;
    }
    let index = index - static_keys.len();
    match loaded.writable.get(index) {
        Some(key) => key,
        None => &loaded.readonly[index - loaded.writable.len()],
    }
}

fn writable_set<D: AsRef<[u8]>>(
    view: &SanitizedTransactionView<D>,
    loaded: LoadedAddresses<'_>,
    is_reserved: impl Fn(&Address) -> bool,
) -> [u64; 4] {
    let static_keys = view.static_account_keys();
    let num_signed = usize::from(view.num_required_signatures());
    let num_writable_signed = num_signed - usize::from(view.num_readonly_signed_static_accounts());
    let num_writable_unsigned =
        static_keys.len() - num_signed - usize::from(view.num_readonly_unsigned_static_accounts());
    let mut writable = [0u64; 4];
    let mut set = |index: usize| writable[index / 64] |= 1 << (index % 64);
    for (index, key) in static_keys.iter().enumerate() {
        let requested = if index < num_signed {
            index < num_writable_signed
        } else {
            index - num_signed < num_writable_unsigned
        };
        if requested && !is_reserved(key) {
            set(index);
        }
    }
    for (position, key) in loaded.writable.iter().enumerate() {
        if !is_reserved(key) {
            set(static_keys.len() + position);
        }
    }
    // A writable program is demoted unless the upgradeable loader is present; looking for the
    // loader is a scan, so it happens only once a writable program is found.
    let mut loader_present = None;
    for instruction in view.instructions_iter() {
        let index = usize::from(instruction.program_id_index);
        let bit = 1u64 << (index % 64);
        if writable[index / 64] & bit != 0
            && !*loader_present.get_or_insert_with(|| {
                static_keys
                    .iter()
                    .chain(loaded.writable)
                    .chain(loaded.readonly)
                    .any(|key| *key == BPF_LOADER_UPGRADEABLE_ID)
            })
        {
            writable[index / 64] &= !bit;
        }
    }
    writable
}
