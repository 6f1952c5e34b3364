//! `helpers/scripts/…` on Michelson: `typecheck_data`, `pack_data` (as Taquito's big map reads
//! ask: `{data, type, gas?}` → `{packed, gas}`) and `normalize_data` on data that names no
//! stored state; `run_script_view` runs an on-chain view at head (`{contract, view, input, …}` →
//! `{data}`).

use kestrel_micheline::Node;
use kestrel_michelson::{
    pack_metered, typecheck_data_metered, typecheck_type, CodeContext, EmptyHost, Environment,
    HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use serde_json::{json, Value};

use super::{error, Response};
use crate::chain::Chain;
use crate::views::{run_view, ViewBlock, ViewError, ViewRequest};
use kestrel_crypto::{ContractHash, Destination, PublicKeyHash};

/// The error id of a view that cannot run (`Script_tc_errors`' `michelson_v1.runtime_error`).
const RUNTIME_ERROR_ID: &str = "michelson_v1.runtime_error";

/// The error id of data that does not typecheck (`Script_tc_errors.Ill_typed_data`).
const ILL_TYPED_DATA_ID: &str = "michelson_v1.ill_typed_data";

/// What a data RPC answers.
#[derive(Clone, Copy)]
pub enum DataRpc {
    /// `typecheck_data`: `{gas}`.
    Typecheck,
    /// `pack_data`: `{packed, gas}`.
    Pack,
    /// `normalize_data`: `{normalized}`.
    Normalize,
}

pub fn data_rpc(rpc: DataRpc, body: &Value) -> Response {
    match data_answer(rpc, body) {
        Ok(answer) => Response::json(answer.to_string()),
        Err(message) => error::protocol_error(ILL_TYPED_DATA_ID, &message),
    }
}

fn micheline(body: &Value, field: &str) -> Result<Node, String> {
    let value = body
        .get(field)
        .ok_or_else(|| format!("missing field \"{field}\""))?;
    kestrel_micheline::json::from_json_str(&value.to_string()).map_err(|e| format!("{field}: {e}"))
}

/// Typechecks `data` against `type` with no stored state; the value and the milligas used.
fn typed_data(body: &Value) -> Result<(kestrel_michelson::Value, u64), String> {
    let data = micheline(body, "data")?;
    let ty_node = micheline(body, "type")?;
    let legacy = body.get("legacy").and_then(Value::as_bool).unwrap_or(false);
    let (ty, type_milligas) = typecheck_type(&ty_node, legacy).map_err(|e| e.to_string())?;
    let environment = Environment::default();
    let self_parameter = Node::prim(kestrel_micheline::PrimName::new("unit"), Vec::new());
    let mut host = EmptyHost::default();
    let context = CodeContext {
        environment: &environment,
        self_parameter: &self_parameter,
        host: &mut host,
        legacy,
    };
    let (value, data_milligas) =
        typecheck_data_metered(&data, &ty, &context).map_err(|e| e.to_string())?;
    Ok((value, type_milligas.saturating_add(data_milligas)))
}

/// The gas left of an operation's, in gas units, as Octez writes it.
fn remaining_gas(used_milligas: u64) -> String {
    (HARD_GAS_LIMIT_PER_OPERATION_MILLI.saturating_sub(used_milligas) / 1000).to_string()
}

fn data_answer(rpc: DataRpc, body: &Value) -> Result<Value, String> {
    let (value, milligas) = typed_data(body)?;
    Ok(match rpc {
        DataRpc::Typecheck => json!({ "gas": remaining_gas(milligas) }),
        DataRpc::Pack => {
            let (packed, pack_milligas) = pack_metered(&value).map_err(|e| e.to_string())?;
            json!({
                "packed": hex::encode(packed),
                "gas": remaining_gas(milligas.saturating_add(pack_milligas)),
            })
        }
        DataRpc::Normalize => {
            let node = kestrel_michelson::normalize(&value, unparsing_mode(body));
            let normalized: Value =
                serde_json::from_str(&kestrel_micheline::json::to_json_string(&node))
                    .map_err(|e| e.to_string())?;
            json!({ "normalized": normalized })
        }
    })
}

/// The body's `unparsing_mode` (Readable unless said).
fn unparsing_mode(body: &Value) -> kestrel_michelson::UnparsingMode {
    match body.get("unparsing_mode").and_then(Value::as_str) {
        Some("Optimized") => kestrel_michelson::UnparsingMode::Optimized,
        Some("Optimized_legacy") => kestrel_michelson::UnparsingMode::OptimizedLegacy,
        _ => kestrel_michelson::UnparsingMode::Readable,
    }
}

pub fn run_script_view(chain: &Chain, body: &Value) -> Response {
    match script_view(chain, body) {
        Ok(data) => Response::json(json!({ "data": data }).to_string()),
        Err(ViewError::Ledger(ledger)) => error::chain_error(&ledger.into()),
        Err(view_error) => error::protocol_error(RUNTIME_ERROR_ID, &view_error.to_string()),
    }
}

fn script_view(chain: &Chain, body: &Value) -> Result<Value, ViewError> {
    let text = |field: &str| body.get(field).and_then(Value::as_str);
    let invalid = |what: &str| ViewError::Failed(format!("invalid or missing {what}"));
    let contract = text("contract")
        .and_then(|text| ContractHash::from_b58check(text).ok())
        .ok_or_else(|| invalid("contract"))?;
    let name = text("view").ok_or_else(|| invalid("view"))?;
    let input = micheline(body, "input").map_err(ViewError::Failed)?;
    let sender = text("source")
        .map(|text| Destination::from_b58check(text).map_err(|_| invalid("source")))
        .transpose()?;
    let payer = text("payer")
        .map(|text| PublicKeyHash::from_b58check(text).map_err(|_| invalid("payer")))
        .transpose()?;
    let number = |field: &str| -> Result<Option<i64>, ViewError> {
        text(field)
            .map(|text| text.parse::<i64>().map_err(|_| invalid(field)))
            .transpose()
    };
    let gas_limit_milli = match number("gas")? {
        Some(gas) => u64::try_from(gas)
            .ok()
            .and_then(|gas| gas.checked_mul(1000))
            .filter(|milli| *milli <= HARD_GAS_LIMIT_PER_OPERATION_MILLI)
            .ok_or_else(|| invalid("gas"))?,
        None => HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    };
    let level = number("level")?
        .map(|level| u64::try_from(level).map_err(|_| invalid("level")))
        .transpose()?;
    let head = chain.head();
    let result = run_view(
        chain.ledger(),
        &ViewRequest {
            contract: &contract,
            name,
            input: &input,
            sender: sender.as_ref(),
            payer: payer.as_ref(),
            gas_limit_milli,
            now_seconds: number("now")?,
            level,
        },
        &ViewBlock {
            level: u64::try_from(head.level()).unwrap_or(0) + 1,
            now_seconds: head.timestamp().0,
            chain_id: chain.chain_id(),
        },
    )?;
    let node = kestrel_michelson::normalize(&result, unparsing_mode(body));
    serde_json::from_str(&kestrel_micheline::json::to_json_string(&node))
        .map_err(|error| ViewError::Failed(error.to_string()))
}
