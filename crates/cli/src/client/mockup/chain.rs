//! The mockup's chain state and the one place the client calls the protocol layer: the ledger
//! (Octez's mockup genesis with the bootstrap accounts; balances, counters, storages), kept as
//! a context tree committed to a `kestrel_context::Store` in `BASE_DIR/mockup/context/`, one
//! commit per injected operation; the head block's level and timestamp, which `bake for`
//! advances, in `BASE_DIR/mockup/head.json`; simulation and application of operations; the
//! receipts' text.

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

/// The head block as operations see it: they are applied in its successor (synchronous
/// injection never bakes; `bake for` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    level: u64,
    timestamp_seconds: i64,
}

/// Octez's mockup genesis: level 0 at the epoch (`initial_timestamp`). Its operations see
/// `LEVEL` = 1 and `NOW` = 1 (`test_now.out` records it): the successor, a second later.
const GENESIS_HEAD: Head = Head {
    level: 0,
    timestamp_seconds: 0,
};

/// The head's file inside `BASE_DIR/mockup/` (Octez's mockup keeps its head's shell header in
/// `context.json`).
const HEAD_FILE: &str = "head.json";

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
    head: Head,
    /// The store and its head, and the mockup directory, for a mockup base directory.
    store: Option<(Arc<SharedStore>, ContextHash, PathBuf)>,
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
                head: GENESIS_HEAD,
                store: None,
            });
        };
        let head = read_head(dir)?;
        let store = Store::open(&store_dir(dir), StoreOptions::default())?;
        let missing = || MockupError::State(format!("no mockup state in {}", dir.display()));
        let head_commit = store.head().ok_or_else(missing)?;
        let tree = store.checkout(&head_commit)?.ok_or_else(missing)?;
        let store = SharedStore::new(store);
        Ok(Chain {
            ledger: Ledger::from_tree(tree, store.clone(), constants),
            head,
            store: Some((store, head_commit, dir.to_path_buf())),
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

    /// The block an operation is applied in: the head's successor, a second after it, on the
    /// mockup's chain.
    fn block(&self) -> BlockContext {
        self.block_at(self.head.level + 1, self.head.timestamp_seconds + 1)
    }

    /// The context octez-client's estimation simulates in: `simulate_operation` without
    /// `successor_level` runs at the head's own level
    /// (`Services_registration_plugin.register0_fullctxt_successor_level`, `` `Head_level``),
    /// with the head as predecessor, so `NOW` (`Script_timestamp.now`: the predecessor's time
    /// plus the minimal block delay) is the applied operation's.
    fn simulation_block(&self) -> BlockContext {
        self.block_at(self.head.level, self.head.timestamp_seconds + 1)
    }

    fn block_at(&self, level: u64, timestamp_seconds: i64) -> BlockContext {
        BlockContext {
            level,
            timestamp_seconds,
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
        apply(
            &mut copy,
            operation,
            &self.simulation_block(),
            Mode::Simulate,
        )
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
            level: self.head.level + 1,
            now_seconds: self.head.timestamp_seconds + 1,
            chain_id: ChainId::from_b58check(MOCKUP_CHAIN_ID)
                .expect("the mockup chain id is valid"),
        };
        kestrel_node::views::run_view(&self.ledger, request, &block)
            .map_err(|error| MockupError::Command(error.to_string()))
    }

    /// `bake for`, as octez-client's mockup bakes with `--minimal-timestamp`: one block on the
    /// head, at the next level, `minimal_block_delay` after it (round 0). Returns its level.
    /// The block carries no operation (synchronous injection applied them already); what
    /// applying a block does besides (the baker's rewards, the liquidity-baking subsidy) is
    /// not applied.
    pub fn bake(&mut self) -> u64 {
        let delay = i64::try_from(self.constants().minimal_block_delay_seconds).unwrap_or(i64::MAX);
        self.head = Head {
            level: self.head.level + 1,
            timestamp_seconds: self.head.timestamp_seconds.saturating_add(delay),
        };
        self.head.level
    }

    /// Commits the ledger's tree as the store's new head, records the head block, and closes
    /// the store.
    pub fn save(self, message: &str) -> Result<(), MockupError> {
        let Some((store, head, dir)) = self.store else {
            return Ok(());
        };
        write_head(&dir, self.head)?;
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

/// The head recorded in `dir`, genesis when none is (a base directory no block was baked in).
fn read_head(dir: &Path) -> Result<Head, MockupError> {
    let path = dir.join(HEAD_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(GENESIS_HEAD),
        Err(error) => return Err(MockupError::io(&path, &error)),
    };
    let bad = || MockupError::State(format!("{}: not a mockup head", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|_| bad())?;
    Ok(Head {
        level: json["level"].as_u64().ok_or_else(bad)?,
        timestamp_seconds: json["timestamp"].as_i64().ok_or_else(bad)?,
    })
}

fn write_head(dir: &Path, head: Head) -> Result<(), MockupError> {
    let path = dir.join(HEAD_FILE);
    let text = serde_json::json!({
        "level": head.level,
        "timestamp": head.timestamp_seconds,
    })
    .to_string();
    std::fs::write(&path, text).map_err(|error| MockupError::io(&path, &error))
}

fn commit_info(message: &str) -> CommitInfo {
    CommitInfo {
        date_seconds: 0,
        author: COMMIT_AUTHOR.to_string(),
        message: message.to_string(),
    }
}
