//! RPC answers that are errors, as Octez writes them: a JSON array of `{kind, id, …}` with
//! `Content-Type: application/json` exactly (pytezos parses error bodies only then), HTTP 500
//! for errors of the protocol; 400 with text for a request that does not parse; 404 for an
//! unknown path or a missing value.

use kestrel_protocol::apply::ERROR_ID_PREFIX;
use kestrel_protocol::ValidationError;
use serde_json::{json, Map, Value};

use super::Response;
use crate::chain::ChainError;

/// The HTTP status of an error raised by the protocol or the shell.
const PROTOCOL_ERROR_STATUS: u16 = 500;

/// The error of an oversized operation (`Prevalidation.Oversized_operation`).
const OVERSIZED_OPERATION_ID: &str = "prevalidation.oversized_operation";

/// Octez's generic error (`Error_monad.failure`).
const FAILURE_ID: &str = "failure";

/// The node's error for a block whose context the GC collected (Octez's rolling mode answers
/// 404 for blocks it no longer holds; the node keeps their headers, so it says why).
const PRUNED_CONTEXT_ID: &str = "kestrel.pruned_context";

/// The error of bytes that are not an operation (`Prevalidation.Parse_error`).
const PARSE_ERROR_ID: &str = "prevalidation.parse_error";

/// A 404 with an empty body.
pub fn not_found() -> Response {
    Response {
        status: 404,
        content_type: super::TEXT,
        body: Vec::new(),
    }
}

/// A 400: the request does not parse.
pub fn bad_request(message: &str) -> Response {
    Response {
        status: 400,
        content_type: super::TEXT,
        body: message.as_bytes().to_vec(),
    }
}

/// A 500 carrying Octez's error list.
pub fn protocol_errors(list: Vec<Value>) -> Response {
    errors(list)
}

fn errors(list: Vec<Value>) -> Response {
    Response {
        status: PROTOCOL_ERROR_STATUS,
        content_type: super::JSON,
        body: Value::Array(list).to_string().into_bytes(),
    }
}

/// One error object.
fn error(kind: &str, id: String, fields: Map<String, Value>) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), Value::from(kind));
    object.insert("id".into(), Value::from(id));
    object.extend(fields);
    Value::Object(object)
}

/// A 500 with one permanent error of the protocol, `id` without its prefix, and a message.
pub fn protocol_error(id: &str, message: &str) -> Response {
    let mut fields = Map::new();
    fields.insert("msg".into(), Value::from(message));
    errors(vec![error(
        "permanent",
        format!("{ERROR_ID_PREFIX}{id}"),
        fields,
    )])
}

/// A 500 with one permanent error whose id is `id` as given, and a message (the node's own
/// errors, `kestrel.<method>`).
pub fn protocol_error_with_id(id: &str, message: &str) -> Response {
    let mut fields = Map::new();
    fields.insert("msg".into(), Value::from(message));
    errors(vec![error("permanent", id.to_string(), fields)])
}

/// A 500 for a request the node failed on (a bug: a panic), as Octez answers a request its
/// handler raised on, but as an error list with `Content-Type: application/json` so that
/// clients show the message: `[{"kind": "temporary", "id": "failure", "msg"}]`.
pub fn internal(message: &str) -> Response {
    let mut fields = Map::new();
    fields.insert("msg".into(), Value::from(message));
    errors(vec![error("temporary", FAILURE_ID.to_string(), fields)])
}

/// The error answer for `chain_error`.
pub fn chain_error(chain_error: &ChainError) -> Response {
    match chain_error {
        ChainError::Invalid(invalid) => errors(vec![validation_error(invalid)]),
        ChainError::Oversized { size_bytes } => {
            let mut fields = Map::new();
            fields.insert("size".into(), json!(size_bytes));
            fields.insert("max".into(), json!(crate::chain::MAX_OPERATION_DATA_BYTES));
            errors(vec![error(
                "permanent",
                OVERSIZED_OPERATION_ID.to_string(),
                fields,
            )])
        }
        ChainError::Decode(_) | ChainError::Json(_) => errors(vec![error(
            "permanent",
            PARSE_ERROR_ID.to_string(),
            Map::new(),
        )]),
        ChainError::Pruned { level, keep_blocks } => {
            let mut fields = Map::new();
            fields.insert("msg".into(), Value::from(chain_error.to_string()));
            fields.insert("level".into(), json!(level));
            fields.insert("keep_blocks".into(), json!(keep_blocks));
            let mut response = errors(vec![error(
                "permanent",
                PRUNED_CONTEXT_ID.to_string(),
                fields,
            )]);
            response.status = 404;
            response
        }
        ChainError::Ledger(_)
        | ChainError::Store(_)
        | ChainError::Blocks(_)
        | ChainError::NoBlocks(_)
        | ChainError::Unknown(_)
        | ChainError::NotBaked(_)
        | ChainError::TooManyBlocks { .. }
        | ChainError::OutdatedBranch { .. }
        | ChainError::MempoolFull => {
            let mut fields = Map::new();
            fields.insert("msg".into(), Value::from(chain_error.to_string()));
            errors(vec![error("temporary", FAILURE_ID.to_string(), fields)])
        }
    }
}

/// A validation error as Octez reports it, with its fields.
fn validation_error(invalid: &ValidationError) -> Value {
    let mut fields = Map::new();
    let kind = match invalid {
        ValidationError::CounterInThePast {
            contract,
            expected,
            found,
        }
        | ValidationError::CounterInTheFuture {
            contract,
            expected,
            found,
        } => {
            fields.insert("contract".into(), Value::from(contract.to_b58check()));
            fields.insert("expected".into(), Value::from(expected.to_string()));
            fields.insert("found".into(), Value::from(found.to_string()));
            if matches!(invalid, ValidationError::CounterInThePast { .. }) {
                "branch"
            } else {
                "temporary"
            }
        }
        ValidationError::BalanceTooLow {
            contract,
            balance,
            amount,
        } => {
            fields.insert("contract".into(), Value::from(contract.to_b58check()));
            fields.insert("balance".into(), Value::from(balance.to_string()));
            fields.insert("amount".into(), Value::from(amount.to_string()));
            "temporary"
        }
        ValidationError::EmptyImplicitContract(contract)
        | ValidationError::UnrevealedKey(contract)
        | ValidationError::PreviouslyRevealedKey(contract) => {
            fields.insert("contract".into(), Value::from(contract.to_b58check()));
            "branch"
        }
        ValidationError::Ledger(_) => "temporary",
        _ => "permanent",
    };
    error(
        kind,
        format!("{ERROR_ID_PREFIX}{}", invalid.octez_id()),
        fields,
    )
}
