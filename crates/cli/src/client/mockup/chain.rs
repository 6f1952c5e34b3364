//! The mockup's chain state and the one place the client calls the protocol layer: the ledger
//! (genesis with the bootstrap accounts, balances, counters, storages) kept as a context tree
//! committed to a `kestrel_context::Store` under `BASE_DIR/mockup/`, simulation and application
//! of signed operations, and the receipts' text.
//!
//! The protocol's ledger and application (`Ledger`, `validate_and_apply`) and its receipts
//! (`render_receipt`) are being built beside this client; until they are merged every call
//! here answers [`MockupError::ProtocolUnavailable`], and the commands that need no state (the
//! wallet's) work already.

use kestrel_crypto::{BlockHash, ContractHash, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::Operation;
use std::path::Path;

use super::estimate::Consumption;
use super::MockupError;

/// The mockup's head: Octez's genesis block, the branch of every injected operation.
pub const GENESIS_BLOCK_HASH: &str = "BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2";
/// `hard_gas_limit_per_operation` of the mockup's constants (`constants_mainnet`).
pub const HARD_GAS_LIMIT_PER_OPERATION: u64 = 1_040_000;
/// `hard_storage_limit_per_operation` of the mockup's constants, in bytes.
pub const HARD_STORAGE_LIMIT_PER_OPERATION_BYTES: u64 = 60_000;
/// `cost_per_byte` of the mockup's constants, in mutez.
pub const COST_PER_BYTE_MUTEZ: u64 = 250;

/// What a simulation (`Mode::Simulate`) says of an operation.
pub struct Simulation {
    /// Per manager content, what it consumed (empty when it failed).
    pub consumption: Vec<Consumption>,
    /// When a content failed: the receipt text (`Manager signed operations: …`) and the
    /// error trace as octez-client prints it.
    pub failure: Option<(String, String)>,
}

/// What the application of a signed operation gave.
pub struct Applied {
    /// The receipt text under "This sequence of operations was run:".
    pub receipt: String,
    /// The contracts it originated, in order.
    pub originated: Vec<ContractHash>,
}

/// The mockup's state: on disk for a mockup base directory, in memory otherwise.
pub struct Chain {
    _private: (),
}

impl Chain {
    /// Genesis, committed to a new store in `dir` (`create mockup`).
    pub fn create(_dir: &Path) -> Result<Chain, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// The state stored in `dir`, or genesis in memory when `dir` is `None`.
    pub fn open(_dir: Option<&Path>) -> Result<Chain, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// The branch operations are forged on.
    pub fn branch(&self) -> BlockHash {
        BlockHash::from_b58check(GENESIS_BLOCK_HASH).expect("the genesis block hash is valid")
    }

    /// The counter of `account`'s last operation.
    pub fn counter(&self, _account: &PublicKeyHash) -> Result<u128, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// The balance of `contract`, in mutez.
    pub fn balance(&self, _contract: &Contract) -> Result<u64, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// The storage of `contract`, `None` when it has no script.
    pub fn storage(&self, _contract: &ContractHash) -> Result<Option<Node>, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// Simulates `operation` (unsigned) on a copy of the state.
    pub fn simulate(&self, _operation: &Operation<'_>) -> Result<Simulation, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }

    /// Validates and applies the signed `operation`, and commits the new state when on disk.
    pub fn inject(&mut self, _operation: &Operation<'_>) -> Result<Applied, MockupError> {
        Err(MockupError::ProtocolUnavailable)
    }
}
