//! One element of an operation's contents (`operation.alpha.contents`, a union on a one-byte
//! tag; in JSON an object whose `"kind"` names the case, merged with the case's fields). The
//! kinds are declared once in `contents_kinds!` with their tag, name and record; consensus kinds
//! live in [`ConsensusOperation`], manager kinds in [`ManagerKind`] behind a [`ManagerHeader`].
//!
//! Kinds whose encodings are not implemented (smart rollup refutation and its proofs, zk rollups
//! and their Plonk proofs, VDF revelation and its class-group checks) decode to
//! [`DecodeErrorKind::UnsupportedKind`]: their size cannot be known without their encoding.

use kestrel_encoding::Reader;
use serde_json::{Map, Value};

use crate::anonymous::{ActivateAccount, DrainDelegate, FailingNoop, SeedNonceRevelation};
use crate::consensus::{
    ConsensusOperation, DoubleBakingEvidence, DoubleConsensusOperationEvidence,
};
use crate::dal::{DalEntrapmentEvidence, DalPublishCommitment};
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::Field;
use crate::json::{self, ObjectWriter};
use crate::manager::*;
use crate::voting::{BallotOperation, Proposals};

/// The `contents` tags this crate recognises but does not decode, with Octez's kind names.
pub const UNSUPPORTED_KINDS: [(u8, &str); 5] = [
    (8, "vdf_revelation"),
    (204, "smart_rollup_refute"),
    (250, "zk_rollup_origination"),
    (251, "zk_rollup_publish"),
    (252, "zk_rollup_update"),
];

/// A manager operation: the header and the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerOperation<'a> {
    /// Source, fee, counter and limits.
    pub header: ManagerHeader,
    /// What the operation does.
    pub operation: ManagerKind<'a>,
}

macro_rules! contents_kinds {
    (
        other { $( $variant:ident($type:ty) = $tag:literal, $name:literal; )* }
        manager { $( $manager_variant:ident($manager_type:ty) = $manager_tag:literal, $manager_name:literal; )* }
    ) => {
        /// One element of an operation's contents.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Contents<'a> {
            /// A consensus operation (tags 20, 21, 23, 30, 31).
            Consensus(ConsensusOperation),
            $(
                #[doc = concat!("`", $name, "` (tag ", stringify!($tag), ").")]
                $variant($type),
            )*
            /// A manager operation (tags 107 and above).
            Manager(ManagerOperation<'a>),
        }

        /// The kind of a manager operation, with its fields.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum ManagerKind<'a> {
            $(
                #[doc = concat!("`", $manager_name, "` (tag ", stringify!($manager_tag), ").")]
                $manager_variant($manager_type),
            )*
        }

        impl ManagerKind<'_> {
            /// The kind's tag in the `contents` union.
            pub fn tag(&self) -> u8 {
                match self { $( Self::$manager_variant(_) => $manager_tag, )* }
            }

            /// The kind's name (the JSON `"kind"`).
            pub fn kind_name(&self) -> &'static str {
                match self { $( Self::$manager_variant(_) => $manager_name, )* }
            }
        }

        impl<'a> Contents<'a> {
            /// The kind's tag in the `contents` union.
            pub fn tag(&self) -> u8 {
                match self {
                    Self::Consensus(operation) => operation.tag(),
                    $( Self::$variant(_) => $tag, )*
                    Self::Manager(manager) => manager.operation.tag(),
                }
            }

            /// The kind's name (the JSON `"kind"`).
            pub fn kind_name(&self) -> &'static str {
                match self {
                    Self::Consensus(operation) => operation.kind_name(),
                    $( Self::$variant(_) => $name, )*
                    Self::Manager(manager) => manager.operation.kind_name(),
                }
            }

            /// Reads the fields of the case `tag` (already read, at `offset`).
            pub(crate) fn read_body(
                tag: u8,
                offset: usize,
                reader: &mut Reader<'a>,
            ) -> Result<Self, DecodeError> {
                if let Some(result) = ConsensusOperation::read_body(tag, reader) {
                    return result.map(Self::Consensus);
                }
                match tag {
                    $( $tag => return <$type>::read(reader).map(Self::$variant), )*
                    _ => {}
                }
                let read_manager = |reader: &mut Reader<'a>| -> Result<Self, DecodeError> {
                    let header = ManagerHeader::read(reader)?;
                    let operation = match tag {
                        $( $manager_tag => ManagerKind::$manager_variant(<$manager_type>::read(reader)?), )*
                        _ => unreachable!("tag checked by the caller"),
                    };
                    Ok(Self::Manager(ManagerOperation { header, operation }))
                };
                match tag {
                    $( $manager_tag )|* => read_manager(reader),
                    _ => Err(unknown_tag(tag, offset)),
                }
            }

            /// Writes the fields (without the tag).
            pub(crate) fn write_body(&self, out: &mut Vec<u8>) {
                match self {
                    Self::Consensus(operation) => operation.write_body(out),
                    $( Self::$variant(fields) => fields.write(out), )*
                    Self::Manager(manager) => {
                        manager.header.write(out);
                        match &manager.operation {
                            $( ManagerKind::$manager_variant(fields) => fields.write(out), )*
                        }
                    }
                }
            }

            fn write_json_fields(&self, object: &mut ObjectWriter<'_>) -> Result<(), JsonError> {
                match self {
                    Self::Consensus(operation) => operation.write_json_fields(object)?,
                    $( Self::$variant(fields) => fields.write_json_fields(object)?, )*
                    Self::Manager(manager) => {
                        manager.header.write_json_fields(object)?;
                        match &manager.operation {
                            $( ManagerKind::$manager_variant(fields) => fields.write_json_fields(object)?, )*
                        }
                    }
                }
        Ok(())
    }

            fn read_json_fields(
                kind: &str,
                object: &Map<String, Value>,
                path: &str,
            ) -> Result<Self, JsonError> {
                if let Some(result) = ConsensusOperation::read_json_fields(kind, object, path) {
                    return result.map(Self::Consensus);
                }
                match kind {
                    $( $name => return <$type>::read_json_fields(object, path).map(Self::$variant), )*
                    _ => {}
                }
                let operation = match kind {
                    $( $manager_name => ManagerKind::$manager_variant(<$manager_type>::read_json_fields(object, path)?), )*
                    _ => return Err(JsonError::new(&json::child(path, "kind"), format!("unknown operation kind {kind}"))),
                };
                let header = ManagerHeader::read_json_fields(object, path)?;
                Ok(Self::Manager(ManagerOperation { header, operation }))
            }
        }
    };
}

contents_kinds! {
    other {
        SeedNonceRevelation(SeedNonceRevelation) = 1, "seed_nonce_revelation";
        DoubleConsensusOperationEvidence(DoubleConsensusOperationEvidence) = 2, "double_consensus_operation_evidence";
        DoubleBakingEvidence(DoubleBakingEvidence<'a>) = 3, "double_baking_evidence";
        ActivateAccount(ActivateAccount) = 4, "activate_account";
        Proposals(Proposals) = 5, "proposals";
        Ballot(BallotOperation) = 6, "ballot";
        DrainDelegate(DrainDelegate) = 9, "drain_delegate";
        FailingNoop(FailingNoop<'a>) = 17, "failing_noop";
        DalEntrapmentEvidence(DalEntrapmentEvidence) = 24, "dal_entrapment_evidence";
    }
    manager {
        Reveal(Reveal) = 107, "reveal";
        Transaction(Transaction<'a>) = 108, "transaction";
        Origination(Origination<'a>) = 109, "origination";
        Delegation(Delegation) = 110, "delegation";
        RegisterGlobalConstant(RegisterGlobalConstant<'a>) = 111, "register_global_constant";
        SetDepositsLimit(SetDepositsLimit) = 112, "set_deposits_limit";
        IncreasePaidStorage(IncreasePaidStorage) = 113, "increase_paid_storage";
        UpdateConsensusKey(UpdateKey) = 114, "update_consensus_key";
        UpdateCompanionKey(UpdateKey) = 115, "update_companion_key";
        TransferTicket(TransferTicket<'a>) = 158, "transfer_ticket";
        SmartRollupOriginate(SmartRollupOriginate<'a>) = 200, "smart_rollup_originate";
        SmartRollupAddMessages(SmartRollupAddMessages<'a>) = 201, "smart_rollup_add_messages";
        SmartRollupCement(SmartRollupCement) = 202, "smart_rollup_cement";
        SmartRollupPublish(SmartRollupPublish) = 203, "smart_rollup_publish";
        SmartRollupTimeout(SmartRollupTimeout) = 205, "smart_rollup_timeout";
        SmartRollupExecuteOutboxMessage(SmartRollupExecuteOutboxMessage<'a>) = 206, "smart_rollup_execute_outbox_message";
        SmartRollupRecoverBond(SmartRollupRecoverBond) = 207, "smart_rollup_recover_bond";
        DalPublishCommitment(DalPublishCommitment) = 230, "dal_publish_commitment";
    }
}

/// The error for a tag that names no supported case.
#[cold]
fn unknown_tag(tag: u8, offset: usize) -> DecodeError {
    let kind = match UNSUPPORTED_KINDS.iter().find(|(known, _)| *known == tag) {
        Some(&(tag, name)) => DecodeErrorKind::UnsupportedKind { name, tag },
        None => DecodeErrorKind::UnknownTag {
            what: "operation contents",
            tag: u16::from(tag),
        },
    };
    DecodeError::new(kind, offset)
}

impl<'a> Contents<'a> {
    /// Whether this is a manager operation.
    pub fn is_manager(&self) -> bool {
        matches!(self, Self::Manager(_))
    }

    /// The manager operation, if this is one.
    pub fn as_manager(&self) -> Option<&ManagerOperation<'a>> {
        match self {
            Self::Manager(manager) => Some(manager),
            _ => None,
        }
    }
}

impl<'a> Field<'a> for Contents<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        Self::read_body(tag, offset, reader)
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
        Self::read_json_fields(kind, object, path)
    }
}
