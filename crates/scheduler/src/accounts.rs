//! The accounts the queued transactions name, interned to dense ids, with each account's queue of
//! transactions (the scheduler's lock queue) and its compute units used in the current block.
//!
//! Interning happens once per account per transaction, when the transaction enters the scheduler;
//! from then on every lock check is an array index. An account no transaction names any more stays
//! interned (the next transaction naming it, often soon for a busy account, finds it without an
//! insertion) until the table holds twice as many accounts as are named, and at least
//! `SWEEP_THRESHOLD`: then one sweep removes the idle ones. So the table is bounded by the
//! container's contents and each removal is amortized over many lookups. When no account is
//! named at all (the container drained) the table clears if that is cheap: finding an idle row
//! costs more than interning an account into an empty index.
//!
//! The index from address to id is an open-addressing table of 8-byte slots (32 bits of the hash
//! beside the id; the address itself is compared in the id's row, which holds the account's
//! state in the same cache line), at most half full, probed linearly: one slot read and one
//! row read for most lookups, no per-entry allocation. A sweep rebuilds it from the ids that
//! stay. Account addresses are chosen by senders, so the hash is keyed by a per-process random
//! key (an adversary cannot aim many addresses at one run of slots without knowing it): two
//! independent 128-bit multiplies of the address's words mixed with the key, folded (not a
//! cryptographic hash: it needs only be unpredictable to the sender).

use crate::huge_pages;
use crate::prefetch::prefetch;
use kestrel_txview::Address;
use std::hash::{BuildHasher, Hasher};

/// An interned account.
pub(crate) type AccountId = u32;
/// "None" in id and transaction links.
pub(crate) const NONE: u32 = u32::MAX;
/// Interned accounts below which idle ones are never swept.
const SWEEP_THRESHOLD: usize = 1 << 16;
/// Interned accounts from which [`AccountTable::is_large`] holds: 2 MiB of 64-byte rows, a
/// core's L2 cache on the benchmark machine (a window over 1,000 accounts stays small however
/// large its index was sized).
const LARGE_ACCOUNTS: usize = 1 << 15;
/// Interned accounts from which [`AccountTable::outgrows_l1`] holds: 32 KiB of rows, a core's L1
/// data cache on the benchmark machine (a 2,048-transaction window over 100,000 accounts interns
/// about 15,000, one over 1,000 accounts all 1,000).
const OUTGROWS_L1_ACCOUNTS: usize = 1 << 9;

/// Index slots per interned account up to which [`AccountTable::clear_if_idle`] clears the
/// index (128 bytes an account: less than an account's insertion costs).
const CLEAR_SLOTS_PER_ACCOUNT: usize = 16;

const _: () = assert!(core::mem::size_of::<AccountState>() == 64);

/// One account's row: its address and what every lock operation reads, in one 64-byte cache line
/// (a lookup's address compare brings in the state it then updates).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub(crate) struct AccountState {
    /// The address (compared on lookup; a freed id keeps its last address).
    address: Address,
    /// Queued and in-flight transactions naming the account.
    pub(crate) references: u32,
    /// First and last of the transactions queued on the account in the scheduler's lock order
    /// (indexes of their account nodes; the front ones hold the account).
    pub(crate) head: u32,
    pub(crate) tail: u32,
    /// Whether the index maps its address to this id (a freed id's row keeps a stale address).
    interned: bool,
    /// Insertion stamp, for finding an account named twice by one transaction.
    stamp: u64,
    /// Compute units of this block's transactions that write it.
    pub(crate) block_units: u64,
}

impl AccountState {
    /// Drops one reference; true if none is left (the caller then calls
    /// [`AccountTable::note_idle`]).
    #[inline]
    pub(crate) fn drop_reference(&mut self) -> bool {
        self.references -= 1;
        self.references == 0
    }
}

/// Interned accounts.
pub(crate) struct AccountTable {
    /// Open-addressing index: `hash >> 32 << 32 | (id + 1)` per slot, 0 when empty; a lookup
    /// starts at the slot the hash's top bits name (`hash >> shift`), so a slot's own top 32
    /// bits say where it belongs in an index of up to 2^32 slots.
    slots: Vec<u64>,
    /// 64 minus log2 of the slot count.
    shift: u32,
    /// Interned ids (the index's entries).
    interned: usize,
    /// The address hash's key.
    key: [u64; 4],
    pub(crate) states: Vec<AccountState>,
    free: Vec<AccountId>,
    /// Accounts some transaction names.
    referenced: usize,
    /// Table size at which the next sweep runs.
    sweep_at: usize,
}

/// Slots for `accounts` entries at most half full.
fn slot_count(accounts: usize) -> usize {
    let slots = accounts.max(8).saturating_mul(2).next_power_of_two();
    assert!(slots <= 1 << 32, "a slot's top 32 bits place it");
    slots
}

/// `AccountTable::shift` for `slots` slots.
fn shift_for(slots: usize) -> u32 {
    64 - slots.trailing_zeros()
}

impl AccountTable {
    /// A table whose index holds `accounts` accounts and whose rows hold `rows` before they
    /// grow.
    pub(crate) fn with_capacity(accounts: usize, rows: usize) -> Self {
        let slots = slot_count(accounts);
        let table = Self {
            slots: vec![0; slots],
            shift: shift_for(slots),
            interned: 0,
            key: random_key(),
            states: Vec::with_capacity(rows),
            free: Vec::new(),
            referenced: 0,
            sweep_at: SWEEP_THRESHOLD,
        };
        huge_pages::advise(&table.slots);
        huge_pages::advise(&table.states);
        table
    }

    /// Accounts some queued or in-flight transaction names.
    pub(crate) fn referenced(&self) -> usize {
        self.referenced
    }

    /// `address`'s hash, for [`Self::acquire`].
    #[inline]
    pub(crate) fn hash(&self, address: &Address) -> u64 {
        hash_address(&self.key, address)
    }

    /// The slot where the lookup of `hash` starts.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    /// Whether the interned accounts' rows (and their index slots) are too many to stay in a
    /// core's L2 cache: then a lookup's row is worth hinting before its slot is read.
    #[inline]
    pub(crate) fn is_large(&self) -> bool {
        self.interned >= LARGE_ACCOUNTS
    }

    /// Whether the interned accounts' rows outgrow a core's L1 cache: then the rows and index
    /// slots a lookup or a lock-queue pass reads come from L2 or beyond, and hinting them ahead
    /// of their reads lets the misses overlap.
    #[inline]
    pub(crate) fn outgrows_l1(&self) -> bool {
        self.interned >= OUTGROWS_L1_ACCOUNTS
    }

    /// Hints the index slot where the lookup of `hash` starts.
    #[inline]
    pub(crate) fn prefetch_slot(&self, hash: u64) {
        prefetch(&self.slots[self.home(hash)]);
    }

    /// Hints the row of the id in the index slot where the lookup of `hash` starts (most
    /// lookups end there).
    #[inline]
    pub(crate) fn prefetch_row(&self, hash: u64) {
        let slot = self.slots[self.home(hash)];
        if let Some(row) = self.states.get((slot as u32).wrapping_sub(1) as usize) {
            prefetch(row);
        }
    }

    /// Hints `id`'s row.
    #[inline]
    pub(crate) fn prefetch_state(&self, id: AccountId) {
        if let Some(row) = self.states.get(id as usize) {
            prefetch(row);
        }
    }

    /// Forgets every account when none is named and the caller holds no block units in a row
    /// (every `block_units` is 0) and clearing costs at most `CLEAR_SLOTS_PER_ACCOUNT` index slots
    /// an interned account. Why: a lookup that finds an idle row waits for its index slot and
    /// then its row before it can compare the address, where a lookup in an empty index finds
    /// an empty slot (a well-predicted branch) and appends a row without reading one, so a
    /// scheduler kept across windows that drain was slower than a fresh one (1.1-1.6x on the
    /// bench's windows). The bound keeps a drained small table in a large index from paying
    /// for the whole index.
    pub(crate) fn clear_if_idle(&mut self) {
        if self.referenced == 0
            && self.interned > 0
            && self.slots.len() <= CLEAR_SLOTS_PER_ACCOUNT * self.interned
        {
            self.slots.fill(0);
            self.states.clear();
            self.free.clear();
            self.interned = 0;
            self.sweep_at = SWEEP_THRESHOLD;
        }
    }

    /// Makes room for `accounts` more interned accounts (each [`Self::acquire`] needs room for
    /// one): sweeps idle accounts or grows the index when due.
    #[inline]
    pub(crate) fn reserve(&mut self, accounts: usize) {
        if self.interned >= self.sweep_at {
            if 2 * self.referenced <= self.interned {
                self.sweep();
            } else {
                // At most half is idle: the table stays within twice the named accounts
                // without a sweep (which would rebuild the index and free little).
                self.sweep_at = 2 * self.interned;
            }
        }
        if 2 * (self.interned + accounts) > self.slots.len() {
            self.rebuild(slot_count(self.interned + accounts), false);
        }
        if self.states.capacity() - self.states.len() < accounts {
            // Doubling, as `push` would, and the new allocation gets huge pages too.
            self.states.reserve(self.states.len().max(accounts));
            huge_pages::advise(&self.states);
        }
    }

    /// The id of `address` (whose [`Self::hash`] is `hash`), interning it, with one more
    /// reference; `None` if it was already acquired under `stamp` (named twice by one
    /// transaction: each transaction's accounts are acquired under a stamp of their own). Room
    /// must have been reserved.
    #[inline]
    pub(crate) fn acquire(
        &mut self,
        address: &Address,
        hash: u64,
        stamp: u64,
    ) -> Option<AccountId> {
        debug_assert!(2 * self.interned < self.slots.len(), "room reserved");
        debug_assert_eq!(hash, self.hash(address));
        let tag = hash >> 32 << 32;
        let mask = self.slots.len() - 1;
        let mut index = self.home(hash);
        let id = loop {
            let slot = self.slots[index];
            if slot == 0 {
                // A new row is written acquired: no stamp or count to read back.
                let id = self.new_id(address, stamp);
                self.slots[index] = tag | u64::from(id + 1);
                self.interned += 1;
                self.referenced += 1;
                return Some(id);
            }
            let id = (slot as u32).wrapping_sub(1);
            if slot & !0xFFFF_FFFF == tag && self.states[id as usize].address == *address {
                break id;
            }
            index = (index + 1) & mask;
        };
        let state = &mut self.states[id as usize];
        if state.stamp == stamp {
            return None;
        }
        state.stamp = stamp;
        if state.references == 0 {
            self.referenced += 1;
        }
        state.references += 1;
        Some(id)
    }

    /// A row for `address`, acquired once under `stamp`.
    fn new_id(&mut self, address: &Address, stamp: u64) -> AccountId {
        let state = AccountState {
            address: *address,
            references: 1,
            head: NONE,
            tail: NONE,
            interned: true,
            stamp,
            block_units: 0,
        };
        match self.free.pop() {
            Some(id) => {
                self.states[id as usize] = state;
                id
            }
            None => {
                self.states.push(state);
                (self.states.len() - 1) as AccountId
            }
        }
    }

    /// Drops one reference.
    #[inline]
    pub(crate) fn release(&mut self, id: AccountId) {
        if self.states[id as usize].drop_reference() {
            self.referenced -= 1;
        }
    }

    /// Counts `accounts` rows whose last reference the caller dropped
    /// ([`AccountState::drop_reference`] returned true).
    #[inline]
    pub(crate) fn note_idle(&mut self, accounts: usize) {
        self.referenced -= accounts;
    }

    /// Removes the accounts nobody names and that have no units in this block.
    fn sweep(&mut self) {
        for (id, state) in self.states.iter_mut().enumerate() {
            if state.interned && state.references == 0 && state.block_units == 0 {
                debug_assert_eq!(state.head, NONE);
                state.interned = false;
                self.free.push(id as AccountId);
                self.interned -= 1;
            }
        }
        self.rebuild(slot_count(self.interned), true);
        self.sweep_at = (2 * self.interned).max(SWEEP_THRESHOLD);
    }

    /// Re-creates the index with `slots` slots from the old index's entries, placed by their
    /// top bits (no address is read or hashed again: the old index is read in order and the new
    /// one written nearly in order); `swept` drops the entries of ids a sweep freed.
    fn rebuild(&mut self, slots: usize, swept: bool) {
        // A fresh zeroed allocation: large ones come as zero pages from the system.
        let mut fresh = vec![0u64; slots];
        huge_pages::advise(&fresh);
        let shift = shift_for(slots);
        let mask = slots - 1;
        for &slot in &self.slots {
            if slot == 0 || (swept && !self.states[(slot as u32 - 1) as usize].interned) {
                continue;
            }
            let mut index = (slot >> shift) as usize;
            while fresh[index] != 0 {
                index = (index + 1) & mask;
            }
            fresh[index] = slot;
        }
        self.slots = fresh;
        self.shift = shift;
    }
}

/// A per-process random key for [`hash_address`].
fn random_key() -> [u64; 4] {
    let random = std::collections::hash_map::RandomState::new();
    [1u64, 2, 3, 4].map(|word| random.hash_one(word))
}

/// An address's 64-bit hash under `key`: two independent folded multiplies of its words.
#[inline(always)]
fn hash_address(key: &[u64; 4], address: &Address) -> u64 {
    let (words, _) = address.as_chunks::<8>();
    let word = |index: usize| u64::from_le_bytes(words[index]) ^ key[index];
    fold_multiply(word(0), word(1)) ^ fold_multiply(word(2), word(3)).rotate_left(29)
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

#[cfg(test)]
mod tests {
    use super::{AccountTable, SWEEP_THRESHOLD};

    fn address(index: u32) -> [u8; 32] {
        let mut address = [0u8; 32];
        address[..4].copy_from_slice(&index.to_le_bytes());
        address
    }

    #[test]
    fn ids_survive_growth_and_sweeps() {
        // Growth past the reservation rebuilds the index many times.
        let mut table = AccountTable::with_capacity(0, 0);
        let mut stamp = 0;
        let mut acquire = |table: &mut AccountTable, index: u32| {
            stamp += 1;
            table.reserve(1);
            let address = address(index);
            table
                .acquire(&address, table.hash(&address), stamp)
                .expect("one name per stamp")
        };
        let ids: Vec<u32> = (0..5_000).map(|index| acquire(&mut table, index)).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
        for (index, &id) in ids.iter().enumerate() {
            assert_eq!(acquire(&mut table, index as u32), id);
            table.release(id);
        }
        assert_eq!(table.referenced(), 5_000);
        // Release the even ones, then intern enough new accounts to sweep them away.
        for (index, &id) in ids.iter().enumerate() {
            if index % 2 == 0 {
                table.release(id);
            }
        }
        for index in 5_000..5_000 + SWEEP_THRESHOLD as u32 {
            let id = acquire(&mut table, index);
            table.release(id);
        }
        assert!(table.interned < SWEEP_THRESHOLD);
        for (index, &id) in ids.iter().enumerate() {
            if index % 2 == 1 {
                assert_eq!(acquire(&mut table, index as u32), id, "kept account");
            }
        }
        assert_eq!(table.referenced(), 2_500);
    }
}
