//! `…/blocks/<past block>/context/…` reads the state committed with that block (the store keeps
//! every block's commit), not the head's.

mod support;

use support::{get_json, BOOTSTRAP1, BOOTSTRAP2};

#[test]
fn a_past_block_answers_its_own_state() {
    let scratch = support::Scratch::new("past-context");
    let mut chain = support::new_chain_in(&scratch);
    let balance = |chain: &mut kestrel_node::Chain, block: &str, account: &str| {
        let path = format!("/chains/main/blocks/{block}/context/contracts/{account}/balance");
        get_json(chain, &path)
    };
    let before = balance(&mut chain, "head", BOOTSTRAP2);
    let level_before = get_json(&mut chain, "/chains/main/blocks/head/header")["level"]
        .as_i64()
        .expect("a level");

    let operation = support::signed_transfer(&mut chain, 1, 1_000_000, BOOTSTRAP2);
    support::inject(&mut chain, &operation);
    let after = balance(&mut chain, "head", BOOTSTRAP2);
    assert_ne!(before, after);

    assert_eq!(balance(&mut chain, "head~1", BOOTSTRAP2), before);
    assert_eq!(
        balance(&mut chain, &level_before.to_string(), BOOTSTRAP2),
        before
    );
    let counter = |chain: &mut kestrel_node::Chain, block: &str| {
        let path = format!("/chains/main/blocks/{block}/context/contracts/{BOOTSTRAP1}/counter");
        get_json(chain, &path)
    };
    assert_eq!(counter(&mut chain, "head"), "1");
    assert_eq!(counter(&mut chain, "head~1"), "0");
    // Constants answer at any block.
    assert_eq!(
        get_json(&mut chain, "/chains/main/blocks/genesis/context/constants"),
        get_json(&mut chain, "/chains/main/blocks/head/context/constants")
    );
}
