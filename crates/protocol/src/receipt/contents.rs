//! The metadata of one operation content (`apply_results.ml`, `contents_result`) and operations
//! with their metadata (`operation_data_and_metadata_encoding`): a manager operation's fee
//! updates, result and internal results; a consensus operation's delegate and power; an
//! evidence's punished and rewarded delegates; the balance updates of the anonymous kinds.
//!
//! A content's metadata carries no kind: it follows the content (binary: the content's tag and
//! fields, then the metadata; JSON: the content's object with a `"metadata"` member), so
//! [`ContentsMetadata`] is read for a given [`Contents`].

use kestrel_crypto::{PublicKeyHash, Signature};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::consensus::ConsensusOperation;
use crate::contents::Contents;
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, Int31, Nullable};
use crate::json::{self, write_string, ObjectWriter};
use crate::receipt::balance::BalanceUpdate;
use crate::receipt::internal::InternalOperationResult;
use crate::receipt::manager::{ManagerResult, ResultKind};
use crate::record::{record, JsonFields};

/// A manager operation's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerMetadata<'a> {
    /// The fee's updates (source debited, block fees credited).
    pub balance_updates: Vec<BalanceUpdate>,
    /// The operation's result.
    pub operation_result: ManagerResult<'a>,
    /// The results of the operations its contract calls emitted, in Octez's order.
    pub internal_operation_results: Vec<InternalOperationResult<'a>>,
}

record! {
    /// A consensus operation's power (`Attesting_power.op_result_encoding`).
    pub struct ConsensusPower {
        /// The slots.
        slots: Int31 => "slots",
        /// The baking power, when all-bakers-attest is active (`null` otherwise).
        baking_power: Nullable<i64> => "baking_power",
    }
}

record! {
    /// The metadata of a preattestation or an attestation.
    pub struct ConsensusMetadata {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The delegate.
        delegate: PublicKeyHash => "delegate",
        /// Its power.
        consensus_power: ConsensusPower => "consensus_power",
        /// The key that signed.
        consensus_key: PublicKeyHash => "consensus_key",
    }
}

record! {
    /// One member of an aggregate's committee.
    pub struct CommitteeMember {
        /// The delegate.
        delegate: PublicKeyHash => "delegate",
        /// Its consensus key.
        consensus_pkh: PublicKeyHash => "consensus_pkh",
        /// Its power.
        consensus_power: ConsensusPower => "consensus_power",
    }
}

record! {
    /// The metadata of an aggregate of preattestations or attestations.
    pub struct AggregateMetadata {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// The committee.
        committee: Vec<CommitteeMember> => "committee",
        /// The total power.
        total_consensus_power: ConsensusPower => "total_consensus_power",
    }
}

/// What a double signing was (`Misbehaviour_repr.kind`, a `string_enum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MisbehaviourKind {
    /// Double preattesting (0, `preattestation`).
    Preattestation,
    /// Double attesting (1, `attestation`).
    Attestation,
    /// Double baking (2, `block`).
    Block,
}

record! {
    /// A double signing (`Misbehaviour_repr`).
    pub struct Misbehaviour {
        /// Its level.
        level: i32 => "level",
        /// Its round.
        round: i32 => "round",
        /// What was signed twice.
        kind: MisbehaviourKind => "kind",
    }
}

record! {
    /// The metadata of a double signing evidence.
    pub struct DoubleSigningMetadata {
        /// Who is punished.
        punished_delegate: PublicKeyHash => "punished_delegate",
        /// Who is rewarded.
        rewarded_delegate: PublicKeyHash => "rewarded_delegate",
        /// The misbehaviour.
        misbehaviour: Misbehaviour => "misbehaviour",
    }
}

record! {
    /// The metadata that is only balance updates (nonce and VDF revelations, activations, DAL
    /// entrapment evidence).
    pub struct BalanceUpdatesMetadata {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
    }
}

record! {
    /// The metadata of a delegate drain.
    pub struct DrainDelegateMetadata {
        /// The tez moved.
        balance_updates: Vec<BalanceUpdate> => (dft "balance_updates"),
        /// Whether the destination was allocated.
        allocated_destination_contract: bool => (dft "allocated_destination_contract"),
    }
}

record! {
    /// The empty metadata of proposals and ballots.
    pub struct EmptyMetadata {}
}

/// The metadata of one content, by the content's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentsMetadata<'a> {
    /// A manager operation's.
    Manager(ManagerMetadata<'a>),
    /// A preattestation's or attestation's (with or without DAL).
    Consensus(ConsensusMetadata),
    /// An aggregate's.
    Aggregate(AggregateMetadata),
    /// A double signing evidence's (consensus operations or blocks).
    DoubleSigning(DoubleSigningMetadata),
    /// Balance updates only: seed nonce and VDF revelations, activations, DAL entrapments.
    BalanceUpdates(BalanceUpdatesMetadata),
    /// A delegate drain's.
    DrainDelegate(DrainDelegateMetadata),
    /// Proposals' and ballots' (nothing).
    Empty,
}

/// The shape of a content's metadata.
enum Shape {
    Manager(ResultKind),
    Consensus,
    Aggregate,
    DoubleSigning,
    BalanceUpdates,
    DrainDelegate,
    Empty,
}

/// The tag of `vdf_revelation`, whose content this crate does not decode but whose metadata
/// is balance updates.
fn shape(contents: &Contents<'_>, offset: usize) -> Result<Shape, DecodeErrorKind> {
    Ok(match contents {
        Contents::Consensus(
            ConsensusOperation::Preattestation(_)
            | ConsensusOperation::Attestation(_)
            | ConsensusOperation::AttestationWithDal(_),
        ) => Shape::Consensus,
        Contents::Consensus(_) => Shape::Aggregate,
        Contents::DoubleConsensusOperationEvidence(_) | Contents::DoubleBakingEvidence(_) => {
            Shape::DoubleSigning
        }
        Contents::SeedNonceRevelation(_)
        | Contents::ActivateAccount(_)
        | Contents::DalEntrapmentEvidence(_) => Shape::BalanceUpdates,
        Contents::Proposals(_) | Contents::Ballot(_) => Shape::Empty,
        Contents::DrainDelegate(_) => Shape::DrainDelegate,
        Contents::FailingNoop(_) => {
            let _ = offset;
            return Err(DecodeErrorKind::Invalid {
                what: "operation metadata",
                reason: "failing_noop has no result".to_owned(),
            });
        }
        Contents::Manager(manager) => {
            Shape::Manager(ResultKind::of_manager_tag(manager.operation.tag()).ok_or(
                DecodeErrorKind::Invalid {
                    what: "operation metadata",
                    reason: "manager kind without a result encoding".to_owned(),
                },
            )?)
        }
    })
}

impl<'a> ContentsMetadata<'a> {
    /// Reads the metadata of `contents`.
    pub fn read(contents: &Contents<'_>, reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let shape = shape(contents, offset).map_err(|kind| DecodeError::new(kind, offset))?;
        Ok(match shape {
            Shape::Manager(kind) => Self::Manager(ManagerMetadata {
                balance_updates: Vec::read(reader)?,
                operation_result: ManagerResult::read(kind, reader)?,
                internal_operation_results: Vec::read(reader)?,
            }),
            Shape::Consensus => Self::Consensus(ConsensusMetadata::read(reader)?),
            Shape::Aggregate => Self::Aggregate(AggregateMetadata::read(reader)?),
            Shape::DoubleSigning => Self::DoubleSigning(DoubleSigningMetadata::read(reader)?),
            Shape::BalanceUpdates => Self::BalanceUpdates(BalanceUpdatesMetadata::read(reader)?),
            Shape::DrainDelegate => Self::DrainDelegate(DrainDelegateMetadata::read(reader)?),
            Shape::Empty => Self::Empty,
        })
    }

    /// Appends the binary form.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Manager(manager) => {
                manager.balance_updates.write(out);
                manager.operation_result.write(out);
                manager.internal_operation_results.write(out);
            }
            Self::Consensus(metadata) => metadata.write(out),
            Self::Aggregate(metadata) => metadata.write(out),
            Self::DoubleSigning(metadata) => metadata.write(out),
            Self::BalanceUpdates(metadata) => metadata.write(out),
            Self::DrainDelegate(metadata) => metadata.write(out),
            Self::Empty => {}
        }
    }

    /// Appends the JSON form (the value of `"metadata"`).
    pub fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        match self {
            Self::Manager(manager) => {
                if !manager.balance_updates.is_empty() {
                    manager
                        .balance_updates
                        .write_json(object.key("balance_updates"))?;
                }
                manager
                    .operation_result
                    .write_json(object.key("operation_result"))?;
                if !manager.internal_operation_results.is_empty() {
                    manager
                        .internal_operation_results
                        .write_json(object.key("internal_operation_results"))?;
                }
            }
            Self::Consensus(metadata) => metadata.write_fields(&mut object)?,
            Self::Aggregate(metadata) => metadata.write_fields(&mut object)?,
            Self::DoubleSigning(metadata) => metadata.write_fields(&mut object)?,
            Self::BalanceUpdates(metadata) => metadata.write_fields(&mut object)?,
            Self::DrainDelegate(metadata) => metadata.write_fields(&mut object)?,
            Self::Empty => {}
        }
        object.end();
        Ok(())
    }

    /// Reads the JSON form of the metadata of `contents`.
    pub fn read_json(
        contents: &Contents<'_>,
        value: &Value,
        path: &str,
    ) -> Result<Self, JsonError> {
        let shape =
            shape(contents, 0).map_err(|_| JsonError::new(path, "no metadata for this kind"))?;
        let object = json::as_object(value, path)?;
        Ok(match shape {
            Shape::Manager(kind) => {
                let list = |name: &str| -> Result<Option<Value>, JsonError> {
                    Ok(object.get(name).cloned())
                };
                let result = object
                    .get("operation_result")
                    .ok_or_else(|| JsonError::new(path, "missing field \"operation_result\""))?;
                Self::Manager(ManagerMetadata {
                    balance_updates: match list("balance_updates")? {
                        Some(value) => {
                            Vec::read_json(&value, &json::child(path, "balance_updates"))?
                        }
                        None => Vec::new(),
                    },
                    operation_result: ManagerResult::read_json(
                        kind,
                        result,
                        &json::child(path, "operation_result"),
                    )?,
                    internal_operation_results: match list("internal_operation_results")? {
                        Some(value) => Vec::read_json(
                            &value,
                            &json::child(path, "internal_operation_results"),
                        )?,
                        None => Vec::new(),
                    },
                })
            }
            Shape::Consensus => Self::Consensus(ConsensusMetadata::read_fields(object, path)?),
            Shape::Aggregate => Self::Aggregate(AggregateMetadata::read_fields(object, path)?),
            Shape::DoubleSigning => {
                Self::DoubleSigning(DoubleSigningMetadata::read_fields(object, path)?)
            }
            Shape::BalanceUpdates => {
                Self::BalanceUpdates(BalanceUpdatesMetadata::read_fields(object, path)?)
            }
            Shape::DrainDelegate => {
                Self::DrainDelegate(DrainDelegateMetadata::read_fields(object, path)?)
            }
            Shape::Empty => Self::Empty,
        })
    }
}

/// A content and its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentsAndMetadata<'a> {
    /// The content.
    pub contents: Contents<'a>,
    /// Its metadata.
    pub metadata: ContentsMetadata<'a>,
}

impl<'a> Field<'a> for ContentsAndMetadata<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let contents = Contents::read(reader)?;
        let metadata = ContentsMetadata::read(&contents, reader)?;
        Ok(Self { contents, metadata })
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.contents.write(out);
        self.metadata.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut contents = String::new();
        self.contents.write_json(&mut contents)?;
        // The content's object, reopened to add `"metadata"` as its last member.
        contents.pop();
        out.push_str(&contents);
        out.push_str(",\"metadata\":");
        self.metadata.write_json(out)?;
        out.push('}');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let contents = Contents::read_json(value, path)?;
        let object = json::as_object(value, path)?;
        let metadata = object
            .get("metadata")
            .ok_or_else(|| JsonError::new(path, "missing field \"metadata\""))?;
        let metadata =
            ContentsMetadata::read_json(&contents, metadata, &json::child(path, "metadata"))?;
        Ok(Self { contents, metadata })
    }
}

const MISBEHAVIOUR_KINDS: [(MisbehaviourKind, &str); 3] = [
    (MisbehaviourKind::Preattestation, "preattestation"),
    (MisbehaviourKind::Attestation, "attestation"),
    (MisbehaviourKind::Block, "block"),
];

impl<'a> Field<'a> for MisbehaviourKind {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        MISBEHAVIOUR_KINDS
            .get(usize::from(tag))
            .map(|(kind, _)| *kind)
            .ok_or_else(|| {
                DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "misbehaviour kind",
                        tag: u16::from(tag),
                    },
                    offset,
                )
            })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, MISBEHAVIOUR_KINDS[*self as usize].1);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let name = json::as_str(value, path)?;
        MISBEHAVIOUR_KINDS
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(kind, _)| *kind)
            .ok_or_else(|| JsonError::new(path, format!("unknown misbehaviour kind {name}")))
    }
}

/// An operation's protocol data with or without its metadata
/// (`operation_data_and_metadata_encoding`), as block RPCs and preapply return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationWithMetadata<'a> {
    /// The contents with their metadata (tag 0).
    WithMetadata {
        /// The contents and metadata.
        contents: Vec<ContentsAndMetadata<'a>>,
        /// The signature.
        signature: Option<Signature>,
    },
    /// The contents alone (tag 1), when the node pruned the metadata.
    WithoutMetadata {
        /// The contents.
        contents: Vec<Contents<'a>>,
        /// The signature.
        signature: Option<Signature>,
    },
}

impl OperationWithMetadata<'_> {
    fn signature(&self) -> Option<&Signature> {
        match self {
            Self::WithMetadata { signature, .. } | Self::WithoutMetadata { signature, .. } => {
                signature.as_ref()
            }
        }
    }
}

/// Reads the signature as the optional last field of an object (`opt` of a variable-size
/// value without a presence byte): all the remaining bytes, absent when there are none.
fn read_trailing_signature(reader: &mut Reader<'_>) -> Result<Option<Signature>, DecodeError> {
    if reader.remaining_bytes() == 0 {
        return Ok(None);
    }
    Signature::read(reader).map(Some)
}

impl<'a> Field<'a> for OperationWithMetadata<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => {
                let contents = Vec::read(reader)?;
                let signature = read_trailing_signature(reader)?;
                Ok(Self::WithMetadata {
                    contents,
                    signature,
                })
            }
            1 => {
                let contents = Vec::read(reader)?;
                let signature = read_trailing_signature(reader)?;
                Ok(Self::WithoutMetadata {
                    contents,
                    signature,
                })
            }
            tag => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "operation with metadata",
                    tag: u16::from(tag),
                },
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::WithMetadata { contents, .. } => {
                out.push(0);
                contents.write(out);
            }
            Self::WithoutMetadata { contents, .. } => {
                out.push(1);
                contents.write(out);
            }
        }
        if let Some(signature) = self.signature() {
            signature.write(out);
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        match self {
            Self::WithMetadata { contents, .. } => contents.write_json(object.key("contents"))?,
            Self::WithoutMetadata { contents, .. } => {
                contents.write_json(object.key("contents"))?
            }
        }
        if let Some(signature) = self.signature() {
            signature.write_json(object.key("signature"))?;
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let signature = object
            .get("signature")
            .map(|signature| Signature::read_json(signature, &json::child(path, "signature")))
            .transpose()?;
        let contents_path = json::child(path, "contents");
        let contents = json::as_array(
            object
                .get("contents")
                .ok_or_else(|| JsonError::new(path, "missing field \"contents\""))?,
            &contents_path,
        )?;
        // As data-encoding's union: the first case that reads, with metadata first.
        let with_metadata = contents
            .iter()
            .all(|content| content.get("metadata").is_some());
        let list = Value::Array(contents.to_vec());
        Ok(if with_metadata {
            Self::WithMetadata {
                contents: Vec::read_json(&list, &contents_path)?,
                signature,
            }
        } else {
            Self::WithoutMetadata {
                contents: Vec::read_json(&list, &contents_path)?,
                signature,
            }
        })
    }
}
