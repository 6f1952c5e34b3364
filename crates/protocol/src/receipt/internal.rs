//! Internal operation results (`apply_internal_results.ml`,
//! `internal_operation_result_encoding`): an internal operation (see
//! [`internal`](crate::internal)) with its result.
//!
//! Binary: the kind tag, source, nonce, kind fields (unlike `internal_operation_encoding`, the
//! tag comes first: it is the union's), then the result (status tag, fields). JSON: `{"kind", "source", "nonce", kind fields…, "result": {…}}`.

use kestrel_encoding::Reader;
use serde_json::Value;

use crate::error::{DecodeError, JsonError};
use crate::field::Field;
use crate::internal::{InternalKind, InternalOperation, TransactionDestination};
use crate::json::{self};
use crate::receipt::manager::{ManagerResult, ResultKind};

/// An internal operation and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalOperationResult<'a> {
    /// The operation: its emitter, nonce and kind.
    pub operation: InternalOperation<'a>,
    /// Its result, of the operation's kind.
    pub result: ManagerResult<'a>,
}

/// The result kind of an internal operation kind.
fn result_kind(kind: &InternalKind<'_>) -> ResultKind {
    match kind {
        InternalKind::Transaction(_) => ResultKind::Transaction,
        InternalKind::Origination(_) => ResultKind::Origination,
        InternalKind::Delegation(_) => ResultKind::Delegation,
        InternalKind::Event(_) => ResultKind::Event,
    }
}

impl<'a> Field<'a> for InternalOperationResult<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        let source = TransactionDestination::read(reader)?;
        let nonce = u16::read(reader)?;
        let operation = InternalOperation {
            source,
            nonce,
            operation: InternalKind::read_body(tag, offset, reader)?,
        };
        let result = ManagerResult::read(result_kind(&operation.operation), reader)?;
        Ok(Self { operation, result })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.operation.operation.tag());
        self.operation.source.write(out);
        self.operation.nonce.write(out);
        self.operation.operation.write_body(out);
        self.result.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut operation = String::new();
        self.operation.write_json(&mut operation)?;
        // The operation's object, reopened to add `"result"` as its last member.
        operation.pop();
        out.push_str(&operation);
        out.push_str(",\"result\":");
        self.result.write_json(out)?;
        out.push('}');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let operation = InternalOperation::read_json(value, path)?;
        let object = json::as_object(value, path)?;
        let result = object
            .get("result")
            .ok_or_else(|| JsonError::new(path, "missing field \"result\""))?;
        let result = ManagerResult::read_json(
            result_kind(&operation.operation),
            result,
            &json::child(path, "result"),
        )?;
        Ok(Self { operation, result })
    }
}
