//! The status of one operation in a receipt (`apply_operation_result.ml`): applied (with the
//! kind's result), failed (with the error trace), skipped (never run: an earlier operation of the
//! batch failed), or backtracked (ran, then undone because a later one failed), and errors as data
//! — Octez's error id, category and fields, as the RPC's JSON shows them.
//!
//! Binary: a one-byte status tag (0 applied, 1 failed, 2 skipped, 3 backtracked), then the result
//! and/or the trace. A trace is a list of errors, each a size-prefixed BSON document (see
//! [`bson`](super::bson)). JSON: `{"status": …, "errors"?: […], result fields…}`.

use kestrel_encoding::Reader;
use serde_json::{Map, Value};

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{enter_sized, write_sized, Field};
use crate::json::{self, write_string, ObjectWriter};
use crate::receipt::balance::member_str;
use crate::receipt::bson;
use crate::record::JsonFields;

/// One error of a trace, as data: Octez's id (`proto.025-PsUshuai.michelson_v1.script_rejected`),
/// its category (`kind`: `permanent`, `temporary`, `branch`, `outdated`) and its other fields in
/// Octez's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError {
    /// The error's category (`kind` in JSON).
    pub category: String,
    /// The error's id.
    pub id: String,
    /// The other fields, in order.
    pub fields: Map<String, Value>,
}

impl ProtocolError {
    /// A permanent error `id` with `fields`.
    pub fn permanent(id: impl Into<String>, fields: Map<String, Value>) -> Self {
        Self {
            category: "permanent".to_owned(),
            id: id.into(),
            fields,
        }
    }

    /// The error as one JSON object (`kind`, `id`, then the fields).
    pub fn to_json_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("kind".to_owned(), Value::String(self.category.clone()));
        object.insert("id".to_owned(), Value::String(self.id.clone()));
        for (key, value) in &self.fields {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }

    fn from_json_object(object: &Map<String, Value>, path: &str) -> Result<Self, JsonError> {
        let fields = object
            .iter()
            .filter(|(key, _)| *key != "kind" && *key != "id")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(Self {
            category: member_str(object, path, "kind")?.to_owned(),
            id: member_str(object, path, "id")?.to_owned(),
            fields,
        })
    }
}

impl<'a> Field<'a> for ProtocolError {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let saved = enter_sized(reader)?;
        let offset = reader.offset();
        let bytes = reader.take(reader.remaining_bytes())?;
        reader.leave_region(saved)?;
        let invalid = |reason: String, at: usize| DecodeError::invalid("error", reason, at);
        let value = bson::read_document(bytes)
            .map_err(|error| invalid(format!("BSON: {}", error.reason), offset + error.offset))?;
        let object = value
            .as_object()
            .ok_or_else(|| invalid("not an object".into(), offset))?;
        Self::from_json_object(object, "").map_err(|error| invalid(error.to_string(), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_sized(out, |out| {
            // Every `Value` holds in BSON except a key with a NUL byte (only JSON input can
            // have one; Octez's errors never do): such an error is written without its fields
            // rather than as invalid bytes.
            let start = out.len();
            if bson::write_document(&self.to_json_value(), out).is_err() {
                out.truncate(start);
                let bare = Self {
                    fields: Map::new(),
                    ..self.clone()
                };
                let _ = bson::write_document(&bare.to_json_value(), out);
            }
        });
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        write_string(object.key("kind"), &self.category);
        write_string(object.key("id"), &self.id);
        for (key, value) in &self.fields {
            object.key(key).push_str(&value.to_string());
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Self::from_json_object(json::as_object(value, path)?, path)
    }
}

/// The status of an operation and its result (`operation_result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationResult<T> {
    /// Applied; `T` is the kind's result.
    Applied(T),
    /// Failed, with the error trace.
    Failed(Vec<ProtocolError>),
    /// Not run, because an earlier operation of the batch failed.
    Skipped,
    /// Applied, then undone because a later operation of the batch failed.
    Backtracked {
        /// The errors, when Octez kept them.
        errors: Option<Vec<ProtocolError>>,
        /// What it did before it was undone.
        result: T,
    },
}

impl<T> OperationResult<T> {
    /// The status name of JSON (`applied`, `failed`, `skipped`, `backtracked`).
    pub fn status(&self) -> &'static str {
        match self {
            Self::Applied(_) => "applied",
            Self::Failed(_) => "failed",
            Self::Skipped => "skipped",
            Self::Backtracked { .. } => "backtracked",
        }
    }

    /// The result, when the operation ran (applied or backtracked).
    pub fn result(&self) -> Option<&T> {
        match self {
            Self::Applied(result) | Self::Backtracked { result, .. } => Some(result),
            Self::Failed(_) | Self::Skipped => None,
        }
    }

    /// The result mapped by `f`, the status kept.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> OperationResult<U> {
        match self {
            Self::Applied(result) => OperationResult::Applied(f(result)),
            Self::Failed(errors) => OperationResult::Failed(errors),
            Self::Skipped => OperationResult::Skipped,
            Self::Backtracked { errors, result } => OperationResult::Backtracked {
                errors,
                result: f(result),
            },
        }
    }
}

impl<T> OperationResult<T> {
    /// Reads the status tag, then the result with `read_result`.
    pub(crate) fn read_with<'a>(
        reader: &mut Reader<'a>,
        read_result: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
    ) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::Applied(read_result(reader)?),
            1 => Self::Failed(Vec::read(reader)?),
            2 => Self::Skipped,
            3 => Self::Backtracked {
                errors: Option::read(reader)?,
                result: read_result(reader)?,
            },
            tag => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "operation result status",
                        tag: u16::from(tag),
                    },
                    offset,
                ))
            }
        })
    }

    /// Writes the status tag, then the result with `write_result`.
    pub(crate) fn write_with(
        &self,
        out: &mut Vec<u8>,
        write_result: impl FnOnce(&T, &mut Vec<u8>),
    ) {
        match self {
            Self::Applied(result) => {
                out.push(0);
                write_result(result, out);
            }
            Self::Failed(errors) => {
                out.push(1);
                errors.write(out);
            }
            Self::Skipped => out.push(2),
            Self::Backtracked { errors, result } => {
                out.push(3);
                errors.write(out);
                write_result(result, out);
            }
        }
    }

    /// Writes the JSON object, the result's fields with `write_fields`.
    pub(crate) fn write_json_with(
        &self,
        out: &mut String,
        write_fields: impl FnOnce(&T, &mut ObjectWriter<'_>) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        write_string(object.key("status"), self.status());
        match self {
            Self::Applied(result) => write_fields(result, &mut object)?,
            Self::Failed(errors) => errors.write_json(object.key("errors"))?,
            Self::Skipped => {}
            Self::Backtracked { errors, result } => {
                if let Some(errors) = errors {
                    errors.write_json(object.key("errors"))?;
                }
                write_fields(result, &mut object)?;
            }
        }
        object.end();
        Ok(())
    }

    /// Reads the JSON object, the result's fields with `read_fields`.
    pub(crate) fn read_json_with(
        value: &Value,
        path: &str,
        read_fields: impl FnOnce(&Map<String, Value>, &str) -> Result<T, JsonError>,
    ) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let errors =
            |object: &Map<String, Value>| -> Result<Option<Vec<ProtocolError>>, JsonError> {
                object
                    .get("errors")
                    .map(|errors| Vec::read_json(errors, &json::child(path, "errors")))
                    .transpose()
            };
        Ok(match member_str(object, path, "status")? {
            "applied" => Self::Applied(read_fields(object, path)?),
            "failed" => Self::Failed(
                errors(object)?.ok_or_else(|| JsonError::new(path, "missing field \"errors\""))?,
            ),
            "skipped" => Self::Skipped,
            "backtracked" => Self::Backtracked {
                errors: errors(object)?,
                result: read_fields(object, path)?,
            },
            other => {
                return Err(JsonError::new(
                    &json::child(path, "status"),
                    format!("unknown status {other}"),
                ))
            }
        })
    }
}

/// A result whose kind is fixed by its type: the two forms come from the record's.
impl<'a, T: Field<'a> + JsonFields> Field<'a> for OperationResult<T> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Self::read_with(reader, T::read)
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.write_with(out, T::write);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.write_json_with(out, T::write_fields)
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Self::read_json_with(value, path, T::read_fields)
    }
}
