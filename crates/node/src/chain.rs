//! The node's chain: the ledger (balances, counters, scripts, big maps) as a context tree, one
//! context-store commit per block, the blocks from genesis to head, and block production — an
//! injected operation is validated, applied and included in a new block at once.
//!
//! A new chain is its genesis block (level 0) and two empty blocks, so that `head~2` (Taquito's
//! branch) exists from the start. Beside the store, [`BLOCKS_FILE`] keeps one line per block
//! (its header's bytes and its operations' JSON), written after the block's commit; reopening a
//! directory continues its chain from the last block whose commit the store holds.

use kestrel_context::{
    CommitInfo, ContextError, ContextHash, NodeObject, ObjectSource, Store, StoreOptions,
};
use kestrel_crypto::{BlockHash, ChainId, OperationHash};
use kestrel_protocol::block_header::Timestamp;
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::receipt::{ContentsAndMetadata, ContentsMetadata};
use kestrel_protocol::{
    validate_and_apply, BlockContext, DecodeError, Field, Genesis, JsonError, Ledger, LedgerError,
    Mode, Operation, SignedOperation, ValidationError,
};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::accounts::{bootstrap_accounts, Account};
use crate::block::{chain_id_of_genesis, Block, BlockInput, IncludedOperation, PROTOCOL_HASH};

/// Most bytes of an operation's protocol data, its branch excluded (the sandbox constants'
/// `max_operation_data_length`).
pub const MAX_OPERATION_DATA_BYTES: usize = 32_768;

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
}

/// The context store shared by the chain (which commits) and its ledger (which loads objects
/// through it): the store is not `Sync`, so loads take a lock, never contended since the chain
/// is used by one thread at a time.
pub struct SharedStore(Mutex<Store>);

impl SharedStore {
    /// Shares `store`.
    pub fn new(store: Store) -> Arc<SharedStore> {
        Arc::new(SharedStore(Mutex::new(store)))
    }

    /// The store.
    pub fn lock(&self) -> Result<MutexGuard<'_, Store>, ContextError> {
        self.0
            .lock()
            .map_err(|_| ContextError::InvalidArgument("the store's lock is poisoned".into()))
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
    blocks_file: std::fs::File,
    blocks: Vec<Block>,
    chain_id: ChainId,
    accounts: Vec<Account>,
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
}

impl Chain {
    /// Opens the chain in `config.directory`, or creates one there: genesis with `config`'s
    /// accounts, committed, and the first blocks.
    pub fn open(config: ChainConfig<'_>) -> Result<Chain, ChainError> {
        std::fs::create_dir_all(config.directory)?;
        let store = Store::open(config.directory, StoreOptions::default())?;
        if store.head().is_some() {
            return Chain::reopen(config, store);
        }
        let genesis = Genesis {
            accounts: bootstrap_accounts(&config.accounts, config.balance_mutez),
            constants: sandbox_constants(),
            liquidity_baking: config.liquidity_baking,
        };
        let ledger = Ledger::genesis(&genesis)?;
        let placeholder = ChainId::try_from_bytes(&[0; 4]).expect("4 bytes");
        let blocks_file = std::fs::File::create(config.directory.join(BLOCKS_FILE))?;
        let mut chain = Chain {
            ledger,
            store: SharedStore::new(store),
            blocks_file,
            blocks: Vec::new(),
            chain_id: placeholder,
            accounts: config.accounts,
        };
        chain.bake_at(Vec::new(), Timestamp(config.genesis_seconds))?;
        chain.chain_id = chain_id_of_genesis(&chain.blocks[0].hash);
        for _ in 0..INITIAL_EMPTY_BLOCKS {
            chain.bake(Vec::new())?;
        }
        Ok(chain)
    }

    /// Continues the chain of `store`: its blocks up to the last whose commit the store holds
    /// (a line written after a commit the store lost, or torn, is dropped), the ledger at it.
    fn reopen(config: ChainConfig<'_>, store: Store) -> Result<Chain, ChainError> {
        let path = config.directory.join(BLOCKS_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(error.into()),
        };
        let mut blocks = Vec::new();
        let mut kept = String::new();
        for line in text.lines() {
            let Some(block) = Block::from_line(line, &config.accounts[0]) else {
                break;
            };
            if !store.contains_commit(&ContextHash(*block.context().as_bytes())) {
                break;
            }
            kept.push_str(line);
            kept.push('\n');
            blocks.push(block);
        }
        let Some(head) = blocks.last() else {
            return Err(ChainError::NoBlocks(config.directory.display().to_string()));
        };
        let missing = || ChainError::NoBlocks(config.directory.display().to_string());
        let tree = store
            .checkout(&ContextHash(*head.context().as_bytes()))?
            .ok_or_else(missing)?;
        let store = SharedStore::new(store);
        let ledger = Ledger::from_tree(tree, store.clone(), sandbox_constants());
        std::fs::write(&path, kept)?;
        let blocks_file = std::fs::OpenOptions::new().append(true).open(&path)?;
        Ok(Chain {
            ledger,
            store,
            blocks_file,
            chain_id: chain_id_of_genesis(&blocks[0].hash),
            blocks,
            accounts: config.accounts,
        })
    }

    /// The state at `block`: the head's ledger, or the one checked out of the block's commit
    /// (the store keeps every block's).
    pub fn ledger_at(&self, block: &Block) -> Result<Ledger, ChainError> {
        if block.hash == self.head().hash {
            return Ok(self.ledger.clone());
        }
        let context = ContextHash(*block.context().as_bytes());
        let tree = self
            .store
            .lock()?
            .checkout(&context)?
            .ok_or_else(|| ChainError::NoBlocks(block.hash.to_b58check()))?;
        Ok(Ledger::from_tree(
            tree,
            self.store.clone(),
            sandbox_constants(),
        ))
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

    /// The block at `level`, if the chain has one.
    pub fn block_at_level(&self, level: i64) -> Option<&Block> {
        usize::try_from(level)
            .ok()
            .and_then(|index| self.blocks.get(index))
    }

    /// The block with `hash`.
    pub fn block_by_hash(&self, hash: &BlockHash) -> Option<&Block> {
        self.blocks.iter().rev().find(|block| block.hash == *hash)
    }

    /// The block the next operation is applied in.
    fn next_block(&self) -> BlockContext {
        let head = self.head();
        BlockContext {
            level: u64::try_from(head.level()).unwrap_or(0) + 1,
            timestamp_seconds: next_timestamp(head.timestamp()).0,
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
                Ok(validate_and_apply(
                    &mut ledger,
                    &signed,
                    &block,
                    Mode::Apply,
                )?)
            })
            .collect()
    }

    /// Validates and applies the signed operation `bytes`, and bakes a block with it. An
    /// operation whose application fails is included all the same (it pays its fee); an invalid
    /// one changes nothing.
    pub fn inject(&mut self, bytes: &[u8]) -> Result<OperationHash, ChainError> {
        let size_bytes = bytes.len().saturating_sub(32);
        if size_bytes > MAX_OPERATION_DATA_BYTES {
            return Err(ChainError::Oversized { size_bytes });
        }
        let signed = SignedOperation::decode(bytes)?;
        let block = self.next_block();
        let metadata = validate_and_apply(&mut self.ledger, &signed, &block, Mode::Apply)?;
        let hash = signed.hash();
        let json = self.operation_json(&hash, &signed.operation, &metadata)?;
        self.bake(vec![IncludedOperation { hash, json }])?;
        Ok(hash)
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
    pub fn bake(&mut self, operations: Vec<IncludedOperation>) -> Result<&Block, ChainError> {
        let timestamp = next_timestamp(self.head().timestamp());
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
        self.blocks_file.write_all(block.to_line().as_bytes())?;
        self.blocks.push(block);
        Ok(self.head())
    }
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

/// The timestamp of the block after one at `previous`: now, or a second later than `previous`
/// when the clock has not moved past it (blocks are made faster than one a second).
fn next_timestamp(previous: Timestamp) -> Timestamp {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        });
    Timestamp(now.max(previous.0.saturating_add(1)))
}
