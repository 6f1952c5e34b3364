//! The RPCs on operations: `helpers/forge/operations`, `helpers/scripts/run_operation` and
//! `simulate_operation`, `helpers/preapply/operations`, and `/injection/operation`, which
//! validates, applies and bakes the operation into a new head before it answers.

use kestrel_crypto::OperationHash;
use kestrel_protocol::receipt::ContentsMetadata;
use kestrel_protocol::Operation;
use serde_json::Value;

use super::{error, quoted, Response};
use crate::chain::{write_contents_with_metadata, Chain, ChainError};

/// Most operations one `preapply/operations` request may carry (a block's manager pass
/// holds at most this many: `max_operation_list_length`'s `max_op` of Octez's pass 0 is 2048).
pub const MAX_PREAPPLY_OPERATIONS: usize = 2_048;

pub fn helpers(chain: &Chain, rest: &[&str], body: &[u8]) -> Response {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return error::bad_request("the body is not JSON");
    };
    let answer = match rest {
        ["forge", "operations"] => forge(&value),
        ["scripts", "run_operation"] | ["scripts", "simulate_operation"] => simulate(chain, &value),
        ["preapply", "operations"] => preapply(chain, &value),
        ["scripts", name] => {
            return super::scripts::helpers(chain, name, &value).unwrap_or_else(error::not_found)
        }
        _ => return error::not_found(),
    };
    match answer {
        Ok(json) => Response::json(json),
        Err(chain_error) => error::chain_error(&chain_error),
    }
}

/// The unsigned bytes of `{branch, contents}`, as hex.
fn forge(value: &Value) -> Result<String, ChainError> {
    let operation = Operation::from_json(value)?;
    Ok(quoted(&hex::encode(operation.encode_unsigned())))
}

/// `{operation: {branch, contents, signature}, chain_id}` → `{contents: […with metadata]}`.
fn simulate(chain: &Chain, value: &Value) -> Result<String, ChainError> {
    let operation = Operation::from_json(value.get("operation").unwrap_or(value))?;
    let metadata = chain.simulate(&operation)?;
    with_metadata(&operation, &metadata)
}

/// `[{protocol, branch, contents, signature}…]` → `[{contents, signature}…]`.
fn preapply(chain: &Chain, value: &Value) -> Result<String, ChainError> {
    let list = value.as_array().map(Vec::as_slice).unwrap_or_default();
    if list.len() > MAX_PREAPPLY_OPERATIONS {
        return Err(ChainError::Json(kestrel_protocol::JsonError::new(
            "",
            format!("more than {MAX_PREAPPLY_OPERATIONS} operations"),
        )));
    }
    let operations = list
        .iter()
        .map(Operation::from_json)
        .collect::<Result<Vec<_>, _>>()?;
    let results = chain.preapply(&operations)?;
    let answers = operations
        .iter()
        .zip(&results)
        .map(|(operation, metadata)| with_metadata(operation, metadata))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(format!("[{}]", answers.join(",")))
}

/// `{contents: […with metadata], signature}`.
fn with_metadata(
    operation: &Operation<'_>,
    metadata: &[ContentsMetadata<'_>],
) -> Result<String, ChainError> {
    let mut json = "{\"contents\":".to_string();
    write_contents_with_metadata(&mut json, operation, metadata)?;
    if let Some(signature) = &operation.signature {
        json.push_str(&format!(",\"signature\":\"{}\"", signature.to_b58check()));
    }
    json.push('}');
    Ok(json)
}

/// The body is the JSON string of the signed operation's hex; the answer its hash.
pub fn inject(chain: &mut Chain, body: &[u8]) -> Response {
    match injected_bytes(body) {
        Ok(bytes) => injection_answer(chain.inject(&bytes)),
        Err(response) => response,
    }
}

/// The operation's bytes in an injection's body (the JSON string of their hex), or the
/// answer refusing the body.
pub(crate) fn injected_bytes(body: &[u8]) -> Result<Vec<u8>, Response> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| value.as_str().and_then(|text| hex::decode(text).ok()))
        .ok_or_else(|| error::bad_request("the body is not a JSON string of hexadecimal bytes"))
}

/// The answer to an injection: the operation's hash, or why it was refused.
pub(crate) fn injection_answer(result: Result<OperationHash, ChainError>) -> Response {
    match result {
        Ok(hash) => Response::json(quoted(&hash.to_b58check())),
        Err(chain_error) => error::chain_error(&chain_error),
    }
}
