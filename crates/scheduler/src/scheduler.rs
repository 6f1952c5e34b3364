//! The priority container and the scheduler: transactions wait in priority order; the scheduler
//! hands out batches of up to 64 whose accounts conflict neither with each other nor with any batch
//! still in flight, within the block's and each writable account's compute-unit limits.
//!
//! Design (`solana-block-production-ingest.md` §2 lists the peers): prio-graph's ordering — a
//! transaction runs only after every higher-priority transaction that conflicts with it has left —
//! kept with flat arrays and counts instead of a graph in hash maps. Inserted transactions wait in
//! the container unordered; each scheduling pass sorts the new arrivals by priority once (batched
//! extraction) and appends each of their accounts to that account's lock queue: an intrusive
//! list of account nodes (one per transaction and account, in one flat array) whose front holds
//! the account — one writer, or a run of readers. Every transaction counts the nodes it does not
//! hold yet; it is ready when the count is zero, and ready transactions are popped in priority
//! order (those ready on entry from a sorted run, the others from a max-heap). When a transaction leaves (completed, deferred, expired or
//! evicted), its nodes leave their queues and the nodes that come to the front are granted: the
//! work per release is one step per newly granted node, with no rescan of waiting transactions
//! (Agave's greedy pass rescans: 137 K tx/s with one payer) and no hash lookup (accounts are
//! interned to dense ids once, when a transaction enters: `accounts`). Transactions that arrive
//! later queue behind those already in the queues, as in Agave's look-ahead passes.
//!
//! Limits: a transaction whose cost exceeds the block or account limit, or whose possible account
//! data allocation exceeds the block's growth limit, is refused at insertion; one that does not
//! fit in what is left of the block (units or data growth) leaves the queues (its successors go
//! on, as Agave's scheduler unblocks a transaction it skips) and waits for the next block
//! (deferred); one whose blockhash expired is dropped when it reaches the top. The container
//! holds `capacity` queued transactions and evicts the lowest-priority one for a better newcomer.

use crate::accounts::{AccountId, AccountTable, NONE};
use crate::huge_pages;
use crate::limits::{
    DEFAULT_CONTAINER_CAPACITY, MAX_BATCH_TRANSACTIONS, MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA,
    MAX_BLOCK_UNITS, MAX_TX_ACCOUNT_LOCKS, MAX_WRITABLE_ACCOUNT_UNITS,
};
use crate::prefetch::prefetch;
use crate::radix;
use core::cmp::Reverse;
use core::fmt;
use kestrel_txview::Address;
use std::collections::BinaryHeap;

/// Accounts per transaction the address index is sized for up front (the 308 mainnet legacy
/// transactions of the test data name 5.4 on average; a transaction may name up to
/// `MAX_TX_ACCOUNT_LOCKS`, and the index doubles past the reservation). The index is zeroed
/// memory that hashing touches all over, so it is not reserved more generously.
const RESERVED_ACCOUNTS_PER_TRANSACTION: usize = 8;

/// Accounts per transaction the account rows and lock-queue nodes reserve room for: address
/// space, whose pages are touched only as rows and nodes are appended, so twice the index's
/// reservation costs nothing until used and spares windows of up to 16 accounts per transaction
/// a move of their two largest tables.
const ROOM_ACCOUNTS_PER_TRANSACTION: usize = 2 * RESERVED_ACCOUNTS_PER_TRANSACTION;

/// How far ahead, in transactions, the lock-queue passes over many transactions' accounts hint
/// the lines they will read once the account rows outgrow L1 (`AccountTable::outgrows_l1`): an
/// entry first, then its nodes, then its accounts' rows, each hint a few transactions after the
/// one it depends on.
const ENTRY_AHEAD: usize = 12;
const NODES_AHEAD: usize = 6;
const ROWS_AHEAD: usize = 3;

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
#[derive(Copy, Clone)]
pub struct Batch {
    /// The worker.
    pub worker: usize,
    length: u8,
    /// The first `length` are the batch's; the rest are left over from earlier batches of the
    /// same pass (one array is laid out per pass, not one per batch).
    transactions: [TransactionId; MAX_BATCH_TRANSACTIONS],
}

impl Batch {
    /// The transactions, in priority order.
    pub fn transactions(&self) -> &[TransactionId] {
        &self.transactions[..usize::from(self.length)]
    }
}

impl fmt::Debug for Batch {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Batch")
            .field("worker", &self.worker)
            .field("transactions", &self.transactions())
            .finish()
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Free,
    /// In the container, not yet in the lock queues.
    Pending,
    /// In the lock queues, holding some of its accounts.
    Waiting,
    /// Holding all its accounts, in the ready heap.
    Ready,
    /// Out of the queues until the next block.
    Deferred,
    InFlight,
}

/// One transaction's slot: what the lock queues read (32 bytes); the rest of its meta lives
/// apart, in `Scheduler::metas`.
#[derive(Clone)]
struct Entry {
    priority: u64,
    /// Insertion number: tie-break among equal priorities (first in, first out) and the
    /// identity that heap keys carry.
    sequence: u32,
    state: State,
    num_accounts: u8,
    /// Nodes of its accounts not yet at the front of their queues.
    blocked: u8,
    /// Where its account nodes start in the scheduler's node array.
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

    #[inline]
    fn is_queued(&self) -> bool {
        matches!(
            self.state,
            State::Pending | State::Waiting | State::Ready | State::Deferred
        )
    }
}

const _: () = assert!(core::mem::size_of::<Entry>() <= 24);

/// One transaction's use of one account: its place in the account's lock queue (16 bytes).
#[derive(Copy, Clone)]
struct Node {
    /// `account id << 1 | writable`.
    account: u32,
    /// The transaction, with `GRANTED` set while it is at the front of the queue (holds the
    /// account).
    owner: u32,
    /// Neighbours in the account's queue (node indexes), while linked.
    previous: u32,
    next: u32,
}

/// The flag of a granted node in `Node::owner` (transaction ids stay below it: `Scheduler::new`).
const GRANTED: u32 = 1 << 31;

const _: () = assert!(core::mem::size_of::<Node>() == 16);

impl Node {
    #[inline]
    fn writable(&self) -> bool {
        self.account & 1 == 1
    }

    #[inline]
    fn granted(&self) -> bool {
        self.owner & GRANTED != 0
    }

    #[inline]
    fn owner(&self) -> TransactionId {
        self.owner & !GRANTED
    }

    #[inline]
    fn set_granted(&mut self, granted: bool) {
        self.owner = self.owner() | if granted { GRANTED } else { 0 };
    }

    #[inline]
    fn account_id(&self) -> AccountId {
        self.account >> 1
    }
}

/// Priority, then earlier insertion, then the id (which the key carries).
#[inline]
fn heap_key(priority: u64, sequence: u32, id: TransactionId) -> u128 {
    (u128::from(priority) << 64) | (u128::from(u32::MAX - sequence) << 32) | u128::from(id)
}

#[inline]
fn key_parts(key: u128) -> (TransactionId, u32) {
    (key as u32, u32::MAX - (key >> 32) as u32)
}

/// Grants the node at `index` if it writes and `readers_only` is false, or the run of readers
/// that starts there.
fn grant_from(
    nodes: &mut [Node],
    entries: &mut [Entry],
    ready: &mut BinaryHeap<u128>,
    mut index: u32,
    readers_only: bool,
) {
    if nodes[index as usize].writable() {
        if !readers_only {
            grant(nodes, entries, ready, index);
        }
        return;
    }
    while index != NONE && !nodes[index as usize].writable() {
        grant(nodes, entries, ready, index);
        index = nodes[index as usize].next;
    }
}

/// Grants the node at `index`; its transaction is ready when it holds all its accounts. Inlined:
/// as a call, its prologue and epilogue were a third of its instructions (a grant per account
/// of every transaction that waited).
#[inline(always)]
fn grant(nodes: &mut [Node], entries: &mut [Entry], ready: &mut BinaryHeap<u128>, index: u32) {
    let node = &mut nodes[index as usize];
    node.set_granted(true);
    let owner = node.owner();
    let entry = &mut entries[owner as usize];
    entry.blocked -= 1;
    if entry.blocked == 0 && entry.state == State::Waiting {
        entry.state = State::Ready;
        ready.push(entry.key(owner));
    }
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
    /// Every live transaction's account nodes, back to back; compacted when half is garbage.
    nodes: Vec<Node>,
    garbage: usize,
    /// Keys of the transactions in the container and not yet in the lock queues, unordered
    /// (sorted once per scheduling pass; entries whose transaction moved on are skipped).
    pending: Vec<u128>,
    /// Whether `pending`'s insertion numbers ascend (then the sort needs only the priorities).
    pending_in_order: bool,
    /// The arrivals sort's working space.
    sort_scratch: Vec<u128>,
    /// Ready transactions, highest first, in two parts: those ready as soon as they entered the
    /// lock queues, appended in the order they entered (priority order) and taken from
    /// `ready_next` on, and a heap of those that became ready later (granted by a leaving
    /// transaction). Most transactions of a pass never touch the heap.
    ready_run: Vec<u128>,
    ready_next: usize,
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
    /// The hashes of an inserted transaction's accounts while they are interned in a large
    /// table (a local array cost a 512-byte zeroing and a 512-byte copy per transaction).
    account_hashes: [u64; MAX_TX_ACCOUNT_LOCKS],
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
        let in_flight = config
            .workers
            .saturating_mul(config.batches_per_worker)
            .saturating_mul(config.batch_transactions);
        assert!(
            config.capacity.saturating_add(in_flight) < GRANTED as usize,
            "transaction ids stay below the granted flag"
        );
        // Room for a full container up front (address space; pages are touched as used): a
        // window then never pays for rehashing or moving its tables while it is scheduled.
        let capacity = config.capacity;
        let accounts = capacity.saturating_mul(RESERVED_ACCOUNTS_PER_TRANSACTION);
        let room = capacity.saturating_mul(ROOM_ACCOUNTS_PER_TRANSACTION);
        let scheduler = Self {
            config,
            accounts: AccountTable::with_capacity(accounts, room),
            entries: Vec::with_capacity(capacity),
            metas: Vec::with_capacity(capacity),
            free_entries: Vec::new(),
            nodes: Vec::with_capacity(room),
            garbage: 0,
            pending: Vec::with_capacity(capacity),
            pending_in_order: true,
            sort_scratch: Vec::new(),
            ready_run: Vec::with_capacity(capacity),
            ready_next: 0,
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
            account_hashes: [0; MAX_TX_ACCOUNT_LOCKS],
            next_sequence: 0,
            next_stamp: 0,
            dropped: Vec::new(),
        };
        huge_pages::advise(&scheduler.entries);
        huge_pages::advise(&scheduler.metas);
        huge_pages::advise(&scheduler.nodes);
        scheduler
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
    /// lowest-priority queued transaction when the container is full. `accounts` may be walked
    /// twice (once to hint a large account table's lines).
    pub fn insert<'a>(
        &mut self,
        meta: TransactionMeta,
        accounts: impl IntoIterator<Item = (&'a Address, bool), IntoIter: Clone>,
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
        if self.queued == 0 && self.in_flight == 0 && !self.entries.is_empty() {
            self.restart_ids();
        }
        let id = match self.free_entries.pop() {
            Some(id) => id,
            None => {
                self.metas.push(meta);
                self.entries.push(Entry {
                    priority: meta.priority,
                    sequence: 0,
                    state: State::Free,
                    num_accounts: 0,
                    blocked: 0,
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
        self.entries[id as usize].state = State::Pending;
        if self.pending.len() > 2 * self.queued + 1024 {
            let entries = &self.entries;
            self.pending.retain(|&key| {
                let (id, sequence) = key_parts(key);
                let entry = &entries[id as usize];
                entry.state == State::Pending && entry.sequence == sequence
            });
        }
        self.push_pending(key);
        if self.eviction_active {
            self.eviction.push(Reverse(key));
        }
        self.queued += 1;
        Ok(Inserted { id, evicted_packet })
    }

    /// Starts the transaction ids afresh once the scheduler has drained (every id is free and
    /// every key left in the arrivals, ready, eviction and deferred lists is stale), so that the
    /// next window's ids ascend in arrival order as a fresh scheduler's do: ids taken from the
    /// free list come in the reverse of the last window's completion order, scattering the
    /// insertions' entry and meta writes.
    fn restart_ids(&mut self) {
        self.entries.clear();
        self.metas.clear();
        self.free_entries.clear();
        self.pending.clear();
        self.pending_in_order = true;
        self.ready_run.clear();
        self.ready_next = 0;
        self.ready.clear();
        self.eviction.clear();
        self.eviction_active = false;
        self.deferred.clear();
    }

    fn intern_accounts<'a>(
        &mut self,
        id: TransactionId,
        accounts: impl IntoIterator<Item = (&'a Address, bool), IntoIter: Clone>,
    ) -> Result<(), InsertError> {
        self.next_stamp += 1;
        let stamp = self.next_stamp;
        if self.garbage == self.nodes.len() {
            // No live transaction has nodes (every queue is empty): start the array afresh, and
            // the accounts too unless a row holds this block's units.
            self.nodes.clear();
            self.garbage = 0;
            if self.touched.is_empty() {
                self.accounts.clear_if_idle();
            }
        } else if self.garbage > self.nodes.len() / 2 && self.nodes.len() >= 1 << 16 {
            self.compact_nodes();
        }
        self.accounts.reserve(MAX_TX_ACCOUNT_LOCKS);
        if self.nodes.capacity() - self.nodes.len() < MAX_TX_ACCOUNT_LOCKS {
            // Doubling, as `push` would, and the new allocation gets huge pages too.
            self.nodes
                .reserve(self.nodes.len().max(MAX_TX_ACCOUNT_LOCKS));
            huge_pages::advise(&self.nodes);
        }
        let offset = self.nodes.len();
        let mut accounts = accounts.into_iter();
        // Once the rows outgrow L1, hash the accounts first and hint each lookup's index slot, so
        // that the lookups' cache misses overlap instead of following one another; in a table
        // larger than L2, then hint each slot's row too (reading a slot to find its row waits
        // for the slot: worth it only when the row would come from memory).
        let hashed = self.accounts.outgrows_l1();
        if hashed {
            let mut count = 0;
            for (hash, (address, _)) in self.account_hashes.iter_mut().zip(accounts.clone()) {
                *hash = self.accounts.hash(address);
                self.accounts.prefetch_slot(*hash);
                count += 1;
            }
            if self.accounts.is_large() {
                for &hash in &self.account_hashes[..count] {
                    self.accounts.prefetch_row(hash);
                }
            }
        }
        let mut duplicate = false;
        for (index, (address, writable)) in accounts.by_ref().take(MAX_TX_ACCOUNT_LOCKS).enumerate()
        {
            let hash = if hashed {
                self.account_hashes[index]
            } else {
                self.accounts.hash(address)
            };
            let Some(account) = self.accounts.acquire(address, hash, stamp) else {
                duplicate = true;
                break;
            };
            self.nodes.push(Node {
                account: account << 1 | u32::from(writable),
                owner: id,
                previous: NONE,
                next: NONE,
            });
        }
        let entry = &mut self.entries[id as usize];
        entry.accounts_offset = offset as u32;
        // At most `MAX_TX_ACCOUNT_LOCKS` nodes were pushed.
        let acquired = self.nodes.len() - offset;
        entry.num_accounts = acquired as u8;
        // The accounts left unread count towards the limit, which takes precedence.
        let count = acquired + usize::from(duplicate) + accounts.count();
        let error = if count > MAX_TX_ACCOUNT_LOCKS {
            InsertError::TooManyAccountLocks { count }
        } else if duplicate {
            InsertError::AccountLoadedTwice
        } else {
            return Ok(());
        };
        self.release_accounts(id);
        Err(error)
    }

    fn release_accounts(&mut self, id: TransactionId) {
        let entry = &mut self.entries[id as usize];
        let range = entry.account_range();
        entry.num_accounts = 0;
        self.garbage += range.len();
        for node in &self.nodes[range] {
            self.accounts.release(node.account_id());
        }
    }

    /// Moves every live transaction's nodes to the front of a fresh array, keeping the lock
    /// queues' links.
    fn compact_nodes(&mut self) {
        let mut nodes = Vec::with_capacity(self.nodes.len() - self.garbage);
        huge_pages::advise(&nodes);
        let mut moved = vec![NONE; self.nodes.len()];
        for entry in &mut self.entries {
            if entry.num_accounts > 0 {
                let range = entry.account_range();
                entry.accounts_offset = nodes.len() as u32;
                for (old, node) in range.clone().zip(&self.nodes[range]) {
                    moved[old] = nodes.len() as u32;
                    nodes.push(*node);
                }
            }
        }
        let relink = |link: u32| {
            if link == NONE {
                NONE
            } else {
                moved[link as usize]
            }
        };
        for node in &mut nodes {
            node.previous = relink(node.previous);
            node.next = relink(node.next);
        }
        for state in &mut self.accounts.states {
            state.head = relink(state.head);
            state.tail = relink(state.tail);
        }
        self.nodes = nodes;
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
                .filter(|(_, entry)| entry.is_queued())
                .map(|(id, entry)| Reverse(entry.key(id as TransactionId)))
                .collect();
        }
        while let Some(&Reverse(lowest)) = self.eviction.peek() {
            let (id, sequence) = key_parts(lowest);
            let entry = &self.entries[id as usize];
            if !(entry.sequence == sequence && entry.is_queued()) {
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
        let state = self.entries[id as usize].state;
        self.entries[id as usize].state = State::Free;
        if matches!(state, State::Waiting | State::Ready) {
            self.leave_queues(id, true);
        } else {
            self.release_accounts(id);
        }
        self.free_entries.push(id);
        self.queued -= 1;
    }

    /// Adds a key to the arrivals, noting whether they stay in insertion order.
    #[inline]
    fn push_pending(&mut self, key: u128) {
        if let Some(&last) = self.pending.last() {
            self.pending_in_order &= key_parts(last).1 < key_parts(key).1;
        }
        self.pending.push(key);
    }

    /// Appends the transactions that arrived since the last pass to the lock queues, in priority
    /// order.
    fn enter_arrivals(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut pending = core::mem::take(&mut self.pending);
        radix::sort_descending(&mut pending, &mut self.sort_scratch, self.pending_in_order);
        self.pending_in_order = true;
        // Arrivals that are ready at once extend the run only if nothing of it is left: the run
        // stays in priority order.
        let extend_run = self.ready_next == self.ready_run.len();
        if extend_run {
            self.ready_run.clear();
            self.ready_next = 0;
        }
        let hinted = self.accounts.outgrows_l1();
        for (position, &key) in pending.iter().enumerate() {
            if hinted {
                self.prefetch_entering(&pending, position);
            }
            let (id, sequence) = key_parts(key);
            let entry = &self.entries[id as usize];
            if entry.state == State::Pending && entry.sequence == sequence {
                self.enter_queues(id, key, extend_run);
            }
        }
        pending.clear();
        self.pending = pending;
    }

    /// Hints, while the arrival at `position` enters the queues, the lines of those a few
    /// places on: the entry of the arrival `ENTRY_AHEAD` on, the nodes of the one `NODES_AHEAD`
    /// on (its entry hinted before) and the account rows of the one `ROWS_AHEAD` on (its nodes
    /// hinted before). Stale keys only hint lines nobody reads.
    fn prefetch_entering(&self, pending: &[u128], position: usize) {
        let entry_at = |ahead: usize| {
            pending
                .get(position + ahead)
                .map(|&key| &self.entries[key_parts(key).0 as usize])
        };
        if let Some(entry) = entry_at(ENTRY_AHEAD) {
            prefetch(entry);
        }
        if let Some(nodes) =
            entry_at(NODES_AHEAD).and_then(|entry| self.nodes.get(entry.account_range()))
        {
            self.prefetch_nodes(nodes);
        }
        if let Some(nodes) =
            entry_at(ROWS_AHEAD).and_then(|entry| self.nodes.get(entry.account_range()))
        {
            for node in nodes {
                self.accounts.prefetch_state(node.account_id());
            }
        }
    }

    /// Hints the lines of a transaction's nodes (first and last: they span at most a few).
    fn prefetch_nodes(&self, nodes: &[Node]) {
        if let (Some(first), Some(last)) = (nodes.first(), nodes.last()) {
            prefetch(first);
            prefetch(last);
        }
    }

    /// Appends `id`'s nodes to its accounts' queues; a node is granted at once when the queue is
    /// empty or holds only granted readers and it reads.
    fn enter_queues(&mut self, id: TransactionId, key: u128, extend_run: bool) {
        let mut blocked = 0u8;
        // Local slices, as in `leave_queues`.
        let nodes = &mut self.nodes[..];
        let states = &mut self.accounts.states[..];
        for index in self.entries[id as usize].account_range() {
            let node = nodes[index];
            let state = &mut states[node.account_id() as usize];
            let tail = state.tail;
            let granted = if tail == NONE {
                state.head = index as u32;
                true
            } else {
                let last = &mut nodes[tail as usize];
                last.next = index as u32;
                !node.writable() && !last.writable() && last.granted()
            };
            state.tail = index as u32;
            let node = &mut nodes[index];
            node.previous = tail;
            node.next = NONE;
            node.set_granted(granted);
            blocked += u8::from(!granted);
        }
        let entry = &mut self.entries[id as usize];
        entry.blocked = blocked;
        if blocked == 0 {
            entry.state = State::Ready;
            if extend_run {
                self.ready_run.push(key);
            } else {
                self.ready.push(key);
            }
        } else {
            entry.state = State::Waiting;
        }
    }

    /// Takes `id`'s nodes out of their queues, granting the nodes that come to the front; with
    /// `release`, also drops its account references (in the same pass over its accounts).
    fn leave_queues(&mut self, id: TransactionId, release: bool) {
        let entry = &mut self.entries[id as usize];
        let range = entry.account_range();
        if release {
            entry.num_accounts = 0;
            self.garbage += range.len();
        }
        // Local slices: the loop's stores into nodes and rows cannot then alias the vectors'
        // lengths and pointers, which stay in registers.
        let nodes = &mut self.nodes[..];
        let states = &mut self.accounts.states[..];
        let mut idle = 0;
        for index in range {
            let node = nodes[index];
            let state = &mut states[node.account_id() as usize];
            let (previous, next) = (node.previous, node.next);
            if previous == NONE {
                state.head = next;
            } else {
                nodes[previous as usize].next = next;
            }
            if next == NONE {
                state.tail = previous;
            } else {
                nodes[next as usize].previous = previous;
            }
            if release && state.drop_reference() {
                idle += 1;
            }
            // The removed node's links and flag stay stale: `enter_queues` sets them again.
            if next == NONE || nodes[next as usize].granted() {
                continue;
            }
            // The front is a writer or a run of readers: a granted writer's successor comes to
            // the front; so does the node after the last granted reader; a waiting writer that
            // leaves from behind granted readers lets the readers after it join them.
            let front = previous == NONE;
            let after_granted_readers = !front && {
                let previous = &nodes[previous as usize];
                previous.granted() && !previous.writable()
            };
            if (node.granted() && front)
                || (!node.granted() && node.writable() && after_granted_readers)
            {
                grant_from(
                    nodes,
                    &mut self.entries,
                    &mut self.ready,
                    next,
                    after_granted_readers,
                );
            }
        }
        self.accounts.note_idle(idle);
    }

    /// Hands out batches to workers with room, in priority order, until the workers are full or
    /// nothing more can go; `emit` receives each batch. Transactions whose blockhash is no longer
    /// valid at `slot` are dropped (see [`Self::drain_dropped`]).
    pub fn schedule(&mut self, slot: u64, mut emit: impl FnMut(Batch)) -> usize {
        let Some(mut worker) = self.least_busy_worker() else {
            return 0;
        };
        self.enter_arrivals();
        let mut emitted = 0;
        // One batch array for the pass, refilled for each worker: a chain of one-transaction
        // batches (one payer) would otherwise zero 256 bytes per transaction.
        let mut batch = Batch {
            worker: 0,
            length: 0,
            transactions: [0; MAX_BATCH_TRANSACTIONS],
        };
        loop {
            batch.worker = worker;
            batch.length = 0;
            while usize::from(batch.length) < self.config.batch_transactions {
                let Some(key) = self.pop_ready() else {
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
                if self.fits_block(id) {
                    self.start(id);
                    batch.transactions[usize::from(batch.length)] = id;
                    batch.length += 1;
                } else {
                    // Its successors go on; it waits for the next block.
                    self.entries[id as usize].state = State::Deferred;
                    self.leave_queues(id, false);
                    self.deferred.push((id, sequence));
                }
            }
            if batch.length == 0 {
                break;
            }
            self.batches_in_flight[worker] += 1;
            emitted += 1;
            emit(batch);
            // Nothing ready (the usual end of a pass on a chain of conflicting transactions):
            // no worker to look for.
            if !self.has_ready() {
                break;
            }
            match self.least_busy_worker() {
                Some(next) => worker = next,
                None => break,
            }
        }
        emitted
    }

    /// Whether a ready key is left (possibly stale).
    #[inline]
    fn has_ready(&self) -> bool {
        self.ready_next < self.ready_run.len() || !self.ready.is_empty()
    }

    /// The highest ready key (possibly stale: the caller checks the entry).
    #[inline]
    fn pop_ready(&mut self) -> Option<u128> {
        match (self.ready_run.get(self.ready_next), self.ready.peek()) {
            (Some(&run), Some(&heap)) if heap > run => self.ready.pop(),
            (Some(&run), _) => {
                self.ready_next += 1;
                Some(run)
            }
            (None, _) => self.ready.pop(),
        }
    }

    fn least_busy_worker(&self) -> Option<usize> {
        // The first idle worker is the one `min_by_key` picks; finding it stops at the first
        // (a one-payer chain runs a pass per transaction, with every worker idle).
        let idle = self.batches_in_flight.iter().position(|&count| count == 0);
        if idle.is_some() {
            return idle;
        }
        let (worker, &count) = self
            .batches_in_flight
            .iter()
            .enumerate()
            .min_by_key(|(_, &count)| count)?;
        (count < self.config.batches_per_worker).then_some(worker)
    }

    /// Whether ready transaction `id` fits in what is left of the block and of its writable
    /// accounts' units.
    fn fits_block(&self, id: TransactionId) -> bool {
        let meta = &self.metas[id as usize];
        let limits = self.config.limits;
        if self.block_units + meta.cost > limits.block_units
            || self.block_data_bytes + meta.allocated_data_bytes > limits.account_data_bytes
        {
            return false;
        }
        if !self.tracks_accounts() {
            return true;
        }
        self.nodes[self.entries[id as usize].account_range()]
            .iter()
            .all(|node| {
                !node.writable()
                    || self.accounts.states[node.account_id() as usize].block_units + meta.cost
                        <= limits.account_units
            })
    }

    /// Puts ready transaction `id` in flight: it keeps its accounts until it completes.
    fn start(&mut self, id: TransactionId) {
        let meta = &self.metas[id as usize];
        let cost = meta.cost;
        self.block_units += cost;
        self.block_data_bytes += meta.allocated_data_bytes;
        let entry = &mut self.entries[id as usize];
        entry.state = State::InFlight;
        let range = entry.account_range();
        self.queued -= 1;
        self.in_flight += 1;
        if !self.tracks_accounts() {
            return;
        }
        for node in &self.nodes[range] {
            if node.writable() {
                let state = &mut self.accounts.states[node.account_id() as usize];
                // Each account enters the list once per block: only a positive cost makes its
                // total leave zero.
                if state.block_units == 0 && cost > 0 {
                    self.touched.push(node.account_id());
                }
                state.block_units += cost;
            }
        }
    }

    /// Whether the per-account limit can bind: an account's units are part of the block's, so
    /// with an account limit at or above the block limit, the block check implies the account
    /// check and accounts need no totals.
    #[inline]
    fn tracks_accounts(&self) -> bool {
        self.config.limits.account_units < self.config.limits.block_units
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
        let hinted = self.accounts.outgrows_l1();
        let transactions = batch.transactions();
        for (position, &id) in transactions.iter().enumerate() {
            if hinted {
                self.prefetch_leaving(transactions, position);
            }
            let entry = &mut self.entries[id as usize];
            assert!(
                entry.state == State::InFlight,
                "transaction {id} is not in flight"
            );
            entry.state = State::Free;
            self.leave_queues(id, true);
            self.free_entries.push(id);
            self.in_flight -= 1;
        }
    }

    /// Hints, while the transaction at `position` of a completed batch leaves the queues, the
    /// nodes of the one `NODES_AHEAD` on and the account rows of the one `ROWS_AHEAD` on.
    fn prefetch_leaving(&self, transactions: &[TransactionId], position: usize) {
        let nodes_at = |ahead: usize| {
            transactions
                .get(position + ahead)
                .and_then(|&id| self.nodes.get(self.entries[id as usize].account_range()))
        };
        if let Some(nodes) = nodes_at(NODES_AHEAD) {
            self.prefetch_nodes(nodes);
        }
        if let Some(nodes) = nodes_at(ROWS_AHEAD) {
            for node in nodes {
                self.accounts.prefetch_state(node.account_id());
            }
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
                entry.state = State::Pending;
                let key = entry.key(id);
                self.push_pending(key);
            }
        }
    }

    /// Packets of transactions dropped since the last call, with the reason.
    pub fn drain_dropped(&mut self) -> impl Iterator<Item = (u32, DropReason)> + '_ {
        self.dropped.drain(..)
    }
}
