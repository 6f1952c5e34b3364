//! Consensus operations (`operation_repr.ml`): preattestations and attestations (with or without
//! a DAL attestation), their BLS aggregates, and the evidence of double signing, whose two
//! operations are inlined consensus operations (branch, one consensus content, signature).

use kestrel_crypto::{BlockHash, Signature};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::block_header::BlockHeader;
use crate::crypto_fields::BlockPayloadHash;
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, SizePrefixed, Zarith};
use crate::json::{self, ObjectWriter};
use crate::record::record;

record! {
    /// What an attestation or preattestation is about (`consensus_content_encoding`).
    pub struct ConsensusContent {
        /// The attester's first slot.
        slot: u16 => "slot",
        /// The attested block's level.
        level: i32 => "level",
        /// The attested block's round.
        round: i32 => "round",
        /// The attested block's payload hash.
        block_payload_hash: BlockPayloadHash => "block_payload_hash",
    }
}

record! {
    /// An attestation with a DAL attestation (tag 23).
    pub struct AttestationWithDal {
        /// The attester's first slot.
        slot: u16 => "slot",
        /// The attested block's level.
        level: i32 => "level",
        /// The attested block's round.
        round: i32 => "round",
        /// The attested block's payload hash.
        block_payload_hash: BlockPayloadHash => "block_payload_hash",
        /// The attested DAL slots, a bitset (`z`).
        dal_attestation: Zarith => "dal_attestation",
    }
}

record! {
    /// What an aggregate is about (`consensus_aggregate_content_encoding`).
    pub struct AggregateContent {
        /// The attested block's level.
        level: i32 => "level",
        /// The attested block's round.
        round: i32 => "round",
        /// The attested block's payload hash.
        block_payload_hash: BlockPayloadHash => "block_payload_hash",
    }
}

record! {
    /// A BLS aggregate of preattestations (tag 30).
    pub struct PreattestationsAggregate {
        /// What was preattested.
        consensus_content: AggregateContent => "consensus_content",
        /// The slots of the preattesters.
        committee: Vec<u16> => "committee",
    }
}

record! {
    /// One attester of an aggregate, with its DAL attestation if any.
    pub struct CommitteeMember {
        /// The attester's slot.
        slot: u16 => "slot",
        /// Its DAL attestation bitset.
        dal_attestation: Option<Zarith> => "dal_attestation",
    }
}

record! {
    /// A BLS aggregate of attestations (tag 31).
    pub struct AttestationsAggregate {
        /// What was attested.
        consensus_content: AggregateContent => "consensus_content",
        /// The attesters.
        committee: Vec<CommitteeMember> => "committee",
    }
}

/// The five consensus kinds, by tag: the top-level `contents` union's consensus cases, and the
/// only cases an inlined consensus operation accepts (so evidence cannot nest evidence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsensusOperation {
    /// A preattestation (tag 20).
    Preattestation(ConsensusContent),
    /// An attestation (tag 21).
    Attestation(ConsensusContent),
    /// An attestation with a DAL attestation (tag 23).
    AttestationWithDal(AttestationWithDal),
    /// A BLS aggregate of preattestations (tag 30).
    PreattestationsAggregate(PreattestationsAggregate),
    /// A BLS aggregate of attestations (tag 31).
    AttestationsAggregate(AttestationsAggregate),
}

impl ConsensusOperation {
    /// The tags of the consensus kinds.
    pub const TAGS: [u8; 5] = [20, 21, 23, 30, 31];

    /// The kind's tag in the `contents` union.
    pub fn tag(&self) -> u8 {
        match self {
            Self::Preattestation(_) => 20,
            Self::Attestation(_) => 21,
            Self::AttestationWithDal(_) => 23,
            Self::PreattestationsAggregate(_) => 30,
            Self::AttestationsAggregate(_) => 31,
        }
    }

    /// The kind's name (the JSON `"kind"`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Preattestation(_) => "preattestation",
            Self::Attestation(_) => "attestation",
            Self::AttestationWithDal(_) => "attestation_with_dal",
            Self::PreattestationsAggregate(_) => "preattestations_aggregate",
            Self::AttestationsAggregate(_) => "attestations_aggregate",
        }
    }

    /// Reads the fields after `tag`, or `None` when `tag` is not a consensus kind.
    pub(crate) fn read_body(tag: u8, reader: &mut Reader<'_>) -> Option<Result<Self, DecodeError>> {
        Some(match tag {
            20 => ConsensusContent::read(reader).map(Self::Preattestation),
            21 => ConsensusContent::read(reader).map(Self::Attestation),
            23 => AttestationWithDal::read(reader).map(Self::AttestationWithDal),
            30 => PreattestationsAggregate::read(reader).map(Self::PreattestationsAggregate),
            31 => AttestationsAggregate::read(reader).map(Self::AttestationsAggregate),
            _ => return None,
        })
    }

    /// Writes the fields (without the tag).
    pub(crate) fn write_body(&self, out: &mut Vec<u8>) {
        match self {
            Self::Preattestation(content) | Self::Attestation(content) => content.write(out),
            Self::AttestationWithDal(content) => content.write(out),
            Self::PreattestationsAggregate(content) => content.write(out),
            Self::AttestationsAggregate(content) => content.write(out),
        }
    }

    /// Writes the fields into an open JSON object (after `"kind"`).
    pub(crate) fn write_json_fields(&self, object: &mut ObjectWriter<'_>) -> Result<(), JsonError> {
        match self {
            Self::Preattestation(content) | Self::Attestation(content) => {
                content.write_json_fields(object)?
            }
            Self::AttestationWithDal(content) => content.write_json_fields(object)?,
            Self::PreattestationsAggregate(content) => content.write_json_fields(object)?,
            Self::AttestationsAggregate(content) => content.write_json_fields(object)?,
        }
        Ok(())
    }

    /// Reads the fields of kind `kind` from a JSON object, or `None` when `kind` is not a
    /// consensus kind.
    pub(crate) fn read_json_fields(
        kind: &str,
        object: &serde_json::Map<String, Value>,
        path: &str,
    ) -> Option<Result<Self, JsonError>> {
        Some(match kind {
            "preattestation" => {
                ConsensusContent::read_json_fields(object, path).map(Self::Preattestation)
            }
            "attestation" => {
                ConsensusContent::read_json_fields(object, path).map(Self::Attestation)
            }
            "attestation_with_dal" => {
                AttestationWithDal::read_json_fields(object, path).map(Self::AttestationWithDal)
            }
            "preattestations_aggregate" => PreattestationsAggregate::read_json_fields(object, path)
                .map(Self::PreattestationsAggregate),
            "attestations_aggregate" => AttestationsAggregate::read_json_fields(object, path)
                .map(Self::AttestationsAggregate),
            _ => return None,
        })
    }
}

/// The JSON and binary of a consensus operation alone: tag (or `"kind"`) and fields.
impl<'a> Field<'a> for ConsensusOperation {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        Self::read_body(tag, reader).unwrap_or_else(|| {
            Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "consensus operation",
                    tag: u16::from(tag),
                },
                offset,
            ))
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.tag());
        self.write_body(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        json::write_kinded(out, self.kind_name(), |object| {
            self.write_json_fields(object)
        })
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let (object, kind) = json::kinded_object(value, path)?;
        Self::read_json_fields(kind, object, path).unwrap_or_else(|| {
            Err(JsonError::new(
                &json::child(path, "kind"),
                format!("not a consensus kind: {kind}"),
            ))
        })
    }
}

/// A consensus operation inside evidence (`inlined.consensus_operation`): its branch, its one
/// consensus content, and its signature (`varopt`: absent when the region ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedConsensusOperation {
    /// The operation's branch.
    pub branch: BlockHash,
    /// The consensus content.
    pub operation: ConsensusOperation,
    /// The signature, if any.
    pub signature: Option<Signature>,
}

impl<'a> Field<'a> for InlinedConsensusOperation {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let branch = BlockHash::read(reader)?;
        let operation = ConsensusOperation::read(reader)?;
        let signature = if reader.remaining_bytes() == 0 {
            None
        } else {
            Some(Signature::read(reader)?)
        };
        Ok(Self {
            branch,
            operation,
            signature,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.branch.write(out);
        self.operation.write(out);
        if let Some(signature) = &self.signature {
            signature.write(out);
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        self.branch.write_json(object.key("branch"))?;
        self.operation.write_json(object.key("operations"))?;
        if let Some(signature) = &self.signature {
            signature.write_json(object.key("signature"))?;
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let field = |name: &str| {
            object
                .get(name)
                .ok_or_else(|| JsonError::new(path, format!("missing field \"{name}\"")))
        };
        Ok(Self {
            branch: BlockHash::read_json(field("branch")?, &json::child(path, "branch"))?,
            operation: ConsensusOperation::read_json(
                field("operations")?,
                &json::child(path, "operations"),
            )?,
            signature: match object.get("signature") {
                Some(value) => Some(Signature::read_json(
                    value,
                    &json::child(path, "signature"),
                )?),
                None => None,
            },
        })
    }
}

record! {
    /// Evidence that a delegate signed two different consensus operations for the same level
    /// and round (tag 2).
    pub struct DoubleConsensusOperationEvidence {
        /// The delegate's slot.
        slot: u16 => "slot",
        /// The first operation.
        op1: SizePrefixed<InlinedConsensusOperation> => "op1",
        /// The second operation.
        op2: SizePrefixed<InlinedConsensusOperation> => "op2",
    }
}

record! {
    /// Evidence that a baker signed two different blocks for the same level and round (tag 3).
    pub struct DoubleBakingEvidence<'a> {
        /// The first block header.
        bh1: SizePrefixed<BlockHeader<'a>> => "bh1",
        /// The second block header.
        bh2: SizePrefixed<BlockHeader<'a>> => "bh2",
    }
}
