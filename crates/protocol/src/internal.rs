//! Internal operations (`apply_internal_results.ml`, `internal_operation_encoding`): what a
//! contract's execution emits — transactions, originations, delegations and events — with the
//! emitting contract and a nonce. Their results are in
//! [`receipt::internal`](crate::receipt::internal).
//!
//! Binary: source (a destination: implicit, originated or smart rollup), nonce (`uint16`), then
//! a one-byte kind tag (1 transaction, 2 origination, 3 delegation, 4 event) and its fields.

use std::borrow::Cow;

use kestrel_crypto::{Destination, Entrypoint, PublicKeyHash};
use kestrel_encoding::Reader;
use kestrel_micheline::{binary, json as micheline_json};
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, Mutez};
use crate::json::{self, write_string, ObjectWriter};
use crate::manager::Delegation;
use crate::record::record;
use crate::script::{Parameters, Script};

/// Where an internal transaction goes (`Destination_repr.encoding`): an implicit account, an
/// originated contract or a smart rollup, 22 bytes. Zk rollups (tag 4) are not supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransactionDestination(pub Destination);

impl<'a> Field<'a> for TransactionDestination {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = reader.take_array_ref::<22>()?;
        Destination::try_from_bytes(bytes)
            .map(TransactionDestination)
            .map_err(|error| match error {
                kestrel_crypto::CryptoError::UnknownTag { tag, .. } => DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "destination",
                        tag: u16::from(tag),
                    },
                    offset,
                ),
                other => DecodeError::invalid("destination", other.to_string(), offset),
            })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.0.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Destination::from_b58check(json::as_str(value, path)?)
            .map(TransactionDestination)
            .map_err(|error| JsonError::new(path, error.to_string()))
    }
}

/// A Micheline expression in its canonical binary form without a size prefix
/// (`Script_repr.expr_encoding`): its length is found by decoding it. Kept as borrowed bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MichelineExpr<'a>(pub Cow<'a, [u8]>);

impl<'a> Field<'a> for MichelineExpr<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let mut probe = *reader;
        let rest = probe.take(probe.remaining_bytes())?;
        let mut size = 0;
        binary::decode_prefix(rest, &mut size, binary::DecodeLimits::default())
            .map_err(|error| DecodeError::invalid("Micheline", format!("{error:?}"), offset))?;
        Ok(MichelineExpr(Cow::Borrowed(reader.take(size)?)))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        // Read with the same limits when decoded, so this decode succeeds.
        let node = binary::decode(&self.0)
            .map_err(|error| JsonError::new("", format!("Micheline: {error:?}")))?;
        micheline_json::write_json(out, &node);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let node = micheline_json::from_json_str(&value.to_string())
            .map_err(|error| JsonError::new(path, format!("Micheline: {error}")))?;
        binary::encode(&node)
            .map(|bytes| MichelineExpr(Cow::Owned(bytes)))
            .map_err(|error| JsonError::new(path, format!("Micheline: {error:?}")))
    }
}

record! {
    /// An internal transaction (tag 1).
    pub struct InternalTransaction<'a> {
        /// The amount, in mutez.
        amount: Mutez => "amount",
        /// Who receives it.
        destination: TransactionDestination => "destination",
        /// The call, absent for `Unit` to `default`.
        parameters: Option<Parameters<'a>> => "parameters",
    }
}

record! {
    /// An internal origination (tag 2).
    pub struct InternalOrigination<'a> {
        /// The new contract's balance, in mutez.
        balance: Mutez => "balance",
        /// Its delegate.
        delegate: Option<PublicKeyHash> => "delegate",
        /// Its code and storage.
        script: Script<'a> => "script",
    }
}

record! {
    /// An event emitted by `EMIT` (tag 4).
    pub struct Event<'a> {
        /// The payload's type.
        ty: MichelineExpr<'a> => "type",
        /// The event's tag, absent for `default`.
        tag: Option<Entrypoint> => "tag",
        /// The payload.
        payload: Option<MichelineExpr<'a>> => "payload",
    }
}

/// What an internal operation does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InternalKind<'a> {
    /// A transaction (tag 1).
    Transaction(InternalTransaction<'a>),
    /// An origination (tag 2).
    Origination(InternalOrigination<'a>),
    /// A delegation (tag 3).
    Delegation(Delegation),
    /// An event (tag 4).
    Event(Event<'a>),
}

impl InternalKind<'_> {
    /// The kind's tag.
    pub fn tag(&self) -> u8 {
        match self {
            Self::Transaction(_) => 1,
            Self::Origination(_) => 2,
            Self::Delegation(_) => 3,
            Self::Event(_) => 4,
        }
    }

    /// The kind's name (the JSON `"kind"`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Transaction(_) => "transaction",
            Self::Origination(_) => "origination",
            Self::Delegation(_) => "delegation",
            Self::Event(_) => "event",
        }
    }
}

/// An internal operation: its emitter, nonce and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalOperation<'a> {
    /// The contract (or account) that emitted it.
    pub source: TransactionDestination,
    /// Its nonce, unique within the enclosing manager operation.
    pub nonce: u16,
    /// What it does.
    pub operation: InternalKind<'a>,
}

impl<'a> InternalKind<'a> {
    /// Reads the fields of the kind `tag` (already read, at `offset`).
    pub(crate) fn read_body(
        tag: u8,
        offset: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Self, DecodeError> {
        Ok(match tag {
            1 => Self::Transaction(InternalTransaction::read(reader)?),
            2 => Self::Origination(InternalOrigination::read(reader)?),
            3 => Self::Delegation(Delegation::read(reader)?),
            4 => Self::Event(Event::read(reader)?),
            tag => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "internal operation",
                        tag: u16::from(tag),
                    },
                    offset,
                ))
            }
        })
    }

    /// Writes the fields (without the tag).
    pub(crate) fn write_body(&self, out: &mut Vec<u8>) {
        match self {
            Self::Transaction(fields) => fields.write(out),
            Self::Origination(fields) => fields.write(out),
            Self::Delegation(fields) => fields.write(out),
            Self::Event(fields) => fields.write(out),
        }
    }
}

impl<'a> Field<'a> for InternalOperation<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let source = TransactionDestination::read(reader)?;
        let nonce = u16::read(reader)?;
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        let operation = InternalKind::read_body(tag, offset, reader)?;
        Ok(Self {
            source,
            nonce,
            operation,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.source.write(out);
        self.nonce.write(out);
        out.push(self.operation.tag());
        self.operation.write_body(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        write_string(object.key("kind"), self.operation.kind_name());
        self.source.write_json(object.key("source"))?;
        self.nonce.write_json(object.key("nonce"))?;
        match &self.operation {
            InternalKind::Transaction(fields) => fields.write_json_fields(&mut object)?,
            InternalKind::Origination(fields) => fields.write_json_fields(&mut object)?,
            InternalKind::Delegation(fields) => fields.write_json_fields(&mut object)?,
            InternalKind::Event(fields) => fields.write_json_fields(&mut object)?,
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
        let kind_path = json::child(path, "kind");
        let operation = match json::as_str(field("kind")?, &kind_path)? {
            "transaction" => {
                InternalKind::Transaction(InternalTransaction::read_json_fields(object, path)?)
            }
            "origination" => {
                InternalKind::Origination(InternalOrigination::read_json_fields(object, path)?)
            }
            "delegation" => InternalKind::Delegation(Delegation::read_json_fields(object, path)?),
            "event" => InternalKind::Event(Event::read_json_fields(object, path)?),
            other => {
                return Err(JsonError::new(
                    &kind_path,
                    format!("unknown internal operation kind {other}"),
                ))
            }
        };
        Ok(Self {
            source: TransactionDestination::read_json(
                field("source")?,
                &json::child(path, "source"),
            )?,
            nonce: u16::read_json(field("nonce")?, &json::child(path, "nonce"))?,
            operation,
        })
    }
}
