//! The mockup's chain state and the one place the client calls the protocol layer: the ledger
//! (Octez's mockup genesis with the bootstrap accounts; balances, counters, storages), kept as
//! a context tree committed to a `kestrel_context::Store` in `BASE_DIR/mockup/context/`, one
//! commit per injected operation; simulation and application of operations; the receipts' text.

use kestrel_context::{
    CommitInfo, ContextError, ContextHash, NodeObject, ObjectSource, Store, StoreOptions,
};
use kestrel_crypto::{BlockHash, ChainId, ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::receipt::{ContentsAndMetadata, ContentsMetadata};
use kestrel_protocol::{
    render_receipt, validate_and_apply, BlockContext, Constants, Genesis, Ledger, LedgerError,
    Mode, Operation, SignedOperation,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::MockupError;

/// The mockup's head: Octez's genesis block, the branch of every injected operation.
pub const GENESIS_BLOCK_HASH: &str = "BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2";

/// The level operations are applied at: the genesis head's successor.
const MOCKUP_LEVEL: u64 = 1;

/// The timestamp operations are applied at, seconds since the epoch: Octez's mockup starts at
/// the epoch (`initial_timestamp`) and its operations see `NOW` = 1 (`test_now.out` records it).
const MOCKUP_TIMESTAMP_SECONDS: i64 = 1;

/// The mockup's chain (`Mockup_args.Chain_id.dummy`), as `CHAIN_ID` shows it in Octez's
/// mockup (`michelson-regression/opcodes/chain_id_store*`).
const MOCKUP_CHAIN_ID: &str = "NetXynUjJNZm7wi";

/// The store's directory inside `BASE_DIR/mockup/`.
const STORE_SUBDIRECTORY: &str = "context";

/// The author of the store's commits.
const COMMIT_AUTHOR: &str = "kestrel mockup";

/// The Ed25519 key hash of zeros (`Signature.Public_key_hash.zero`): the `SOURCE` of a view run
/// without `--payer`.
const ZERO_KEY_HASH: &str = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";

/// What `run view` asks.
pub struct ViewRequest<'a> {
    /// The contract.
    pub contract: &'a ContractHash,
    /// The view's name.
    pub name: &'a str,
    /// Its input.
    pub input: &'a Node,
    /// `SENDER` (`--source`).
    pub sender: Option<&'a Destination>,
    /// `SOURCE` (`--payer`).
    pub payer: Option<&'a PublicKeyHash>,
    /// The gas limit.
    pub gas_limit_milli: u64,
    /// `NOW` (`--now`).
    pub now_seconds: Option<i64>,
    /// `LEVEL` (`--level`).
    pub level: Option<u64>,
}

/// The mockup's state: on disk for a mockup base directory, in memory otherwise.
pub struct Chain {
    ledger: Ledger,
    /// The store and its head, for a mockup base directory.
    store: Option<(Arc<LockedStore>, ContextHash)>,
}

/// The store as the ledger's object source: the ledger may be shared across threads, the
/// store may not, so loads take a lock (one command, one thread: it is never contended).
struct LockedStore(Mutex<Store>);

impl LockedStore {
    fn store(&self) -> Result<std::sync::MutexGuard<'_, Store>, ContextError> {
        self.0
            .lock()
            .map_err(|_| ContextError::InvalidArgument("the mockup store lock is poisoned".into()))
    }
}

impl ObjectSource for LockedStore {
    fn load_node(&self, offset: u64, hash: &ContextHash) -> Result<Arc<NodeObject>, ContextError> {
        self.store()?.load_node(offset, hash)
    }

    fn load_contents(&self, offset: u64, length_bytes: u64) -> Result<Arc<[u8]>, ContextError> {
        self.store()?.load_contents(offset, length_bytes)
    }
}

impl From<LedgerError> for MockupError {
    fn from(error: LedgerError) -> MockupError {
        MockupError::State(error.to_string())
    }
}

impl From<kestrel_context::ContextError> for MockupError {
    fn from(error: kestrel_context::ContextError) -> MockupError {
        MockupError::State(error.to_string())
    }
}

/// The liquidity-baking scripts in `dir`: `cpmm.tz` and `lqt.tz`, macros expanded.
pub fn read_liquidity_baking_scripts(dir: &Path) -> Result<LiquidityBakingScripts, MockupError> {
    let read = |name: &str| -> Result<Node, MockupError> {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).map_err(|error| MockupError::io(&path, &error))?;
        let script = kestrel_micheline::parse_toplevel(&text)
            .map_err(|error| MockupError::State(format!("{}: {error}", path.display())))?;
        kestrel_michelson::expand_macros(&script)
            .map_err(|error| MockupError::State(format!("{}: {error}", path.display())))
    };
    Ok(LiquidityBakingScripts {
        cpmm: read("cpmm.tz")?,
        lqt: read("lqt.tz")?,
    })
}

fn store_dir(mockup_dir: &Path) -> PathBuf {
    mockup_dir.join(STORE_SUBDIRECTORY)
}

impl Chain {
    /// Octez's mockup genesis, committed to a new store under `mockup_dir` (`create mockup`),
    /// with the liquidity-baking contracts when their scripts are given.
    pub fn create(
        mockup_dir: &Path,
        liquidity_baking: Option<LiquidityBakingScripts>,
    ) -> Result<(), MockupError> {
        let genesis = match liquidity_baking {
            Some(scripts) => Genesis::mockup().with_liquidity_baking(scripts),
            None => Genesis::mockup(),
        };
        let ledger = Ledger::genesis(&genesis)?;
        let mut store = Store::open(&store_dir(mockup_dir), StoreOptions::default())?;
        store.commit(ledger.tree(), &[], &commit_info("genesis"))?;
        store.close()?;
        Ok(())
    }

    /// The state stored under `mockup_dir`, or genesis in memory when it is `None`.
    pub fn open(mockup_dir: Option<&Path>) -> Result<Chain, MockupError> {
        let constants = Genesis::mockup().constants;
        let Some(dir) = mockup_dir else {
            return Ok(Chain {
                ledger: Ledger::genesis(&Genesis::mockup())?,
                store: None,
            });
        };
        let store = Store::open(&store_dir(dir), StoreOptions::default())?;
        let missing = || MockupError::State(format!("no mockup state in {}", dir.display()));
        let head = store.head().ok_or_else(missing)?;
        let tree = store.checkout(&head)?.ok_or_else(missing)?;
        let store = Arc::new(LockedStore(Mutex::new(store)));
        Ok(Chain {
            ledger: Ledger::from_tree(tree, store.clone(), constants),
            store: Some((store, head)),
        })
    }

    /// The protocol constants.
    pub fn constants(&self) -> &Constants {
        self.ledger.constants()
    }

    /// The branch operations are forged on.
    pub fn branch(&self) -> BlockHash {
        Chain::branch_hash()
    }

    /// The mockup's head block hash (its genesis, which synchronous injection never moves).
    pub fn branch_hash() -> BlockHash {
        BlockHash::from_b58check(GENESIS_BLOCK_HASH).expect("the genesis block hash is valid")
    }

    /// The counter of `account`'s last operation (0 before any).
    pub fn counter(&self, account: &PublicKeyHash) -> Result<u128, MockupError> {
        Ok(self.ledger.counter(account)?.unwrap_or(0))
    }

    /// The balance of `contract`, in mutez.
    pub fn balance(&self, contract: &Destination) -> Result<u64, MockupError> {
        Ok(self.ledger.balance(contract)?)
    }

    /// The code of `contract`, `None` when it has no script.
    pub fn script(&self, contract: &ContractHash) -> Result<Option<Node>, MockupError> {
        Ok(self.ledger.script(contract)?)
    }

    /// The storage of `contract`, `None` when it has no script.
    pub fn storage(&self, contract: &ContractHash) -> Result<Option<Node>, MockupError> {
        Ok(self.ledger.storage(contract)?)
    }

    /// The block an operation is applied in: the head's successor (level 1: synchronous
    /// injection never bakes), on the mockup's chain.
    fn block(&self) -> BlockContext {
        BlockContext {
            level: MOCKUP_LEVEL,
            timestamp_seconds: MOCKUP_TIMESTAMP_SECONDS,
            chain_id: ChainId::from_b58check(MOCKUP_CHAIN_ID)
                .expect("the mockup chain id is valid"),
            payload_producer: Genesis::mockup().accounts[0].public_key.hash(),
        }
    }

    /// Simulates `operation` (unsigned; `Mode::Simulate`) on a copy of the state.
    pub fn simulate(
        &self,
        operation: &Operation<'_>,
    ) -> Result<Vec<ContentsMetadata<'static>>, MockupError> {
        let mut copy = self.ledger.clone();
        apply(&mut copy, operation, &self.block(), Mode::Simulate)
    }

    /// Validates and applies the signed `operation` (`Mode::Apply`).
    pub fn inject(
        &mut self,
        operation: &Operation<'_>,
    ) -> Result<Vec<ContentsMetadata<'static>>, MockupError> {
        let block = self.block();
        apply(&mut self.ledger, operation, &block, Mode::Apply)
    }

    /// Runs view `name` of `contract` on `input` with its storage and balance, as the
    /// `run_script_view` RPC does: on a copy of the state, `SENDER` the contract itself and
    /// `SOURCE` the zero key hash unless given, at the mockup's level and time unless given,
    /// with `gas_limit_milli`. Returns the view's result.
    pub fn run_view(
        &self,
        request: &ViewRequest<'_>,
    ) -> Result<kestrel_michelson::Value, MockupError> {
        let contract = request.contract;
        let missing = || MockupError::Command(format!("{} has no script", contract.to_b58check()));
        let code = self.ledger.script(contract)?.ok_or_else(missing)?;
        let storage = self.ledger.storage(contract)?.ok_or_else(missing)?;
        let balance = self.ledger.balance(&Destination::Originated(*contract))?;
        let config = kestrel_michelson::Config {
            legacy: true,
            gas_limit_milli: request.gas_limit_milli,
        };
        let script = kestrel_michelson::Script::typecheck(&code, &config)
            .map_err(|error| MockupError::Command(format!("ill-typed contract: {error}")))?;
        let address = |destination: &Destination| {
            kestrel_michelson::Address::new(kestrel_protocol::host::vm_destination(destination))
        };
        let self_address = address(&Destination::Originated(*contract));
        let zero = PublicKeyHash::from_b58check(ZERO_KEY_HASH).expect("the zero key hash is valid");
        let (sender, source) = match (request.sender, request.payer) {
            (None, None) => (self_address.clone(), Destination::Implicit(zero)),
            (Some(sender), None) => (address(sender), Destination::Implicit(zero)),
            (None, Some(payer)) => (
                address(&Destination::Implicit(*payer)),
                Destination::Implicit(*payer),
            ),
            (Some(sender), Some(payer)) => (address(sender), Destination::Implicit(*payer)),
        };
        let environment = kestrel_michelson::Environment {
            amount_mutez: 0,
            balance_mutez: i64::try_from(balance).unwrap_or(i64::MAX),
            now_seconds: request.now_seconds.unwrap_or(MOCKUP_TIMESTAMP_SECONDS),
            level: request.level.unwrap_or(MOCKUP_LEVEL),
            min_block_time_seconds: self.ledger.constants().minimal_block_delay_seconds,
            source: address(&source),
            sender,
            self_address,
            chain_id: kestrel_michelson::chain_id_from_base58(MOCKUP_CHAIN_ID)
                .expect("the mockup chain id is valid"),
        };
        let mut ledger = self.ledger.clone();
        let mut nonce = kestrel_protocol::apply::OriginationNonce::new([0; 32]);
        let mut host = kestrel_protocol::host::LedgerHost::new(&mut ledger, &mut nonce);
        let execution = kestrel_michelson::run_view(
            &script,
            request.name,
            request.input,
            &storage,
            &environment,
            &mut host,
            request.gas_limit_milli,
        )
        .map_err(|error| MockupError::Command(error.to_string()))?;
        Ok(execution.result)
    }

    /// Commits the ledger's tree as the store's new head and closes the store.
    pub fn save(self, message: &str) -> Result<(), MockupError> {
        let Some((store, head)) = self.store else {
            return Ok(());
        };
        let tree = self.ledger.tree().clone();
        // The ledger reads through the store; once it is gone the store is ours alone.
        drop(self.ledger);
        let mut store = Arc::try_unwrap(store)
            .map_err(|_| MockupError::State("the mockup store is still in use".into()))?
            .0
            .into_inner()
            .map_err(|_| MockupError::State("the mockup store lock is poisoned".into()))?;
        store.commit(&tree, &[head], &commit_info(message))?;
        store.close()?;
        Ok(())
    }
}

/// Runs `validate_and_apply` on the bytes of `operation` (as a node receives them).
fn apply(
    ledger: &mut Ledger,
    operation: &Operation<'_>,
    block: &BlockContext,
    mode: Mode,
) -> Result<Vec<ContentsMetadata<'static>>, MockupError> {
    let bytes = operation.encode();
    let signed = SignedOperation::decode(&bytes)
        .map_err(|error| MockupError::Forge(format!("{error:?}")))?;
    validate_and_apply(ledger, &signed, block, mode)
        .map_err(|error| MockupError::State(format!("{error:?}")))
}

/// The receipt of `operation` with `metadata` as octez-client prints it (`Manager signed
/// operations: …`), the lines under "This sequence of operations was run:" (or "This
/// simulation failed:").
pub fn render(operation: &Operation<'_>, metadata: &[ContentsMetadata<'_>]) -> String {
    let contents: Vec<ContentsAndMetadata<'_>> = operation
        .contents
        .iter()
        .zip(metadata)
        .map(|(contents, metadata)| ContentsAndMetadata {
            contents: contents.clone(),
            metadata: metadata.clone(),
        })
        .collect();
    let text = render_receipt(&contents);
    // The renderer heads the text with the line octez-client prints after an injection.
    match text.split_once('\n') {
        Some((_, body)) => body.to_string(),
        None => String::new(),
    }
}

fn commit_info(message: &str) -> CommitInfo {
    CommitInfo {
        date_seconds: 0,
        author: COMMIT_AUTHOR.to_string(),
        message: message.to_string(),
    }
}
