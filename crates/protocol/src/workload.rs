//! Synthetic chains for throughput benchmarks (`kestrel protocol bench`, the criterion bench
//! `protocol_apply`): many revealed ed25519 accounts on the mockup genesis, blocks of signed
//! manager operations from them — tez transfers, FA1.2 `transfer`s, originations, `xtzToToken`
//! calls of the liquidity-baking CPMM — and a block's application as a node does it: decode,
//! signatures checked as one batch, each operation validated and applied in turn
//! ([`validate_and_apply_block`]), the state committed once to a `kestrel_context::Store`. The
//! time of each stage is reported.
//!
//! The scripts' sources are the caller's (the test data's `fa12_reference.tz`, and Octez's
//! liquidity-baking `cpmm.tz` and `lqt.tz`): this crate embeds no script. For `xtzToToken`, the
//! genesis originates the liquidity-baking contracts as Octez's does, then `bootstrap1` (the test
//! token's administrator) mints tokens, approves the CPMM and adds liquidity, so that each call
//! buys tokens from a pool of [`LIQUIDITY_MUTEZ`] against [`LIQUIDITY_TOKENS`].

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kestrel_context::{CommitInfo, ContextError, ContextHash, InMemory, Store, StoreOptions};
use kestrel_crypto::{BlockHash, ChainId, Destination, Entrypoint, PublicKeyHash, SecretKey};

use crate::apply::{validate_and_apply_block, BlockContext, Mode, StageTimings};
use crate::contents::{Contents, ManagerKind, ManagerOperation};
use crate::crypto_fields::Contract;
use crate::field::{BoundedNat, Mutez};
use crate::ledger::{Genesis, Ledger, LedgerError, LiquidityBakingScripts, Manager};
use crate::manager::{ManagerHeader, Origination, Transaction};
use crate::operation::{Operation, SignedOperation};
use crate::receipt::{ContentsMetadata, ManagerResult, OperationResult};
use crate::script::{LazyExpr, Parameters, Script};
use crate::ValidationError;

/// The branch every operation names (the mockup's genesis block).
const BRANCH: &str = "BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2";
/// The mockup's chain id.
const CHAIN_ID: &str = "NetXdQprcVkpaWU";
/// bootstrap1's secret key: the token's administrator.
const ADMIN_KEY: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
/// Each account's tez.
const ACCOUNT_BALANCE_MUTEZ: u64 = 1_000_000_000;
/// Each account's tokens.
const ACCOUNT_TOKENS: u64 = 1_000_000;
/// Every operation's fee.
const FEE_MUTEZ: u64 = 5_000;
/// Setup operations' limits (originating a token with a big map of every account).
const SETUP_GAS_LIMIT: u128 = 1_040_000;
const SETUP_STORAGE_LIMIT: u128 = 60_000;
/// The most accounts whose token balances fit an origination's storage limit.
pub const ACCOUNTS_MAX: usize = 500;
/// The tez `bootstrap1` adds to the CPMM's pool (10,000 tez).
pub const LIQUIDITY_MUTEZ: u64 = 10_000_000_000;
/// The tokens that deposit takes at the genesis pool's price (1 token unit per 100 mutez).
pub const LIQUIDITY_TOKENS: u64 = LIQUIDITY_MUTEZ / 100;
/// What each `xtzToToken` call sends (1 tez).
const SWAP_MUTEZ: u64 = 1_000_000;
/// The calls' deadline: 2100-01-01T00:00:00Z.
const DEADLINE_SECONDS: u64 = 4_102_444_800;

/// The scripts the blocks run, as source text.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// The FA1.2 token (TZIP-7's reference contract), for [`Workload::Fa12`] and
    /// [`Workload::Originate`].
    pub fa12: &'a str,
    /// Octez's liquidity-baking CPMM and liquidity-token scripts (`cpmm.tz`, `lqt.tz`), for
    /// [`Workload::XtzToToken`].
    pub liquidity_baking: Option<(&'a str, &'a str)>,
}

/// What the blocks hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// FA1.2 `transfer` of 1 token from an account to the next.
    Fa12,
    /// 1 tez from an account to the next.
    Transfer,
    /// Originations of the FA1.2 contract with an empty ledger.
    Originate,
    /// `xtzToToken` calls of the liquidity-baking CPMM: 1 tez for tokens, sent to the caller
    /// (the CPMM calls the token's `transfer` and burns 0.1 % of the tez).
    XtzToToken,
}

impl Workload {
    /// Each operation's gas and storage limits, with room.
    fn limits(self) -> (u128, u128) {
        match self {
            Workload::Fa12 => (10_000, 100),
            Workload::Transfer => (3_000, 0),
            Workload::Originate => (10_000, 6_000),
            Workload::XtzToToken => (20_000, 400),
        }
    }
}

/// Why a benchmark chain could not be built or a block applied.
#[derive(Debug)]
pub enum WorkloadError {
    /// A source does not parse or its macros do not expand.
    Script(String),
    /// The state could not be read or written.
    Ledger(LedgerError),
    /// The store failed.
    Context(ContextError),
    /// An operation was refused.
    Refused {
        /// Its index in the block.
        index: usize,
        /// Why.
        error: ValidationError,
    },
    /// An operation was included but not applied.
    Failed {
        /// Its index in the block.
        index: usize,
        /// Its receipt's result.
        result: String,
    },
    /// The accounts asked for are 0 or more than [`ACCOUNTS_MAX`], a workload's script is
    /// missing, or the setup failed.
    Setup(&'static str),
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadError::Script(error) => write!(f, "script: {error}"),
            WorkloadError::Ledger(error) => write!(f, "state: {error}"),
            WorkloadError::Context(error) => write!(f, "store: {error}"),
            WorkloadError::Refused { index, error } => write!(f, "operation {index}: {error}"),
            WorkloadError::Failed { index, result } => {
                write!(f, "operation {index} not applied: {result}")
            }
            WorkloadError::Setup(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for WorkloadError {}

impl From<LedgerError> for WorkloadError {
    fn from(error: LedgerError) -> WorkloadError {
        WorkloadError::Ledger(error)
    }
}

impl From<ContextError> for WorkloadError {
    fn from(error: ContextError) -> WorkloadError {
        WorkloadError::Context(error)
    }
}

/// Where one block's time went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockTimings {
    /// Decoding the signed bytes.
    pub decode: Duration,
    /// Signatures, validation and application ([`validate_and_apply_block`]'s stages).
    pub stages: StageTimings,
    /// Committing the state to the store (hashing and writing the changed tree).
    pub commit: Duration,
}

impl BlockTimings {
    /// The whole block.
    pub fn total(&self) -> Duration {
        self.decode
            + self.stages.signature
            + self.stages.validation
            + self.stages.application
            + self.commit
    }
}

/// A chain of benchmark blocks: the state, its store, the accounts and contracts.
pub struct Chain {
    workload: Workload,
    ledger: Ledger,
    store: Store,
    head: Option<ContextHash>,
    accounts: Vec<SecretKey>,
    /// Each account's next counter.
    counters: Vec<u128>,
    fa12_code: LazyExpr<'static>,
    /// The contract the calls go to (the token, or the CPMM).
    target: Option<Destination>,
    chain_id: ChainId,
    level: u64,
}

impl Chain {
    /// The mockup genesis with `accounts` funded and revealed accounts, the FA1.2 contract
    /// originated with a balance for each when the workload calls it (or the liquidity-baking
    /// contracts with liquidity added), and a store in `directory` (created, emptied first).
    pub fn new(
        workload: Workload,
        accounts: usize,
        sources: &Sources<'_>,
        directory: &Path,
    ) -> Result<Chain, WorkloadError> {
        if accounts == 0 || accounts > ACCOUNTS_MAX {
            return Err(WorkloadError::Setup("accounts must be 1 to 500"));
        }
        let genesis = match (workload, sources.liquidity_baking) {
            (Workload::XtzToToken, Some((cpmm, lqt))) => {
                Genesis::mockup().with_liquidity_baking(LiquidityBakingScripts {
                    cpmm: expanded(cpmm, true)?,
                    lqt: expanded(lqt, true)?,
                })
            }
            (Workload::XtzToToken, None) => {
                return Err(WorkloadError::Setup(
                    "xtzToToken needs the liquidity-baking scripts",
                ))
            }
            _ => Genesis::mockup(),
        };
        let mut ledger = Ledger::from_tree(
            Ledger::genesis(&genesis)?.tree().clone(),
            Arc::new(InMemory),
            genesis.constants,
        );
        let keys: Vec<SecretKey> = (0..accounts).map(account).collect();
        for key in &keys {
            let hash = key.public_key().hash();
            ledger.allocate_implicit(&hash)?;
            ledger.set_balance(&Destination::Implicit(hash), ACCOUNT_BALANCE_MUTEZ)?;
            ledger.set_manager(&hash, &Manager::PublicKey(Box::new(key.public_key())))?;
        }
        let _ = std::fs::remove_dir_all(directory);
        let store = Store::open(directory, StoreOptions::default())?;
        let mut chain = Chain {
            workload,
            ledger,
            store,
            head: None,
            counters: vec![1; accounts],
            accounts: keys,
            fa12_code: lazy(sources.fa12, true)?,
            target: None,
            chain_id: ChainId::from_b58check(CHAIN_ID)
                .map_err(|_| WorkloadError::Setup("the mockup's chain id does not parse"))?,
            level: 1,
        };
        chain.originate_token()?;
        chain.add_liquidity()?;
        Ok(chain)
    }

    /// The state.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Splits the application's time into its stages from the next block on (`true`), at the
    /// cost of a clock read per switch ([`Ledger::time_stages`]).
    pub fn time_stages(&mut self, enabled: bool) {
        self.ledger.time_stages(enabled);
    }

    fn originate_token(&mut self) -> Result<(), WorkloadError> {
        if self.workload != Workload::Fa12 {
            return Ok(());
        }
        let admin = SecretKey::from_b58check(ADMIN_KEY)
            .map_err(|_| WorkloadError::Setup("bootstrap1's key does not parse"))?;
        let admin_hash = admin.public_key().hash();
        let counter = self.ledger.counter(&admin_hash)?.unwrap_or(0) + 1;
        let mut holders: Vec<PublicKeyHash> = self
            .accounts
            .iter()
            .map(|key| key.public_key().hash())
            .collect();
        holders.sort_by_key(|hash| hash.to_bytes());
        let entries: Vec<String> = holders
            .iter()
            .map(|hash| {
                format!(
                    "Elt \"{}\" (Pair {ACCOUNT_TOKENS} {{}})",
                    hash.to_b58check()
                )
            })
            .collect();
        let storage = format!(
            "Pair {{ {} }} (Pair \"{}\" (Pair False {}))",
            entries.join(" ; "),
            admin_hash.to_b58check(),
            ACCOUNT_TOKENS * holders.len() as u64
        );
        let token = self.originate(&admin, counter, self.fa12_code.clone(), &storage, 0)?;
        self.target = Some(token);
        Ok(())
    }

    /// bootstrap1 mints [`LIQUIDITY_TOKENS`] of the test token, lets the CPMM take them and adds
    /// [`LIQUIDITY_MUTEZ`] to its pool (`addLiquidity`); the calls then go to the CPMM.
    fn add_liquidity(&mut self) -> Result<(), WorkloadError> {
        if self.workload != Workload::XtzToToken {
            return Ok(());
        }
        let admin = SecretKey::from_b58check(ADMIN_KEY)
            .map_err(|_| WorkloadError::Setup("bootstrap1's key does not parse"))?;
        let admin_address = admin.public_key().hash().to_b58check();
        let (cpmm, _, token) = crate::apply::liquidity_baking_addresses();
        let cpmm = Destination::Originated(cpmm);
        let token = Destination::Originated(token);
        let cpmm_address = cpmm.to_b58check();
        let calls = [
            (
                token,
                0,
                "mintOrBurn",
                format!("Pair {LIQUIDITY_TOKENS} \"{admin_address}\""),
            ),
            (
                token,
                0,
                "approve",
                format!("Pair \"{cpmm_address}\" {LIQUIDITY_TOKENS}"),
            ),
            (
                cpmm,
                LIQUIDITY_MUTEZ,
                "addLiquidity",
                format!(
                    "Pair \"{admin_address}\" (Pair 1 (Pair {LIQUIDITY_TOKENS} {DEADLINE_SECONDS}))"
                ),
            ),
        ];
        for (destination, amount, entrypoint, argument) in calls {
            let counter = self
                .ledger
                .counter(&admin.public_key().hash())?
                .unwrap_or(0)
                + 1;
            let operation = transaction(
                destination,
                amount,
                Some((entrypoint, lazy(&argument, false)?)),
            );
            let limits = (SETUP_GAS_LIMIT, SETUP_STORAGE_LIMIT);
            self.apply_setup(&sign(&admin, header(&admin, counter, limits), operation))?;
        }
        self.target = Some(cpmm);
        Ok(())
    }

    /// Originates `code` with `storage` and `balance` from `key`.
    fn originate(
        &mut self,
        key: &SecretKey,
        counter: u128,
        code: LazyExpr<'static>,
        storage: &str,
        balance: u64,
    ) -> Result<Destination, WorkloadError> {
        let operation = origination(code, lazy(storage, false)?, balance);
        let limits = (SETUP_GAS_LIMIT, SETUP_STORAGE_LIMIT);
        let receipt = self.apply_setup(&sign(key, header(key, counter, limits), operation))?;
        match &receipt {
            ManagerResult::Origination(OperationResult::Applied(result)) => result
                .originated_contracts
                .first()
                .map(|hash| Destination::Originated(*hash))
                .ok_or(WorkloadError::Setup("origination produced no contract")),
            _ => Err(WorkloadError::Setup("origination failed")),
        }
    }

    /// Applies one setup operation in a block of its own (not committed).
    fn apply_setup(&mut self, bytes: &[u8]) -> Result<ManagerResult<'static>, WorkloadError> {
        let block = self.block_context();
        let signed = SignedOperation::decode(bytes)
            .map_err(|error| WorkloadError::Script(error.to_string()))?;
        let metadata = crate::validate_and_apply(&mut self.ledger, &signed, &block, Mode::Apply)
            .map_err(|error| WorkloadError::Refused { index: 0, error })?;
        self.level += 1;
        applied(0, metadata)
    }

    fn block_context(&self) -> BlockContext {
        BlockContext {
            level: self.level,
            timestamp_seconds: 1_700_000_000 + self.level as i64,
            chain_id: self.chain_id,
            payload_producer: self.accounts[0].public_key().hash(),
        }
    }

    /// The next block: `size` signed operations, round-robin over the accounts (consecutive
    /// counters for an account's several operations).
    pub fn signed_block(&mut self, size: usize) -> Result<Vec<Vec<u8>>, WorkloadError> {
        let limits = self.workload.limits();
        let accounts = self.accounts.len();
        let mut block = Vec::with_capacity(size);
        for index in 0..size {
            let sender = index % accounts;
            let key = &self.accounts[sender];
            let next = self.accounts[(sender + 1) % accounts].public_key().hash();
            let operation = match (self.workload, self.target) {
                (Workload::Transfer, _) => {
                    transaction(Destination::Implicit(next), 1_000_000, None)
                }
                (Workload::Originate, _) => origination(
                    self.fa12_code.clone(),
                    lazy(
                        &format!(
                            "Pair {{}} (Pair \"{}\" (Pair False 0))",
                            key.public_key().hash().to_b58check()
                        ),
                        false,
                    )?,
                    0,
                ),
                (Workload::Fa12, Some(token)) => {
                    let argument = format!(
                        "Pair \"{}\" (Pair \"{}\" 1)",
                        key.public_key().hash().to_b58check(),
                        next.to_b58check()
                    );
                    transaction(token, 0, Some(("transfer", lazy(&argument, false)?)))
                }
                (Workload::XtzToToken, Some(cpmm)) => {
                    let argument = format!(
                        "Pair \"{}\" (Pair 1 {DEADLINE_SECONDS})",
                        key.public_key().hash().to_b58check()
                    );
                    transaction(
                        cpmm,
                        SWAP_MUTEZ,
                        Some(("xtzToToken", lazy(&argument, false)?)),
                    )
                }
                (Workload::Fa12 | Workload::XtzToToken, None) => {
                    return Err(WorkloadError::Setup("no contract to call"))
                }
            };
            let counter = self.counters[sender];
            self.counters[sender] += 1;
            block.push(sign(key, header(key, counter, limits), operation));
        }
        Ok(block)
    }

    /// Decodes, validates and applies `operations` as a block, then commits the state: where
    /// the time went. Every operation must be applied.
    pub fn apply_block(&mut self, operations: &[Vec<u8>]) -> Result<BlockTimings, WorkloadError> {
        let block = self.block_context();
        let start = Instant::now();
        let decoded = operations
            .iter()
            .map(|bytes| SignedOperation::decode(bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| WorkloadError::Script(error.to_string()))?;
        let decode = start.elapsed();
        let (receipts, stages) = validate_and_apply_block(&mut self.ledger, &decoded, &block);
        for (index, receipt) in receipts.into_iter().enumerate() {
            let metadata = receipt.map_err(|error| WorkloadError::Refused { index, error })?;
            applied(index, metadata)?;
        }
        let start = Instant::now();
        let info = CommitInfo {
            date_seconds: block.timestamp_seconds,
            author: "Tezos".into(),
            message: format!("level {}", self.level),
        };
        let parents: Vec<ContextHash> = self.head.into_iter().collect();
        self.head = Some(self.store.commit(self.ledger.tree(), &parents, &info)?);
        let commit = start.elapsed();
        self.level += 1;
        Ok(BlockTimings {
            decode,
            stages,
            commit,
        })
    }
}

/// The benchmark's `index`th account: an ed25519 key from a fixed seed.
fn account(index: usize) -> SecretKey {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(index as u64 + 1).to_be_bytes());
    let text = kestrel_crypto::base58::encode_check(kestrel_crypto::base58::ED25519_SEED, &seed);
    SecretKey::from_b58check(&text).expect("a 32-byte seed is an ed25519 secret key")
}

/// The operation's only content's result, if it was applied.
fn applied(
    index: usize,
    metadata: Vec<ContentsMetadata<'static>>,
) -> Result<ManagerResult<'static>, WorkloadError> {
    let Some(ContentsMetadata::Manager(manager)) = metadata.into_iter().next() else {
        return Err(WorkloadError::Setup("no manager receipt"));
    };
    let result = manager.operation_result;
    let success = matches!(
        &result,
        ManagerResult::Transaction(OperationResult::Applied(_))
            | ManagerResult::Origination(OperationResult::Applied(_))
    );
    if success {
        Ok(result)
    } else {
        Err(WorkloadError::Failed {
            index,
            result: format!("{result:?}"),
        })
    }
}

fn header(key: &SecretKey, counter: u128, (gas, storage): (u128, u128)) -> ManagerHeader {
    ManagerHeader {
        source: key.public_key().hash(),
        fee: Mutez(FEE_MUTEZ),
        counter: BoundedNat(counter),
        gas_limit: BoundedNat(gas),
        storage_limit: BoundedNat(storage),
    }
}

fn transaction(
    destination: Destination,
    amount: u64,
    call: Option<(&str, LazyExpr<'static>)>,
) -> ManagerKind<'static> {
    ManagerKind::Transaction(Transaction {
        amount: Mutez(amount),
        destination: Contract(destination),
        parameters: call.map(|(entrypoint, value)| Parameters {
            entrypoint: Entrypoint::try_new(entrypoint).expect("entrypoint names here are valid"),
            value,
        }),
    })
}

fn origination(
    code: LazyExpr<'static>,
    storage: LazyExpr<'static>,
    balance: u64,
) -> ManagerKind<'static> {
    ManagerKind::Origination(Origination {
        balance: Mutez(balance),
        delegate: None,
        script: Script { code, storage },
    })
}

/// The signed bytes of a one-content operation.
fn sign(key: &SecretKey, header: ManagerHeader, operation: ManagerKind<'static>) -> Vec<u8> {
    let operation = Operation {
        branch: BlockHash::from_b58check(BRANCH).expect("the genesis hash parses"),
        contents: vec![Contents::Manager(ManagerOperation { header, operation })],
        signature: None,
    };
    let mut bytes = operation.encode_unsigned();
    let mut message = Vec::with_capacity(1 + bytes.len());
    message.push(crate::operation::GENERIC_OPERATION_WATERMARK);
    message.extend_from_slice(&bytes);
    bytes.extend_from_slice(key.sign(&message).as_bytes());
    bytes
}

/// Binary Micheline of a script (`toplevel`) or value's text, macros expanded.
fn lazy(text: &str, toplevel: bool) -> Result<LazyExpr<'static>, WorkloadError> {
    let node = expanded(text, toplevel)?;
    let bytes = kestrel_micheline::binary::encode(&node)
        .map_err(|error| WorkloadError::Script(format!("{error:?}")))?;
    Ok(LazyExpr(std::borrow::Cow::Owned(bytes)))
}

/// A script (`toplevel`) or value's text parsed, macros expanded.
fn expanded(text: &str, toplevel: bool) -> Result<kestrel_micheline::Node, WorkloadError> {
    let node = if toplevel {
        kestrel_micheline::parse_toplevel(text)
    } else {
        kestrel_micheline::parse_expression(text)
    }
    .map_err(|error| WorkloadError::Script(error.to_string()))?;
    kestrel_michelson::expand_macros(&node)
        .map_err(|error| WorkloadError::Script(error.to_string()))
}
