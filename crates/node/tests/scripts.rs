//! The script helper RPCs through the router, against what octez-client recorded for the same
//! scripts and data: `trace_code` against `run script … --trace-stack` (final storage, every
//! step's location and consumed gas), a `FAILWITH` as `script_rejected`, `pack_data` against
//! `hash data` (bytes and gas left), `normalize_type` and `normalize_data` against `normalize type`
//! and `normalize data` in each unparsing mode; and the RPCs on an originated contract
//! (entrypoints, `run_code` reading its big map, views, `big_map_get`).

mod support;

use kestrel_micheline::{json, print, Node};
use kestrel_node::Chain;
use kestrel_testdata::{parse_session, Session};
use serde_json::{json as value, Value};
use support::{call, get_json, BOOTSTRAP1};

const SCRIPTS: &str = "/chains/main/blocks/head/helpers/scripts";

/// The recorded octez-client session at `path` under the test data, or `None` (reported) when
/// the data is absent, and a new chain in its own scratch directory to replay it on (bind them
/// in this order: the chain closes before its directory goes).
fn recorded_session_and_chain(
    path: &str,
    test: &str,
) -> Option<(Session, support::Scratch, Chain)> {
    let file = kestrel_testdata::require(path, test)?;
    let session = parse_session(&std::fs::read_to_string(file).expect("readable"));
    let scratch = support::Scratch::new(test);
    let chain = support::new_chain_in(&scratch);
    Some((session, scratch, chain))
}

/// The data and type of a recorded `… data DATA of type TYPE` command.
fn data_and_type(argv: &[String]) -> Option<(&str, &str)> {
    let at = argv.iter().position(|word| word == "data")?;
    Some((argv.get(at + 1)?, argv.get(at + 4)?))
}

/// Instructions whose results depend on the chain or the call (mockup's defaults differ from a
/// node's): a recorded run using one is not comparable.
const CONTEXT_DEPENDENT: &[&str] = &[
    "SENDER",
    "SOURCE",
    "SELF",
    "BALANCE",
    "NOW",
    "LEVEL",
    "CHAIN_ID",
    "AMOUNT",
    "CONTRACT",
    "CREATE_CONTRACT",
    "VOTING_POWER",
    "MIN_BLOCK_TIME",
    "IMPLICIT_ACCOUNT",
    "TRANSFER_TOKENS",
    "INDEX_ADDRESS",
];

fn post(chain: &mut Chain, rpc: &str, body: &Value) -> (u16, Value) {
    let response = call(
        chain,
        "POST",
        &format!("{SCRIPTS}/{rpc}"),
        &body.to_string(),
    );
    let answer = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    (response.status, answer)
}

fn to_json(node: &Node) -> Value {
    serde_json::from_str(&json::to_json_string(node)).expect("Micheline JSON")
}

fn one_line(answer: &Value) -> String {
    print::to_text_single_line(&json::from_json_str(&answer.to_string()).expect("Micheline"))
}

/// The recorded `storage` and trace (location, consumed milligas) of a successful run.
fn recorded_run(output: &str) -> Option<(String, Vec<(u64, i64)>)> {
    let rest = output.strip_prefix("storage\n")?;
    let (storage, rest) = rest.split_once("emitted operations")?;
    let storage = kestrel_micheline::parse_expression(storage.trim()).ok()?;
    let trace = rest
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- location: "))
        .map(|line| {
            let (location, gas) = line.split_once(" (just consumed gas: ")?;
            let gas = gas.trim_end_matches(')').replace('.', "");
            Some((location.parse().ok()?, gas.parse().ok()?))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((print::to_text_single_line(&storage), trace))
}

#[test]
fn trace_code_matches_recorded_run_script_traces() {
    let Some(dir) = kestrel_testdata::require(
        "michelson-regression/opcodes",
        "trace_code_matches_recorded_run_script_traces",
    ) else {
        return;
    };
    let scripts = kestrel_testdata::testdata_dir().join("michelson/opcodes");
    let scratch = support::Scratch::new("trace-code");
    let mut chain = support::new_chain_in(&scratch);
    let mut compared = 0;
    for file in kestrel_testdata::files_with_suffix(&dir, ".out") {
        let session = parse_session(&std::fs::read_to_string(&file).expect("readable"));
        for command in &session.commands {
            let argv = &command.argv;
            let Some(at) = argv.iter().position(|word| word == "script") else {
                continue;
            };
            let (Some(path), Some(storage), Some(input)) =
                (argv.get(at + 1), argv.get(at + 4), argv.get(at + 7))
            else {
                continue;
            };
            let Some(name) = path.strip_prefix("michelson_test_scripts/opcodes/") else {
                continue;
            };
            let Ok(source) = std::fs::read_to_string(scripts.join(name)) else {
                continue;
            };
            // Big map ids are the chain's: the mockup's bootstrap contracts hold ids 0 to 3.
            let chain_dependent = source.contains("big_map");
            if chain_dependent || CONTEXT_DEPENDENT.iter().any(|word| source.contains(word)) {
                continue;
            }
            let Some((expected_storage, expected_trace)) = recorded_run(&command.output) else {
                continue;
            };
            let parse = |text: &str| {
                kestrel_michelson::expand_macros(
                    &kestrel_micheline::parse_expression(text).expect("recorded data parses"),
                )
                .expect("expands")
            };
            let script = kestrel_michelson::expand_macros(
                &kestrel_micheline::parse_toplevel(&source).expect("script parses"),
            )
            .expect("expands");
            let body = value!({
                "script": to_json(&script), "storage": to_json(&parse(storage)),
                "input": to_json(&parse(input)), "amount": "50000",
                "chain_id": "NetXynUjJNZm7wi", "level": "1",
            });
            let (status, answer) = post(&mut chain, "trace_code", &body);
            assert_eq!(status, 200, "{}: {answer}", command.line);
            assert_eq!(
                one_line(&answer["storage"]),
                expected_storage,
                "{}",
                command.line
            );
            let trace: Vec<(u64, i64)> = answer["trace"]
                .as_array()
                .expect("a trace")
                .iter()
                .map(|step| {
                    let gas = step["gas"].as_str().and_then(|gas| gas.parse().ok());
                    (
                        step["location"].as_u64().expect("location"),
                        gas.expect("gas"),
                    )
                })
                .collect();
            assert_eq!(trace, expected_trace, "{}", command.line);
            compared += 1;
        }
    }
    println!("{compared} recorded runs compared");
    assert!(compared >= 100, "only {compared} recorded runs compared");
}

#[test]
fn a_failwith_answers_script_rejected_with_its_location_and_value() {
    let scratch = support::Scratch::new("rejected");
    let mut chain = support::new_chain_in(&scratch);
    let script = kestrel_micheline::parse_toplevel(
        "parameter nat; storage unit; code { CAR; PUSH nat 3; COMPARE; LT; IF { PUSH string \"too big\"; FAILWITH } { UNIT; NIL operation; PAIR } }",
    )
    .expect("parses");
    let body = |input: u64| {
        value!({"script": to_json(&script), "storage": {"prim": "Unit"},
            "input": {"int": input.to_string()}, "amount": "0", "chain_id": "NetXynUjJNZm7wi"})
    };
    let (status, answer) = post(&mut chain, "run_code", &body(2));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        value!({"storage": {"prim": "Unit"}, "operations": []})
    );

    let (status, answer) = post(&mut chain, "run_code", &body(7));
    assert_eq!(status, 500);
    let errors = answer.as_array().expect("an error list");
    assert_eq!(
        errors[0]["id"],
        "proto.025-PsUshuai.michelson_v1.runtime_error"
    );
    let rejected = &errors[1];
    assert_eq!(rejected["kind"], "temporary");
    assert_eq!(
        rejected["id"],
        "proto.025-PsUshuai.michelson_v1.script_rejected"
    );
    assert_eq!(rejected["with"], value!({"string": "too big"}));
    let location = rejected["location"].as_u64().expect("a location") as usize;
    let failing = kestrel_micheline::location::node_at(&script, location).expect("a node");
    assert_eq!(
        failing.known_prim(),
        Some(kestrel_micheline::Prim::I_FAILWITH)
    );

    let ill_typed = value!({"script": [{"prim": "parameter", "args": [{"prim": "nat"}]},
        {"prim": "storage", "args": [{"prim": "unit"}]},
        {"prim": "code", "args": [[{"prim": "CAR"}, {"prim": "NIL", "args": [{"prim": "operation"}]}, {"prim": "PAIR"}]]}],
        "storage": {"prim": "Unit"}, "input": {"int": "1"}, "amount": "0", "chain_id": "NetXynUjJNZm7wi"});
    let mut with_other_contracts = body(2);
    with_other_contracts["other_contracts"] =
        value!([{"address": "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi", "type": {"prim": "unit"}}]);
    assert_eq!(post(&mut chain, "run_code", &with_other_contracts).0, 400);

    let (status, answer) = post(&mut chain, "run_code", &ill_typed);
    assert_eq!(status, 500);
    assert_eq!(
        answer[0]["id"],
        "proto.025-PsUshuai.michelson_v1.ill_typed_contract"
    );
}

#[test]
fn pack_data_matches_recorded_hash_data() {
    let Some((session, _scratch, mut chain)) = recorded_session_and_chain(
        "octez-protocol/client/hash_data_good.out",
        "pack_data_matches_recorded_hash_data",
    ) else {
        return;
    };
    let mut compared = 0;
    for command in &session.commands {
        // The recorder masked hashes (`[CONTRACT_HASH]`): such data is not the data hashed.
        if command.line.contains('[') {
            continue;
        }
        let Some((data, ty)) = data_and_type(&command.argv) else {
            continue;
        };
        let field = |prefix: &str| {
            command
                .output
                .lines()
                .find_map(|line| line.strip_prefix(prefix).map(str::to_string))
        };
        let (Some(packed), Some(gas)) = (field("Raw packed data: 0x"), field("Gas remaining: "))
        else {
            continue;
        };
        let parse = |text: &str| {
            kestrel_michelson::expand_macros(
                &kestrel_micheline::parse_expression(text).expect("recorded data parses"),
            )
            .expect("expands")
        };
        let body =
            value!({"data": to_json(&parse(data)), "type": to_json(&parse(ty)), "gas": "1040000"});
        let (status, answer) = post(&mut chain, "pack_data", &body);
        assert_eq!(status, 200, "{}: {answer}", command.line);
        assert_eq!(answer["packed"], packed.as_str(), "{}", command.line);
        let gas = gas.trim_end_matches(" units remaining").replace('.', "");
        assert_eq!(answer["gas"], gas.as_str(), "{}", command.line);
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} recorded hashes compared");
    // Without a gas limit Octez does not count (`Gas.encoding`'s `unaccounted`).
    let body = value!({"data": {"int": "1"}, "type": {"prim": "nat"}});
    assert_eq!(
        post(&mut chain, "typecheck_data", &body).1,
        value!({"gas": "unaccounted"})
    );
}

#[test]
fn normalize_type_matches_recorded_normalize_type() {
    let Some((session, _scratch, mut chain)) = recorded_session_and_chain(
        "octez-protocol/client/Test_normalize_type.out",
        "normalize_type_matches_recorded_normalize_type",
    ) else {
        return;
    };
    let mut compared = 0;
    for command in &session.commands {
        let Some(ty) = command.argv.last() else {
            continue;
        };
        if command.output.starts_with("Erroneous") || command.output.is_empty() {
            continue;
        }
        let node = kestrel_micheline::parse_expression(ty).expect("a type");
        let (status, answer) = post(
            &mut chain,
            "normalize_type",
            &value!({"type": to_json(&node)}),
        );
        assert_eq!(status, 200, "{}: {answer}", command.line);
        let expected = kestrel_micheline::parse_expression(command.output.trim()).expect("printed");
        assert_eq!(
            one_line(&answer["normalized"]),
            print::to_text_single_line(&expected),
            "{}",
            command.line
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} recorded types compared");
}

/// A contract with a big map, a TZIP-4 view entrypoint and an on-chain view, originated by
/// bootstrap1; its address.
fn originate_viewed_contract(chain: &mut Chain) -> String {
    let code = kestrel_micheline::parse_toplevel(concat!(
        "parameter (or (pair %get nat (contract nat)) (nat %put)); ",
        "storage (pair (big_map nat nat) nat); ",
        "code { UNPAIR; IF_LEFT { UNPAIR; DIP 2 { DUP; CAR }; DIP { SWAP }; GET; ",
        "IF_NONE { PUSH nat 0 } {}; DIP { PUSH mutez 0 }; TRANSFER_TOKENS; ",
        "NIL operation; SWAP; CONS; PAIR } ",
        "{ DIP { UNPAIR }; DUP; SOME; SWAP; UPDATE; PAIR; NIL operation; PAIR } }; ",
        "view \"double\" nat nat { UNPAIR; DIP { CDR }; ADD; DUP; ADD }",
    ))
    .expect("parses");
    let code = kestrel_michelson::expand_macros(&code).expect("expands");
    let storage =
        kestrel_micheline::parse_expression("Pair { Elt 1 10 ; Elt 2 20 } 5").expect("parses");
    let contents = value!([{"kind": "origination", "source": BOOTSTRAP1, "fee": "10000",
        "counter": "1", "gas_limit": "20000", "storage_limit": "2000", "balance": "1000000",
        "script": {"code": to_json(&code), "storage": to_json(&storage)}}]);
    let operation = support::signed_by_bootstrap1(chain, &contents.to_string());
    let block = support::inject(chain, &operation);
    let result = &block["operations"][3][0]["contents"][0]["metadata"]["operation_result"];
    assert_eq!(result["status"], "applied", "{result}");
    result["originated_contracts"][0]
        .as_str()
        .expect("an address")
        .to_string()
}

#[test]
fn contract_rpcs_read_the_originated_state() {
    let scratch = support::Scratch::new("contract-scripts");
    let mut chain = support::new_chain_in(&scratch);
    let contract = originate_viewed_contract(&mut chain);
    let base = format!("/chains/main/blocks/head/context/contracts/{contract}");

    let put = get_json(&mut chain, &format!("{base}/entrypoints/put"));
    assert_eq!(put, value!({"prim": "nat"}));
    let default = get_json(&mut chain, &format!("{base}/entrypoints/default"));
    assert_eq!(default["prim"], "or");
    assert_eq!(
        call(&mut chain, "GET", &format!("{base}/entrypoints/nope"), "").status,
        404
    );

    let big_map_get = |chain: &mut Chain, key: u64| {
        let body = value!({"key": {"int": key.to_string()}, "type": {"prim": "nat"}});
        let response = call(
            chain,
            "POST",
            &format!("{base}/big_map_get"),
            &body.to_string(),
        );
        assert_eq!(response.status, 200);
        serde_json::from_slice::<Value>(&response.body).expect("JSON")
    };
    assert_eq!(big_map_get(&mut chain, 2), value!({"int": "20"}));
    assert_eq!(big_map_get(&mut chain, 3), Value::Null);

    let view = value!({"contract": contract, "view": "double", "input": {"int": "4"},
        "chain_id": "NetXynUjJNZm7wi", "unparsing_mode": "Readable"});
    assert_eq!(
        post(&mut chain, "run_script_view", &view).1,
        value!({"data": {"int": "18"}})
    );
    let tzip4 = value!({"contract": contract, "entrypoint": "get", "input": {"int": "1"},
        "chain_id": "NetXynUjJNZm7wi", "unparsing_mode": "Readable"});
    assert_eq!(
        post(&mut chain, "run_view", &tzip4).1,
        value!({"data": {"int": "10"}})
    );

    // run_code as the contract: its stored big map is read and written.
    let script = get_json(&mut chain, &format!("{base}/script"));
    let storage = get_json(&mut chain, &format!("{base}/storage"));
    let run = value!({"script": script["code"], "storage": storage,
        "input": {"prim": "Right", "args": [{"int": "3"}]}, "amount": "0",
        "chain_id": "NetXynUjJNZm7wi", "self": contract});
    let (status, answer) = post(&mut chain, "run_code", &run);
    assert_eq!(status, 200, "{answer}");
    let diff = &answer["lazy_storage_diff"][0];
    assert_eq!(diff["kind"], "big_map");
    assert_eq!(diff["diff"]["updates"][0]["value"], value!({"int": "3"}));
    assert_eq!(
        post(
            &mut chain,
            "entrypoints",
            &value!({"script": script["code"]})
        )
        .1["entrypoints"]["put"],
        value!({"prim": "nat"})
    );
}

#[test]
fn normalize_data_matches_recorded_normalize_data() {
    let Some((session, _scratch, mut chain)) = recorded_session_and_chain(
        "octez-protocol/client/Test_normalize_in_unparsing_mode.out",
        "normalize_data_matches_recorded_normalize_data",
    ) else {
        return;
    };
    let mut compared = 0;
    for command in &session.commands {
        let argv = &command.argv;
        let Some((data, ty)) = data_and_type(argv) else {
            continue;
        };
        let mode = argv
            .iter()
            .position(|word| word == "--unparsing-mode")
            .and_then(|at| argv.get(at + 1))
            .map_or("Readable", String::as_str);
        let parse =
            |text: &str| to_json(&kestrel_micheline::parse_expression(text).expect("parses"));
        let body = value!({"data": parse(data), "type": parse(ty), "unparsing_mode": mode});
        let (status, answer) = post(&mut chain, "normalize_data", &body);
        assert_eq!(status, 200, "{}: {answer}", command.line);
        let expected = kestrel_micheline::parse_expression(command.output.trim()).expect("printed");
        assert_eq!(
            one_line(&answer["normalized"]),
            print::to_text_single_line(&expected),
            "{}",
            command.line
        );
        compared += 1;
    }
    assert_eq!(compared, 4, "recorded normalizations compared");
}
