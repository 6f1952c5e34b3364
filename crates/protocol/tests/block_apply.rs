//! `validate_and_apply_block` (signatures batched across the block) gives each operation the
//! receipt, and the state the tree, that `validate_and_apply` gives operation by operation —
//! also when one operation's signature is wrong, when a source sends several operations in the
//! block, and when an operation is refused.

use kestrel_protocol::workload::{Chain, Sources, Workload};
use kestrel_protocol::{
    validate_and_apply, validate_and_apply_block, BlockContext, Ledger, Mode, SignedOperation,
};

fn block(ledger_level: u64) -> BlockContext {
    BlockContext {
        level: ledger_level,
        timestamp_seconds: 1_700_000_000,
        chain_id: kestrel_crypto::ChainId::from_b58check("NetXdQprcVkpaWU").expect("chain id"),
        payload_producer: kestrel_crypto::PublicKeyHash::from_b58check(
            "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx",
        )
        .expect("key hash"),
    }
}

/// Applies `operations` one by one and as a block on copies of `ledger`; asserts the same
/// outcome (receipts or errors, rendered) and the same state; returns the outcomes.
fn same_outcomes(ledger: &Ledger, operations: &[Vec<u8>]) -> Vec<Result<String, String>> {
    let context = block(10);
    let decoded: Vec<SignedOperation<'_>> = operations
        .iter()
        .map(|bytes| SignedOperation::decode(bytes).expect("signed operation"))
        .collect();
    let mut one_by_one = ledger.clone();
    let expected: Vec<Result<String, String>> = decoded
        .iter()
        .map(|operation| {
            validate_and_apply(&mut one_by_one, operation, &context, Mode::Apply)
                .map(|receipt| format!("{receipt:?}"))
                .map_err(|error| error.to_string())
        })
        .collect();
    let mut batched = ledger.clone();
    let (receipts, _) = validate_and_apply_block(&mut batched, &decoded, &context);
    let found: Vec<Result<String, String>> = receipts
        .into_iter()
        .map(|receipt| {
            receipt
                .map(|receipt| format!("{receipt:?}"))
                .map_err(|error| error.to_string())
        })
        .collect();
    assert_eq!(found, expected);
    assert_eq!(batched.tree().hash(), one_by_one.tree().hash());
    found
}

#[test]
fn a_block_applies_as_its_operations_one_by_one() {
    let Some(path) = kestrel_testdata::require(
        "michelson/mini_scenarios/fa12_reference.tz",
        "a_block_applies_as_its_operations_one_by_one",
    ) else {
        return;
    };
    let fa12 = std::fs::read_to_string(&path).unwrap();
    let liquidity_baking = path.parent().unwrap().parent().unwrap().join("protocol");
    let cpmm = std::fs::read_to_string(liquidity_baking.join("cpmm.tz")).unwrap();
    let lqt = std::fs::read_to_string(liquidity_baking.join("lqt.tz")).unwrap();
    let sources = Sources {
        fa12: &fa12,
        liquidity_baking: Some((&cpmm, &lqt)),
    };
    let directory =
        std::env::temp_dir().join(format!("kestrel-block-apply-{}", std::process::id()));
    for workload in [Workload::Fa12, Workload::Transfer, Workload::XtzToToken] {
        let mut chain = Chain::new(workload, 5, &sources, &directory).unwrap();
        // 80 operations: 16 per account, so every source has several in the block and the
        // batch is split over threads.
        let operations = chain.signed_block(80).unwrap();
        let outcomes = same_outcomes(chain.ledger(), &operations);
        assert!(outcomes.iter().all(Result::is_ok));

        // One signature flipped: that operation is refused, and so are its source's later
        // ones (their counters are then in the future); the others apply.
        let mut tampered = operations.clone();
        let last = tampered[7].len() - 1;
        tampered[7][last] ^= 1;
        let outcomes = same_outcomes(chain.ledger(), &tampered);
        let refused: Vec<usize> = (0..outcomes.len())
            .filter(|&index| outcomes[index].is_err())
            .collect();
        assert_eq!(refused, (7..80).step_by(5).collect::<Vec<_>>());
        assert!(outcomes[7]
            .as_ref()
            .unwrap_err()
            .contains("operation.invalid_signature"));
    }
    let _ = std::fs::remove_dir_all(&directory);
}
