//! Transactions built and signed by a real client library — solders 0.29 (PyPI), the Python
//! binding of the Solana Rust SDK (`tests/solders_transactions.py`): legacy and v0 (recipients
//! through an address lookup table), with and without compute-budget instructions, one and two
//! signers. Each must pass the stage and come out of the scheduler with the signature the client
//! made and the reward (so the priority) its compute-unit price and limit ask for.
//!
//! solders is installed by `.ci/run`; without it this test says so and passes, except under
//! `CI=true`, where it fails.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use kestrel_scheduler::{BlockhashSource, SchedulerConfig, Stage, StageConfig};
use kestrel_txview::{Address, Hash, UnsanitizedTransactionView};
use std::collections::HashMap;
use std::process::Command;

struct AnyBlockhash;

impl BlockhashSource for AnyBlockhash {
    fn last_valid_slot(&mut self, _: &Hash, _: u64) -> Option<u64> {
        Some(1_000)
    }

    fn durable_nonce_last_valid_slot(&mut self, _: &Address, _: &Hash, _: u64) -> Option<u64> {
        None
    }
}

/// One client transaction: bytes, first signature, signatures, requested unit limit and price.
struct ClientTransaction {
    bytes: Vec<u8>,
    signature: Vec<u8>,
    num_signatures: u64,
    unit_limit: Option<u64>,
    unit_price: Option<u64>,
}

fn address(text: &str) -> Address {
    hex::decode(text).unwrap().try_into().unwrap()
}

#[test]
fn solders_transactions_pass_with_the_clients_signatures_and_priorities() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/solders_transactions.py");
    let output = Command::new("python3").arg(script).output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        other => {
            let message = format!(
                "client_library: skipped, `python3 {script}` failed (is solders installed? .ci/run \
                 installs it): {:?}",
                other.map(|output| String::from_utf8_lossy(&output.stderr).into_owned())
            );
            assert!(!kestrel_testdata::running_in_ci(), "{message}");
            eprintln!("{message}");
            return;
        }
    };
    let text = String::from_utf8(output.stdout).unwrap();
    let mut tables: HashMap<Address, Vec<Address>> = HashMap::new();
    let mut transactions = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[0] {
            "table" => {
                tables.insert(
                    address(fields[1]),
                    fields[2..].iter().map(|key| address(key)).collect(),
                );
            }
            "tx" => transactions.push(ClientTransaction {
                bytes: hex::decode(fields[1]).unwrap(),
                signature: hex::decode(fields[2]).unwrap(),
                num_signatures: fields[3].parse().unwrap(),
                unit_limit: fields[4].parse().ok(),
                unit_price: fields[5].parse().ok(),
            }),
            other => panic!("unexpected line {other}"),
        }
    }
    assert_eq!(transactions.len(), 13);
    let mut stage = Stage::new(StageConfig {
        verify_threads: 1,
        scheduler: SchedulerConfig {
            workers: 2,
            ..SchedulerConfig::default()
        },
        ..StageConfig::default()
    });
    let packets: Vec<&[u8]> = transactions.iter().map(|t| &t.bytes[..]).collect();
    let summary = stage.ingest(&packets, &tables, &mut AnyBlockhash, |index, reason| {
        panic!("client transaction {index} rejected: {reason}")
    });
    assert_eq!(summary.accepted, transactions.len());
    let mut rewards = HashMap::new();
    loop {
        let mut batches = Vec::new();
        stage.schedule(|batch| batches.push(batch), |_| panic!("nothing expires"));
        if batches.is_empty() {
            break;
        }
        for batch in &batches {
            for &id in batch.transactions() {
                let view = stage.transaction(id);
                let meta = stage.meta(id);
                assert_eq!(
                    meta.priority,
                    meta.reward * 1_000_000 / (meta.cost + 1),
                    "Agave's priority"
                );
                rewards.insert(view.signatures()[0].to_vec(), meta.reward);
            }
            stage.complete(batch);
        }
    }
    for transaction in &transactions {
        let view = UnsanitizedTransactionView::try_new_unsanitized(&transaction.bytes[..]).unwrap();
        // Every instruction here is a builtin (compute budget, system): 3,000 units each unless
        // the client set a limit.
        let limit = transaction
            .unit_limit
            .unwrap_or(3_000 * u64::from(view.num_instructions()));
        let priority_fee = (transaction.unit_price.unwrap_or(0) * limit).div_ceil(1_000_000);
        let expected = 2_500 * transaction.num_signatures + priority_fee;
        assert_eq!(
            rewards.get(&transaction.signature),
            Some(&expected),
            "the client's signature and priority fee come out of the scheduler"
        );
    }
}
