//! The mockup's chain state and the one place the client calls the protocol layer: the ledger
//! (Octez's mockup genesis with the bootstrap accounts; balances, counters, storages), kept as
//! a context tree committed to a `kestrel_context::Store` in `BASE_DIR/mockup/context/`, one
//! commit per injected operation; simulation and application of operations; the receipts' text.

use kestrel_context::{CommitInfo, ContextHash, Store, StoreOptions};
use kestrel_crypto::{BlockHash, ChainId, ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_node::chain::SharedStore;
use kestrel_node::views::ViewBlock;
pub use kestrel_node::views::ViewRequest;
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::receipt::ContentsMetadata;
use kestrel_protocol::{
    render_receipt, validate_and_apply, BlockContext, Constants, Genesis, Ledger, LedgerError,
    Mode, Operation, SignedOperation,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::MockupError;

/// The mockup's head, the branch of every injected operation: the block hash Octez's mockup
/// gives its RPC context (`genesis_block_hash`, `proto_025_PsUshuai/lib_client/mockup.ml`).
/// The branch is part of the signed bytes, hence of the operation hash and of the addresses
/// originated from it (`SELF_ADDRESS` shows them unmasked in `test_self.out`).
pub const GENESIS_BLOCK_HASH: &str = "BLockGenesisGenesisGenesisGenesisGenesisCCCCCeZiLHU";

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

/// The mockup's state: on disk for a mockup base directory, in memory otherwise.
pub struct Chain {
    ledger: Ledger,
    /// The store and its head, for a mockup base directory.
    store: Option<(Arc<SharedStore>, ContextHash)>,
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
        let store = SharedStore::new(store);
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

    /// Runs a view as the `run_script_view` RPC does, at the mockup's level and time unless
    /// the request says otherwise.
    pub fn run_view(
        &self,
        request: &ViewRequest<'_>,
    ) -> Result<kestrel_michelson::Value, MockupError> {
        let block = ViewBlock {
            level: MOCKUP_LEVEL,
            now_seconds: MOCKUP_TIMESTAMP_SECONDS,
            chain_id: ChainId::from_b58check(MOCKUP_CHAIN_ID)
                .expect("the mockup chain id is valid"),
        };
        kestrel_node::views::run_view(&self.ledger, request, &block)
            .map_err(|error| MockupError::Command(error.to_string()))
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
            .into_inner()?;
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
    let text = render_receipt(&kestrel_node::chain::contents_with_metadata(
        operation, metadata,
    ));
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
