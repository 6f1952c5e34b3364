//! The accounts the queued transactions name, interned to dense ids, with each account's queue of
//! transactions (the scheduler's lock queue) and its compute units used in the current block.
//!
//! Interning happens once per account per transaction, when the transaction enters the scheduler;
//! from then on every lock check is an array index. An account no transaction names any more stays
//! interned (the next transaction naming it, often soon for a busy account, finds it without an
//! insertion) until the table holds twice as many accounts as are named, and at least
//! `SWEEP_THRESHOLD`: then one sweep removes the idle ones. So the table is bounded by the
//! container's contents and each removal is amortized over many lookups.
//!
//! Account addresses are chosen by senders, so the map's hash is keyed by a per-process random
//! seed (an adversary cannot aim many addresses at one bucket without knowing it); it folds the
//! four words of an address with 128-bit multiplies (not a cryptographic hash: it needs only be
//! unpredictable to the sender).

use kestrel_txview::Address;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// An interned account.
pub(crate) type AccountId = u32;
/// "None" in id and transaction links.
pub(crate) const NONE: u32 = u32::MAX;
/// Interned accounts below which idle ones are never swept.
const SWEEP_THRESHOLD: usize = 1 << 16;

const _: () = assert!(core::mem::size_of::<AccountState>() <= 32);

/// One account's state: what every lock operation reads, kept small (32 bytes) so that the states
/// of a window's accounts stay in cache; the address lives apart.
#[derive(Clone, Debug)]
pub(crate) struct AccountState {
    /// Queued and in-flight transactions naming the account.
    pub(crate) references: u32,
    /// First and last of the transactions queued on the account in the scheduler's lock order
    /// (indexes of their account nodes; the front ones hold the account).
    pub(crate) head: u32,
    pub(crate) tail: u32,
    /// Insertion stamp, for finding an account named twice by one transaction.
    pub(crate) stamp: u64,
    /// Compute units of this block's transactions that write it.
    pub(crate) block_units: u64,
}

/// Interned accounts.
pub(crate) struct AccountTable {
    ids: HashMap<Address, AccountId, SeededState>,
    pub(crate) states: Vec<AccountState>,
    /// Each id's address (to remove it from the map when the id is freed).
    addresses: Vec<Address>,
    free: Vec<AccountId>,
    /// Accounts some transaction names.
    referenced: usize,
    /// Table size at which the next sweep runs.
    sweep_at: usize,
}

impl AccountTable {
    /// A table with room for `accounts` accounts before it grows.
    pub(crate) fn with_capacity(accounts: usize) -> Self {
        Self {
            ids: HashMap::with_capacity_and_hasher(accounts, SeededState::new()),
            states: Vec::with_capacity(accounts),
            addresses: Vec::with_capacity(accounts),
            free: Vec::new(),
            referenced: 0,
            sweep_at: SWEEP_THRESHOLD,
        }
    }

    /// Accounts some queued or in-flight transaction names.
    pub(crate) fn referenced(&self) -> usize {
        self.referenced
    }

    /// The id of `address`, interning it, with one more reference.
    #[inline]
    pub(crate) fn acquire(&mut self, address: &Address) -> AccountId {
        if self.ids.len() >= self.sweep_at {
            self.sweep();
        }
        let states = &mut self.states;
        let addresses = &mut self.addresses;
        let free = &mut self.free;
        let id = *self.ids.entry(*address).or_insert_with(|| {
            let state = AccountState {
                references: 0,
                head: NONE,
                tail: NONE,
                stamp: 0,
                block_units: 0,
            };
            match free.pop() {
                Some(id) => {
                    states[id as usize] = state;
                    addresses[id as usize] = *address;
                    id
                }
                None => {
                    states.push(state);
                    addresses.push(*address);
                    (states.len() - 1) as AccountId
                }
            }
        });
        let state = &mut self.states[id as usize];
        if state.references == 0 {
            self.referenced += 1;
        }
        state.references += 1;
        id
    }

    /// Drops one reference.
    #[inline]
    pub(crate) fn release(&mut self, id: AccountId) {
        let state = &mut self.states[id as usize];
        state.references -= 1;
        if state.references == 0 {
            self.referenced -= 1;
        }
    }

    /// Removes the accounts nobody names and that have no units in this block.
    fn sweep(&mut self) {
        for (id, (state, address)) in self.states.iter().zip(&self.addresses).enumerate() {
            let id = id as AccountId;
            // A freed slot keeps its old address, which may since map to another id.
            let idle = state.references == 0
                && state.block_units == 0
                && self.ids.get(address) == Some(&id);
            if idle {
                self.ids.remove(address);
                debug_assert_eq!(state.head, NONE);
                self.free.push(id);
            }
        }
        self.sweep_at = (2 * self.ids.len()).max(SWEEP_THRESHOLD);
    }
}

/// A per-process random hash key.
#[derive(Clone)]
pub(crate) struct SeededState {
    seed: [u64; 2],
}

impl SeededState {
    /// A fresh random key.
    pub(crate) fn new() -> Self {
        let random = std::collections::hash_map::RandomState::new();
        Self {
            seed: [random.hash_one(1u64), random.hash_one(2u64)],
        }
    }
}

impl BuildHasher for SeededState {
    type Hasher = FoldHasher;

    #[inline]
    fn build_hasher(&self) -> FoldHasher {
        FoldHasher {
            state: self.seed[0],
            key: self.seed[1] | 1,
        }
    }
}

/// Folds words into the state with a 128-bit multiply by the key.
pub(crate) struct FoldHasher {
    state: u64,
    key: u64,
}

#[inline(always)]
fn fold_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Hasher for FoldHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let (words, rest) = bytes.as_chunks::<8>();
        for word in words {
            self.state = fold_multiply(self.state ^ u64::from_le_bytes(*word), self.key);
        }
        for &byte in rest {
            self.state = fold_multiply(self.state ^ u64::from(byte), self.key);
        }
    }

    #[inline]
    fn write_usize(&mut self, _length: usize) {
        // Addresses are fixed-size: the length prefix carries nothing.
    }

    #[inline]
    fn finish(&self) -> u64 {
        fold_multiply(self.state, self.key.rotate_left(23))
    }
}
