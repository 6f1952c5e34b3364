//! A node keeping a small window of blocks' contexts (`--keep-blocks`): once the store's GC
//! collected a block's context, reading its state and reverting to a snapshot at it answer the
//! typed `kestrel.pruned_context` error (404), while head, recent blocks, every block's header
//! and reopening the directory go on working.

mod support;

use kestrel_node::Chain;
use serde_json::{json, Value};
use support::{balance, call, get_json, post_json, BOOTSTRAP1, BOOTSTRAP2};

/// The window of the test's chain: with it a GC starts at every block.
const KEEP_BLOCKS: u64 = 5;

fn kestrel(chain: &mut Chain, method: &str, body: Value) -> Value {
    post_json(chain, &format!("/kestrel/{method}"), &body.to_string())
}

/// The error list of a 404 answer to `method` `path`.
fn pruned(chain: &mut Chain, method: &str, path: &str, body: &str) -> Value {
    let response = call(chain, method, path, body);
    assert_eq!(
        response.status,
        404,
        "{path}: {}",
        String::from_utf8_lossy(&response.body)
    );
    let errors: Value = serde_json::from_slice(&response.body).expect("an error list");
    assert_eq!(errors[0]["id"], "kestrel.pruned_context", "{errors}");
    assert_eq!(errors[0]["kind"], "permanent");
    assert_eq!(errors[0]["keep_blocks"], KEEP_BLOCKS);
    errors
}

fn balance_path(block: &str, account: &str) -> String {
    format!("/chains/main/blocks/{block}/context/contracts/{account}/balance")
}

#[test]
fn collected_contexts_answer_a_typed_error_and_the_rest_works() {
    let scratch = support::Scratch::new("pruned-context");
    let mut chain = support::chain_keeping(&scratch, KEEP_BLOCKS);
    let old_snapshot = kestrel(&mut chain, "snapshot", json!({}))["id"].clone();
    let operation = support::signed_transfer(&mut chain, 1, 1_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    let transferred = balance(&mut chain, BOOTSTRAP2);
    // The GC running when the blocks are made is waited for; the next block starts another,
    // which keeps the last KEEP_BLOCKS commits.
    kestrel(&mut chain, "mine", json!({"blocks": 20}));
    chain.wait_for_gc().expect("the GC ends");
    let level = kestrel(&mut chain, "mine", json!({"blocks": 1}))["level"].clone();
    assert_eq!(level, 24);
    chain.wait_for_gc().expect("the GC ends");

    // Block 2's context is collected; its header is not.
    let errors = pruned(&mut chain, "GET", &balance_path("2", BOOTSTRAP2), "");
    assert_eq!(errors[0]["level"], 2);
    pruned(&mut chain, "GET", &balance_path("genesis", BOOTSTRAP1), "");
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/2/header")["level"],
        2
    );
    // Head and the blocks of the window answer their state.
    assert_eq!(balance(&mut chain, BOOTSTRAP2), transferred);
    let recent = get_json(&mut chain, &balance_path("head~3", BOOTSTRAP2));
    assert_eq!(recent, json!(transferred.to_string()));

    // A snapshot whose context is collected: a typed error, and nothing changes.
    let errors = pruned(
        &mut chain,
        "POST",
        "/kestrel/revert",
        &json!({ "id": old_snapshot }).to_string(),
    );
    assert_eq!(errors[0]["level"], 2);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head/header")["level"],
        24
    );
    // A recent snapshot still reverts.
    let recent_snapshot = kestrel(&mut chain, "snapshot", json!({}))["id"].clone();
    kestrel(&mut chain, "mine", json!({"blocks": 2}));
    let answer = kestrel(&mut chain, "revert", json!({ "id": recent_snapshot }));
    assert_eq!(answer, json!({"reverted": true, "level": 24}));
    let operation = support::signed_transfer(&mut chain, 2, 1_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    let head = get_json(&mut chain, "/chains/main/blocks/head/header");
    assert_eq!(head["level"], 25);
    drop(chain);

    // Reopening continues the chain at its head; the collected blocks stay collected.
    let mut chain = support::chain_keeping(&scratch, KEEP_BLOCKS);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/head/header"),
        head
    );
    assert_eq!(balance(&mut chain, BOOTSTRAP2), transferred + 1_000_000);
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/2/header")["level"],
        2
    );
    pruned(&mut chain, "GET", &balance_path("2", BOOTSTRAP2), "");
    let operation = support::signed_transfer(&mut chain, 3, 1_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    assert_eq!(balance(&mut chain, BOOTSTRAP2), transferred + 2_000_000);
}
