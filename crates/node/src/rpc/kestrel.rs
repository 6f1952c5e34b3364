//! Anvil's habits for Tezos, under `POST /kestrel/<method>` with a JSON object body (empty
//! for methods without parameters) and a JSON answer; errors are Octez-shaped error lists
//! (HTTP 500, `id` `kestrel.<method>`). `docs/node-rpc.md` lists the methods:
//!
//! | method | body | answer |
//! |---|---|---|
//! | `mine` | `{"blocks": N}` (1 when absent) | `{"level", "hash"}` of the new head |
//! | `snapshot` | — | `{"id": N}` |
//! | `revert` | `{"id": N}` | `{"reverted": bool, "level"}` |
//! | `dump_state` | — | the state document ([`crate::state_file`]) |
//! | `load_state` | a state document | `{"level", "hash"}` |
//! | `set_next_block_timestamp` | `{"timestamp": RFC 3339 or seconds}` | `{"timestamp"}` |
//! | `increase_time` | `{"seconds": N}` | `{"offset_seconds"}` |
//! | `set_balance` | `{"address", "balance": "mutez"}` | `{"level", "hash"}` |
//! | `set_storage` | `{"address": "KT1…", "storage": Micheline JSON}` | `{"level", "hash"}` |
//! | `impersonate` / `stop_impersonating` | `{"address": "tz…"}` | `{"address"}` |
//!
//! The state-changing ones (`set_balance`, `set_storage`, `load_state`) bake a block holding
//! the change, so head's context is always what clients read.

use kestrel_crypto::{Destination, PublicKeyHash};
use kestrel_protocol::block_header::Timestamp;
use serde_json::{json, Map, Value};

use super::{error, Response};
use crate::block::Block;
use crate::chain::{Chain, ChainError};
use crate::state_file;

/// The path's first segment.
pub const PREFIX: &str = "kestrel";

/// Answers `POST /kestrel/<method>`.
pub fn call(chain: &mut Chain, method: &str, body: &[u8]) -> Response {
    if method == "load_state" {
        let Ok(text) = std::str::from_utf8(body) else {
            return error::bad_request("the body is not UTF-8");
        };
        return answer(
            method,
            state_file::load(chain, text).map(|()| head_json(chain.head())),
        );
    }
    let parameters = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(object)) => object,
            _ => return error::bad_request("the body is not a JSON object"),
        }
    };
    let result = match method {
        "mine" => count(&parameters, "blocks")
            .and_then(|blocks| chain.mine(blocks.unwrap_or(1)).map(head_json)),
        "snapshot" => Ok(json!({"id": chain.snapshot()})),
        "revert" => count(&parameters, "id").and_then(|id| {
            let id = id.ok_or_else(|| missing("id"))?;
            let reverted = chain.revert(id)?;
            Ok(json!({"reverted": reverted, "level": chain.head().level()}))
        }),
        "dump_state" => state_file::dump(chain)
            .and_then(|text| serde_json::from_str(&text).map_err(|_| missing("state"))),
        "set_next_block_timestamp" => timestamp(&parameters).and_then(|seconds| {
            chain.set_next_block_timestamp(seconds)?;
            Ok(json!({"timestamp": rfc3339(seconds)}))
        }),
        "increase_time" => signed_count(&parameters, "seconds")
            .map(|seconds| json!({"offset_seconds": chain.increase_time(seconds)})),
        "set_balance" => address(&parameters).and_then(|contract| {
            let mutez = decimal(&parameters, "balance")?;
            chain.set_balance(&contract, mutez).map(head_json)
        }),
        "set_storage" => address(&parameters).and_then(|contract| {
            let Destination::Originated(contract) = contract else {
                return Err(ChainError::Unknown(
                    "set_storage needs a KT1 address".into(),
                ));
            };
            let storage = parameters
                .get("storage")
                .ok_or_else(|| missing("storage"))?;
            let storage = kestrel_micheline::json::from_json_str(&storage.to_string())
                .map_err(|_| ChainError::Unknown("storage is not Micheline JSON".into()))?;
            chain.set_storage(&contract, &storage).map(head_json)
        }),
        "impersonate" | "stop_impersonating" => implicit(&parameters).map(|account| {
            chain.impersonate(account, method == "impersonate");
            json!({"address": account.to_b58check()})
        }),
        _ => return error::not_found(),
    };
    answer(method, result)
}

fn answer(method: &str, result: Result<Value, ChainError>) -> Response {
    match result {
        Ok(value) => Response::json(value.to_string()),
        Err(ChainError::Unknown(message)) => {
            error::protocol_error_with_id(&format!("{PREFIX}.{method}"), &message)
        }
        Err(chain_error) => error::chain_error(&chain_error),
    }
}

fn head_json(block: &Block) -> Value {
    json!({"level": block.level(), "hash": block.hash.to_b58check()})
}

fn missing(name: &str) -> ChainError {
    ChainError::Unknown(format!("the body has no valid `{name}`"))
}

/// A natural number given as a JSON number or a decimal string; `None` when absent.
fn count(parameters: &Map<String, Value>, name: &str) -> Result<Option<u64>, ChainError> {
    match parameters.get(name) {
        None => Ok(None),
        Some(Value::Number(number)) => number.as_u64().map(Some).ok_or_else(|| missing(name)),
        Some(Value::String(text)) => text.parse().map(Some).map_err(|_| missing(name)),
        Some(_) => Err(missing(name)),
    }
}

fn signed_count(parameters: &Map<String, Value>, name: &str) -> Result<i64, ChainError> {
    match parameters.get(name) {
        Some(Value::Number(number)) => number.as_i64().ok_or_else(|| missing(name)),
        Some(Value::String(text)) => text.parse().map_err(|_| missing(name)),
        _ => Err(missing(name)),
    }
}

fn decimal(parameters: &Map<String, Value>, name: &str) -> Result<u64, ChainError> {
    count(parameters, name)?.ok_or_else(|| missing(name))
}

fn address(parameters: &Map<String, Value>) -> Result<Destination, ChainError> {
    parameters
        .get("address")
        .and_then(Value::as_str)
        .and_then(|text| Destination::from_b58check(text).ok())
        .ok_or_else(|| missing("address"))
}

fn implicit(parameters: &Map<String, Value>) -> Result<PublicKeyHash, ChainError> {
    match address(parameters)? {
        Destination::Implicit(account) => Ok(account),
        _ => Err(ChainError::Unknown(
            "only implicit accounts sign operations".into(),
        )),
    }
}

/// `timestamp` as seconds since the epoch: a number, or an RFC 3339 date as headers show.
fn timestamp(parameters: &Map<String, Value>) -> Result<i64, ChainError> {
    match parameters.get("timestamp") {
        Some(Value::Number(number)) => number.as_i64().ok_or_else(|| missing("timestamp")),
        Some(Value::String(text)) => match text.parse::<i64>() {
            Ok(seconds) => Ok(seconds),
            Err(_) => Timestamp::from_rfc3339(text)
                .map(|timestamp| timestamp.0)
                .ok_or_else(|| missing("timestamp")),
        },
        _ => Err(missing("timestamp")),
    }
}

fn rfc3339(seconds: i64) -> Option<String> {
    Timestamp(seconds).to_rfc3339()
}
