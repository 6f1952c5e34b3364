//! The script helpers of `…/helpers/scripts/…` (Octez's `lib_plugin/RPC.ml`, `Scripts`):
//! `run_code` and `trace_code` (a script run on a storage and a parameter against the head's
//! state), `run_view` (a TZIP-4 view entrypoint, called back through a viewer contract),
//! `run_script_view` (an on-chain view), `typecheck_code`, `typecheck_data`, `pack_data`,
//! `normalize_data`, `normalize_script`, `normalize_type`, `entrypoints` and `entrypoint`; and the
//! script reads of `…/context/contracts/<KT1>/…` that Octez serves as POSTs or per entrypoint:
//! `entrypoints/<name>`, `big_map_get`, `script/normalized` and `storage/normalized`.
//!
//! A run reads the chain through the protocol crate's [`LedgerHost`] over a copy of the head's
//! ledger, so a script sees real balances, contracts and big maps and nothing it does is kept.
//! As Octez does, a run without `self` runs as a dummy contract originated at the first address
//! of the zero operation hash's nonce, with the script, the storage and 4,000,000 tez; `SENDER`
//! defaults to `self` and `SOURCE` to the zero key hash; `NOW` and `LEVEL` are those of the next
//! block (the head's time plus `minimal_block_delay`, the head's level plus one).
//!
//! Octez's `other_contracts` and `extra_big_maps` (a run against contracts and big maps that do
//! not exist) are refused when not empty. Gas answers follow `Gas.encoding`: the milligas left
//! of the request's `gas` (gas units), or `"unaccounted"` when the request gives none.
//! `typecheck_code` answers an empty `type_map`: Kestrel's typechecker does not record the stack
//! at each instruction.

use kestrel_crypto::{ChainId, ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::{Node, NodeKind, Prim};
use kestrel_michelson::{
    execute_traced, normalize, typecheck_data_standalone, typecheck_type, Address, Call,
    CodeContext, Config, Environment, Execution, ExecutionError, NoTrace, Script, TraceRecorder,
    Tracer, Type, TypecheckError, UnparsingMode, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use kestrel_protocol::apply::{
    apply_big_map_diff, emitted_operation, ApplyError, OriginationNonce,
};
use kestrel_protocol::host::{vm_destination, LedgerHost};
use kestrel_protocol::{Field, Ledger, LedgerError};
use serde_json::{json, Value};

use super::{error, Response};
use crate::chain::Chain;
use crate::views::{run_view, ViewBlock, ViewError, ViewRequest, ZERO_KEY_HASH};

/// `run_code`'s balance of the dummy contract when the request gives none: 4,000,000 tez
/// (`RPC.ml`, `default_balance`).
const DEFAULT_RUN_BALANCE_MUTEZ: u64 = 4_000_000_000_000;

/// `Script_interpreter`'s error wrapping a run's failure (`Runtime_contract_error`).
const RUNTIME_ERROR_ID: &str = "michelson_v1.runtime_error";
/// `Script_tc_errors.Ill_typed_contract`.
const ILL_TYPED_CONTRACT_ID: &str = "michelson_v1.ill_typed_contract";
/// `Script_tc_errors.Ill_typed_data`.
const ILL_TYPED_DATA_ID: &str = "michelson_v1.ill_typed_data";
/// `Script_tc_errors.Ill_formed_type`.
const ILL_FORMED_TYPE_ID: &str = "michelson_v1.ill_formed_type";
/// `View_helpers.View_never_returns`: the TZIP-4 view emitted no call to the viewer.
const VIEW_NEVER_RETURNS_ID: &str = "viewNeverReturns";
/// `View_helpers.Viewed_contract_has_no_script`.
const VIEWED_CONTRACT_HAS_NO_SCRIPT_ID: &str = "viewedContractHasNoScript";
/// `View_helpers.Illformed_view_type`: the entrypoint's type is not `pair _ (contract _)`.
const ILLFORMED_VIEW_TYPE_ID: &str = "illformedViewType";
/// `Script_tc_errors.No_such_entrypoint`.
const NO_SUCH_ENTRYPOINT_ID: &str = "michelson_v1.no_such_entrypoint";

/// Most annotated branches an entrypoint listing visits (a parameter type has at most
/// `michelson_maximum_type_size` = 2001 nodes).
const MAX_PARAMETER_TYPE_NODES: usize = 2_001;

/// Data of the wrong type: why, the type expected and the expression.
#[derive(Debug)]
struct IllTypedData {
    error: TypecheckError,
    expected_type: Node,
    expression: Node,
}

/// Why a script RPC has no answer; each variant is one of Octez's error answers.
#[derive(Debug)]
enum ScriptRpcError {
    /// The body lacks a field or a field does not parse (HTTP 400, as Octez's body parsing).
    BadRequest(String),
    /// A type that does not parse (`ill_formed_type`).
    IllFormedType(TypecheckError),
    /// A script that does not typecheck (`ill_typed_contract`).
    IllTypedContract(TypecheckError),
    /// Data of the wrong type (`ill_typed_data`, with the expected type and the expression).
    IllTypedData(Box<IllTypedData>),
    /// The run failed: `runtime_error` for `contract`, then the failure (`script_rejected` with
    /// `location` and `with`, gas exhaustion, …).
    Execution {
        contract: ContractHash,
        error: ExecutionError,
    },
    /// An error of the protocol with only an id (no other field).
    Protocol(&'static str, String),
    /// The state could not be read.
    Ledger(LedgerError),
}

impl From<LedgerError> for ScriptRpcError {
    fn from(error: LedgerError) -> ScriptRpcError {
        ScriptRpcError::Ledger(error)
    }
}

impl ScriptRpcError {
    fn into_response(self) -> Response {
        let with_message = |id: &str, message: String| -> Value {
            json!({"kind": "permanent", "id": format!("{}{id}", kestrel_protocol::apply::ERROR_ID_PREFIX), "msg": message})
        };
        let errors = match self {
            ScriptRpcError::BadRequest(message) => return error::bad_request(&message),
            ScriptRpcError::Ledger(ledger) => return error::chain_error(&ledger.into()),
            ScriptRpcError::IllFormedType(error) => {
                vec![with_message(ILL_FORMED_TYPE_ID, error.to_string())]
            }
            ScriptRpcError::IllTypedContract(error) => {
                vec![with_message(ILL_TYPED_CONTRACT_ID, error.to_string())]
            }
            ScriptRpcError::IllTypedData(ill_typed) => {
                let IllTypedData {
                    error,
                    expected_type,
                    expression,
                } = *ill_typed;
                let mut object = with_message(ILL_TYPED_DATA_ID, error.to_string());
                object["expected_type"] = micheline_json(&expected_type);
                object["ill_typed_expression"] = micheline_json(&expression);
                vec![object]
            }
            ScriptRpcError::Execution { contract, error } => {
                let runtime = json!({
                    "kind": "temporary",
                    "id": format!("{}{RUNTIME_ERROR_ID}", kestrel_protocol::apply::ERROR_ID_PREFIX),
                    "contract_handle": contract.to_b58check(),
                    "contract_code": "Deprecated",
                });
                std::iter::once(runtime)
                    .chain(
                        ApplyError::Execution(error)
                            .to_protocol_errors()
                            .iter()
                            .map(kestrel_protocol::ProtocolError::to_json_value),
                    )
                    .collect()
            }
            ScriptRpcError::Protocol(id, message) => vec![with_message(id, message)],
        };
        error::protocol_errors(errors)
    }
}

/// JSON text. Answers holding Micheline are written by hand: Micheline may nest deeper than
/// `serde_json`'s parser accepts (128 levels), and a value read back as `null` would be a wrong
/// answer.
struct Json(String);

impl Json {
    /// Micheline, in its JSON form.
    fn micheline(node: &Node) -> Json {
        Json(kestrel_micheline::json::to_json_string(node))
    }

    /// A JSON value that holds no Micheline.
    fn value(value: Value) -> Json {
        Json(value.to_string())
    }

    /// `{"key": value, …}`.
    fn object(fields: &[(&str, Json)]) -> Json {
        let members: Vec<String> = fields
            .iter()
            .map(|(key, value)| format!("{}:{}", Value::from(*key), value.0))
            .collect();
        Json(format!("{{{}}}", members.join(",")))
    }

    /// `[item, …]`.
    fn array(items: Vec<Json>) -> Json {
        let items: Vec<String> = items.into_iter().map(|item| item.0).collect();
        Json(format!("[{}]", items.join(",")))
    }
}

type Answer = Result<Json, ScriptRpcError>;

/// Answers `helpers/scripts/<name>`; `None` when this module does not serve `name`.
pub fn helpers(chain: &Chain, name: &str, body: &Value) -> Option<Response> {
    if let Some(field) = unsupported_field(body) {
        return Some(error::bad_request(&format!(
            "\"{field}\" is not supported: Kestrel runs scripts against the chain's own contracts and big maps"
        )));
    }
    let answer = match name {
        "run_code" => run_code(chain, body, false),
        "trace_code" => run_code(chain, body, true),
        "run_view" => run_tzip4_view(chain, body),
        "run_script_view" => run_script_view(chain, body),
        "typecheck_code" => typecheck_code(body),
        "typecheck_data" => typecheck_data(body),
        "pack_data" => pack_data(body),
        "normalize_data" => normalize_data(body),
        "normalize_script" => normalize_script(body),
        "normalize_type" => normalize_type(body),
        "entrypoints" => micheline(body, "script").map(|script| Json(entrypoints_json(&script))),
        "entrypoint" => script_entrypoint_type(body),
        _ => return None,
    };
    Some(respond(answer))
}

/// Answers a POST to `context/contracts/<id>/<rest>` (`big_map_get`, `script/normalized`,
/// `storage/normalized`); `None` when this module does not serve it.
pub fn contract_post(chain: &Chain, id: &str, rest: &[&str], body: &[u8]) -> Option<Response> {
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return Some(error::bad_request("the body is not JSON"));
    };
    let contract = match Destination::from_b58check(id) {
        Ok(Destination::Originated(contract)) => Some(contract),
        Ok(_) => None,
        Err(_) => return Some(error::not_found()),
    };
    let answer = match rest {
        ["big_map_get"] => match contract {
            Some(contract) => big_map_get(chain.ledger(), &contract, &body),
            None => Ok(Json::value(Value::Null)),
        },
        ["script", "normalized"] | ["storage", "normalized"] => {
            let Some(contract) = contract else {
                return Some(error::not_found());
            };
            let whole_script = rest[0] == "script";
            match normalized_script(chain.ledger(), &contract, &body, whole_script) {
                Ok(None) => return Some(error::not_found()),
                Ok(Some(value)) => Ok(value),
                Err(error) => Err(error),
            }
        }
        _ => return None,
    };
    Some(respond(answer))
}

/// `GET context/contracts/<KT1>/entrypoints/<name>`: the entrypoint's type as the script writes
/// it; 404 when the contract or the entrypoint does not exist.
pub fn contract_entrypoint(ledger: &Ledger, id: &str, name: &str) -> Response {
    let Ok(Destination::Originated(contract)) = Destination::from_b58check(id) else {
        return error::not_found();
    };
    match ledger.script(&contract) {
        Ok(Some(code)) => match entrypoint_type(&code, name) {
            Some(ty) => Response::json(Json::micheline(&ty).0),
            None => error::not_found(),
        },
        Ok(None) => error::not_found(),
        Err(ledger) => error::chain_error(&ledger.into()),
    }
}

/// A field of Octez's that would make the run see contracts or big maps that do not exist
/// (`other_contracts`, `extra_big_maps`), when given and not empty: refused rather than ignored.
fn unsupported_field(body: &Value) -> Option<&'static str> {
    ["other_contracts", "extra_big_maps"]
        .into_iter()
        .find(|field| {
            body.get(field)
                .and_then(Value::as_array)
                .is_some_and(|list| !list.is_empty())
        })
}

fn respond(answer: Answer) -> Response {
    match answer {
        Ok(json) => Response::json(json.0),
        Err(error) => error.into_response(),
    }
}

/// The body's field `field` as Micheline.
fn micheline(body: &Value, field: &str) -> Result<Node, ScriptRpcError> {
    let value = body
        .get(field)
        .ok_or_else(|| ScriptRpcError::BadRequest(format!("missing field \"{field}\"")))?;
    kestrel_micheline::json::from_json_str(&value.to_string())
        .map_err(|error| ScriptRpcError::BadRequest(format!("{field}: {error}")))
}

/// Micheline as a JSON value, for an error's details (`null` past `serde_json`'s depth limit;
/// answers use [`Json::micheline`]).
fn micheline_json(node: &Node) -> Value {
    serde_json::from_str(&kestrel_micheline::json::to_json_string(node)).unwrap_or(Value::Null)
}

fn text<'b>(body: &'b Value, field: &str) -> Option<&'b str> {
    body.get(field).and_then(Value::as_str)
}

fn bad_field(field: &str) -> ScriptRpcError {
    ScriptRpcError::BadRequest(format!("invalid field \"{field}\""))
}

/// A decimal number written as a JSON string (Octez's `Z`/`N`) or a JSON number.
fn number(body: &Value, field: &str) -> Result<Option<i64>, ScriptRpcError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => text.parse().map(Some).map_err(|_| bad_field(field)),
        Some(Value::Number(number)) => number.as_i64().map(Some).ok_or_else(|| bad_field(field)),
        Some(_) => Err(bad_field(field)),
    }
}

/// The body's `unparsing_mode` (Readable unless said).
fn unparsing_mode(body: &Value) -> UnparsingMode {
    match text(body, "unparsing_mode") {
        Some("Optimized") => UnparsingMode::Optimized,
        Some("Optimized_legacy") => UnparsingMode::OptimizedLegacy,
        _ => UnparsingMode::Readable,
    }
}

fn legacy(body: &Value) -> bool {
    body.get("legacy").and_then(Value::as_bool).unwrap_or(false)
}

/// The request's `gas` (gas units) in milligas, at most the operation limit; `None` when absent.
fn gas_limit_milli(body: &Value) -> Result<Option<u64>, ScriptRpcError> {
    number(body, "gas")?
        .map(|gas| {
            u64::try_from(gas)
                .ok()
                .and_then(|gas| gas.checked_mul(1000))
                .map(|milli| milli.min(HARD_GAS_LIMIT_PER_OPERATION_MILLI))
                .ok_or_else(|| bad_field("gas"))
        })
        .transpose()
}

/// `Gas.encoding` of what is left: milligas as a decimal string, or `"unaccounted"` without a
/// limit.
fn gas_level(limit_milli: Option<u64>, used_milli: u64) -> Value {
    match limit_milli {
        Some(limit) => Value::from(limit.saturating_sub(used_milli).to_string()),
        None => Value::from("unaccounted"),
    }
}

fn parse_type(node: &Node, legacy: bool) -> Result<(Type, u64), ScriptRpcError> {
    typecheck_type(node, legacy).map_err(ScriptRpcError::IllFormedType)
}

/// `data` typechecked against `ty_node`, with the milligas both cost.
fn typed_data(
    data: &Node,
    ty_node: &Node,
    legacy: bool,
) -> Result<(kestrel_michelson::Value, u64), ScriptRpcError> {
    let (ty, type_milli) = parse_type(ty_node, legacy)?;
    let (value, data_milli) = typecheck_data_standalone(data, &ty, legacy).map_err(|error| {
        ScriptRpcError::IllTypedData(Box::new(IllTypedData {
            error,
            expected_type: ty_node.clone(),
            expression: data.clone(),
        }))
    })?;
    Ok((value, type_milli.saturating_add(data_milli)))
}

/// `typecheck_data`: `{data, type, gas?, legacy?}` → `{gas}`.
fn typecheck_data(body: &Value) -> Answer {
    let limit = gas_limit_milli(body)?;
    let (_, used) = typed_data(
        &micheline(body, "data")?,
        &micheline(body, "type")?,
        legacy(body),
    )?;
    Ok(Json::value(json!({ "gas": gas_level(limit, used) })))
}

/// `pack_data`: `{data, type, gas?}` → `{packed, gas}` (legacy types allowed, as Octez's
/// `pack_data_impl`).
fn pack_data(body: &Value) -> Answer {
    let limit = gas_limit_milli(body)?;
    let (value, used) = typed_data(&micheline(body, "data")?, &micheline(body, "type")?, true)?;
    let (packed, pack_milli) = kestrel_michelson::pack_metered(&value)
        .map_err(|message| ScriptRpcError::Protocol(ILL_TYPED_DATA_ID, message.to_string()))?;
    Ok(Json::value(json!({
        "packed": hex::encode(packed),
        "gas": gas_level(limit, used.saturating_add(pack_milli)),
    })))
}

/// `normalize_data`: `{data, type, unparsing_mode, legacy?}` → `{normalized}`.
fn normalize_data(body: &Value) -> Answer {
    let (value, _) = typed_data(
        &micheline(body, "data")?,
        &micheline(body, "type")?,
        legacy(body),
    )?;
    let normalized = normalize(&value, unparsing_mode(body));
    Ok(Json::object(&[(
        "normalized",
        Json::micheline(&normalized),
    )]))
}

/// `normalize_type`: `{type}` → `{normalized}`: annotations dropped, right combs as nested
/// binary pairs (`Unparse_types.unparse_ty`).
fn normalize_type(body: &Value) -> Answer {
    let (ty, _) = parse_type(&micheline(body, "type")?, true)?;
    Ok(Json::object(&[(
        "normalized",
        Json::micheline(&binary_pairs(&ty.to_node())),
    )]))
}

/// `node` (a type) with every `pair a b c…` as `pair a (pair b c…)`, with no host recursion.
fn binary_pairs(node: &Node) -> Node {
    enum Step<'n> {
        Visit(&'n Node),
        Build(&'n Node, usize),
    }
    let mut steps = vec![Step::Visit(node)];
    let mut built: Vec<Node> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Visit(node) => match &node.kind {
                NodeKind::Prim { args, .. } if !args.is_empty() => {
                    steps.push(Step::Build(node, args.len()));
                    steps.extend(args.iter().rev().map(Step::Visit));
                }
                _ => built.push(node.clone()),
            },
            Step::Build(node, count) => {
                let args = built.split_off(built.len() - count);
                let NodeKind::Prim { name, annots, .. } = &node.kind else {
                    unreachable!("only primitives with arguments are built");
                };
                let is_pair = name.known() == Some(Prim::T_pair);
                let args = if is_pair && args.len() > 2 {
                    let mut args = args;
                    let mut right = args.pop().expect("a comb has arguments");
                    while args.len() > 1 {
                        let left = args.pop().expect("checked: more than one left");
                        right = Node::prim(Prim::T_pair, vec![left, right]);
                    }
                    args.push(right);
                    args
                } else {
                    args
                };
                built.push(Node {
                    kind: NodeKind::Prim {
                        name: name.clone(),
                        args,
                        annots: annots.clone(),
                    },
                    span: node.span,
                });
            }
        }
    }
    built.pop().expect("one node in, one node out")
}

/// `normalize_script`: `{script, unparsing_mode}` → `{normalized}`: the `PUSH`ed constants in
/// `unparsing_mode`.
fn normalize_script(body: &Value) -> Answer {
    let script = micheline(body, "script")?;
    let normalized = kestrel_michelson::normalize_code_in(&script, unparsing_mode(body));
    Ok(Json::object(&[(
        "normalized",
        Json::micheline(&normalized),
    )]))
}

/// `typecheck_code`: `{program, gas?, legacy?, show_types?}` → `{type_map, gas}`.
fn typecheck_code(body: &Value) -> Answer {
    let limit = gas_limit_milli(body)?;
    let program = micheline(body, "program")?;
    let config = Config {
        legacy: legacy(body),
        gas_limit_milli: limit.unwrap_or(HARD_GAS_LIMIT_PER_OPERATION_MILLI),
    };
    let script = Script::typecheck(&program, &config).map_err(ScriptRpcError::IllTypedContract)?;
    Ok(Json::value(
        json!({ "type_map": [], "gas": gas_level(limit, script.typecheck_gas_milli()) }),
    ))
}

/// The parameter type of `code` (a script's toplevel sequence).
fn parameter_type(code: &Node) -> Option<&Node> {
    toplevel_field(code, Prim::K_parameter)
}

fn toplevel_field(code: &Node, field: Prim) -> Option<&Node> {
    code.children()
        .iter()
        .find_map(|section| match &section.kind {
            NodeKind::Prim { name, args, .. } if name.known() == Some(field) => args.first(),
            _ => None,
        })
}

/// `{"entrypoints": {name: type}}` of `code` (the `entrypoints` RPCs' answer).
pub fn entrypoints_json(code: &Node) -> String {
    let types: Vec<(String, Node)> = entrypoint_types(code);
    let fields: Vec<(&str, Json)> = types
        .iter()
        .map(|(name, ty)| (name.as_str(), Json::micheline(ty)))
        .collect();
    Json::object(&[("entrypoints", Json::object(&fields))]).0
}

/// Each entrypoint of `code` with its type as written (field annotation removed), found by a
/// walk of the parameter's `or` tree.
fn entrypoint_types(code: &Node) -> Vec<(String, Node)> {
    let mut found: Vec<(String, Node)> = Vec::new();
    let mut pending: Vec<&Node> = parameter_type(code).into_iter().collect();
    let mut visited = 0;
    while let Some(node) = pending.pop() {
        visited += 1;
        if visited > MAX_PARAMETER_TYPE_NODES {
            break;
        }
        let NodeKind::Prim { name, args, annots } = &node.kind else {
            continue;
        };
        if let Some(field) = annots.iter().find_map(|annot| annot.strip_prefix('%')) {
            let mut stripped = node.clone();
            if let NodeKind::Prim { annots, .. } = &mut stripped.kind {
                annots.retain(|annot| !annot.starts_with('%'));
            }
            if !found.iter().any(|(name, _)| name == field) {
                found.push((field.to_string(), stripped));
            }
        }
        if name.known() == Some(Prim::T_or) {
            pending.extend(args.iter().rev());
        }
    }
    found
}

/// The type of entrypoint `name` of `code`: a named branch, or the whole parameter for
/// `default` when no branch is named so.
fn entrypoint_type(code: &Node, name: &str) -> Option<Node> {
    if let Some((_, ty)) = entrypoint_types(code)
        .into_iter()
        .find(|(field, _)| field == name)
    {
        return Some(ty);
    }
    (name == "default")
        .then(|| parameter_type(code).cloned())
        .flatten()
}

/// `entrypoint`: `{script, entrypoint?}` → `{entrypoint_type}`.
fn script_entrypoint_type(body: &Value) -> Answer {
    let script = micheline(body, "script")?;
    let name = text(body, "entrypoint").unwrap_or("default");
    let ty = entrypoint_type(&script, name).ok_or_else(|| {
        ScriptRpcError::Protocol(NO_SUCH_ENTRYPOINT_ID, format!("no entrypoint {name}"))
    })?;
    Ok(Json::object(&[("entrypoint_type", Json::micheline(&ty))]))
}

/// The block a simulated run happens in: the one after the head.
struct NextBlock {
    level: u64,
    now_seconds: i64,
    minimal_block_delay_seconds: u64,
    chain_id: ChainId,
}

impl NextBlock {
    fn of(chain: &Chain) -> NextBlock {
        let head = chain.head();
        let delay = chain.ledger().constants().minimal_block_delay_seconds;
        NextBlock {
            level: u64::try_from(head.level()).unwrap_or(0) + 1,
            now_seconds: head
                .timestamp()
                .0
                .saturating_add(i64::try_from(delay).unwrap_or(i64::MAX)),
            minimal_block_delay_seconds: delay,
            chain_id: chain.chain_id(),
        }
    }
}

/// `now` as Octez's `Script_timestamp.encoding` reads it: seconds, or an RFC 3339 date.
fn timestamp(body: &Value) -> Result<Option<i64>, ScriptRpcError> {
    match body.get("now") {
        Some(Value::String(text))
            if !text
                .bytes()
                .all(|byte| byte.is_ascii_digit() || byte == b'-') =>
        {
            kestrel_michelson::timestamp_from_rfc3339(text)
                .and_then(|seconds| seconds.to_i64())
                .map(Some)
                .ok_or_else(|| bad_field("now"))
        }
        _ => number(body, "now"),
    }
}

fn address(destination: &Destination) -> Address {
    Address::new(vm_destination(destination))
}

/// `SENDER` and `SOURCE` from the body's `source` and `payer` (`RPC.ml`, `sender_and_payer`).
fn sender_and_payer(
    body: &Value,
    default_sender: &Destination,
) -> Result<(Destination, PublicKeyHash), ScriptRpcError> {
    let sender = text(body, "source")
        .map(|text| Destination::from_b58check(text).map_err(|_| bad_field("source")))
        .transpose()?;
    let payer = text(body, "payer")
        .map(|text| PublicKeyHash::from_b58check(text).map_err(|_| bad_field("payer")))
        .transpose()?;
    let zero = PublicKeyHash::from_b58check(ZERO_KEY_HASH).expect("the zero key hash is valid");
    Ok(match (sender, payer) {
        (None, None) => (*default_sender, zero),
        (Some(sender), None) => (sender, zero),
        (None, Some(payer)) => (Destination::Implicit(payer), payer),
        (Some(sender), Some(payer)) => (sender, payer),
    })
}

/// What a simulated call of a script needs besides the script.
struct RunContext {
    environment: Environment,
    self_contract: ContractHash,
    ledger: Ledger,
    nonce: OriginationNonce,
    gas_limit_milli: u64,
}

impl RunContext {
    /// Runs `call` of `script` as the context's contract, reporting steps to `tracer`.
    fn execute<T: Tracer>(
        &mut self,
        script: &Script,
        call: &Call<'_>,
        tracer: &mut T,
    ) -> Result<Execution, ScriptRpcError> {
        let mut host = LedgerHost::new(&mut self.ledger, &mut self.nonce);
        let result = execute_traced(
            script,
            call,
            &self.environment,
            &mut host,
            self.gas_limit_milli,
            tracer,
        );
        if let Some(ledger) = host.take_error() {
            return Err(ledger.into());
        }
        result.map_err(|error| ScriptRpcError::Execution {
            contract: self.self_contract,
            error,
        })
    }
}

/// The environment of a run of `code` with `storage` as the body of `run_code` (or
/// `run_view`) describes it: the dummy contract originated on a copy of the ledger when the body
/// names no `self`.
fn run_context(
    chain: &Chain,
    body: &Value,
    code: &Node,
    storage: &Node,
    amount_mutez: u64,
) -> Result<RunContext, ScriptRpcError> {
    let block = NextBlock::of(chain);
    let mut ledger = chain.ledger().clone();
    let mut nonce = OriginationNonce::new([0; 32]);
    let balance = number(body, "balance")?
        .map(|balance| u64::try_from(balance).map_err(|_| bad_field("balance")))
        .transpose()?;
    let (self_contract, balance) = match text(body, "self") {
        Some(text) => {
            let contract = ContractHash::from_b58check(text).map_err(|_| bad_field("self"))?;
            let balance = match balance {
                Some(balance) => balance,
                None => ledger.balance(&Destination::Originated(contract))?,
            };
            (contract, balance)
        }
        None => {
            let contract = nonce.next_contract();
            let balance = balance.unwrap_or(DEFAULT_RUN_BALANCE_MUTEZ);
            ledger.set_script(&contract, code)?;
            ledger.set_storage(&contract, storage)?;
            ledger.set_balance(&Destination::Originated(contract), balance)?;
            (contract, balance)
        }
    };
    let chain_id = match text(body, "chain_id") {
        Some(text) => ChainId::from_b58check(text).map_err(|_| bad_field("chain_id"))?,
        None => block.chain_id,
    };
    let self_destination = Destination::Originated(self_contract);
    let (sender, payer) = sender_and_payer(body, &self_destination)?;
    let level = number(body, "level")?
        .map(|level| u64::try_from(level).map_err(|_| bad_field("level")))
        .transpose()?;
    let to_mutez = |mutez: u64, field: &str| i64::try_from(mutez).map_err(|_| bad_field(field));
    let environment = Environment {
        amount_mutez: to_mutez(amount_mutez, "amount")?,
        balance_mutez: to_mutez(balance, "balance")?,
        now_seconds: timestamp(body)?.unwrap_or(block.now_seconds),
        level: level.unwrap_or(block.level),
        min_block_time_seconds: block.minimal_block_delay_seconds,
        source: address(&Destination::Implicit(payer)),
        sender: address(&sender),
        self_address: address(&self_destination),
        chain_id: *chain_id.as_bytes(),
    };
    Ok(RunContext {
        environment,
        self_contract,
        ledger,
        nonce,
        gas_limit_milli: gas_limit_milli(body)?.unwrap_or(HARD_GAS_LIMIT_PER_OPERATION_MILLI),
    })
}

/// `run_code` and `trace_code`: `{script, storage, input, amount, chain_id, balance?, source?,
/// payer?, self?, entrypoint?, unparsing_mode?, gas?, now?, level?}` → `{storage, operations,
/// trace?, lazy_storage_diff?}`.
fn run_code(chain: &Chain, body: &Value, trace: bool) -> Answer {
    let code = micheline(body, "script")?;
    let storage = micheline(body, "storage")?;
    let input = micheline(body, "input")?;
    let amount = number(body, "amount")?
        .and_then(|amount| u64::try_from(amount).ok())
        .ok_or_else(|| bad_field("amount"))?;
    let mode = unparsing_mode(body);
    let mut run = run_context(chain, body, &code, &storage, amount)?;
    // `Script_interpreter.execute` parses every script it runs in legacy mode.
    let config = Config {
        legacy: true,
        gas_limit_milli: run.gas_limit_milli,
    };
    let script = Script::typecheck(&code, &config).map_err(ScriptRpcError::IllTypedContract)?;
    let call = Call {
        entrypoint: text(body, "entrypoint").unwrap_or("default"),
        parameter: &input,
        storage: &storage,
    };
    let mut recorder = TraceRecorder::new(run.gas_limit_milli);
    let execution = if trace {
        run.execute(&script, &call, &mut recorder)?
    } else {
        run.execute(&script, &call, &mut NoTrace)?
    };
    let sender = Destination::Originated(run.self_contract);
    let written = |result: Result<(), kestrel_protocol::JsonError>, json: String| {
        result
            .map(|()| Json(json))
            .map_err(|error| ScriptRpcError::Protocol(RUNTIME_ERROR_ID, error.to_string()))
    };
    let operations = execution
        .operations
        .iter()
        .map(|operation| {
            let mut json = String::new();
            let result = emitted_operation(sender, operation).write_json(&mut json);
            written(result, json)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut fields = vec![
        (
            "storage",
            Json::micheline(&normalize(&execution.storage, mode)),
        ),
        ("operations", Json::array(operations)),
    ];
    if trace {
        let steps = recorder
            .into_steps()
            .into_iter()
            .map(|step| {
                let stack = step
                    .stack
                    .iter()
                    .map(|value| Json::micheline(&normalize(value, mode)))
                    .collect();
                Json::object(&[
                    ("location", Json::value(Value::from(step.location))),
                    ("gas", Json::value(Value::from(step.gas_milli.to_string()))),
                    ("stack", Json::array(stack)),
                ])
            })
            .collect();
        fields.push(("trace", Json::array(steps)));
    }
    let applied = apply_big_map_diff(&mut run.ledger, &execution.big_map_diff)?;
    if let Some(diff) = applied.receipt {
        let mut json = String::new();
        let result = diff.write_json(&mut json);
        fields.push(("lazy_storage_diff", written(result, json)?));
    }
    Ok(Json::object(&fields))
}

/// `run_view` (TZIP-4): `{contract, entrypoint, input, chain_id, unparsing_mode, source?, payer?,
/// gas?, now?, level?}` → `{data}`: the entrypoint, of type `pair input (contract output)`,
/// called with `Pair input <viewer>`; the answer is what it sends the viewer.
fn run_tzip4_view(chain: &Chain, body: &Value) -> Answer {
    let contract = text(body, "contract")
        .and_then(|text| ContractHash::from_b58check(text).ok())
        .ok_or_else(|| bad_field("contract"))?;
    let entrypoint = text(body, "entrypoint").ok_or_else(|| bad_field("entrypoint"))?;
    let input = micheline(body, "input")?;
    let ledger = chain.ledger();
    let no_script =
        || ScriptRpcError::Protocol(VIEWED_CONTRACT_HAS_NO_SCRIPT_ID, contract.to_b58check());
    let code = ledger.script(&contract)?.ok_or_else(no_script)?;
    let storage = ledger.storage(&contract)?.ok_or_else(no_script)?;
    let illformed =
        || ScriptRpcError::Protocol(ILLFORMED_VIEW_TYPE_ID, format!("entrypoint {entrypoint}"));
    let view_type = entrypoint_type(&code, entrypoint).ok_or_else(|| {
        ScriptRpcError::Protocol(NO_SUCH_ENTRYPOINT_ID, format!("no entrypoint {entrypoint}"))
    })?;
    let output_type = match view_type.children() {
        [_, callback] if callback.known_prim() == Some(Prim::T_contract) => {
            callback.children().first().cloned().ok_or_else(illformed)?
        }
        _ => return Err(illformed()),
    };
    let mut run_body = body.clone();
    run_body["self"] = Value::from(contract.to_b58check());
    run_body["balance"] = Value::Null;
    let mut run = run_context(chain, &run_body, &code, &storage, 0)?;
    let viewer = run.nonce.next_contract();
    let viewer_code = kestrel_micheline::parse_toplevel(&format!(
        "parameter {}; storage unit; code {{ CDR; NIL operation; PAIR }}",
        kestrel_micheline::print::to_text_single_line(&output_type)
    ))
    .map_err(|_| illformed())?;
    run.ledger.set_script(&viewer, &viewer_code)?;
    run.ledger
        .set_storage(&viewer, &Node::prim(Prim::D_Unit, Vec::new()))?;
    let viewer_address = Node::string(Destination::Originated(viewer).to_b58check());
    let parameter = Node::prim(Prim::D_Pair, vec![input, viewer_address]);
    let config = Config {
        legacy: true,
        gas_limit_milli: run.gas_limit_milli,
    };
    let script = Script::typecheck(&code, &config).map_err(ScriptRpcError::IllTypedContract)?;
    let call = Call {
        entrypoint,
        parameter: &parameter,
        storage: &storage,
    };
    let execution = run.execute(&script, &call, &mut NoTrace)?;
    let viewer_vm = vm_destination(&Destination::Originated(viewer));
    let data = execution
        .operations
        .iter()
        .find_map(|operation| match operation {
            kestrel_michelson::InternalOperation::Transaction {
                destination,
                parameter,
                ..
            } if destination.destination == viewer_vm => Some(parameter.clone()),
            _ => None,
        });
    let data = data.ok_or_else(|| {
        ScriptRpcError::Protocol(VIEW_NEVER_RETURNS_ID, format!("entrypoint {entrypoint}"))
    })?;
    let data = normalize(&data, unparsing_mode(body));
    Ok(Json::object(&[("data", Json::micheline(&data))]))
}

/// `run_script_view`: `{contract, view, input, chain_id, unparsing_mode, unlimited_gas?, source?,
/// payer?, gas?, now?, level?}` → `{data}`.
fn run_script_view(chain: &Chain, body: &Value) -> Answer {
    let contract = text(body, "contract")
        .and_then(|text| ContractHash::from_b58check(text).ok())
        .ok_or_else(|| bad_field("contract"))?;
    let name = text(body, "view").ok_or_else(|| bad_field("view"))?;
    let input = micheline(body, "input")?;
    let (sender, payer) = sender_and_payer(body, &Destination::Originated(contract))?;
    let unlimited = body
        .get("unlimited_gas")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let gas_limit_milli = if unlimited {
        i64::MAX as u64
    } else {
        gas_limit_milli(body)?.unwrap_or(HARD_GAS_LIMIT_PER_OPERATION_MILLI)
    };
    let level = number(body, "level")?
        .map(|level| u64::try_from(level).map_err(|_| bad_field("level")))
        .transpose()?;
    let block = NextBlock::of(chain);
    let result = run_view(
        chain.ledger(),
        &ViewRequest {
            contract: &contract,
            name,
            input: &input,
            sender: Some(&sender),
            payer: Some(&payer),
            gas_limit_milli,
            now_seconds: timestamp(body)?,
            level,
        },
        &ViewBlock {
            level: block.level,
            now_seconds: block.now_seconds,
            chain_id: block.chain_id,
        },
    );
    match result {
        Ok(value) => {
            let data = normalize(&value, unparsing_mode(body));
            Ok(Json::object(&[("data", Json::micheline(&data))]))
        }
        Err(ViewError::Ledger(ledger)) => Err(ledger.into()),
        Err(ViewError::Execution(error)) => Err(ScriptRpcError::Execution { contract, error }),
        Err(ViewError::NoScript(message)) => Err(ScriptRpcError::Protocol(
            VIEWED_CONTRACT_HAS_NO_SCRIPT_ID,
            message,
        )),
        Err(other) => Err(ScriptRpcError::Protocol(
            RUNTIME_ERROR_ID,
            other.to_string(),
        )),
    }
}

/// The big map ids of a typed storage, in the order Octez collects them, with no host recursion.
fn big_map_ids(storage: &kestrel_michelson::Value) -> Vec<i64> {
    use kestrel_michelson::Value as V;
    let mut ids = Vec::new();
    let mut pending = vec![storage];
    while let Some(value) = pending.pop() {
        match value {
            V::BigMap(map) => ids.extend(map.id.as_ref().and_then(|id| id.to_i64())),
            V::Pair(pair) => {
                pending.push(&pair.1);
                pending.push(&pair.0);
            }
            V::Left(inner) | V::Right(inner) | V::Some(inner) => pending.push(inner),
            V::List(items) => pending.extend(items.iter()),
            V::Map(map) => {
                // Smallest key on top: popped first.
                let start = pending.len();
                pending.extend(map.values());
                pending[start..].reverse();
            }
            _ => {}
        }
    }
    ids
}

/// `big_map_get` (deprecated in Octez): `{key, type}` → the value bound to `key` in the
/// contract's only big map, `null` when absent or when the storage has no big map or several.
fn big_map_get(ledger: &Ledger, contract: &ContractHash, body: &Value) -> Answer {
    let key = micheline(body, "key")?;
    let key_type = micheline(body, "type")?;
    let (Some(code), Some(storage)) = (ledger.script(contract)?, ledger.storage(contract)?) else {
        return Ok(Json::value(Value::Null));
    };
    let (key_value, _) = typed_data(&key, &key_type, false)?;
    let (key_ty, _) = parse_type(&key_type, false)?;
    let key_hash = kestrel_michelson::big_map_key_hash(&key_value, &key_ty);
    let value = typed_storage(ledger, &code, &storage)?;
    let [id] = big_map_ids(&value)[..] else {
        return Ok(Json::value(Value::Null));
    };
    Ok(match ledger.big_map_get(id, &key_hash)? {
        Some(node) => Json::micheline(&node),
        None => Json::value(Value::Null),
    })
}

/// `script/normalized` (`{code, storage}`) or `storage/normalized` (the storage alone) in the
/// body's `unparsing_mode`; `None` for a contract without a script.
fn normalized_script(
    ledger: &Ledger,
    contract: &ContractHash,
    body: &Value,
    whole_script: bool,
) -> Result<Option<Json>, ScriptRpcError> {
    let (Some(code), Some(storage)) = (ledger.script(contract)?, ledger.storage(contract)?) else {
        return Ok(None);
    };
    let mode = unparsing_mode(body);
    let storage = normalize(&typed_storage(ledger, &code, &storage)?, mode);
    if !whole_script {
        return Ok(Some(Json::micheline(&storage)));
    }
    let code = kestrel_michelson::normalize_code_in(&code, mode);
    Ok(Some(Json::object(&[
        ("code", Json::micheline(&code)),
        ("storage", Json::micheline(&storage)),
    ])))
}

/// A contract's `storage` typechecked against the storage type of its `code`, its big maps read
/// from `ledger`.
fn typed_storage(
    ledger: &Ledger,
    code: &Node,
    storage: &Node,
) -> Result<kestrel_michelson::Value, ScriptRpcError> {
    let storage_type = toplevel_field(code, Prim::K_storage)
        .ok_or_else(|| ScriptRpcError::Protocol(ILL_TYPED_CONTRACT_ID, "no storage".into()))?;
    let (ty, _) = parse_type(storage_type, true)?;
    let mut copy = ledger.clone();
    let mut nonce = OriginationNonce::new([0; 32]);
    let mut host = LedgerHost::new(&mut copy, &mut nonce);
    let environment = Environment::default();
    let self_parameter = parameter_type(code)
        .cloned()
        .unwrap_or_else(|| Node::prim(Prim::T_unit, Vec::new()));
    let context = CodeContext {
        environment: &environment,
        self_parameter: &self_parameter,
        host: &mut host,
        legacy: true,
    };
    kestrel_michelson::typecheck_data_metered(storage, &ty, &context)
        .map(|(value, _)| value)
        .map_err(|error| {
            ScriptRpcError::IllTypedData(Box::new(IllTypedData {
                error,
                expected_type: storage_type.clone(),
                expression: storage.clone(),
            }))
        })
}
