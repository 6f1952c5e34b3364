//! What applying a manager operation produced, in the shape of Octez's `apply_results.ml` /
//! `apply_operation_result.ml` (receipts): balance updates, per-kind results with their status,
//! internal operation results, lazy storage diffs and errors as data.

use kestrel_crypto::{ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::Node;

/// One change of one balance, mutez (`Receipt_repr.balance_update_item`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceUpdate {
    /// Whose balance.
    pub balance: Balance,
    /// The change: negative for a debit.
    pub change: i64,
    /// Why.
    pub origin: UpdateOrigin,
}

/// The balances a manager operation moves tez between (`Receipt_repr.balance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Balance {
    /// An account's or a contract's spendable balance.
    Contract(Destination),
    /// The block's payload-fee accumulator ("payload fees(the block proposer)").
    BlockFees,
    /// Storage burnt ("storage fees").
    StorageFees,
}

/// Why a balance changed (`Receipt_repr.update_origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateOrigin {
    /// Applying a block.
    Block,
    /// A simulation.
    Simulation,
}

/// An error as a receipt carries it: Octez's id and its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// Octez's id, `proto.025-PsUshuai.` included.
    pub id: String,
    /// The error's fields, as the RPC's JSON shows them.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// The status of one operation's application.
#[derive(Debug, Clone, PartialEq)]
pub enum OperationResult<T> {
    /// Applied, and kept.
    Applied(T),
    /// Failed: the reasons, innermost last.
    Failed(Vec<ProtocolError>),
    /// Not tried: an earlier operation of the batch failed.
    Skipped,
    /// Applied, then undone because a later operation of the batch failed.
    Backtracked {
        /// Errors of the operation itself (a storage burn it could not pay), if any.
        errors: Option<Vec<ProtocolError>>,
        /// What it had produced.
        result: T,
    },
}

/// A big-map change as `lazy_storage_diff` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LazyStorageDiff {
    /// One item per big map touched, in Octez's order.
    pub big_maps: Vec<BigMapDiffItem>,
}

/// What happened to one big map.
#[derive(Debug, Clone, PartialEq)]
pub struct BigMapDiffItem {
    /// Its id.
    pub id: i64,
    /// What happened.
    pub action: BigMapAction,
}

/// A big map's fate in one operation.
#[derive(Debug, Clone, PartialEq)]
pub enum BigMapAction {
    /// Created (empty, of these types), then updated.
    Alloc {
        /// Its key type.
        key_type: Node,
        /// Its value type.
        value_type: Node,
        /// Its bindings set or removed.
        updates: Vec<BigMapUpdateItem>,
    },
    /// Copied from `source`, then updated.
    Copy {
        /// The id copied.
        source: i64,
        /// Bindings set or removed.
        updates: Vec<BigMapUpdateItem>,
    },
    /// Kept, and updated.
    Update {
        /// Bindings set or removed.
        updates: Vec<BigMapUpdateItem>,
    },
    /// Deleted.
    Remove,
}

/// One binding set or removed.
#[derive(Debug, Clone, PartialEq)]
pub struct BigMapUpdateItem {
    /// The key's `expr…` hash.
    pub key_hash: [u8; 32],
    /// The key, optimized Micheline.
    pub key: Node,
    /// The new value; `None` removes the binding.
    pub value: Option<Node>,
}

/// A transaction's result, to an account or a contract.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransactionResult {
    /// The contract's new storage.
    pub storage: Option<Node>,
    /// Transfers and burns.
    pub balance_updates: Vec<BalanceUpdate>,
    /// Contracts originated by the call's internal operations.
    pub originated_contracts: Vec<ContractHash>,
    /// Milligas consumed.
    pub consumed_milligas: u64,
    /// The contract's storage size after the call, bytes.
    pub storage_size: u64,
    /// Bytes newly paid for.
    pub paid_storage_size_diff: u64,
    /// Whether the transfer created the destination account.
    pub allocated_destination_contract: bool,
    /// Big-map changes.
    pub lazy_storage_diff: Option<LazyStorageDiff>,
}

/// An origination's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OriginationResult {
    /// Burns and the credit.
    pub balance_updates: Vec<BalanceUpdate>,
    /// The new contract.
    pub originated_contracts: Vec<ContractHash>,
    /// Milligas consumed.
    pub consumed_milligas: u64,
    /// The contract's storage size, bytes.
    pub storage_size: u64,
    /// Bytes paid for.
    pub paid_storage_size_diff: u64,
    /// Big maps created.
    pub lazy_storage_diff: Option<LazyStorageDiff>,
}

/// A reveal's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RevealResult {
    /// Milligas consumed.
    pub consumed_milligas: u64,
}

/// A delegation's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DelegationResult {
    /// Unstake requests (none in this model).
    pub balance_updates: Vec<BalanceUpdate>,
    /// Milligas consumed.
    pub consumed_milligas: u64,
}

/// An increase_paid_storage's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IncreasePaidStorageResult {
    /// The burn.
    pub balance_updates: Vec<BalanceUpdate>,
    /// Milligas consumed.
    pub consumed_milligas: u64,
}

/// An event's result (internal only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventResult {
    /// Milligas consumed.
    pub consumed_milligas: u64,
}

/// A manager operation's result, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ManagerResult {
    /// `reveal`.
    Reveal(OperationResult<RevealResult>),
    /// `transaction`.
    Transaction(OperationResult<TransactionResult>),
    /// `origination`.
    Origination(OperationResult<OriginationResult>),
    /// `delegation`.
    Delegation(OperationResult<DelegationResult>),
    /// `increase_paid_storage`.
    IncreasePaidStorage(OperationResult<IncreasePaidStorageResult>),
}

/// What an internal operation carried.
#[derive(Debug, Clone, PartialEq)]
pub enum InternalPayload {
    /// A transfer.
    Transaction {
        /// Mutez.
        amount: u64,
        /// The receiver.
        destination: Destination,
        /// The entrypoint and the argument (optimized Micheline), absent for `Unit` to `default`.
        parameters: Option<(String, Node)>,
    },
    /// A new contract.
    Origination {
        /// Its delegate.
        delegate: Option<PublicKeyHash>,
        /// Its script and initial storage.
        code: Node,
        /// Its initial storage.
        storage: Node,
        /// Mutez credited.
        credit: u64,
    },
    /// A delegate change.
    Delegation {
        /// The new delegate.
        delegate: Option<PublicKeyHash>,
    },
    /// An event.
    Event {
        /// Its tag.
        tag: String,
        /// The payload's type.
        payload_type: Node,
        /// The payload.
        payload: Node,
    },
}

/// The result of an internal operation, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum InternalResult {
    /// A transfer.
    Transaction(OperationResult<TransactionResult>),
    /// An origination.
    Origination(OperationResult<OriginationResult>),
    /// A delegation.
    Delegation(OperationResult<DelegationResult>),
    /// An event.
    Event(OperationResult<EventResult>),
}

/// An operation a contract emitted, and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct InternalOperationResult {
    /// The contract that emitted it.
    pub source: Destination,
    /// Octez's nonce (order of emission within the operation).
    pub nonce: u64,
    /// What it carried.
    pub payload: InternalPayload,
    /// What it did.
    pub result: InternalResult,
}

/// The metadata of one manager operation.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerMetadata {
    /// The fee's transfer.
    pub balance_updates: Vec<BalanceUpdate>,
    /// The operation's own result.
    pub operation_result: ManagerResult,
    /// Its internal operations' results, in the order they ran.
    pub internal_operation_results: Vec<InternalOperationResult>,
}

/// The metadata of one content of an operation.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentsMetadata {
    /// A manager operation's.
    Manager(ManagerMetadata),
}
