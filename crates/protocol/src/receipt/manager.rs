//! The results of manager operations (`apply_results.ml`, `Manager_result`; the transaction,
//! origination, delegation and event results are shared with internal operations,
//! `apply_internal_results.ml`): one record per kind, with Octez's field order (the binary order)
//! and defaults (`dft`: always in binary, left out of JSON when default).
//!
//! A result's binary form carries no kind: the kind comes from the operation it belongs to, so
//! [`ManagerResult`] is read with [`ResultKind`].

use kestrel_crypto::{ContractHash, PublicKeyHash, ScriptExprHash, SmartRollupAddress};
use kestrel_encoding::Reader;
use serde_json::{Map, Value};

use crate::crypto_fields::{DalCommitment, SmartRollupCommitmentHash};
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, Milligas, Z64};
use crate::internal::MichelineExpr;
use crate::json::{self, write_string, ObjectWriter};
use crate::receipt::balance::{member_str, read_member, BalanceUpdate};
use crate::receipt::lazy_storage::LazyStorageDiff;
use crate::receipt::result::OperationResult;
use crate::receipt::ticket::TicketReceiptItem;
use crate::record::{record, JsonFields};

record! {
    /// An address registered in the address registry by a transaction (`Address_registry.diff`).
    pub struct AddressRegistryDiff {
        /// The address.
        address: crate::internal::TransactionDestination => "address",
        /// Its index.
        index: Z64 => "index",
    }
}

record! {
    /// The result of a transaction to a contract (`Transaction_to_contract_result`).
    pub struct TransactionResult<'a> {
        /// The contract's new storage (absent for implicit accounts).
        storage: Option<MichelineExpr<'a>> => "storage",
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The tickets moved.
        ticket_updates: Vec<TicketReceiptItem<'a>> => (dft "ticket_updates"),
        /// Contracts originated by the call.
        originated_contracts: Vec<ContractHash> => (dft "originated_contracts"),
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The contract's storage size after the call, in bytes.
        storage_size: Z64 => (dft "storage_size"),
        /// The storage newly paid for, in bytes.
        paid_storage_size_diff: Z64 => (dft "paid_storage_size_diff"),
        /// Whether the destination (an implicit account) was allocated by this transaction.
        allocated_destination_contract: bool => (dft "allocated_destination_contract"),
        /// The big map and sapling changes.
        lazy_storage_diff: Option<LazyStorageDiff<'a>> => "lazy_storage_diff",
        /// Addresses registered.
        address_registry_diff: Vec<AddressRegistryDiff> => (dft "address_registry_diff"),
    }
}

record! {
    /// The result of a transaction to a smart rollup (`Transaction_to_sc_rollup_result`).
    pub struct SmartRollupTransactionResult<'a> {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The tickets moved.
        ticket_updates: Vec<TicketReceiptItem<'a>> => "ticket_updates",
    }
}

/// A transaction's result: to a contract (tag 0) or to a smart rollup (tag 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionOutcome<'a> {
    /// To an implicit account or an originated contract.
    Contract(TransactionResult<'a>),
    /// To a smart rollup.
    SmartRollup(SmartRollupTransactionResult<'a>),
}

record! {
    /// The result of an origination.
    pub struct OriginationResult<'a> {
        /// The tez moved (the initial balance, the storage burns).
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The originated contract.
        originated_contracts: Vec<ContractHash> => (dft "originated_contracts"),
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The new contract's storage size, in bytes.
        storage_size: Z64 => (dft "storage_size"),
        /// The storage paid for, in bytes.
        paid_storage_size_diff: Z64 => (dft "paid_storage_size_diff"),
        /// The big map and sapling changes.
        lazy_storage_diff: Option<LazyStorageDiff<'a>> => "lazy_storage_diff",
    }
}

record! {
    /// The result of a reveal, a set-deposits-limit, a smart rollup message addition, or an
    /// event: only the gas.
    pub struct GasResult {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
    }
}

/// The result of a reveal.
pub type RevealResult = GasResult;
/// The result of a set-deposits-limit.
pub type SetDepositsLimitResult = GasResult;
/// The result of an event (internal only).
pub type EventResult = GasResult;

record! {
    /// The result of a delegation.
    pub struct DelegationResult {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
    }
}

record! {
    /// The result of a global constant registration.
    pub struct RegisterGlobalConstantResult {
        /// The tez moved (the storage burn).
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The constant's size, in bytes.
        storage_size: Z64 => (dft "storage_size"),
        /// The constant's address (`expr…`).
        global_address: ScriptExprHash => "global_address",
    }
}

record! {
    /// The result of an increase of paid storage, or of a smart rollup bond recovery.
    pub struct BalanceGasResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
    }
}

/// The result of an increase of paid storage.
pub type IncreasePaidStorageResult = BalanceGasResult;

record! {
    /// The result of a consensus or companion key update.
    pub struct UpdateKeyResult {
        /// Whether the key is a consensus key (`true`) or a companion key (`kind` in JSON, a
        /// boolean as Octez's `consensus_key_kind_encoding` writes it).
        consensus: bool => "kind",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
    }
}

record! {
    /// The result of a ticket transfer.
    pub struct TransferTicketResult<'a> {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The tickets moved.
        ticket_updates: Vec<TicketReceiptItem<'a>> => "ticket_updates",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The storage paid for, in bytes.
        paid_storage_size_diff: Z64 => (dft "paid_storage_size_diff"),
    }
}

/// A published DAL slot header (`Dal.Slot.Header.encoding`, version 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DalSlotHeader {
    /// The publication level.
    pub level: i32,
    /// The slot index.
    pub index: u8,
    /// The commitment.
    pub commitment: DalCommitment,
}

record! {
    /// The result of a DAL commitment publication.
    pub struct DalPublishCommitmentResult {
        /// The slot header published.
        slot_header: DalSlotHeader => "slot_header",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
    }
}

record! {
    /// The result of a smart rollup origination.
    pub struct SmartRollupOriginateResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The rollup's address.
        address: SmartRollupAddress => "address",
        /// Its genesis commitment.
        genesis_commitment_hash: SmartRollupCommitmentHash => "genesis_commitment_hash",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// Its size, in bytes.
        size: Z64 => "size",
    }
}

record! {
    /// The result of a smart rollup cementation.
    pub struct SmartRollupCementResult {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The inbox level cemented.
        inbox_level: i32 => "inbox_level",
        /// The commitment cemented.
        commitment_hash: SmartRollupCommitmentHash => "commitment_hash",
    }
}

record! {
    /// The result of a smart rollup commitment publication.
    pub struct SmartRollupPublishResult {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The commitment staked on.
        staked_hash: SmartRollupCommitmentHash => "staked_hash",
        /// The level it was first published at.
        published_at_level: i32 => "published_at_level",
        /// The tez moved (the bond).
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
    }
}

/// Why a refutation game ended (`Sc_rollup_game_repr.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameEndReason {
    /// The conflict was resolved (tag 0, `conflict_resolved`).
    ConflictResolved,
    /// A player timed out (tag 1, `timeout`).
    Timeout,
}

/// A refutation game's status (`Sc_rollup_game_repr.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameStatus {
    /// Still going (tag 0, `"ongoing"`).
    Ongoing,
    /// Ended with a loser (tag 1, result tag 0).
    Loser {
        /// Why.
        reason: GameEndReason,
        /// Who lost.
        player: PublicKeyHash,
    },
    /// Ended in a draw (tag 1, result tag 1).
    Draw,
}

record! {
    /// The result of a refutation move or timeout.
    pub struct SmartRollupGameResult {
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The game's status after the move.
        game_status: GameStatus => "game_status",
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
    }
}

/// A change of a smart rollup's whitelist (`Sc_rollup_whitelist_repr.update`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhitelistUpdate {
    /// The rollup becomes public (tag 0).
    Public,
    /// The rollup's whitelist becomes this list (tag 1).
    Private(Vec<PublicKeyHash>),
}

record! {
    /// The result of a smart rollup outbox message execution.
    pub struct SmartRollupExecuteOutboxMessageResult<'a> {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The tickets moved.
        ticket_updates: Vec<TicketReceiptItem<'a>> => "ticket_updates",
        /// A whitelist change the message made.
        whitelist_update: Option<WhitelistUpdate> => "whitelist_update",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The storage paid for, in bytes.
        paid_storage_size_diff: Z64 => (dft "paid_storage_size_diff"),
    }
}

record! {
    /// The result of a smart rollup bond recovery.
    pub struct SmartRollupRecoverBondResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
    }
}

record! {
    /// The result of a zk rollup origination.
    pub struct ZkRollupOriginationResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The rollup's address (`epx1…`).
        originated_zk_rollup: crate::crypto_fields::ZkRollupAddress => "originated_zk_rollup",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// Its size, in bytes.
        size: Z64 => "size",
    }
}

record! {
    /// The result of a zk rollup publication.
    pub struct ZkRollupPublishResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The storage paid for, in bytes (`size` in Octez's encoding).
        paid_storage_size_diff: Z64 => "size",
    }
}

record! {
    /// The result of a zk rollup update.
    pub struct ZkRollupUpdateResult {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => "balance_updates",
        /// The gas consumed.
        consumed_milligas: Milligas => (dft "consumed_milligas"),
        /// The storage paid for, in bytes.
        paid_storage_size_diff: Z64 => (dft "paid_storage_size_diff"),
    }
}

macro_rules! manager_results {
    ($( $variant:ident($type:ty) = $name:literal, [$($tag:literal),*]; )*) => {
        /// What kind of operation a result belongs to (which fixes its encoding): the manager
        /// kinds by their `contents` tag, and `event` for internal events.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ResultKind {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )*
        }

        impl ResultKind {
            /// The kind of a manager operation's result, by the operation's `contents` tag.
            pub fn of_manager_tag(tag: u8) -> Option<Self> {
                match tag {
                    $( $( $tag => Some(Self::$variant), )* )*
                    _ => None,
                }
            }
        }

        /// A manager (or internal) operation's result, by kind. The transaction kind has two
        /// result shapes (to a contract, to a smart rollup); [`TransactionOutcome`] holds either.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ManagerResult<'a> {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant(OperationResult<$type>),
            )*
        }

        impl<'a> ManagerResult<'a> {
            /// The result's kind.
            pub fn kind(&self) -> ResultKind {
                match self { $( Self::$variant(_) => ResultKind::$variant, )* }
            }

            /// The status name (`applied`, `failed`, `skipped`, `backtracked`).
            pub fn status(&self) -> &'static str {
                match self { $( Self::$variant(result) => result.status(), )* }
            }

            /// Reads a result of `kind`.
            pub fn read(kind: ResultKind, reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
                Ok(match kind {
                    $( ResultKind::$variant => Self::$variant(OperationResult::read_with(reader, <$type>::read)?), )*
                })
            }

            /// Appends the binary form.
            pub fn write(&self, out: &mut Vec<u8>) {
                match self {
                    $( Self::$variant(result) => result.write_with(out, <$type>::write), )*
                }
            }

            /// Appends the JSON form.
            pub fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
                match self {
                    $( Self::$variant(result) => result.write_json_with(out, <$type>::write_fields), )*
                }
            }

            /// Reads the JSON form of a result of `kind`.
            pub fn read_json(kind: ResultKind, value: &Value, path: &str) -> Result<Self, JsonError> {
                Ok(match kind {
                    $( ResultKind::$variant => Self::$variant(OperationResult::read_json_with(value, path, <$type>::read_fields)?), )*
                })
            }
        }
    };
}

manager_results! {
    Reveal(RevealResult) = "reveal", [107];
    Transaction(TransactionOutcome<'a>) = "transaction", [108];
    Origination(OriginationResult<'a>) = "origination", [109];
    Delegation(DelegationResult) = "delegation", [110];
    RegisterGlobalConstant(RegisterGlobalConstantResult) = "register_global_constant", [111];
    SetDepositsLimit(SetDepositsLimitResult) = "set_deposits_limit", [112];
    IncreasePaidStorage(IncreasePaidStorageResult) = "increase_paid_storage", [113];
    UpdateKey(UpdateKeyResult) = "update_consensus_key, update_companion_key", [114, 115];
    TransferTicket(TransferTicketResult<'a>) = "transfer_ticket", [158];
    SmartRollupOriginate(SmartRollupOriginateResult) = "smart_rollup_originate", [200];
    SmartRollupAddMessages(GasResult) = "smart_rollup_add_messages", [201];
    SmartRollupCement(SmartRollupCementResult) = "smart_rollup_cement", [202];
    SmartRollupPublish(SmartRollupPublishResult) = "smart_rollup_publish", [203];
    SmartRollupGame(SmartRollupGameResult) = "smart_rollup_refute, smart_rollup_timeout", [204, 205];
    SmartRollupExecuteOutboxMessage(SmartRollupExecuteOutboxMessageResult<'a>) = "smart_rollup_execute_outbox_message", [206];
    SmartRollupRecoverBond(SmartRollupRecoverBondResult) = "smart_rollup_recover_bond", [207];
    DalPublishCommitment(DalPublishCommitmentResult) = "dal_publish_commitment", [230];
    ZkRollupOrigination(ZkRollupOriginationResult) = "zk_rollup_origination", [250];
    ZkRollupPublish(ZkRollupPublishResult) = "zk_rollup_publish", [251];
    ZkRollupUpdate(ZkRollupUpdateResult) = "zk_rollup_update", [252];
    Event(EventResult) = "event", [];
}

fn unknown_tag(what: &'static str, tag: u8, offset: usize) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::UnknownTag {
            what,
            tag: u16::from(tag),
        },
        offset,
    )
}

/// The tags of the two transaction result shapes.
const TO_CONTRACT_TAG: u8 = 0;
const TO_SMART_ROLLUP_TAG: u8 = 2;

impl<'a> Field<'a> for TransactionOutcome<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            TO_CONTRACT_TAG => TransactionResult::read(reader).map(Self::Contract),
            TO_SMART_ROLLUP_TAG => {
                SmartRollupTransactionResult::read(reader).map(Self::SmartRollup)
            }
            tag => Err(unknown_tag("transaction result", tag, offset)),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Contract(result) => {
                out.push(TO_CONTRACT_TAG);
                result.write(out);
            }
            Self::SmartRollup(result) => {
                out.push(TO_SMART_ROLLUP_TAG);
                result.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        self.write_fields(&mut object)?;
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Self::read_fields(json::as_object(value, path)?, path)
    }
}

/// The two shapes share JSON field names; as data-encoding's union does, the first case whose
/// fields are all present is taken — `To_contract` has no required field, so an object is one
/// unless it has the smart rollup case's required `ticket_updates` and nothing of a contract's.
impl JsonFields for TransactionOutcome<'_> {
    fn write_fields(&self, object: &mut ObjectWriter<'_>) -> Result<(), JsonError> {
        match self {
            Self::Contract(result) => result.write_json_fields(object),
            Self::SmartRollup(result) => result.write_json_fields(object),
        }
    }
    fn read_fields(object: &Map<String, Value>, path: &str) -> Result<Self, JsonError> {
        const ROLLUP_FIELDS: [&str; 3] = ["status", "consumed_milligas", "ticket_updates"];
        let rollup_only = object.contains_key("ticket_updates")
            && object
                .keys()
                .all(|key| ROLLUP_FIELDS.contains(&key.as_str()) || key == "errors");
        if rollup_only {
            return SmartRollupTransactionResult::read_json_fields(object, path)
                .map(Self::SmartRollup);
        }
        TransactionResult::read_json_fields(object, path).map(Self::Contract)
    }
}

/// The version tag of `Dal.Slot.Header.encoding`.
const DAL_SLOT_HEADER_VERSION: u8 = 0;

impl<'a> Field<'a> for DalSlotHeader {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            DAL_SLOT_HEADER_VERSION => Ok(Self {
                level: i32::read(reader)?,
                index: u8::read(reader)?,
                commitment: DalCommitment::read(reader)?,
            }),
            tag => Err(unknown_tag("DAL slot header version", tag, offset)),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(DAL_SLOT_HEADER_VERSION);
        self.level.write(out);
        self.index.write(out);
        self.commitment.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        write_string(object.key("version"), "0");
        self.level.write_json(object.key("level"))?;
        self.index.write_json(object.key("index"))?;
        self.commitment.write_json(object.key("commitment"))?;
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        if member_str(object, path, "version")? != "0" {
            return Err(JsonError::new(path, "unknown DAL slot header version"));
        }
        Ok(Self {
            level: read_member(object, path, "level")?,
            index: read_member(object, path, "index")?,
            commitment: read_member(object, path, "commitment")?,
        })
    }
}

const GAME_END_REASONS: [&str; 2] = ["conflict_resolved", "timeout"];

impl<'a> Field<'a> for GameStatus {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => return Ok(Self::Ongoing),
            1 => {}
            tag => return Err(unknown_tag("game status", tag, offset)),
        }
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => {
                let offset = reader.offset();
                let reason = match reader.take_u8()? {
                    0 => GameEndReason::ConflictResolved,
                    1 => GameEndReason::Timeout,
                    tag => return Err(unknown_tag("game end reason", tag, offset)),
                };
                Ok(Self::Loser {
                    reason,
                    player: PublicKeyHash::read(reader)?,
                })
            }
            1 => Ok(Self::Draw),
            tag => Err(unknown_tag("game result", tag, offset)),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Ongoing => out.push(0),
            Self::Loser { reason, player } => {
                out.extend_from_slice(&[1, 0, *reason as u8]);
                player.write(out);
            }
            Self::Draw => out.extend_from_slice(&[1, 1]),
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let (reason, player) = match self {
            Self::Ongoing => {
                write_string(out, "ongoing");
                return Ok(());
            }
            Self::Loser { reason, player } => (Some(*reason), Some(player)),
            Self::Draw => (None, None),
        };
        let mut object = ObjectWriter::new(out);
        let mut result = ObjectWriter::new(object.key("result"));
        match (reason, player) {
            (Some(reason), Some(player)) => {
                write_string(result.key("kind"), "loser");
                write_string(result.key("reason"), GAME_END_REASONS[reason as usize]);
                player.write_json(result.key("player"))?;
            }
            _ => write_string(result.key("kind"), "draw"),
        }
        result.end();
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        if value.as_str() == Some("ongoing") {
            return Ok(Self::Ongoing);
        }
        let object = json::as_object(value, path)?;
        let result_path = json::child(path, "result");
        let result = json::as_object(
            object
                .get("result")
                .ok_or_else(|| JsonError::new(path, "missing field \"result\""))?,
            &result_path,
        )?;
        match member_str(result, &result_path, "kind")? {
            "draw" => Ok(Self::Draw),
            "loser" => {
                let reason = match member_str(result, &result_path, "reason")? {
                    "conflict_resolved" => GameEndReason::ConflictResolved,
                    "timeout" => GameEndReason::Timeout,
                    _ => return Err(JsonError::new(&result_path, "unknown game end reason")),
                };
                Ok(Self::Loser {
                    reason,
                    player: read_member(result, &result_path, "player")?,
                })
            }
            _ => Err(JsonError::new(&result_path, "unknown game result")),
        }
    }
}

impl<'a> Field<'a> for WhitelistUpdate {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => Ok(Self::Public),
            1 => Vec::read(reader).map(Self::Private),
            tag => Err(unknown_tag("whitelist update", tag, offset)),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Public => out.push(0),
            Self::Private(whitelist) => {
                out.push(1);
                whitelist.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        match self {
            Self::Public => write_string(object.key("kind"), "public"),
            Self::Private(whitelist) => {
                write_string(object.key("kind"), "update");
                whitelist.write_json(object.key("whitelist"))?;
            }
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        match member_str(object, path, "kind")? {
            "public" => Ok(Self::Public),
            "update" => read_member(object, path, "whitelist").map(Self::Private),
            _ => Err(JsonError::new(path, "unknown whitelist update")),
        }
    }
}
