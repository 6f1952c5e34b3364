//! The node's chain: the ledger (balances, counters, scripts, big maps) as a context tree, one
//! context-store commit per block, the blocks from genesis to head, and block production — an
//! injected operation is validated, applied and included in a new block at once.
//!
//! A new chain is its genesis block (level 0) and two empty blocks, so that `head~2` (Taquito's
//! branch) exists from the start. Beside the store, [`BLOCKS_FILE`] keeps one line per block
//! (its header's bytes and its operations' JSON), written after the block's commit; reopening a
//! directory continues its chain from the last block whose commit the store holds.

use kestrel_context::{
    CommitInfo, ContextError, ContextHash, GcPolicy, NodeObject, ObjectSource, Store, StoreOptions,
};
use kestrel_crypto::{BlockHash, ChainId, OperationHash};
use kestrel_crypto::{Destination, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_protocol::block_header::Timestamp;
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::receipt::{ContentsAndMetadata, ContentsMetadata};
use kestrel_protocol::{
    validate_and_apply, validate_and_apply_block, BlockContext, DecodeError, Field, Genesis,
    JsonError, Ledger, LedgerError, Mode, Operation, SignedOperation, ValidationError,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::accounts::{bootstrap_accounts, Account};
use crate::block::{chain_id_of_genesis, Block, BlockInput, IncludedOperation, PROTOCOL_HASH};
use crate::block_log::BlockLog;
use crate::mempool::{Mempool, PendingOperation};
use std::borrow::Cow;

/// Most bytes of an operation's protocol data, its branch excluded (the sandbox constants'
/// `max_operation_data_length`).
pub const MAX_OPERATION_DATA_BYTES: usize = 32_768;

/// The sandbox's `max_operations_time_to_live` (`constants_sandbox`): an operation's branch is
/// one of head and its 8 predecessors.
pub const MAX_OPERATIONS_TIME_TO_LIVE: usize = 8;

/// The context store's object cache: a node's state is a few accounts and the contracts a
/// developer tests, which a few megabytes hold; the store's default (sized for replaying
/// mainnet's context) kept ~100 MB resident after a minute of transfers, mostly versions of the
/// state no block reads any more.
const STORE_CACHE_BUDGET_BYTES: usize = 8 << 20;

/// The blocks whose contexts a node keeps unless told otherwise (`--keep-blocks`): a local
/// node's tests read recent blocks only, and every block kept costs ~80 bytes of the store's
/// commit index in memory and its pack pages on disk (keeping all grew a 10-minute load test's
/// RSS from 46 to 84 MB and its directory by ~7 GB).
pub const DEFAULT_KEEP_BLOCKS: u64 = 10_000;

/// A GC starts every `keep_blocks / GC_EVERY_FRACTION` blocks (at least every block): the
/// store holds at most that many more commits than the window.
const GC_EVERY_FRACTION: u64 = 10;

/// Empty blocks baked after genesis so that `head~2` exists.
const INITIAL_EMPTY_BLOCKS: usize = 2;

/// The file of the chain's blocks, beside the store.
pub const BLOCKS_FILE: &str = "blocks.jsonl";

/// The author of the context commits.
const COMMIT_AUTHOR: &str = "kestrel node";

/// Why the chain refused or failed a request.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// The operation's bytes do not decode.
    #[error("cannot decode the operation: {0}")]
    Decode(#[from] DecodeError),
    /// The operation's JSON does not read.
    #[error("cannot read the operation: {0}")]
    Json(#[from] JsonError),
    /// The operation is larger than [`MAX_OPERATION_DATA_BYTES`].
    #[error("the operation's data is {size_bytes} bytes, more than {MAX_OPERATION_DATA_BYTES}")]
    Oversized {
        /// Its size.
        size_bytes: usize,
    },
    /// Validation refused the operation (Octez's error id inside).
    #[error("{0}")]
    Invalid(#[from] ValidationError),
    /// The state could not be read or written.
    #[error("ledger: {0}")]
    Ledger(#[from] LedgerError),
    /// The context store failed.
    #[error("context store: {0}")]
    Store(#[from] ContextError),
    /// The blocks file cannot be read or written.
    #[error("{BLOCKS_FILE}: {0}")]
    Blocks(#[from] std::io::Error),
    /// The store holds a chain whose blocks file has no block the store holds.
    #[error("{0} holds a context store but no block of it in {BLOCKS_FILE}")]
    NoBlocks(String),
    /// The context of block `level` was collected: it is older than the blocks the node keeps
    /// (`--keep-blocks`).
    #[error("the context of block {level} was collected (the node keeps the last {keep_blocks} blocks' contexts)")]
    Pruned {
        /// The block's level.
        level: i64,
        /// The window the node keeps.
        keep_blocks: u64,
    },
    /// A `kestrel_*` request names no snapshot, account or contract the chain has.
    #[error("{0}")]
    Unknown(String),
    /// The mempool holds [`MAX_PENDING_OPERATIONS`] already.
    #[error("the mempool holds {MAX_PENDING_OPERATIONS} operations already")]
    MempoolFull,
    /// The operation's branch is not a live block: older than the operations' time to live, or
    /// unknown (the shell's prevalidator refuses it with a `failwith`, `prevalidator.ml`).
    #[error(
        "Operation {} is branched on either:\n - a block {} which is too old ({live_blocks} blocks in the past)\n - a predecessor block from an alternative branch which is now unknown",
        operation.to_b58check(),
        branch.to_b58check()
    )]
    OutdatedBranch {
        /// The operation.
        operation: OperationHash,
        /// Its branch.
        branch: BlockHash,
        /// How many blocks are live.
        live_blocks: usize,
    },
    /// The block of an operation that was valid could not be made (the store or the blocks
    /// file failed); the operation is not included.
    #[error("cannot bake the block: {0}")]
    NotBaked(String),
    /// More blocks asked of one `kestrel_mine` than [`MAX_MINED_BLOCKS`].
    #[error("{requested} blocks asked, at most {MAX_MINED_BLOCKS} at once")]
    TooManyBlocks {
        /// How many.
        requested: u64,
    },
}

/// Most blocks one `kestrel_mine` request bakes (each is a context commit and a line of the
/// blocks file: ten thousand take a few seconds, during which other requests wait).
pub const MAX_MINED_BLOCKS: u64 = 10_000;

/// Most operations the mempool holds before it refuses more (Octez's `mempool/filter`
/// `max_operations` default, which the node reports).
pub const MAX_PENDING_OPERATIONS: usize = 10_000;

/// The context store shared by the chain (which commits) and its ledger (which loads objects
/// through it): the store is not `Sync`, so loads take a lock, never contended since the chain
/// is used by one thread at a time.
pub struct SharedStore(Mutex<Store>);

impl SharedStore {
    /// Shares `store`.
    pub fn new(store: Store) -> Arc<SharedStore> {
        Arc::new(SharedStore(Mutex::new(store)))
    }

    /// The store. A panic while it was held leaves it as the store left it (a commit
    /// interrupted half-way marks the store itself as failed, see `Store::commit`).
    pub fn lock(&self) -> Result<MutexGuard<'_, Store>, ContextError> {
        Ok(self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The store, once nothing else shares it.
    pub fn into_inner(self) -> Result<Store, ContextError> {
        self.0
            .into_inner()
            .map_err(|_| ContextError::InvalidArgument("the store's lock is poisoned".into()))
    }
}

impl ObjectSource for SharedStore {
    fn load_node(&self, offset: u64, hash: &ContextHash) -> Result<Arc<NodeObject>, ContextError> {
        self.lock()?.load_node(offset, hash)
    }

    fn load_contents(&self, offset: u64, length_bytes: u64) -> Result<Arc<[u8]>, ContextError> {
        self.lock()?.load_contents(offset, length_bytes)
    }
}

/// The chain a node serves.
pub struct Chain {
    ledger: Ledger,
    store: Arc<SharedStore>,
    directory: PathBuf,
    blocks: BlockLog,
    chain_id: ChainId,
    accounts: Vec<Account>,
    /// Operations validated and applied since head, waiting for the next block when blocks are
    /// baked on a timer ([`Chain::hold_operations`]).
    mempool: Mempool,
    hold_operations: bool,
    /// Whether an injected operation's branch must be live ([`Chain::require_live_branches`]).
    live_branches_only: bool,
    clock: Clock,
    snapshots: Vec<Snapshot>,
    next_snapshot_id: u64,
    impersonated: HashSet<PublicKeyHash>,
    /// The blocks whose contexts the store keeps (0: all).
    keep_blocks: u64,
}

/// How the node dates its blocks: the wall clock moved by `offset_seconds`
/// (`kestrel_increase_time`), or once a fixed date (`kestrel_set_next_block_timestamp`).
#[derive(Debug, Default, Clone, Copy)]
struct Clock {
    offset_seconds: i64,
    next_block_seconds: Option<i64>,
}

/// A state the chain can return to: its blocks up to `block_count`, the head then.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    id: u64,
    block_count: usize,
}

/// Where a chain lives, and how a new one starts.
pub struct ChainConfig<'a> {
    /// The directory of its context store and blocks file (created if need be).
    pub directory: &'a Path,
    /// The accounts funded at genesis; the first bakes every block.
    pub accounts: Vec<Account>,
    /// The balance of each, mutez.
    pub balance_mutez: u64,
    /// The genesis block's timestamp, seconds since the epoch.
    pub genesis_seconds: i64,
    /// The liquidity-baking scripts (`cpmm.tz`, `lqt.tz`): with them a new chain's genesis
    /// originates the CPMM, its liquidity token and a test FA1.2 token administered by the first
    /// account, as Octez's sandbox genesis does (`Liquidity_baking_migration.init`; `cpmm.tz`
    /// typechecks only in legacy mode, so no client can originate it).
    pub liquidity_baking: Option<LiquidityBakingScripts>,
    /// The blocks whose contexts the store keeps, head's included (0: all): older ones are
    /// collected by the store's GC, every `keep_blocks / GC_EVERY_FRACTION` blocks on its own
    /// thread, and reading them answers [`ChainError::Pruned`].
    pub keep_blocks: u64,
}

impl Chain {
    /// Opens the chain in `config.directory`, or creates one there: genesis with `config`'s
    /// accounts, committed, and the first blocks.
    pub fn open(mut config: ChainConfig<'_>) -> Result<Chain, ChainError> {
        std::fs::create_dir_all(config.directory)?;
        let gc = (config.keep_blocks > 0).then(|| GcPolicy {
            keep_commits: config.keep_blocks,
            every_commits: (config.keep_blocks / GC_EVERY_FRACTION).max(1),
        });
        let options = StoreOptions {
            cache_budget_bytes: STORE_CACHE_BUDGET_BYTES,
            gc,
            ..StoreOptions::default()
        };
        let store = Store::open(config.directory, options)?;
        if store.head().is_some() {
            return Chain::reopen(config, store);
        }
        let genesis = Genesis {
            accounts: bootstrap_accounts(&config.accounts, config.balance_mutez),
            constants: sandbox_constants(),
            liquidity_baking: config.liquidity_baking.take(),
        };
        let ledger = Ledger::genesis(&genesis)?;
        let placeholder = ChainId::try_from_bytes(&[0; 4]).expect("4 bytes");
        let blocks = BlockLog::create(
            &config.directory.join(BLOCKS_FILE),
            config.accounts[0].clone(),
        )?;
        let genesis_seconds = config.genesis_seconds;
        let mut chain =
            Chain::assemble(ledger, SharedStore::new(store), config, blocks, placeholder);
        chain.bake_at(Vec::new(), Timestamp(genesis_seconds))?;
        chain.chain_id = chain_id_of_genesis(&chain.head().hash);
        for _ in 0..INITIAL_EMPTY_BLOCKS {
            chain.bake(Vec::new())?;
        }
        Ok(chain)
    }

    /// Continues the chain of `store`: its blocks up to the last whose commit the store holds
    /// (a line written after a commit the store lost, or torn, is dropped; the blocks before
    /// the first held commit are those whose contexts the GC collected), the ledger at it.
    fn reopen(config: ChainConfig<'_>, store: Store) -> Result<Chain, ChainError> {
        let mut held_seen = false;
        let blocks = BlockLog::open(
            &config.directory.join(BLOCKS_FILE),
            config.accounts[0].clone(),
            |block| {
                let held = store.contains_commit(&ContextHash(*block.context().as_bytes()));
                held_seen |= held;
                held || !held_seen
            },
        )?;
        let missing = || ChainError::NoBlocks(config.directory.display().to_string());
        let head = blocks.last().ok_or_else(missing)?;
        let tree = store
            .checkout(&ContextHash(*head.context().as_bytes()))?
            .ok_or_else(missing)?;
        let store = SharedStore::new(store);
        let ledger = Ledger::from_tree(tree, store.clone(), sandbox_constants());
        let genesis = blocks.hash_at(0).ok_or_else(missing)?;
        Ok(Chain::assemble(
            ledger,
            store,
            config,
            blocks,
            chain_id_of_genesis(&genesis),
        ))
    }

    fn assemble(
        ledger: Ledger,
        store: Arc<SharedStore>,
        config: ChainConfig<'_>,
        blocks: BlockLog,
        chain_id: ChainId,
    ) -> Chain {
        Chain {
            ledger,
            store,
            directory: config.directory.to_path_buf(),
            blocks,
            chain_id,
            accounts: config.accounts,
            mempool: Mempool::default(),
            hold_operations: false,
            live_branches_only: true,
            clock: Clock::default(),
            snapshots: Vec::new(),
            next_snapshot_id: 1,
            impersonated: HashSet::new(),
            keep_blocks: config.keep_blocks,
        }
    }

    /// Holds injected operations in the mempool until [`Chain::bake_pending`] (blocks on a
    /// timer), instead of baking a block for each.
    pub fn hold_operations(&mut self, hold: bool) {
        self.hold_operations = hold;
    }

    /// Whether injected operations must be branched on a live block (the default, as Octez's
    /// shell requires). A load generator that signs its operations ahead on one branch turns
    /// it off: with a block per operation, its branch is outdated after
    /// [`MAX_OPERATIONS_TIME_TO_LIVE`] of them.
    pub fn require_live_branches(&mut self, required: bool) {
        self.live_branches_only = required;
    }

    /// The operations waiting for the next block.
    pub fn mempool(&self) -> &Mempool {
        &self.mempool
    }

    /// Puts the state back at head's commit and empties the mempool: after a request failed
    /// half-way (a panic), whatever it changed in memory is dropped.
    pub fn recover(&mut self) -> Result<(), ChainError> {
        self.mempool = Mempool::default();
        self.ledger = self.ledger_of_commit(self.head())?;
        Ok(())
    }

    /// The ledger of `block`'s commit; [`ChainError::Pruned`] when the GC collected it.
    fn ledger_of_commit(&self, block: &Block) -> Result<Ledger, ChainError> {
        let tree = self
            .store
            .lock()?
            .checkout(&ContextHash(*block.context().as_bytes()))?
            .ok_or(ChainError::Pruned {
                level: block.level().into(),
                keep_blocks: self.keep_blocks,
            })?;
        Ok(Ledger::from_tree(
            tree,
            self.store.clone(),
            *self.ledger.constants(),
        ))
    }

    /// The state at `block`: the head's ledger, or the one checked out of the block's commit
    /// ([`ChainError::Pruned`] when it is older than the blocks kept).
    pub fn ledger_at(&self, block: &Block) -> Result<Ledger, ChainError> {
        if block.hash == self.head().hash {
            return Ok(self.ledger.clone());
        }
        self.ledger_of_commit(block)
    }

    /// Waits for a GC of the store still running to end (its collected blocks answer
    /// [`ChainError::Pruned`] from then on).
    pub fn wait_for_gc(&self) -> Result<(), ChainError> {
        self.store.lock()?.wait_for_gc()?;
        Ok(())
    }

    /// The chain's id.
    pub fn chain_id(&self) -> ChainId {
        self.chain_id
    }

    /// The accounts funded at genesis.
    pub fn accounts(&self) -> &[Account] {
        &self.accounts
    }

    /// The state at head.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The head block.
    pub fn head(&self) -> &Block {
        self.blocks.last().expect("a chain has its genesis block")
    }

    /// The block at `level`, if the chain has one (read back from the blocks file when it is
    /// not among the recent ones).
    pub fn block_at_level(&self, level: i64) -> Option<Cow<'_, Block>> {
        usize::try_from(level)
            .ok()
            .and_then(|index| self.blocks.get(index))
    }

    /// The block with `hash`.
    pub fn block_by_hash(&self, hash: &BlockHash) -> Option<Cow<'_, Block>> {
        self.blocks
            .level_of(hash)
            .and_then(|level| self.blocks.get(level))
    }

    /// The block the next operation is applied in.
    fn next_block(&self) -> BlockContext {
        let head = self.head();
        BlockContext {
            level: u64::try_from(head.level()).unwrap_or(0) + 1,
            timestamp_seconds: self.next_timestamp().0,
            chain_id: self.chain_id,
            payload_producer: self.accounts[0].public_key_hash,
        }
    }

    /// Simulates `operation` as `run_operation` does (no signature check) on a copy of the
    /// state at head.
    pub fn simulate(
        &self,
        operation: &Operation<'_>,
    ) -> Result<Vec<ContentsMetadata<'static>>, ChainError> {
        let bytes = operation.encode();
        let signed = SignedOperation::decode(&bytes)?;
        let mut ledger = self.ledger.clone();
        Ok(validate_and_apply(
            &mut ledger,
            &signed,
            &self.next_block(),
            Mode::Simulate,
        )?)
    }

    /// Applies `operations` in turn, signatures checked, on a copy of the state at head, as
    /// `preapply/operations` does.
    pub fn preapply(
        &self,
        operations: &[Operation<'_>],
    ) -> Result<Vec<Vec<ContentsMetadata<'static>>>, ChainError> {
        let mut ledger = self.ledger.clone();
        let block = self.next_block();
        operations
            .iter()
            .map(|operation| {
                let bytes = operation.encode();
                let signed = SignedOperation::decode(&bytes)?;
                let mode = self.mode_for(&signed);
                Ok(validate_and_apply(&mut ledger, &signed, &block, mode)?)
            })
            .collect()
    }

    /// How `operation` is validated: its signature checked, unless its source is impersonated.
    fn mode_for(&self, operation: &SignedOperation<'_>) -> Mode {
        let source = operation
            .operation
            .contents
            .first()
            .and_then(|contents| contents.as_manager())
            .map(|manager| manager.header.source);
        match source {
            Some(source) if self.impersonated.contains(&source) => Mode::Simulate,
            _ => Mode::Apply,
        }
    }

    /// Validates and applies the signed operation `bytes`, and bakes a block with it (or, when
    /// operations are held, adds it to the mempool). An operation whose application fails is
    /// included all the same (it pays its fee); an invalid one changes nothing.
    pub fn inject(&mut self, bytes: &[u8]) -> Result<OperationHash, ChainError> {
        self.inject_all(&[bytes])
            .pop()
            .expect("one answer per operation")
    }

    /// Validates and applies the signed operations `operations` in order and bakes one block
    /// with those that are valid (or, when operations are held, adds them to the mempool): one
    /// answer per operation, its hash or why it was refused (a refused one changes nothing and
    /// the others go on). Several operations have their ed25519 signatures checked as one
    /// batch, beside their application (`validate_and_apply_block`).
    pub fn inject_all(&mut self, operations: &[&[u8]]) -> Vec<Result<OperationHash, ChainError>> {
        // An answer for each operation that does not decode; the others, in order, in `valid`.
        let mut answers: Vec<Option<Result<OperationHash, ChainError>>> = Vec::new();
        let mut valid = Vec::new();
        for bytes in operations {
            match decode_injected(bytes).and_then(|signed| self.live_branch(signed)) {
                Ok(signed) => {
                    answers.push(None);
                    valid.push(signed);
                }
                Err(error) => answers.push(Some(Err(error))),
            }
        }
        let mut valid = valid.into_iter();
        if self.hold_operations {
            return answers
                .into_iter()
                .map(|answer| {
                    answer.unwrap_or_else(|| self.hold(valid.next().expect("a valid operation")))
                })
                .collect();
        }
        let valid: Vec<SignedOperation<'_>> = valid.collect();
        let block = self.next_block();
        let batched = valid.len() > 1
            && valid
                .iter()
                .all(|signed| self.mode_for(signed) == Mode::Apply);
        let receipts = if batched {
            validate_and_apply_block(&mut self.ledger, &valid, &block).0
        } else {
            valid
                .iter()
                .map(|signed| {
                    let mode = self.mode_for(signed);
                    validate_and_apply(&mut self.ledger, signed, &block, mode)
                })
                .collect()
        };
        let mut included = Vec::new();
        let mut applied = valid.iter().zip(receipts);
        let mut answers: Vec<Result<OperationHash, ChainError>> = answers
            .into_iter()
            .map(|answer| {
                answer.unwrap_or_else(|| {
                    let (signed, metadata) = applied.next().expect("a receipt per valid operation");
                    let hash = signed.hash();
                    let json = self.operation_json(&hash, &signed.operation, &metadata?)?;
                    included.push(IncludedOperation { hash, json });
                    Ok(hash)
                })
            })
            .collect();
        if included.is_empty() {
            return answers;
        }
        if let Err(error) = self.bake(included) {
            // No block: the state goes back to head's commit, and no operation was included.
            let recovered = self.recover().err().map(|also| format!("; {also}"));
            let reason = format!("{error}{}", recovered.unwrap_or_default());
            for answer in answers.iter_mut().filter(|answer| answer.is_ok()) {
                *answer = Err(ChainError::NotBaked(reason.clone()));
            }
        }
        answers
    }

    /// `signed` when its branch is a live block (head or one of its
    /// [`MAX_OPERATIONS_TIME_TO_LIVE`] predecessors), or when the check is off.
    fn live_branch<'a>(
        &self,
        signed: SignedOperation<'a>,
    ) -> Result<SignedOperation<'a>, ChainError> {
        let branch = signed.operation.branch;
        let (live, live_blocks) = self.blocks.live(&branch, MAX_OPERATIONS_TIME_TO_LIVE);
        if self.live_branches_only && !live {
            return Err(ChainError::OutdatedBranch {
                operation: signed.hash(),
                branch,
                live_blocks,
            });
        }
        Ok(signed)
    }

    /// Validates and applies `signed` on the mempool's state and adds it to the mempool.
    fn hold(&mut self, signed: SignedOperation<'_>) -> Result<OperationHash, ChainError> {
        if self.mempool.len() >= MAX_PENDING_OPERATIONS {
            return Err(ChainError::MempoolFull);
        }
        let block = self.next_block();
        let mode = self.mode_for(&signed);
        let hash = signed.hash();
        let mut ledger = self.mempool.ledger(&self.ledger).clone();
        let metadata = validate_and_apply(&mut ledger, &signed, &block, mode)?;
        let json = self.operation_json(&hash, &signed.operation, &metadata)?;
        let mut pending = format!("{{\"hash\":\"{}\",", hash.to_b58check());
        let operation = signed.operation.to_json()?;
        pending.push_str(operation.strip_prefix('{').unwrap_or(&operation));
        self.mempool.push(
            ledger,
            PendingOperation {
                json: pending,
                included: IncludedOperation { hash, json },
            },
        );
        Ok(hash)
    }

    /// Bakes a block with the mempool's operations (an empty one when it holds none).
    pub fn bake_pending(&mut self) -> Result<&Block, ChainError> {
        let (ledger, operations) = self.mempool.take();
        if let Some(ledger) = ledger {
            self.ledger = ledger;
        }
        self.bake(operations)
    }

    /// Bakes `count` blocks now, the first with the mempool's operations (`kestrel_mine`).
    pub fn mine(&mut self, count: u64) -> Result<&Block, ChainError> {
        if count > MAX_MINED_BLOCKS {
            return Err(ChainError::TooManyBlocks { requested: count });
        }
        for _ in 0..count {
            self.bake_pending()?;
        }
        Ok(self.head())
    }

    /// Changes the state with `change` and bakes a block holding the change (with the
    /// mempool's operations), so that head's context is always the state clients read.
    fn change_state(
        &mut self,
        change: impl FnOnce(&mut Ledger) -> Result<(), ChainError>,
    ) -> Result<&Block, ChainError> {
        let mut ledger = self.mempool.ledger(&self.ledger).clone();
        change(&mut ledger)?;
        self.mempool.set_ledger(ledger);
        self.bake_pending()
    }

    /// Sets the spendable balance of `contract` (an implicit account is created if need be)
    /// and bakes a block (`kestrel_set_balance`).
    pub fn set_balance(
        &mut self,
        contract: &Destination,
        mutez: u64,
    ) -> Result<&Block, ChainError> {
        let contract = *contract;
        self.change_state(|ledger| {
            match &contract {
                Destination::Implicit(account) if !ledger.is_allocated(&contract)? => {
                    ledger.allocate_implicit(account)?;
                }
                Destination::Implicit(_) => {}
                _ if ledger.is_allocated(&contract)? => {}
                _ => return Err(ChainError::Unknown(format!("no contract {contract}"))),
            }
            Ok(ledger.set_balance(&contract, mutez)?)
        })
    }

    /// Replaces the storage of originated contract `contract` and bakes a block
    /// (`kestrel_set_storage`). The storage is not typechecked against the script: the caller
    /// answers for it.
    pub fn set_storage(
        &mut self,
        contract: &kestrel_crypto::ContractHash,
        storage: &Node,
    ) -> Result<&Block, ChainError> {
        self.change_state(|ledger| {
            if ledger.script_bytes(contract)?.is_none() {
                return Err(ChainError::Unknown(format!(
                    "no contract {}",
                    contract.to_b58check()
                )));
            }
            Ok(ledger.set_storage(contract, storage)?)
        })
    }

    /// Replaces the whole state by `tree` and bakes a block (`kestrel_load_state`).
    pub fn replace_state(&mut self, tree: kestrel_context::Tree) -> Result<&Block, ChainError> {
        self.mempool = Mempool::default();
        self.ledger = Ledger::from_tree(tree, self.store.clone(), *self.ledger.constants());
        self.bake(Vec::new())
    }

    /// The store the ledger's objects load from.
    pub fn store(&self) -> &Arc<SharedStore> {
        &self.store
    }

    /// Accepts operations from `account` without checking their signature (the account must
    /// be revealed: its key cannot be revealed without its secret), or stops.
    pub fn impersonate(&mut self, account: PublicKeyHash, impersonated: bool) {
        if impersonated {
            self.impersonated.insert(account);
        } else {
            self.impersonated.remove(&account);
        }
    }

    /// Records the state now (blocks and head), to return to with [`Chain::revert`].
    pub fn snapshot(&mut self) -> u64 {
        let id = self.next_snapshot_id;
        self.next_snapshot_id += 1;
        self.snapshots.push(Snapshot {
            id,
            block_count: self.blocks.len(),
        });
        id
    }

    /// Returns to snapshot `id`: the blocks after it are dropped (from the blocks file too),
    /// the mempool emptied, and `id` and later snapshots forgotten. False when there is no such
    /// snapshot; [`ChainError::Pruned`] (nothing changed) when the GC collected its head's
    /// context.
    pub fn revert(&mut self, id: u64) -> Result<bool, ChainError> {
        let Some(position) = self.snapshots.iter().position(|snapshot| snapshot.id == id) else {
            return Ok(false);
        };
        let block_count = self.snapshots[position].block_count;
        // A GC still running could collect the snapshot's context once checked out.
        self.wait_for_gc()?;
        let ledger = {
            let head = self
                .blocks
                .get(block_count.saturating_sub(1))
                .ok_or_else(|| ChainError::NoBlocks(self.directory.display().to_string()))?;
            self.ledger_of_commit(&head)?
        };
        self.snapshots.truncate(position);
        self.blocks.truncate(block_count)?;
        self.mempool = Mempool::default();
        self.ledger = ledger;
        Ok(true)
    }

    /// Dates the next block at `seconds` (`kestrel_set_next_block_timestamp`); it must be later
    /// than head.
    pub fn set_next_block_timestamp(&mut self, seconds: i64) -> Result<(), ChainError> {
        let head = self.head().timestamp().0;
        if seconds <= head {
            return Err(ChainError::Unknown(format!(
                "the next block's timestamp {seconds} must be after head's, {head}"
            )));
        }
        self.clock.next_block_seconds = Some(seconds);
        Ok(())
    }

    /// Moves the clock `seconds` ahead (`kestrel_increase_time`); returns the total offset.
    pub fn increase_time(&mut self, seconds: i64) -> i64 {
        self.clock.offset_seconds = self.clock.offset_seconds.saturating_add(seconds);
        self.clock.offset_seconds
    }

    /// The timestamp of the next block: the date set for it, or the clock now (moved by the
    /// offset), or a second after head when the clock has not moved past it (blocks are made
    /// faster than one a second).
    fn next_timestamp(&self) -> Timestamp {
        let previous = self.head().timestamp().0;
        let seconds = self
            .clock
            .next_block_seconds
            .unwrap_or_else(|| wall_clock_seconds().saturating_add(self.clock.offset_seconds));
        Timestamp(seconds.max(previous.saturating_add(1)))
    }

    /// The JSON of an included operation.
    fn operation_json(
        &self,
        hash: &OperationHash,
        operation: &Operation<'_>,
        metadata: &[ContentsMetadata<'_>],
    ) -> Result<String, ChainError> {
        let mut json = format!(
            "{{\"protocol\":\"{PROTOCOL_HASH}\",\"chain_id\":\"{}\",\"hash\":\"{}\",\"branch\":\"{}\",\"contents\":",
            self.chain_id.to_b58check(),
            hash.to_b58check(),
            operation.branch.to_b58check()
        );
        write_contents_with_metadata(&mut json, operation, metadata)?;
        if let Some(signature) = &operation.signature {
            json.push_str(&format!(",\"signature\":\"{}\"", signature.to_b58check()));
        }
        json.push('}');
        Ok(json)
    }

    /// Bakes a block with `operations` (already applied to the ledger) on top of head.
    fn bake(&mut self, operations: Vec<IncludedOperation>) -> Result<&Block, ChainError> {
        let timestamp = self.next_timestamp();
        self.clock.next_block_seconds = None;
        self.bake_at(operations, timestamp)
    }

    fn bake_at(
        &mut self,
        operations: Vec<IncludedOperation>,
        timestamp: Timestamp,
    ) -> Result<&Block, ChainError> {
        let level = i32::try_from(self.blocks.len()).unwrap_or(i32::MAX);
        let parents: Vec<ContextHash> = self
            .blocks
            .last()
            .map(|block| ContextHash(*block.context().as_bytes()))
            .into_iter()
            .collect();
        let info = CommitInfo {
            date_seconds: timestamp.0,
            author: COMMIT_AUTHOR.to_string(),
            message: format!("level {level}"),
        };
        let context = self
            .store
            .lock()?
            .commit(self.ledger.tree(), &parents, &info)?;
        let block = Block::new(BlockInput {
            level,
            predecessor: self.blocks.last().map(|block| block.hash),
            timestamp,
            context: kestrel_crypto::ContextHash::try_from_bytes(&context.0)
                .expect("a context hash is 32 bytes"),
            operations,
            baker: &self.accounts[0].secret_key,
            chain_id: (level > 0).then_some(self.chain_id),
        });
        self.blocks.push(block)?;
        Ok(self.head())
    }
}

/// `bytes` as an injected operation: no larger than [`MAX_OPERATION_DATA_BYTES`], decoded.
fn decode_injected(bytes: &[u8]) -> Result<SignedOperation<'_>, ChainError> {
    let size_bytes = bytes.len().saturating_sub(32);
    if size_bytes > MAX_OPERATION_DATA_BYTES {
        return Err(ChainError::Oversized { size_bytes });
    }
    Ok(SignedOperation::decode(bytes)?)
}

/// Octez's mockup constants with the sandbox's block delay (`constants_sandbox`), which the
/// constants RPC reports.
fn sandbox_constants() -> kestrel_protocol::Constants {
    let mut constants = Genesis::mockup().constants;
    constants.minimal_block_delay_seconds = 1;
    constants
}

/// Each content of `operation` with its metadata, as receipts show them.
pub fn contents_with_metadata<'a>(
    operation: &Operation<'a>,
    metadata: &[ContentsMetadata<'a>],
) -> Vec<ContentsAndMetadata<'a>> {
    operation
        .contents
        .iter()
        .zip(metadata)
        .map(|(contents, metadata)| ContentsAndMetadata {
            contents: contents.clone(),
            metadata: metadata.clone(),
        })
        .collect()
}

/// Writes `operation`'s contents with their `metadata` as a JSON array.
pub fn write_contents_with_metadata(
    out: &mut String,
    operation: &Operation<'_>,
    metadata: &[ContentsMetadata<'_>],
) -> Result<(), JsonError> {
    contents_with_metadata(operation, metadata).write_json(out)
}

/// The wall clock, seconds since the epoch.
fn wall_clock_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}
