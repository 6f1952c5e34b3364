//! `helpers/scripts/pack_data`: typechecks `data` against `type` and PACKs it, as Taquito's big
//! map reads ask (`{data, type, gas?}` → `{packed, gas}`).

use kestrel_micheline::Node;
use kestrel_michelson::{
    pack_metered, typecheck_data_metered, typecheck_type, CodeContext, EmptyHost, Environment,
    HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use serde_json::{json, Value};

use super::{error, Response};

/// The error id of data that does not typecheck (`Script_tc_errors.Ill_typed_data`).
const ILL_TYPED_DATA_ID: &str = "michelson_v1.ill_typed_data";

pub fn pack_data(body: &Value) -> Response {
    match pack(body) {
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

fn pack(body: &Value) -> Result<Value, String> {
    let data = micheline(body, "data")?;
    let ty_node = micheline(body, "type")?;
    let (ty, type_milligas) = typecheck_type(&ty_node, false).map_err(|e| e.to_string())?;
    let environment = Environment::default();
    let self_parameter = Node::prim(kestrel_micheline::PrimName::new("unit"), Vec::new());
    let mut host = EmptyHost::default();
    let context = CodeContext {
        environment: &environment,
        self_parameter: &self_parameter,
        host: &mut host,
        legacy: false,
    };
    let (value, data_milligas) =
        typecheck_data_metered(&data, &ty, &context).map_err(|e| e.to_string())?;
    let (packed, pack_milligas) = pack_metered(&value).map_err(|e| e.to_string())?;
    let remaining_milligas = HARD_GAS_LIMIT_PER_OPERATION_MILLI
        .saturating_sub(type_milligas)
        .saturating_sub(data_milligas)
        .saturating_sub(pack_milligas);
    Ok(json!({
        "packed": hex::encode(packed),
        "gas": (remaining_milligas / 1000).to_string(),
    }))
}
