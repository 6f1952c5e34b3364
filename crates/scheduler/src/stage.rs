//! The ingest stage: packets in, queued transactions out, each rejection typed.
//!
//! Per call to [`Stage::ingest`], in this order (cheap checks before the signature check, which
//! costs tens of microseconds): size; copy into the packet arena; frame and sanitize
//! (`kestrel-txview`, today's mainnet limits); a first signature already accepted is a duplicate;
//! the blockhash must be known and unexpired (the caller's [`BlockhashSource`]), or else the
//! transaction be a durable-nonce one whose nonce the caller vouches for; address table
//! lookups are resolved through the caller's [`AddressTableSource`] (writable addresses of every
//! table, then readonly ones, as Agave orders them) and reserved keys and programs demoted to
//! readonly; the compute budget is read; cost (a simple vote's is fixed), the account data it may
//! allocate, reward and priority computed; then the packet goes to the verify pool, whose threads
//! check signatures while the next packets are prepared (the caller joins them once all are);
//! then, in packet order, the signature is remembered and the transaction enters the scheduler.
//!
//! The packet bytes stay in the arena until the transaction leaves (completed, expired, evicted);
//! the stage frees the slot then. Workers read a scheduled transaction through
//! [`Stage::transaction`].

use crate::compute_budget::{ComputeBudgetError, InstructionDetails};
use crate::cost::{is_simple_vote, priority, reward_lamports, TransactionCost};
use crate::dedup::SignatureDeduper;
use crate::limits::{DEFAULT_CONTAINER_CAPACITY, MAX_TX_ACCOUNT_LOCKS};
use crate::packet_arena::PacketArena;
use crate::program_id::is_reserved;
use crate::scheduler::{
    Batch, DropReason, InsertError, Scheduler, SchedulerConfig, TransactionId, TransactionMeta,
};
use crate::system_program::{allocated_data_bytes, durable_nonce_account};
use crate::verify_pool::VerifyPool;
use core::fmt;
use kestrel_txview::limits::MAX_TRANSACTION_SIZE_V1;
use kestrel_txview::{
    Address, Hash, LoadedAddresses, ResolveError, ResolvedTransactionView, SanitizeConfig,
    SanitizedTransactionView, Signature, TransactionVersion, TransactionViewError,
};
use std::collections::HashMap;

/// Tells the last slot in which a blockhash, or a durable nonce, may be used (the node's blockhash
/// queue and nonce accounts, or a test clock).
pub trait BlockhashSource {
    /// `None` when the blockhash is unknown at `slot`.
    fn last_valid_slot(&mut self, blockhash: &Hash, slot: u64) -> Option<u64>;

    /// For a durable-nonce transaction whose recent-blockhash field is not a known blockhash: the
    /// last slot in which it may be scheduled if `nonce_account` holds `durable_nonce` (Agave
    /// checks the account's stored nonce and advances it on execution); `None` rejects it as
    /// "blockhash not found".
    fn durable_nonce_last_valid_slot(
        &mut self,
        nonce_account: &Address,
        durable_nonce: &Hash,
        slot: u64,
    ) -> Option<u64>;
}

/// Why an address table lookup failed (Agave's `TransactionError` variants of the same names).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LookupError {
    /// `AddressLookupTableNotFound`.
    TableNotFound,
    /// `InvalidAddressLookupTableIndex`.
    InvalidIndex,
}

/// Reads address lookup tables (the node's accounts, or a test's map).
pub trait AddressTableSource {
    /// Appends the addresses at `indexes` of `table` to `out`.
    fn load(
        &self,
        table: &Address,
        indexes: &[u8],
        out: &mut Vec<Address>,
    ) -> Result<(), LookupError>;
}

/// Tables held in a map from table address to its addresses.
impl AddressTableSource for HashMap<Address, Vec<Address>> {
    fn load(
        &self,
        table: &Address,
        indexes: &[u8],
        out: &mut Vec<Address>,
    ) -> Result<(), LookupError> {
        let addresses = self.get(table).ok_or(LookupError::TableNotFound)?;
        for &index in indexes {
            out.push(
                *addresses
                    .get(usize::from(index))
                    .ok_or(LookupError::InvalidIndex)?,
            );
        }
        Ok(())
    }
}

/// No tables: every lookup fails.
pub struct NoAddressTables;

impl AddressTableSource for NoAddressTables {
    fn load(&self, _: &Address, _: &[u8], _: &mut Vec<Address>) -> Result<(), LookupError> {
        Err(LookupError::TableNotFound)
    }
}

/// Why a packet or a queued transaction was turned away.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// Larger than any transaction (4,096 bytes).
    PacketTooLarge {
        /// The packet's length.
        length: usize,
    },
    /// The packet arena has no free slot of the packet's size.
    ArenaFull,
    /// Does not parse or sanitize.
    Malformed(TransactionViewError),
    /// Its first signature was accepted before.
    Duplicate,
    /// Unknown or expired blockhash.
    BlockhashNotFound,
    /// An address table lookup failed.
    Lookup(LookupError),
    /// The table source returned the wrong number of addresses.
    Resolve(ResolveError),
    /// Invalid compute-budget request.
    ComputeBudget(ComputeBudgetError),
    /// A signature does not verify.
    InvalidSignature,
    /// The scheduler refused it (account locks, cost, full container).
    Scheduler(InsertError),
    /// Left the container: blockhash expired before it was scheduled.
    Expired,
    /// Left the container: evicted by a higher-priority transaction.
    Evicted,
}

impl RejectReason {
    /// A stable snake_case name of the reason (reports group by it).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::PacketTooLarge { .. } => "packet_too_large",
            Self::ArenaFull => "arena_full",
            Self::Malformed(error) => error.kind(),
            Self::Duplicate => "duplicate_signature",
            Self::BlockhashNotFound => "blockhash_not_found",
            Self::Lookup(LookupError::TableNotFound) => "address_lookup_table_not_found",
            Self::Lookup(LookupError::InvalidIndex) => "invalid_address_lookup_table_index",
            Self::Resolve(_) => "loaded_address_count_mismatch",
            Self::ComputeBudget(ComputeBudgetError::InvalidInstructionData { .. }) => {
                "invalid_compute_budget_instruction_data"
            }
            Self::ComputeBudget(ComputeBudgetError::DuplicateInstruction { .. }) => {
                "duplicate_compute_budget_instruction"
            }
            Self::ComputeBudget(ComputeBudgetError::InvalidLoadedAccountsDataSizeLimit) => {
                "invalid_loaded_accounts_data_size_limit"
            }
            Self::InvalidSignature => "invalid_signature",
            Self::Scheduler(InsertError::TooManyAccountLocks { .. }) => "too_many_account_locks",
            Self::Scheduler(InsertError::AccountLoadedTwice) => "account_loaded_twice",
            Self::Scheduler(InsertError::CostExceedsLimit { .. }) => "cost_exceeds_limit",
            Self::Scheduler(InsertError::AccountDataExceedsLimit { .. }) => {
                "account_data_exceeds_limit"
            }
            Self::Scheduler(InsertError::ContainerFull) => "container_full",
            Self::Expired => "blockhash_expired",
            Self::Evicted => "evicted",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PacketTooLarge { length } => write!(formatter, "packet of {length} bytes"),
            Self::Malformed(error) => write!(formatter, "{error}"),
            Self::Resolve(error) => write!(formatter, "{error}"),
            Self::ComputeBudget(error) => write!(formatter, "{error}"),
            Self::Scheduler(error) => write!(formatter, "{error}"),
            other => formatter.write_str(other.kind()),
        }
    }
}

impl std::error::Error for RejectReason {}

/// How the stage runs.
#[derive(Copy, Clone, Debug)]
pub struct StageConfig {
    /// The scheduler's configuration (its capacity bounds the queued transactions).
    pub scheduler: SchedulerConfig,
    /// Verify threads beside the calling thread.
    pub verify_threads: usize,
    /// Signatures per dedup generation (two are kept).
    pub dedup_capacity: usize,
    /// Sanitization limits.
    pub sanitize: SanitizeConfig,
    /// Most packets one [`Stage::ingest`] call takes (the arena keeps room for them).
    pub max_ingest_packets: usize,
    /// Slots for packets over 1,232 bytes (v1 only), out of the container's capacity.
    pub large_packet_slots: usize,
}

impl Default for StageConfig {
    fn default() -> Self {
        let verify_threads = std::thread::available_parallelism()
            .map(|cores| cores.get().saturating_sub(1))
            .unwrap_or(0);
        Self {
            scheduler: SchedulerConfig::default(),
            verify_threads,
            dedup_capacity: 2 * DEFAULT_CONTAINER_CAPACITY,
            sanitize: SanitizeConfig::MAINNET,
            max_ingest_packets: 4_096,
            large_packet_slots: DEFAULT_CONTAINER_CAPACITY / 8,
        }
    }
}

/// A packet that passed the cheap checks, waiting for its signature check.
struct Pending {
    index: usize,
    packet: u32,
    meta: TransactionMeta,
    /// The first signature (the dedup key).
    signature: Signature,
    accounts_start: usize,
    accounts_end: usize,
}

/// What one [`Stage::ingest`] call did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestSummary {
    /// Packets queued.
    pub accepted: usize,
    /// Packets rejected (each reported to the callback).
    pub rejected: usize,
    /// Queued transactions evicted to make room.
    pub evicted: usize,
}

/// The stage: arena, dedup, verify pool and scheduler.
pub struct Stage {
    config: StageConfig,
    arena: PacketArena,
    deduper: SignatureDeduper,
    pool: VerifyPool,
    scheduler: Scheduler,
    slot: u64,
    pending: Vec<Pending>,
    accounts: Vec<(Address, bool)>,
    loaded: Vec<Address>,
    verified: Vec<bool>,
    evicted_total: u64,
    expired_total: u64,
}

impl Stage {
    /// A stage at slot 0, its verify threads started.
    pub fn new(config: StageConfig) -> Self {
        let scheduler_config = config.scheduler;
        let in_flight = scheduler_config.workers
            * scheduler_config.batches_per_worker
            * scheduler_config.batch_transactions;
        let small_slots = scheduler_config.capacity + in_flight + config.max_ingest_packets;
        Self {
            config,
            arena: PacketArena::new(small_slots, config.large_packet_slots),
            deduper: SignatureDeduper::new(config.dedup_capacity),
            pool: VerifyPool::new(config.verify_threads),
            scheduler: Scheduler::new(scheduler_config),
            slot: 0,
            pending: Vec::new(),
            accounts: Vec::new(),
            loaded: Vec::new(),
            verified: Vec::new(),
            evicted_total: 0,
            expired_total: 0,
        }
    }

    /// The current slot.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// The scheduler (counts, transaction metadata).
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// Packets in the arena.
    pub fn packets_held(&self) -> usize {
        self.arena.live()
    }

    /// Signatures the deduper remembers.
    pub fn signatures_remembered(&self) -> usize {
        self.deduper.len()
    }

    /// Transactions evicted and expired so far.
    pub fn left_unscheduled(&self) -> (u64, u64) {
        (self.evicted_total, self.expired_total)
    }

    /// Takes in `packets` (at most `max_ingest_packets`); `on_reject` receives each rejected
    /// packet's index and reason.
    pub fn ingest(
        &mut self,
        packets: &[&[u8]],
        tables: &impl AddressTableSource,
        blockhashes: &mut impl BlockhashSource,
        mut on_reject: impl FnMut(usize, RejectReason),
    ) -> IngestSummary {
        assert!(
            packets.len() <= self.config.max_ingest_packets,
            "at most {} packets per call",
            self.config.max_ingest_packets
        );
        let mut summary = IngestSummary::default();
        let mut reject = |index: usize, reason: RejectReason, summary: &mut IngestSummary| {
            summary.rejected += 1;
            on_reject(index, reason);
        };
        self.pending.clear();
        self.accounts.clear();
        for (index, packet) in packets.iter().enumerate() {
            match self.prepare(index, packet, tables, blockhashes) {
                Ok(pending) => {
                    // The pool's threads start on the checks while the next packets are prepared.
                    self.pool.push(self.arena.get(pending.packet));
                    self.pending.push(pending);
                }
                Err(reason) => reject(index, reason, &mut summary),
            }
        }
        self.pool.finish(&mut self.verified);
        for (position, pending) in self.pending.iter().enumerate() {
            let reason = if !self.verified[position] {
                Some(RejectReason::InvalidSignature)
            } else if !self.deduper.insert(&pending.signature, self.slot) {
                Some(RejectReason::Duplicate)
            } else {
                let accounts = &self.accounts[pending.accounts_start..pending.accounts_end];
                match self.scheduler.insert(
                    pending.meta,
                    accounts
                        .iter()
                        .map(|(address, writable)| (address, *writable)),
                ) {
                    Ok(inserted) => {
                        if let Some(evicted) = inserted.evicted_packet {
                            self.arena.free(evicted);
                            summary.evicted += 1;
                            self.evicted_total += 1;
                        }
                        None
                    }
                    Err(error) => Some(RejectReason::Scheduler(error)),
                }
            };
            match reason {
                None => summary.accepted += 1,
                Some(reason) => {
                    self.arena.free(pending.packet);
                    reject(pending.index, reason, &mut summary);
                }
            }
        }
        summary
    }

    /// The cheap checks of one packet; on success its bytes stay in the arena.
    fn prepare(
        &mut self,
        index: usize,
        packet: &[u8],
        tables: &impl AddressTableSource,
        blockhashes: &mut impl BlockhashSource,
    ) -> Result<Pending, RejectReason> {
        if packet.len() > MAX_TRANSACTION_SIZE_V1 {
            return Err(RejectReason::PacketTooLarge {
                length: packet.len(),
            });
        }
        let handle = self.arena.insert(packet).ok_or(RejectReason::ArenaFull)?;
        let accounts_start = self.accounts.len();
        let result = self.prepare_in_arena(handle, tables, blockhashes);
        match result {
            Ok((meta, signature)) => Ok(Pending {
                index,
                packet: handle,
                meta,
                signature,
                accounts_start,
                accounts_end: self.accounts.len(),
            }),
            Err(reason) => {
                self.accounts.truncate(accounts_start);
                self.arena.free(handle);
                Err(reason)
            }
        }
    }

    fn prepare_in_arena(
        &mut self,
        handle: u32,
        tables: &impl AddressTableSource,
        blockhashes: &mut impl BlockhashSource,
    ) -> Result<(TransactionMeta, Signature), RejectReason> {
        let bytes = self.arena.get(handle);
        let view = SanitizedTransactionView::try_new_sanitized(bytes, &self.config.sanitize)
            .map_err(RejectReason::Malformed)?;
        let signature = view.signatures()[0];
        if self.deduper.contains(&signature) {
            return Err(RejectReason::Duplicate);
        }
        // An unknown blockhash may still be a durable nonce, which needs the resolved view.
        let blockhash_last_valid_slot = blockhashes
            .last_valid_slot(view.recent_blockhash(), self.slot)
            .filter(|&last| last >= self.slot);
        let num_accounts = usize::from(view.num_static_account_keys())
            + usize::from(view.total_writable_lookup_accounts())
            + usize::from(view.total_readonly_lookup_accounts());
        if num_accounts > MAX_TX_ACCOUNT_LOCKS {
            return Err(RejectReason::Scheduler(InsertError::TooManyAccountLocks {
                count: num_accounts,
            }));
        }
        self.loaded.clear();
        let loaded = if view.version() == TransactionVersion::V0 {
            for lookup in view.address_table_lookup_iter() {
                tables
                    .load(
                        lookup.account_key,
                        lookup.writable_indexes,
                        &mut self.loaded,
                    )
                    .map_err(RejectReason::Lookup)?;
            }
            let writable_end = self.loaded.len();
            for lookup in view.address_table_lookup_iter() {
                tables
                    .load(
                        lookup.account_key,
                        lookup.readonly_indexes,
                        &mut self.loaded,
                    )
                    .map_err(RejectReason::Lookup)?;
            }
            Some(LoadedAddresses {
                writable: &self.loaded[..writable_end],
                readonly: &self.loaded[writable_end..],
            })
        } else {
            None
        };
        let details = InstructionDetails::try_new(&view).map_err(RejectReason::ComputeBudget)?;
        let resolved = ResolvedTransactionView::try_new(view, loaded, is_reserved)
            .map_err(RejectReason::Resolve)?;
        let last_valid_slot = match blockhash_last_valid_slot {
            Some(last) => last,
            None => durable_nonce_account(&resolved)
                .and_then(|nonce_account| {
                    blockhashes.durable_nonce_last_valid_slot(
                        nonce_account,
                        resolved.recent_blockhash(),
                        self.slot,
                    )
                })
                .filter(|&last| last >= self.slot)
                .ok_or(RejectReason::BlockhashNotFound)?,
        };
        let mut num_write_locks = 0u64;
        for (position, address) in resolved.account_keys().enumerate() {
            let writable = resolved.is_writable(position);
            num_write_locks += u64::from(writable);
            self.accounts.push((*address, writable));
        }
        let num_signatures = resolved.num_signatures();
        let cost = if is_simple_vote(&resolved) {
            TransactionCost::simple_vote()
        } else {
            TransactionCost::new(&details, num_signatures, num_write_locks)
        }
        .sum();
        let allocated_data_bytes = allocated_data_bytes(&resolved);
        let limits = self.config.scheduler.limits;
        if cost > limits.block_units || cost > limits.account_units {
            return Err(RejectReason::Scheduler(InsertError::CostExceedsLimit {
                cost,
            }));
        }
        if allocated_data_bytes > limits.account_data_bytes {
            return Err(RejectReason::Scheduler(
                InsertError::AccountDataExceedsLimit {
                    bytes: allocated_data_bytes,
                },
            ));
        }
        let reward = reward_lamports(&details, num_signatures);
        let meta = TransactionMeta {
            priority: priority(reward, cost),
            cost,
            reward,
            last_valid_slot,
            allocated_data_bytes,
            packet: handle,
        };
        Ok((meta, signature))
    }

    /// Hands batches to free workers (see [`Scheduler::schedule`]); transactions whose blockhash
    /// expired leave, reported to `on_reject` with their packet's bytes.
    pub fn schedule(
        &mut self,
        emit: impl FnMut(Batch),
        mut on_expired: impl FnMut(&[u8]),
    ) -> usize {
        let emitted = self.scheduler.schedule(self.slot, emit);
        for (packet, reason) in self.scheduler.drain_dropped() {
            match reason {
                DropReason::Expired => {
                    on_expired(self.arena.get(packet));
                    self.expired_total += 1;
                }
            }
            self.arena.free(packet);
        }
        emitted
    }

    /// A scheduled transaction, for a worker.
    pub fn transaction(&self, id: TransactionId) -> SanitizedTransactionView<&[u8]> {
        let packet = self.arena.get(self.scheduler.meta(id).packet);
        SanitizedTransactionView::try_new_sanitized(packet, &self.config.sanitize)
            .expect("the arena holds only sanitized transactions")
    }

    /// A scheduled transaction's metadata.
    pub fn meta(&self, id: TransactionId) -> &TransactionMeta {
        self.scheduler.meta(id)
    }

    /// Marks `batch` executed and frees its packets.
    pub fn complete(&mut self, batch: &Batch) {
        for &id in batch.transactions() {
            let packet = self.scheduler.meta(id).packet;
            self.arena.free(packet);
        }
        self.scheduler.complete(batch);
    }

    /// Moves to `slot` and starts a new block.
    pub fn new_block(&mut self, slot: u64) {
        assert!(slot >= self.slot, "slots only move forward");
        self.slot = slot;
        self.scheduler.new_block();
    }
}
