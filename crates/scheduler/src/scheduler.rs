//! The priority container and the scheduler: transactions wait in priority order; the scheduler
//! hands out batches of up to 64 whose accounts conflict neither with each other nor with any batch
//! still in flight, within the block's and each writable account's compute-unit limits.
//!
//! Design (`solana-block-production-ingest.md` §2 lists the peers): a max-heap of ready
//! transactions is scanned in priority order, as Agave's greedy scheduler does, but a transaction
//! that conflicts is not left in the scan: it parks on the account that blocked it, in that
//! account's priority-ordered wait list, so a 1,000-transaction chain on one hot account costs one
//! heap operation per transaction per release instead of a rescan of the chain (Agave's greedy
//! pass: 137 K tx/s with one payer). Releasing an account wakes only its first waiter (and the
//! readers behind a reader); a woken transaction that does not end up holding the account passes
//! the wake on, so no waiter is forgotten. A waiting transaction also reserves every account it
//! names: a lower-priority transaction that would conflict with the reservation waits too, so
//! cheap transactions cannot take a valuable one's accounts (or the block's units) while it waits
//! (prio-graph's ordering, built lazily and only where conflicts happen; one reservation per
//! account, the highest). An account is offered to its waiters again when its holder completes or
//! its reserving transaction leaves. Lock checks are array indexes: accounts are interned once
//! when a transaction enters (`accounts`).
//!
//! Limits: a transaction whose cost exceeds the block or account limit, or whose possible account
//! data allocation exceeds the block's growth limit, is refused at insertion; one that does not
//! fit in what is left of the block (units or data growth) waits (deferred) for the next block; one
//! whose blockhash expired is dropped when it reaches the top. The container holds `capacity`
//! queued transactions and evicts the lowest-priority one for a better newcomer.

use crate::accounts::{AccountId, AccountTable, NONE};
use crate::limits::{
    DEFAULT_CONTAINER_CAPACITY, MAX_BATCH_TRANSACTIONS, MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA,
    MAX_BLOCK_UNITS, MAX_TX_ACCOUNT_LOCKS, MAX_WRITABLE_ACCOUNT_UNITS,
};
use core::cmp::Reverse;
use core::fmt;
use kestrel_txview::Address;
use std::collections::BinaryHeap;

/// A transaction's handle while it is in the scheduler.
pub type TransactionId = u32;

/// Compute-unit limits of one block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BlockLimits {
    /// Units per block.
    pub block_units: u64,
    /// Units per writable account per block.
    pub account_units: u64,
    /// Bytes of account data the block's transactions may allocate.
    pub account_data_bytes: u64,
}

impl Default for BlockLimits {
    fn default() -> Self {
        Self {
            block_units: MAX_BLOCK_UNITS,
            account_units: MAX_WRITABLE_ACCOUNT_UNITS,
            account_data_bytes: MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA,
        }
    }
}

/// How the scheduler runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Execution workers.
    pub workers: usize,
    /// Batches a worker may have in flight at once.
    pub batches_per_worker: usize,
    /// Transactions per batch (1..=64).
    pub batch_transactions: usize,
    /// Queued transactions the container holds.
    pub capacity: usize,
    /// Block limits.
    pub limits: BlockLimits,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            workers: 4,
            batches_per_worker: 1,
            batch_transactions: MAX_BATCH_TRANSACTIONS,
            capacity: DEFAULT_CONTAINER_CAPACITY,
            limits: BlockLimits::default(),
        }
    }
}

/// What the scheduler needs to know of a transaction besides its accounts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionMeta {
    /// Priority (higher first).
    pub priority: u64,
    /// Cost in compute units.
    pub cost: u64,
    /// The leader's reward in lamports.
    pub reward: u64,
    /// Last slot in which the blockhash is valid.
    pub last_valid_slot: u64,
    /// Bytes of account data its System instructions may allocate.
    pub allocated_data_bytes: u64,
    /// The caller's handle of the transaction's bytes.
    pub packet: u32,
}

/// Why a transaction was not taken in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum InsertError {
    /// More accounts than a transaction may lock.
    TooManyAccountLocks {
        /// Accounts named.
        count: usize,
    },
    /// An account named twice (Agave's `AccountLoadedTwice`).
    AccountLoadedTwice,
    /// The cost exceeds the block's or an account's limit: it could never be scheduled.
    CostExceedsLimit {
        /// The cost.
        cost: u64,
    },
    /// It may allocate more account data than a block may grow by.
    AccountDataExceedsLimit {
        /// The bytes it may allocate.
        bytes: u64,
    },
    /// The container is full of transactions with at least this one's priority.
    ContainerFull,
}

impl fmt::Display for InsertError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyAccountLocks { count } => {
                write!(
                    formatter,
                    "{count} accounts, more than {MAX_TX_ACCOUNT_LOCKS}"
                )
            }
            Self::AccountLoadedTwice => write!(formatter, "an account is named twice"),
            Self::CostExceedsLimit { cost } => {
                write!(formatter, "cost {cost} exceeds the block or account limit")
            }
            Self::AccountDataExceedsLimit { bytes } => write!(
                formatter,
                "may allocate {bytes} bytes of account data, more than a block may"
            ),
            Self::ContainerFull => write!(formatter, "container full of better transactions"),
        }
    }
}

impl std::error::Error for InsertError {}

/// A transaction taken in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Inserted {
    /// Its handle.
    pub id: TransactionId,
    /// The packet of a lower-priority transaction evicted to make room.
    pub evicted_packet: Option<u32>,
}

/// Why a queued transaction left without being scheduled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Its blockhash expired.
    Expired,
}

/// Transactions for one worker; none conflicts with another in flight.
#[derive(Copy, Clone, Debug)]
pub struct Batch {
    /// The worker.
    pub worker: usize,
    length: u8,
    transactions: [TransactionId; MAX_BATCH_TRANSACTIONS],
}

impl Batch {
    /// The transactions, in priority order.
    pub fn transactions(&self) -> &[TransactionId] {
        &self.transactions[..usize::from(self.length)]
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Free,
    Ready,
    Parked,
    Deferred,
    InFlight,
}

/// One transaction's slot: what lock checks and wait lists read (40 bytes); the rest of its meta
/// lives apart, in `Scheduler::metas`.
#[derive(Clone)]
struct Entry {
    priority: u64,
    /// Insertion number: tie-break among equal priorities (first in, first out) and the
    /// identity that heap keys carry.
    sequence: u32,
    state: State,
    /// Wait-list links while parked.
    previous: u32,
    next: u32,
    /// Whether it waits to write the account it is parked on.
    parked_write: bool,
    /// The account whose release woke it, until it is looked at again.
    woken_from: AccountId,
    /// The account it waits for while parked.
    parked_on: AccountId,
    num_accounts: u8,
    /// Where its accounts start in the scheduler's account lists.
    accounts_offset: u32,
}

impl Entry {
    #[inline]
    fn key(&self, id: TransactionId) -> u128 {
        heap_key(self.priority, self.sequence, id)
    }

    #[inline]
    fn account_range(&self) -> core::ops::Range<usize> {
        let start = self.accounts_offset as usize;
        start..start + usize::from(self.num_accounts)
    }
}

const _: () = assert!(core::mem::size_of::<Entry>() <= 40);

/// Priority, then earlier insertion, then the id (which the key carries).
#[inline]
fn heap_key(priority: u64, sequence: u32, id: TransactionId) -> u128 {
    (u128::from(priority) << 64) | (u128::from(u32::MAX - sequence) << 32) | u128::from(id)
}

#[inline]
fn key_parts(key: u128) -> (TransactionId, u32) {
    (key as u32, u32::MAX - (key >> 32) as u32)
}

/// Outcome of looking at a ready transaction.
enum Attempt {
    Scheduled,
    Waiting,
}

/// Running totals.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerCounts {
    /// Transactions queued (ready, waiting or deferred).
    pub queued: usize,
    /// Transactions in flight.
    pub in_flight: usize,
    /// Compute units scheduled in the current block.
    pub block_units: u64,
    /// Account data bytes the current block's transactions may allocate.
    pub block_data_bytes: u64,
    /// Accounts named by queued or in-flight transactions.
    pub accounts: usize,
}

/// The priority container and scheduler.
pub struct Scheduler {
    config: SchedulerConfig,
    accounts: AccountTable,
    entries: Vec<Entry>,
    /// Each entry's meta, by the same index.
    metas: Vec<TransactionMeta>,
    free_entries: Vec<TransactionId>,
    /// Every live transaction's accounts, `account id << 1 | writable`, back to back (dense: a
    /// transaction costs 4 bytes per account); compacted when half is garbage.
    lists: Vec<u32>,
    garbage: usize,
    ready: BinaryHeap<u128>,
    deferred: Vec<(TransactionId, u32)>,
    /// Lowest-priority-first view of the queued transactions, kept only once the container has
    /// been full (lazy: entries whose transaction moved on are skipped).
    eviction: BinaryHeap<Reverse<u128>>,
    eviction_active: bool,
    batches_in_flight: Vec<usize>,
    queued: usize,
    in_flight: usize,
    block_units: u64,
    block_data_bytes: u64,
    /// Accounts with units in this block.
    touched: Vec<AccountId>,
    next_sequence: u32,
    next_stamp: u64,
    dropped: Vec<(u32, DropReason)>,
}

impl Scheduler {
    /// An empty scheduler.
    pub fn new(config: SchedulerConfig) -> Self {
        assert!(config.workers >= 1, "at least one worker");
        assert!(
            config.batches_per_worker >= 1,
            "at least one batch per worker"
        );
        assert!(
            (1..=MAX_BATCH_TRANSACTIONS).contains(&config.batch_transactions),
            "batches hold 1..=64 transactions"
        );
        Self {
            config,
            accounts: AccountTable::new(),
            entries: Vec::new(),
            metas: Vec::new(),
            free_entries: Vec::new(),
            lists: Vec::new(),
            garbage: 0,
            ready: BinaryHeap::new(),
            deferred: Vec::new(),
            eviction: BinaryHeap::new(),
            eviction_active: false,
            batches_in_flight: vec![0; config.workers],
            queued: 0,
            in_flight: 0,
            block_units: 0,
            block_data_bytes: 0,
            touched: Vec::new(),
            next_sequence: 0,
            next_stamp: 0,
            dropped: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// Running totals.
    pub fn counts(&self) -> SchedulerCounts {
        SchedulerCounts {
            queued: self.queued,
            in_flight: self.in_flight,
            block_units: self.block_units,
            block_data_bytes: self.block_data_bytes,
            accounts: self.accounts.referenced(),
        }
    }

    /// A queued or in-flight transaction's meta.
    pub fn meta(&self, id: TransactionId) -> &TransactionMeta {
        let entry = &self.entries[id as usize];
        assert!(entry.state != State::Free, "transaction {id} is not live");
        &self.metas[id as usize]
    }

    /// Queues a transaction that names `accounts` (address, writable), evicting the
    /// lowest-priority queued transaction when the container is full.
    pub fn insert<'a>(
        &mut self,
        meta: TransactionMeta,
        accounts: impl IntoIterator<Item = (&'a Address, bool)>,
    ) -> Result<Inserted, InsertError> {
        let limits = self.config.limits;
        if meta.cost > limits.block_units || meta.cost > limits.account_units {
            return Err(InsertError::CostExceedsLimit { cost: meta.cost });
        }
        if meta.allocated_data_bytes > limits.account_data_bytes {
            return Err(InsertError::AccountDataExceedsLimit {
                bytes: meta.allocated_data_bytes,
            });
        }
        let id = match self.free_entries.pop() {
            Some(id) => id,
            None => {
                self.metas.push(meta);
                self.entries.push(Entry {
                    priority: meta.priority,
                    sequence: 0,
                    state: State::Free,
                    previous: NONE,
                    next: NONE,
                    parked_write: false,
                    woken_from: NONE,
                    parked_on: NONE,
                    num_accounts: 0,
                    accounts_offset: 0,
                });
                (self.entries.len() - 1) as TransactionId
            }
        };
        if let Err(error) = self.intern_accounts(id, accounts) {
            self.free_entries.push(id);
            return Err(error);
        }
        let sequence = self.next_sequence;
        self.next_sequence = self.next_sequence.wrapping_add(1);
        let entry = &mut self.entries[id as usize];
        entry.priority = meta.priority;
        self.metas[id as usize] = meta;
        entry.sequence = sequence;
        let key = entry.key(id);
        let mut evicted_packet = None;
        if self.queued >= self.config.capacity {
            match self.evict_lowest(key) {
                Some(packet) => evicted_packet = Some(packet),
                None => {
                    self.release_accounts(id);
                    self.free_entries.push(id);
                    return Err(InsertError::ContainerFull);
                }
            }
        }
        let entry = &mut self.entries[id as usize];
        entry.state = State::Ready;
        entry.previous = NONE;
        entry.next = NONE;
        entry.woken_from = NONE;
        self.ready.push(key);
        if self.eviction_active {
            self.eviction.push(Reverse(key));
        }
        self.queued += 1;
        Ok(Inserted { id, evicted_packet })
    }

    fn intern_accounts<'a>(
        &mut self,
        id: TransactionId,
        accounts: impl IntoIterator<Item = (&'a Address, bool)>,
    ) -> Result<(), InsertError> {
        self.next_stamp += 1;
        let stamp = self.next_stamp;
        if self.garbage > self.lists.len() / 2 && self.lists.len() >= 1 << 16 {
            self.compact_lists();
        }
        let entry = &mut self.entries[id as usize];
        entry.num_accounts = 0;
        entry.accounts_offset = self.lists.len() as u32;
        let mut count = 0;
        let mut error = None;
        for (address, writable) in accounts {
            count += 1;
            if error.is_some() || count > MAX_TX_ACCOUNT_LOCKS {
                continue;
            }
            let account = self.accounts.acquire(address);
            let state = &mut self.accounts.states[account as usize];
            if state.stamp == stamp {
                self.accounts.release(account);
                error = Some(InsertError::AccountLoadedTwice);
                continue;
            }
            state.stamp = stamp;
            self.lists.push(account << 1 | u32::from(writable));
            self.entries[id as usize].num_accounts += 1;
        }
        if count > MAX_TX_ACCOUNT_LOCKS {
            error = Some(InsertError::TooManyAccountLocks { count });
        }
        match error {
            Some(error) => {
                self.release_accounts(id);
                Err(error)
            }
            None => Ok(()),
        }
    }

    fn release_accounts(&mut self, id: TransactionId) {
        let entry = &mut self.entries[id as usize];
        let range = entry.account_range();
        entry.num_accounts = 0;
        self.garbage += range.len();
        for &account in &self.lists[range] {
            self.accounts.release(account >> 1);
        }
    }

    /// Moves every live transaction's accounts to the front of a fresh list.
    fn compact_lists(&mut self) {
        let mut lists = Vec::with_capacity(self.lists.len() - self.garbage);
        for entry in &mut self.entries {
            if entry.num_accounts > 0 {
                let range = entry.account_range();
                entry.accounts_offset = lists.len() as u32;
                lists.extend_from_slice(&self.lists[range]);
            }
        }
        self.lists = lists;
        self.garbage = 0;
    }

    /// Evicts the lowest-priority queued transaction if it ranks below `key`; returns its packet.
    fn evict_lowest(&mut self, key: u128) -> Option<u32> {
        if !self.eviction_active || self.eviction.len() > 2 * self.queued + 1024 {
            self.eviction_active = true;
            self.eviction = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, entry)| {
                    matches!(entry.state, State::Ready | State::Parked | State::Deferred)
                })
                .map(|(id, entry)| Reverse(entry.key(id as TransactionId)))
                .collect();
        }
        while let Some(&Reverse(lowest)) = self.eviction.peek() {
            let (id, sequence) = key_parts(lowest);
            let entry = &self.entries[id as usize];
            let live = entry.sequence == sequence
                && matches!(entry.state, State::Ready | State::Parked | State::Deferred);
            if !live {
                self.eviction.pop();
                continue;
            }
            if lowest >= key {
                return None;
            }
            self.eviction.pop();
            let packet = self.metas[id as usize].packet;
            self.remove_queued(id);
            return Some(packet);
        }
        None
    }

    /// Takes a queued transaction out (its heap and deferred-list entries go stale).
    fn remove_queued(&mut self, id: TransactionId) {
        let entry = &self.entries[id as usize];
        let woken_from = entry.woken_from;
        if entry.state == State::Parked {
            let account = entry.parked_on;
            self.unlink(account, id);
        }
        self.entries[id as usize].state = State::Free;
        self.entries[id as usize].woken_from = NONE;
        if woken_from != NONE {
            self.accounts.states[woken_from as usize].wake_outstanding = false;
        }
        // Its reservations lapse: the waiters they held back may go.
        self.wake_accounts_of(id);
        self.release_accounts(id);
        self.free_entries.push(id);
        self.queued -= 1;
    }

    /// Hands out batches to workers with room, in priority order, until the workers are full or
    /// nothing more can go; `emit` receives each batch. Transactions whose blockhash is no longer
    /// valid at `slot` are dropped (see [`Self::drain_dropped`]).
    pub fn schedule(&mut self, slot: u64, mut emit: impl FnMut(Batch)) -> usize {
        let mut emitted = 0;
        'workers: while let Some(worker) = self.least_busy_worker() {
            let mut batch = Batch {
                worker,
                length: 0,
                transactions: [0; MAX_BATCH_TRANSACTIONS],
            };
            while usize::from(batch.length) < self.config.batch_transactions {
                let Some(key) = self.ready.pop() else {
                    if batch.length == 0 {
                        break 'workers;
                    }
                    break;
                };
                let (id, sequence) = key_parts(key);
                let entry = &self.entries[id as usize];
                if entry.state != State::Ready || entry.sequence != sequence {
                    continue;
                }
                let meta = &self.metas[id as usize];
                if meta.last_valid_slot < slot {
                    let packet = meta.packet;
                    self.remove_queued(id);
                    self.dropped.push((packet, DropReason::Expired));
                    continue;
                }
                if let Attempt::Scheduled = self.attempt(id, key) {
                    batch.transactions[usize::from(batch.length)] = id;
                    batch.length += 1;
                }
            }
            self.batches_in_flight[worker] += 1;
            emitted += 1;
            emit(batch);
        }
        emitted
    }

    fn least_busy_worker(&self) -> Option<usize> {
        let (worker, &count) = self
            .batches_in_flight
            .iter()
            .enumerate()
            .min_by_key(|(_, &count)| count)?;
        (count < self.config.batches_per_worker).then_some(worker)
    }

    /// Looks at ready transaction `id`: schedules it, parks it, or defers it to the next block.
    fn attempt(&mut self, id: TransactionId, key: u128) -> Attempt {
        let woken_from = self.entries[id as usize].woken_from;
        if woken_from != NONE {
            self.entries[id as usize].woken_from = NONE;
            self.accounts.states[woken_from as usize].wake_outstanding = false;
        }
        let attempt = self.attempt_locks(id, key);
        if woken_from != NONE {
            self.maybe_wake(woken_from);
        }
        attempt
    }

    fn attempt_locks(&mut self, id: TransactionId, key: u128) -> Attempt {
        let entry = &self.entries[id as usize];
        for &account in &self.lists[entry.account_range()] {
            let (account, writable) = (account >> 1, account & 1 == 1);
            let state = &self.accounts.states[account as usize];
            let held = state.write_locked || (writable && state.readers > 0);
            let behind = state.waiters_head != NONE && {
                let head = &self.entries[state.waiters_head as usize];
                (writable || head.parked_write) && head.key(state.waiters_head) > key
            };
            let reserved = self
                .reservation(state)
                .is_some_and(|(reserved_key, reserved_write)| {
                    (writable || reserved_write) && reserved_key > key
                });
            if held || behind || reserved {
                self.park(id, key, account, writable);
                return Attempt::Waiting;
            }
        }
        let meta = &self.metas[id as usize];
        let cost = meta.cost;
        let limits = self.config.limits;
        let allocated = meta.allocated_data_bytes;
        let over_block = self.block_units + cost > limits.block_units
            || self.block_data_bytes + allocated > limits.account_data_bytes;
        let over_account = self.lists[entry.account_range()].iter().any(|&account| {
            account & 1 == 1
                && self.accounts.states[(account >> 1) as usize].block_units + cost
                    > limits.account_units
        });
        if over_block || over_account {
            let sequence = entry.sequence;
            self.entries[id as usize].state = State::Deferred;
            self.deferred.push((id, sequence));
            self.wake_accounts_of(id);
            return Attempt::Waiting;
        }
        self.block_units += cost;
        self.block_data_bytes += allocated;
        let entry = &mut self.entries[id as usize];
        entry.state = State::InFlight;
        for &account in &self.lists[entry.account_range()] {
            let state = &mut self.accounts.states[(account >> 1) as usize];
            if account & 1 == 1 {
                state.write_locked = true;
                // Each account enters the list once per block: only a positive cost makes its
                // total leave zero.
                if state.block_units == 0 && cost > 0 {
                    self.touched.push(account >> 1);
                }
                state.block_units += cost;
            } else {
                state.readers += 1;
            }
        }
        self.queued -= 1;
        self.in_flight += 1;
        Attempt::Scheduled
    }

    /// Parks `id` on `account`'s wait list, in priority order.
    fn park(&mut self, id: TransactionId, key: u128, account: AccountId, writable: bool) {
        let state = &self.accounts.states[account as usize];
        // New arrivals mostly come in priority order (they go last); a woken waiter that waits
        // again mostly outranks the others (it goes first); others walk from the tail.
        let head = state.waiters_head;
        let mut after = state.waiters_tail;
        if head != NONE && self.entries[head as usize].key(head) < key {
            after = NONE;
        }
        while after != NONE && self.entries[after as usize].key(after) < key {
            after = self.entries[after as usize].previous;
        }
        let before = if after == NONE {
            state.waiters_head
        } else {
            self.entries[after as usize].next
        };
        let entry = &mut self.entries[id as usize];
        entry.state = State::Parked;
        entry.parked_on = account;
        entry.parked_write = writable;
        entry.previous = after;
        entry.next = before;
        if after == NONE {
            self.accounts.states[account as usize].waiters_head = id;
        } else {
            self.entries[after as usize].next = id;
        }
        if before == NONE {
            self.accounts.states[account as usize].waiters_tail = id;
        } else {
            self.entries[before as usize].previous = id;
        }
        // Reserve every account it names against lower-priority transactions.
        let sequence = self.entries[id as usize].sequence;
        for index in self.entries[id as usize].account_range() {
            let named = self.lists[index];
            let state = &self.accounts.states[(named >> 1) as usize];
            if self
                .reservation(state)
                .is_none_or(|(reserved_key, _)| reserved_key < key)
            {
                let state = &mut self.accounts.states[(named >> 1) as usize];
                state.reserved_by = id;
                state.reserved_sequence = sequence;
                state.reserved_write = named & 1 == 1;
            }
        }
    }

    /// The key and mode of the account's reservation, if its transaction still waits.
    #[inline]
    fn reservation(&self, state: &crate::accounts::AccountState) -> Option<(u128, bool)> {
        let id = state.reserved_by;
        if id == NONE {
            return None;
        }
        let entry = &self.entries[id as usize];
        (entry.state == State::Parked && entry.sequence == state.reserved_sequence)
            .then(|| (entry.key(id), state.reserved_write))
    }

    /// Offers every account `id` names to its waiters (its reservations lapsed).
    fn wake_accounts_of(&mut self, id: TransactionId) {
        for index in self.entries[id as usize].account_range() {
            let account = self.lists[index] >> 1;
            self.maybe_wake(account);
        }
    }

    /// Takes parked `id` off `account`'s wait list.
    fn unlink(&mut self, account: AccountId, id: TransactionId) {
        let (previous, next) = {
            let entry = &self.entries[id as usize];
            (entry.previous, entry.next)
        };
        if previous == NONE {
            self.accounts.states[account as usize].waiters_head = next;
        } else {
            self.entries[previous as usize].next = next;
        }
        if next == NONE {
            self.accounts.states[account as usize].waiters_tail = previous;
        } else {
            self.entries[next as usize].previous = previous;
        }
        let entry = &mut self.entries[id as usize];
        entry.previous = NONE;
        entry.next = NONE;
    }

    /// Wakes `account`'s first waiter if the account is free for it and no wake is outstanding.
    fn maybe_wake(&mut self, account: AccountId) {
        let state = &self.accounts.states[account as usize];
        let head = state.waiters_head;
        if state.wake_outstanding || head == NONE {
            return;
        }
        let head_entry = &self.entries[head as usize];
        let writable = head_entry.parked_write;
        if state.write_locked || (writable && state.readers > 0) {
            return;
        }
        // A higher-priority waiter elsewhere reserves it: waking the head would only park it
        // again; that waiter's departure offers the account again.
        let head_key = head_entry.key(head);
        if self
            .reservation(state)
            .is_some_and(|(reserved_key, reserved_write)| {
                (writable || reserved_write) && reserved_key > head_key
            })
        {
            return;
        }
        self.unlink(account, head);
        self.accounts.states[account as usize].wake_outstanding = true;
        let entry = &mut self.entries[head as usize];
        entry.state = State::Ready;
        entry.woken_from = account;
        let key = entry.key(head);
        self.ready.push(key);
    }

    /// Marks `batch` executed: its locks are released and its transactions leave the scheduler.
    /// `batch` must be one [`Self::schedule`] emitted and not yet completed.
    pub fn complete(&mut self, batch: &Batch) {
        let worker = &mut self.batches_in_flight[batch.worker];
        assert!(
            *worker > 0,
            "worker {} has no batch in flight",
            batch.worker
        );
        *worker -= 1;
        for &id in batch.transactions() {
            let entry = &self.entries[id as usize];
            assert!(
                entry.state == State::InFlight,
                "transaction {id} is not in flight"
            );
            // Unlock, drop the reference and offer the account in one pass.
            let range = entry.account_range();
            for index in range.clone() {
                let account = self.lists[index];
                let state = &mut self.accounts.states[(account >> 1) as usize];
                if account & 1 == 1 {
                    state.write_locked = false;
                } else {
                    state.readers -= 1;
                }
                self.accounts.release(account >> 1);
                self.maybe_wake(account >> 1);
            }
            let entry = &mut self.entries[id as usize];
            entry.state = State::Free;
            entry.num_accounts = 0;
            self.garbage += range.len();
            self.free_entries.push(id);
            self.in_flight -= 1;
        }
    }

    /// Starts a new block: the compute-unit totals restart and deferred transactions queue again.
    pub fn new_block(&mut self) {
        self.block_units = 0;
        self.block_data_bytes = 0;
        for account in core::mem::take(&mut self.touched) {
            self.accounts.states[account as usize].block_units = 0;
        }
        for (id, sequence) in core::mem::take(&mut self.deferred) {
            let entry = &mut self.entries[id as usize];
            if entry.state == State::Deferred && entry.sequence == sequence {
                entry.state = State::Ready;
                let key = entry.key(id);
                self.ready.push(key);
            }
        }
    }

    /// Packets of transactions dropped since the last call, with the reason.
    pub fn drain_dropped(&mut self) -> impl Iterator<Item = (u32, DropReason)> + '_ {
        self.dropped.drain(..)
    }
}
