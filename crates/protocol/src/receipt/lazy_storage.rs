//! Lazy storage diffs (`lazy_storage_diff.ml`, `lazy_storage_kind.ml`): what an operation did to
//! big maps and sapling states — allocate (with the types or memo size), copy from another id,
//! update in place, remove — and the updates (for big maps: key hash, key, new value or removal).
//!
//! Binary: a list of items, each a kind tag (0 big map, 1 sapling state), the id (`z`), and the
//! diff: a tag (0 update, 1 remove, 2 copy, 3 alloc) and its fields. Micheline is unprefixed
//! (`Script_repr.expr_encoding`). JSON: `[{"kind": "big_map", "id": "…", "diff": {"action": …}}]`.

use kestrel_crypto::ScriptExprHash;
use kestrel_encoding::Reader;
use serde_json::{Map, Value};

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, FixedHex, HexBytes, Pair, Z64};
use crate::internal::MichelineExpr;
use crate::json::{self, write_string, ObjectWriter};
use crate::receipt::balance::{member_str, read_member};
use crate::record::{record, JsonFields};

record! {
    /// A big map's key and value types, at allocation.
    pub struct BigMapAlloc<'a> {
        /// The key type.
        key_type: MichelineExpr<'a> => "key_type",
        /// The value type.
        value_type: MichelineExpr<'a> => "value_type",
    }
}

record! {
    /// One big map binding set or removed.
    pub struct BigMapUpdate<'a> {
        /// The key's hash (`expr…`).
        key_hash: ScriptExprHash => "key_hash",
        /// The key.
        key: MichelineExpr<'a> => "key",
        /// The new value; absent removes the binding.
        value: Option<MichelineExpr<'a>> => "value",
    }
}

record! {
    /// A sapling state's memo size, at allocation.
    pub struct SaplingAlloc {
        /// The memo size in bytes (`uint16`).
        memo_size: u16 => "memo_size",
    }
}

record! {
    /// A sapling ciphertext (`Sapling.Ciphertext.encoding`).
    pub struct SaplingCiphertext<'a> {
        /// The value commitment.
        cv: FixedHex<32> => "cv",
        /// The ephemeral public key.
        epk: FixedHex<32> => "epk",
        /// The encrypted payload.
        payload_enc: HexBytes<'a> => "payload_enc",
        /// Its nonce.
        nonce_enc: FixedHex<24> => "nonce_enc",
        /// The encrypted outgoing payload.
        payload_out: FixedHex<80> => "payload_out",
        /// Its nonce.
        nonce_out: FixedHex<24> => "nonce_out",
    }
}

record! {
    /// A sapling state's updates (`Sapling_repr.diff_encoding`).
    pub struct SaplingUpdates<'a> {
        /// New commitments, each with its ciphertext.
        commitments_and_ciphertexts: Vec<Pair<FixedHex<32>, SaplingCiphertext<'a>>> => "commitments_and_ciphertexts",
        /// New nullifiers.
        nullifiers: Vec<FixedHex<32>> => "nullifiers",
    }
}

/// What happened to one lazy storage id (`diff`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageDiff<Alloc, Updates> {
    /// Updated in place (tag 0).
    Update(Updates),
    /// Removed (tag 1).
    Remove,
    /// Copied from `source`, then updated (tag 2).
    Copy {
        /// The id copied.
        source: Z64,
        /// The updates after the copy.
        updates: Updates,
    },
    /// Allocated, then updated (tag 3).
    Alloc {
        /// The updates after the allocation.
        updates: Updates,
        /// The allocation's parameters.
        alloc: Alloc,
    },
}

/// A big map's diff.
pub type BigMapDiff<'a> = StorageDiff<BigMapAlloc<'a>, Vec<BigMapUpdate<'a>>>;
/// A sapling state's diff.
pub type SaplingDiff<'a> = StorageDiff<SaplingAlloc, SaplingUpdates<'a>>;

/// One lazy storage item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LazyStorageItem<'a> {
    /// A big map (tag 0, `big_map`).
    BigMap {
        /// Its id (negative for a temporary one).
        id: Z64,
        /// What happened to it.
        diff: BigMapDiff<'a>,
    },
    /// A sapling state (tag 1, `sapling_state`).
    SaplingState {
        /// Its id.
        id: Z64,
        /// What happened to it.
        diff: SaplingDiff<'a>,
    },
}

/// An operation's lazy storage diff (`Lazy_storage.encoding`), items in Octez's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LazyStorageDiff<'a>(pub Vec<LazyStorageItem<'a>>);

// The methods are private; the bound names the crate-private `JsonFields` of the alloc records.
#[allow(private_bounds)]
impl<'a, A: Field<'a> + JsonFields, U: Field<'a>> StorageDiff<A, U> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::Update(U::read(reader)?),
            1 => Self::Remove,
            2 => Self::Copy {
                source: Z64::read(reader)?,
                updates: U::read(reader)?,
            },
            3 => Self::Alloc {
                updates: U::read(reader)?,
                alloc: A::read(reader)?,
            },
            tag => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "lazy storage diff",
                        tag: u16::from(tag),
                    },
                    offset,
                ))
            }
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Update(updates) => {
                out.push(0);
                updates.write(out);
            }
            Self::Remove => out.push(1),
            Self::Copy { source, updates } => {
                out.push(2);
                source.write(out);
                updates.write(out);
            }
            Self::Alloc { updates, alloc } => {
                out.push(3);
                updates.write(out);
                alloc.write(out);
            }
        }
    }

    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        let action = match self {
            Self::Update(_) => "update",
            Self::Remove => "remove",
            Self::Copy { .. } => "copy",
            Self::Alloc { .. } => "alloc",
        };
        write_string(object.key("action"), action);
        match self {
            Self::Update(updates) => updates.write_json(object.key("updates"))?,
            Self::Remove => {}
            Self::Copy { source, updates } => {
                source.write_json(object.key("source"))?;
                updates.write_json(object.key("updates"))?;
            }
            Self::Alloc { updates, alloc } => {
                updates.write_json(object.key("updates"))?;
                alloc.write_fields(&mut object)?;
            }
        }
        object.end();
        Ok(())
    }

    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let updates = |object: &Map<String, Value>| read_member::<U>(object, path, "updates");
        Ok(match member_str(object, path, "action")? {
            "update" => Self::Update(updates(object)?),
            "remove" => Self::Remove,
            "copy" => Self::Copy {
                source: read_member(object, path, "source")?,
                updates: updates(object)?,
            },
            "alloc" => Self::Alloc {
                updates: updates(object)?,
                alloc: A::read_fields(object, path)?,
            },
            other => {
                return Err(JsonError::new(
                    &json::child(path, "action"),
                    format!("unknown action {other}"),
                ))
            }
        })
    }
}

impl<'a> Field<'a> for LazyStorageItem<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::BigMap {
                id: Z64::read(reader)?,
                diff: StorageDiff::read(reader)?,
            },
            1 => Self::SaplingState {
                id: Z64::read(reader)?,
                diff: StorageDiff::read(reader)?,
            },
            tag => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "lazy storage kind",
                        tag: u16::from(tag),
                    },
                    offset,
                ))
            }
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::BigMap { id, diff } => {
                out.push(0);
                id.write(out);
                diff.write(out);
            }
            Self::SaplingState { id, diff } => {
                out.push(1);
                id.write(out);
                diff.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        match self {
            Self::BigMap { id, diff } => {
                write_string(object.key("kind"), "big_map");
                id.write_json(object.key("id"))?;
                diff.write_json(object.key("diff"))?;
            }
            Self::SaplingState { id, diff } => {
                write_string(object.key("kind"), "sapling_state");
                id.write_json(object.key("id"))?;
                diff.write_json(object.key("diff"))?;
            }
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let id = read_member(object, path, "id")?;
        let diff = object
            .get("diff")
            .ok_or_else(|| JsonError::new(path, "missing field \"diff\""))?;
        let diff_path = json::child(path, "diff");
        Ok(match member_str(object, path, "kind")? {
            "big_map" => Self::BigMap {
                id,
                diff: StorageDiff::read_json(diff, &diff_path)?,
            },
            "sapling_state" => Self::SaplingState {
                id,
                diff: StorageDiff::read_json(diff, &diff_path)?,
            },
            other => {
                return Err(JsonError::new(
                    &json::child(path, "kind"),
                    format!("unknown lazy storage kind {other}"),
                ))
            }
        })
    }
}

impl<'a> Field<'a> for LazyStorageDiff<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Vec::read(reader).map(Self)
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.0.write_json(out)
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Vec::read_json(value, path).map(Self)
    }
}
