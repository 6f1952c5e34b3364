//! The `kestrel_*` methods (`POST /kestrel/<method>`) and the mempool, through the router:
//! mining, snapshot and revert, time, balances, storage, impersonation, state documents, and
//! operations held for a timed block as `mempool/pending_operations` shows them (Octez's
//! recorded answer in `octez-protocol/rpc/rpc-mempool.out` is the shape oracle).

mod support;

use kestrel_crypto::SecretKey;
use kestrel_node::Chain;
use kestrel_protocol::Operation;
use serde_json::{json, Value};
use support::{balance, call, get_json, post_json, BOOTSTRAP1, BOOTSTRAP2};

fn kestrel(chain: &mut Chain, method: &str, body: Value) -> Value {
    post_json(chain, &format!("/kestrel/{method}"), &body.to_string())
}

fn level(chain: &mut Chain) -> i64 {
    get_json(chain, "/chains/main/blocks/head/header")["level"]
        .as_i64()
        .expect("a level")
}

#[test]
fn mine_bakes_blocks_and_refuses_too_many() {
    let scratch = support::Scratch::new("mine");
    let mut chain = support::new_chain_in(&scratch);
    let answer = kestrel(&mut chain, "mine", json!({"blocks": 5}));
    assert_eq!(answer["level"], 7);
    assert_eq!(level(&mut chain), 7);
    assert_eq!(kestrel(&mut chain, "mine", json!({}))["level"], 8);
    let response = call(&mut chain, "POST", "/kestrel/mine", r#"{"blocks": 10001}"#);
    assert_eq!(response.status, 500);
    assert_eq!(level(&mut chain), 8);
    assert_eq!(call(&mut chain, "POST", "/kestrel/nope", "{}").status, 404);
    assert_eq!(call(&mut chain, "POST", "/kestrel/mine", "[1]").status, 400);
}

#[test]
fn revert_returns_to_a_snapshot_and_forgets_later_ones() {
    let scratch = support::Scratch::new("revert");
    let mut chain = support::new_chain_in(&scratch);
    let before = balance(&mut chain, BOOTSTRAP2);
    let head = get_json(&mut chain, "/chains/main/blocks/head/hash");
    let id = kestrel(&mut chain, "snapshot", json!({}))["id"].clone();
    let operation = support::signed_transfer(&mut chain, 1, 5_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    let later = kestrel(&mut chain, "snapshot", json!({}))["id"].clone();
    kestrel(&mut chain, "mine", json!({"blocks": 2}));
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before + 5_000_000);

    let answer = kestrel(&mut chain, "revert", json!({ "id": id }));
    assert_eq!(answer, json!({"reverted": true, "level": 2}));
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/head/hash"), head);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before);
    assert_eq!(
        call(&mut chain, "GET", "/chains/main/blocks/3/hash", "").status,
        404
    );
    // Reverting forgot the snapshot and the later one.
    assert_eq!(
        kestrel(&mut chain, "revert", json!({ "id": later }))["reverted"],
        false
    );
    // The same transfer (counter 1 again) goes through once more, and the reverted chain
    // reopens at its new head.
    let operation = support::signed_transfer(&mut chain, 1, 7_000_000, BOOTSTRAP2);
    let block = support::inject(&mut chain, &operation);
    assert_eq!(block["header"]["level"], 3);
    drop(chain);
    let mut chain = support::new_chain_in(&scratch);
    assert_eq!(level(&mut chain), 3);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before + 7_000_000);
}

#[test]
fn time_moves_the_next_blocks_timestamps() {
    let scratch = support::Scratch::new("time");
    let mut chain = support::new_chain_in(&scratch);
    let date = "2030-01-01T00:00:00Z";
    let answer = kestrel(
        &mut chain,
        "set_next_block_timestamp",
        json!({ "timestamp": date }),
    );
    assert_eq!(answer["timestamp"], date);
    kestrel(&mut chain, "mine", json!({}));
    let header = get_json(&mut chain, "/chains/main/blocks/head/header");
    assert_eq!(header["timestamp"], date);
    // Once only: the next block is a second later (the clock is behind it).
    kestrel(&mut chain, "mine", json!({}));
    let header = get_json(&mut chain, "/chains/main/blocks/head/header");
    assert_eq!(header["timestamp"], "2030-01-01T00:00:01Z");
    // Not before head.
    let response = call(
        &mut chain,
        "POST",
        "/kestrel/set_next_block_timestamp",
        r#"{"timestamp": "2029-01-01T00:00:00Z"}"#,
    );
    assert_eq!(response.status, 500);
    let body: Value = serde_json::from_slice(&response.body).expect("JSON");
    assert_eq!(body[0]["id"], "kestrel.set_next_block_timestamp");
    // Ten years ahead of the wall clock: past 2030.
    let offset = kestrel(&mut chain, "increase_time", json!({"seconds": 315_576_000}));
    assert_eq!(offset["offset_seconds"], 315_576_000);
    kestrel(&mut chain, "mine", json!({}));
    let header = get_json(&mut chain, "/chains/main/blocks/head/header");
    assert!(header["timestamp"].as_str().expect("a date") > "2035");
}

#[test]
fn set_balance_and_set_storage_bake_the_change() {
    let scratch = support::Scratch::new("set");
    let mut chain = support::new_chain_in(&scratch);
    let fresh = "tz1burnburnburnburnburnburnburjAYjjX";
    let answer = kestrel(
        &mut chain,
        "set_balance",
        json!({"address": fresh, "balance": "123456"}),
    );
    assert_eq!(answer["level"], 3);
    assert_eq!(balance(&mut chain, fresh), 123_456);
    kestrel(
        &mut chain,
        "set_balance",
        json!({"address": BOOTSTRAP2, "balance": 1}),
    );
    assert_eq!(balance(&mut chain, BOOTSTRAP2), 1);

    let contract = support::originate_nat_contract(&mut chain, 1, "");
    kestrel(
        &mut chain,
        "set_storage",
        json!({"address": contract, "storage": {"int": "99"}}),
    );
    let path = format!("/chains/main/blocks/head/context/contracts/{contract}/storage");
    assert_eq!(get_json(&mut chain, &path), json!({"int": "99"}));
    let response = call(
        &mut chain,
        "POST",
        "/kestrel/set_storage",
        r#"{"address": "KT1PWx2mnDueood7fEmfbBDKx1D9BAnnXitn", "storage": {"int": "1"}}"#,
    );
    assert_eq!(response.status, 500);
}

/// bootstrap2's transfer to bootstrap1, signed with bootstrap1's key (not bootstrap2's).
fn wrongly_signed_by_bootstrap2(chain: &mut Chain, counter: u32) -> String {
    let branch = get_json(chain, "/chains/main/blocks/head~2/hash");
    let mut operation = Operation::from_json_str(&format!(
        r#"{{"branch": {branch}, "contents": [{{"kind": "transaction", "source": "{BOOTSTRAP2}",
        "fee": "1000", "counter": "{counter}", "gas_limit": "3000", "storage_limit": "0",
        "amount": "2000000", "destination": "{BOOTSTRAP1}"}}]}}"#
    ))
    .expect("an operation");
    let key = SecretKey::from_b58check(support::BOOTSTRAP1_SECRET).expect("a key");
    operation.signature = Some(key.sign(&operation.signing_message()));
    format!("\"{}\"", hex::encode(operation.encode()))
}

#[test]
fn impersonated_accounts_need_no_signature() {
    let scratch = support::Scratch::new("impersonate");
    let mut chain = support::new_chain_in(&scratch);
    let operation = wrongly_signed_by_bootstrap2(&mut chain, 1);
    let refused = call(&mut chain, "POST", "/injection/operation", &operation);
    assert_eq!(refused.status, 500);
    let before = balance(&mut chain, BOOTSTRAP1);
    kestrel(&mut chain, "impersonate", json!({ "address": BOOTSTRAP2 }));
    support::inject(&mut chain, &operation);
    assert_eq!(balance(&mut chain, BOOTSTRAP1), before + 2_000_000);
    kestrel(
        &mut chain,
        "stop_impersonating",
        json!({ "address": BOOTSTRAP2 }),
    );
    let again = wrongly_signed_by_bootstrap2(&mut chain, 2);
    let refused = call(&mut chain, "POST", "/injection/operation", &again);
    assert_eq!(refused.status, 500);
    let errors: Value = serde_json::from_slice(&refused.body).expect("JSON");
    assert!(errors[0]["id"]
        .as_str()
        .is_some_and(|id| id.contains("signature")));
}

#[test]
fn a_dumped_state_loads_into_another_chain() {
    let scratch = support::Scratch::new("dump");
    let mut chain = support::new_chain_in(&scratch);
    let operation = support::signed_transfer(&mut chain, 1, 3_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    let state = call(&mut chain, "POST", "/kestrel/dump_state", "");
    assert_eq!(state.status, 200);
    let balance2 = balance(&mut chain, BOOTSTRAP2);
    let balance1 = balance(&mut chain, BOOTSTRAP1);

    let other_scratch = support::Scratch::new("load");
    let mut other = support::new_chain_in(&other_scratch);
    assert_ne!(balance(&mut other, BOOTSTRAP2), balance2);
    let body = String::from_utf8(state.body).expect("UTF-8");
    let answer = call(&mut other, "POST", "/kestrel/load_state", &body);
    assert_eq!(answer.status, 200);
    assert_eq!(balance(&mut other, BOOTSTRAP2), balance2);
    assert_eq!(balance(&mut other, BOOTSTRAP1), balance1);
    // The counter came along: bootstrap1's next operation is its second.
    let operation = support::signed_transfer(&mut other, 2, 1, BOOTSTRAP2);
    support::inject(&mut other, &operation);
    let bad = call(
        &mut other,
        "POST",
        "/kestrel/load_state",
        r#"{"format": "x"}"#,
    );
    assert_eq!(bad.status, 500);
}

#[test]
fn held_operations_wait_in_the_mempool_in_octez_shape() {
    let scratch = support::Scratch::new("mempool");
    let mut chain = support::new_chain_in(&scratch);
    chain.hold_operations(true);
    let before = balance(&mut chain, BOOTSTRAP2);
    let first = support::signed_transfer(&mut chain, 1, 1_000, BOOTSTRAP2);
    let second = support::signed_transfer(&mut chain, 2, 2_000, BOOTSTRAP2);
    let hashes: Vec<Value> = [&first, &second]
        .iter()
        .map(|operation| {
            let response = call(&mut chain, "POST", "/injection/operation", operation);
            assert_eq!(response.status, 200);
            serde_json::from_slice(&response.body).expect("a hash")
        })
        .collect();
    // Nothing baked yet: head and its state unchanged.
    assert_eq!(level(&mut chain), 2);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before);
    let pending = get_json(&mut chain, "/chains/main/mempool/pending_operations");
    let Some(recorded) = octez_pending_operations() else {
        return;
    };
    let keys = |value: &Value| {
        let mut keys: Vec<String> = value
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&pending), keys(&recorded));
    let validated = pending["validated"].as_array().expect("a list");
    assert_eq!(validated.len(), 2);
    assert_eq!(keys(&validated[0]), keys(&recorded["validated"][0]));
    assert_eq!(validated[0]["hash"], hashes[0]);
    assert_eq!(validated[1]["contents"][0]["counter"], "2");
    assert!(validated[0]["contents"][0].get("metadata").is_none());

    chain.bake_pending().expect("a block");
    let block = get_json(&mut chain, "/chains/main/blocks/head");
    assert_eq!(block["header"]["level"], 3);
    assert_eq!(block["operations"][3][1]["hash"], hashes[1]);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before + 3_000);
    let pending = get_json(&mut chain, "/chains/main/mempool/pending_operations");
    assert_eq!(pending["validated"], json!([]));

    // A held operation is dropped by `recover`, as after a failed request.
    let third = support::signed_transfer(&mut chain, 3, 4_000, BOOTSTRAP2);
    assert_eq!(
        call(&mut chain, "POST", "/injection/operation", &third).status,
        200
    );
    chain.recover().expect("recovered");
    let pending = get_json(&mut chain, "/chains/main/mempool/pending_operations");
    assert_eq!(pending["validated"], json!([]));
    chain.bake_pending().expect("a block");
    assert_eq!(balance(&mut chain, BOOTSTRAP2), before + 3_000);
}

/// Octez's recorded `pending_operations` answer with a validated transaction (hashes are
/// masked; only its keys are compared). `None` when the test data is absent outside CI.
fn octez_pending_operations() -> Option<Value> {
    let path = kestrel_testdata::require(
        "octez-protocol/rpc/rpc-mempool.out",
        "held_operations_wait_in_the_mempool_in_octez_shape",
    )?;
    let text = std::fs::read_to_string(&path).expect("the recording");
    let start = text.find("\n{ \"validated\":").expect("a validated answer") + 1;
    let end = start + text[start..].find("\n\n").expect("its end");
    Some(serde_json::from_str(&text[start..end]).expect("the recorded JSON"))
}

#[test]
fn old_blocks_are_read_back_and_revert_crosses_the_recent_window() {
    let scratch = support::Scratch::new("old-blocks");
    let mut chain = support::new_chain_in(&scratch);
    let operation = support::signed_transfer(&mut chain, 1, 1_000, BOOTSTRAP2);
    let at_three = support::inject(&mut chain, &operation);
    let id = kestrel(&mut chain, "snapshot", json!({}))["id"].clone();
    // More blocks than are kept in memory (kestrel_node::block_log::RECENT_BLOCKS).
    kestrel(&mut chain, "mine", json!({"blocks": 400}));
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/3"), at_three);
    let by_hash = format!(
        "/chains/main/blocks/{}/header",
        at_three["hash"].as_str().expect("a hash")
    );
    assert_eq!(get_json(&mut chain, &by_hash)["level"], 3);
    // A hash the chain never made: looked for through the whole index, not found.
    let never = kestrel_crypto::BlockHash::try_from_bytes(&[7; 32]).expect("32 bytes");
    let never = format!("/chains/main/blocks/{}/hash", never.to_b58check());
    assert_eq!(call(&mut chain, "GET", &never, "").status, 404);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head~400/hash"),
        at_three["hash"]
    );
    let live = get_json(&mut chain, "/chains/main/blocks/head/live_blocks");
    assert_eq!(live.as_array().map(Vec::len), Some(120));

    kestrel(&mut chain, "revert", json!({ "id": id }));
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/head"), at_three);
    assert_eq!(
        call(&mut chain, "GET", "/chains/main/blocks/4/hash", "").status,
        404
    );
    kestrel(&mut chain, "mine", json!({"blocks": 2}));
    drop(chain);
    let mut chain = support::new_chain_in(&scratch);
    assert_eq!(level(&mut chain), 5);
    assert_eq!(get_json(&mut chain, "/chains/main/blocks/3"), at_three);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head~2/hash"),
        at_three["hash"]
    );
}

/// An operation may be branched on head or one of its `max_operations_time_to_live` (8 in the
/// sandbox, `rpc-misc_protocol.out`) predecessors: the shell's prevalidator refuses an older
/// or unknown branch with its message (`prevalidator.ml`), naming the live blocks' count.
#[test]
fn operations_outlive_their_branch_by_at_most_the_time_to_live() {
    let scratch = support::Scratch::new("ttl");
    let mut chain = support::new_chain_in(&scratch);
    // Branched on head~2, then 6 blocks: 8 blocks behind head, still live.
    let operation = support::signed_transfer(&mut chain, 1, 1_000_000, BOOTSTRAP2);
    kestrel(&mut chain, "mine", json!({"blocks": 6}));
    support::inject(&mut chain, &operation);
    // Branched on head~2, then 7 blocks (the injection above baked one): 9 behind, outdated.
    let operation = support::signed_transfer(&mut chain, 2, 1_000_000, BOOTSTRAP2);
    let branch = get_json(&mut chain, "/chains/main/blocks/head~2/hash");
    let before = level(&mut chain);
    kestrel(&mut chain, "mine", json!({"blocks": 7}));
    let response = call(&mut chain, "POST", "/injection/operation", &operation);
    assert_ne!(response.status, 200);
    let body = String::from_utf8_lossy(&response.body);
    let branch = branch.as_str().expect("a hash");
    assert!(
        body.contains(&format!(
            "is branched on either:\\n - a block {branch} which is too old (9 blocks in the past)"
        )),
        "{body}"
    );
    assert_eq!(level(&mut chain), before + 7, "nothing was baked");
    // A load generator that signs ahead may turn the check off.
    chain.require_live_branches(false);
    support::inject(&mut chain, &operation);
}
