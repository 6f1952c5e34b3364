//! The RPC router without a transport: block ids, unknown paths, and block production — an
//! injected operation is baked into a new head, an invalid one refused with Octez's error id, one
//! whose application fails included with its fee taken.

mod support;

use kestrel_node::Chain;
use serde_json::Value;
use support::{balance, call, get_json, BOOTSTRAP1, BOOTSTRAP2};

fn signed_transfer(chain: &mut Chain, counter: u32, amount: u64) -> String {
    support::signed_transfer(chain, counter, amount, BOOTSTRAP2)
}

#[test]
fn block_ids_resolve_and_clamp_at_genesis() {
    let scratch = support::Scratch::new("ids");
    let mut chain = support::new_chain_in(&scratch);
    let head = get_json(&mut chain, "/chains/main/blocks/head/header");
    assert_eq!(head["level"], 2);
    let genesis = get_json(&mut chain, "/chains/main/blocks/genesis/hash");
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/0/hash"), genesis);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head~2/hash"),
        genesis
    );
    // pytezos's branch on a young chain: clamped to genesis.
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head~115/hash"),
        genesis
    );
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head-1/header")["level"],
        1
    );
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/genesis+1/hash"),
        head["predecessor"]
    );
    let by_hash = format!(
        "/chains/main/blocks/{}~1/header",
        head["hash"].as_str().expect("a hash")
    );
    assert_eq!(get_json(&mut chain, &by_hash)["level"], 1);
    assert_eq!(
        call(&mut chain, "GET", "/chains/main/blocks/3/hash", "").status,
        404
    );
    assert_eq!(
        call(&mut chain, "GET", "/chains/main/blocks/head/nope", "").status,
        404
    );
    assert_eq!(call(&mut chain, "GET", "/nope", "").status, 404);
    let unknown = "/chains/main/blocks/head/context/contracts/KT1Q36KWPSba7dHsH5E4ZsQHehrChc51e19d";
    assert_eq!(call(&mut chain, "GET", unknown, "").status, 404);
}

#[test]
fn injection_bakes_refuses_and_charges_fees() {
    let scratch = support::Scratch::new("inject");
    let mut chain = support::new_chain_in(&scratch);
    let before = balance(&mut chain, BOOTSTRAP1);

    let operation = signed_transfer(&mut chain, 1, 1_000_000);
    let response = call(&mut chain, "POST", "/injection/operation", &operation);
    assert_eq!(response.status, 200);
    let hash: Value = serde_json::from_slice(&response.body).expect("JSON");
    let head = get_json(&mut chain, "/chains/main/blocks/head");
    assert_eq!(head["header"]["level"], 3);
    let included = &head["operations"][3][0];
    assert_eq!(included["hash"], hash);
    assert_eq!(
        included["contents"][0]["metadata"]["operation_result"]["status"],
        "applied"
    );
    assert_eq!(balance(&mut chain, BOOTSTRAP1), before - 1_000_000 - 1_000);

    // The same operation again: its counter is used; nothing is baked.
    let response = call(&mut chain, "POST", "/injection/operation", &operation);
    assert_eq!(response.status, 500);
    assert_eq!(response.content_type, "application/json");
    let errors: Value = serde_json::from_slice(&response.body).expect("JSON");
    assert_eq!(
        errors[0]["id"],
        "proto.025-PsUshuai.contract.counter_in_the_past"
    );
    assert_eq!(errors[0]["expected"], "2");
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head/header")["level"],
        3
    );

    // More than the balance: application fails, the operation is included and pays its fee.
    let middle = balance(&mut chain, BOOTSTRAP1);
    let operation = signed_transfer(&mut chain, 2, middle + 1);
    assert_eq!(
        call(&mut chain, "POST", "/injection/operation", &operation).status,
        200
    );
    let head = get_json(&mut chain, "/chains/main/blocks/head");
    assert_eq!(head["header"]["level"], 4);
    assert_eq!(
        head["operations"][3][0]["contents"][0]["metadata"]["operation_result"]["status"],
        "failed"
    );
    assert_eq!(balance(&mut chain, BOOTSTRAP1), middle - 1_000);
}

#[test]
fn injections_together_make_one_block_and_refuse_only_the_invalid() {
    let scratch = support::Scratch::new("inject-all");
    let mut chain = support::new_chain_in(&scratch);
    let before = balance(&mut chain, BOOTSTRAP2);
    let hex_of = |json: String| hex::decode(json.trim_matches('"')).expect("hex");
    let first = hex_of(signed_transfer(&mut chain, 1, 5));
    // The signature's last byte changed: refused, and the next operation takes its counter.
    let mut forged = hex_of(signed_transfer(&mut chain, 2, 1_000));
    *forged.last_mut().expect("a signature") ^= 1;
    let third = hex_of(signed_transfer(&mut chain, 2, 7));
    let answers = chain.inject_all(&[&first, &forged, &b"\x01"[..], &third]);
    assert_eq!(answers.len(), 4);
    assert!(
        matches!(&answers[1], Err(kestrel_node::ChainError::Invalid(invalid))
            if invalid.octez_id() == "operation.invalid_signature"),
        "{:?}",
        answers[1]
    );
    assert!(matches!(
        answers[2],
        Err(kestrel_node::ChainError::Decode(_))
    ));
    let head = get_json(&mut chain, "/chains/main/blocks/head");
    assert_eq!(head["header"]["level"], 3);
    let included: Vec<&Value> = head["operations"][3]
        .as_array()
        .expect("the manager pass")
        .iter()
        .map(|operation| &operation["hash"])
        .collect();
    let hashes: Vec<String> = [&answers[0], &answers[3]]
        .iter()
        .map(|answer| answer.as_ref().expect("included").to_b58check())
        .collect();
    assert_eq!(included, hashes.iter().collect::<Vec<_>>());
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before + 12);
    // Nothing valid: no block.
    let answers = chain.inject_all(&[&forged]);
    assert!(answers[0].is_err());
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head/header")["level"],
        3
    );
}

#[test]
fn data_rpcs_pack_normalize_typecheck_and_refuse_ill_typed_data() {
    let scratch = support::Scratch::new("pack");
    let mut chain = support::new_chain_in(&scratch);
    let path = "/chains/main/blocks/head/helpers/scripts/pack_data";
    let body = r#"{"data": {"string": "hello"}, "type": {"prim": "string"}}"#;
    let packed = support::post_json(&mut chain, path, body);
    // PACK "hello": 0x05, a string node (01), its 4-byte length, its bytes.
    assert_eq!(packed["packed"], "05010000000568656c6c6f");
    let pair = r#"{"data": {"prim": "Pair", "args": [{"int": "1"}, {"string": "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx"}]},
        "type": {"prim": "pair", "args": [{"prim": "nat"}, {"prim": "address"}]}}"#;
    let packed = support::post_json(&mut chain, path, pair);
    // Pair (07 07), nat 1 (00 01), the address optimized: bytes (0a, length 22), implicit (00),
    // ed25519 (00), the key hash.
    let hash = kestrel_crypto::PublicKeyHash::from_b58check(BOOTSTRAP1).expect("a key hash");
    let expected = format!("05070700010a000000160000{}", hex::encode(hash.hash_bytes()));
    assert_eq!(packed["packed"], expected.as_str());
    let ill_typed = r#"{"data": {"int": "1"}, "type": {"prim": "string"}}"#;
    let response = call(&mut chain, "POST", path, ill_typed);
    assert_eq!(response.status, 500);
    let errors: Value = serde_json::from_slice(&response.body).expect("JSON");
    assert_eq!(
        errors[0]["id"],
        "proto.025-PsUshuai.michelson_v1.ill_typed_data"
    );
}

#[test]
fn run_script_view_runs_an_on_chain_view_at_head() {
    let scratch = support::Scratch::new("view");
    let mut chain = support::new_chain_in(&scratch);
    // storage nat = 5; view "add" nat nat { UNPAIR ; ADD }.
    let origination = support::signed_by_bootstrap1(
        &mut chain,
        &format!(
            r#"[{{"kind": "origination", "source": "{BOOTSTRAP1}", "fee": "2000", "counter": "1",
            "gas_limit": "5000", "storage_limit": "600", "balance": "0",
            "script": {{"code": [{{"prim": "parameter", "args": [{{"prim": "unit"}}]}},
              {{"prim": "storage", "args": [{{"prim": "nat"}}]}},
              {{"prim": "code", "args": [[{{"prim": "CDR"}},
                {{"prim": "NIL", "args": [{{"prim": "operation"}}]}}, {{"prim": "PAIR"}}]]}},
              {{"prim": "view", "args": [{{"string": "add"}}, {{"prim": "nat"}}, {{"prim": "nat"}},
                [{{"prim": "UNPAIR"}}, {{"prim": "ADD"}}]]}}],
              "storage": {{"int": "5"}}}}}}]"#
        ),
    );
    let block = support::inject(&mut chain, &origination);
    let contract = block["operations"][3][0]["contents"][0]["metadata"]["operation_result"]
        ["originated_contracts"][0]
        .clone();
    let path = "/chains/main/blocks/head/helpers/scripts/run_script_view";
    let body = format!(
        r#"{{"contract": {contract}, "view": "add", "input": {{"int": "3"}},
        "chain_id": "NetXdQprcVkpaWU", "unparsing_mode": "Readable"}}"#
    );
    let response = call(&mut chain, "POST", path, &body);
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let answer: Value = serde_json::from_slice(&response.body).expect("JSON");
    assert_eq!(answer, serde_json::json!({"data": {"int": "8"}}));
    let unknown = body.replace("\"add\"", "\"nope\"");
    let response = call(&mut chain, "POST", path, &unknown);
    assert_eq!(response.status, 500);
}

#[test]
fn reopening_a_directory_continues_its_chain() {
    let scratch = support::Scratch::new("reopen");
    let mut chain = support::new_chain_in(&scratch);
    let operation = signed_transfer(&mut chain, 1, 1_000_000);
    support::inject(&mut chain, &operation);
    let head = get_json(&mut chain, "/chains/main/blocks/head");
    let balance_before = balance(&mut chain, BOOTSTRAP2);
    let chain_id = get_json(&mut chain, "/chains/main/chain_id");
    drop(chain);

    let mut chain = support::new_chain_in(&scratch);
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/head"), head);
    assert_eq!(get_json(&mut chain, "/chains/main/chain_id"), chain_id);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), balance_before);
    // The counter goes on from the reopened state; the new block follows the old head.
    let operation = signed_transfer(&mut chain, 2, 1_000_000);
    let block = support::inject(&mut chain, &operation);
    assert_eq!(block["header"]["level"], 4);
    assert_eq!(block["header"]["predecessor"], head["hash"]);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), balance_before + 1_000_000);
}
