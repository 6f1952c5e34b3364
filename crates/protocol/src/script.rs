//! Michelson inside operations: lazy expressions (`Script_repr.lazy_expr_encoding`: a 4-byte size
//! then Micheline binary, kept as borrowed bytes and not parsed by the binary decode, as Octez
//! keeps them lazy), scripts (code and storage), entrypoints (the compact `smart_encoding` of
//! transactions and the plain string of ticket transfers), and transaction parameters.
//!
//! JSON carries Micheline in its RPC JSON form, written and read by `kestrel-micheline` on its own
//! explicit stacks.

use std::borrow::Cow;

use kestrel_crypto::Entrypoint;
use kestrel_encoding::Reader;
use kestrel_micheline::{binary, json as micheline_json};
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, HexBytes};
use crate::json::{self, write_string};
use crate::record::record;

/// Micheline binary bytes behind a 4-byte size (`lazy_expr`), borrowed from the input when
/// decoded. The binary decode does not parse them (Octez decodes them lazily, when the script
/// runs); the JSON form does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LazyExpr<'a>(pub Cow<'a, [u8]>);

impl LazyExpr<'_> {
    /// The Micheline binary bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl<'a> Field<'a> for LazyExpr<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        HexBytes::read(reader).map(|bytes| LazyExpr(bytes.0))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.0.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.0);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        // Octez's `lazy_encoding` decodes the bytes to write JSON, and fails when they are not
        // Micheline.
        let node = binary::decode(&self.0).map_err(|error| {
            JsonError::new("", format!("lazy Micheline does not decode: {error}"))
        })?;
        micheline_json::write_json(out, &node);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let node = micheline_json::from_json_str(&value.to_string())
            .map_err(|error| JsonError::new(path, format!("Micheline: {error}")))?;
        let bytes = binary::encode(&node)
            .map_err(|error| JsonError::new(path, format!("Micheline: {error:?}")))?;
        Ok(LazyExpr(Cow::Owned(bytes)))
    }
}

/// The built-in entrypoints of `Entrypoint_repr.smart_encoding`, by tag (255 is a named one).
const BUILTIN_ENTRYPOINTS: [&str; 10] = [
    "default",
    "root",
    "do",
    "set_delegate",
    "remove_delegate",
    "deposit",
    "stake",
    "unstake",
    "finalize_unstake",
    "set_delegate_parameters",
];

/// The tag of a named entrypoint in `smart_encoding`.
const NAMED_ENTRYPOINT_TAG: u8 = 255;

/// The longest named entrypoint (`Bounded.string Plain 31`).
const ENTRYPOINT_NAME_MAX_BYTES: usize = 31;

fn entrypoint_from_name(name: &str, path: &str) -> Result<Entrypoint, JsonError> {
    Entrypoint::try_new(name).map_err(|error| JsonError::new(path, error.to_string()))
}

/// A transaction's entrypoint (`smart_encoding`): one tag byte for a built-in name, or `ff`, a
/// length byte and the name.
impl<'a> Field<'a> for Entrypoint {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        if let Some(name) = BUILTIN_ENTRYPOINTS.get(usize::from(tag)) {
            return Entrypoint::try_new(name)
                .map_err(|error| DecodeError::invalid("entrypoint", error.to_string(), offset));
        }
        if tag != NAMED_ENTRYPOINT_TAG {
            return Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "entrypoint",
                    tag: u16::from(tag),
                },
                offset,
            ));
        }
        let length_offset = reader.offset();
        let length = usize::from(reader.take_u8()?);
        if length > ENTRYPOINT_NAME_MAX_BYTES {
            return Err(DecodeError::new(
                DecodeErrorKind::SizeLimitExceeded,
                length_offset,
            ));
        }
        let name = std::str::from_utf8(reader.take(length)?)
            .map_err(|_| DecodeError::invalid("entrypoint", "not UTF-8", length_offset))?;
        // Octez's `of_string_lax_exn`: the empty name is `default`, longer than 31 fails.
        Entrypoint::try_new(name)
            .map_err(|error| DecodeError::invalid("entrypoint", error.to_string(), length_offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        // data-encoding's union writes the first case that accepts the value: a built-in tag.
        match BUILTIN_ENTRYPOINTS
            .iter()
            .position(|name| *name == self.as_str())
        {
            Some(tag) => out.push(tag as u8),
            None => {
                out.push(NAMED_ENTRYPOINT_TAG);
                out.push(self.as_str().len() as u8);
                out.extend_from_slice(self.as_str().as_bytes());
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, self.as_str());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        entrypoint_from_name(json::as_str(value, path)?, path)
    }
}

/// An entrypoint as a plain string (`Entrypoint_repr.simple_encoding`: 4-byte size, then the
/// name), as ticket transfers carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleEntrypoint(pub Entrypoint);

impl<'a> Field<'a> for SimpleEntrypoint {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = HexBytes::read(reader)?;
        let name = std::str::from_utf8(&bytes.0)
            .map_err(|_| DecodeError::invalid("entrypoint", "not UTF-8", offset))?;
        Entrypoint::try_new(name)
            .map(SimpleEntrypoint)
            .map_err(|error| DecodeError::invalid("entrypoint", error.to_string(), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        let name = self.0.as_str().as_bytes();
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, self.0.as_str());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        entrypoint_from_name(json::as_str(value, path)?, path).map(SimpleEntrypoint)
    }
}

record! {
    /// A transaction's parameters: the entrypoint called and the argument. Octez leaves them out
    /// (`00`) for `Unit` to `default`.
    pub struct Parameters<'a> {
        /// The entrypoint called.
        entrypoint: Entrypoint => "entrypoint",
        /// The argument, Micheline.
        value: LazyExpr<'a> => "value",
    }
}

record! {
    /// A contract's script (`Script_repr.encoding`): its code and its initial storage.
    pub struct Script<'a> {
        /// The code: `parameter`, `storage`, `code` (and views), Micheline.
        code: LazyExpr<'a> => "code",
        /// The storage, Micheline.
        storage: LazyExpr<'a> => "storage",
    }
}
