//! Throughput of `kestrel-protocol`'s application: blocks of signed operations from 500
//! revealed accounts (`kestrel_protocol::workload`) — FA1.2 `transfer` calls (TZIP-7's
//! reference contract, `michelson/mini_scenarios/fa12_reference.tz`), tez transfers,
//! originations of the FA1.2 contract, `xtzToToken` calls of the liquidity-baking CPMM (Octez's
//! `cpmm.tz` and `lqt.tz`, originated at genesis, with liquidity added) — each block decoded, its signatures checked as one batch,
//! each operation validated (counter, fees, limits) and applied (fee, Michelson run with Octez's
//! gas, big-map update, storage accounting), and the state committed once to a
//! `kestrel_context::Store` on disk. Signing happens in criterion's setup, outside the
//! measurement. `kestrel protocol bench` runs the same blocks with a per-stage breakdown.
//!
//! No peer runs here: Octez's own figures are the comparison (BENCHMARKS.md).

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::cell::RefCell;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use kestrel_protocol::workload::{Chain, Sources, Workload, ACCOUNTS_MAX};

/// (workload, name, operations per block): originations take milliseconds each, so their
/// blocks are smaller.
const WORKLOADS: [(Workload, &str, usize); 4] = [
    (Workload::Fa12, "fa12_transfer_blocks_of_1000", 1_000),
    (Workload::Transfer, "tez_transfer_blocks_of_1000", 1_000),
    (Workload::Originate, "fa12_origination_blocks_of_100", 100),
    (Workload::XtzToToken, "xtz_to_token_blocks_of_1000", 1_000),
];

fn apply_blocks(c: &mut Criterion) {
    let read = |path: &str| {
        std::fs::read_to_string(kestrel_testdata::testdata_dir().join(path))
            .unwrap_or_else(|error| panic!("{path} (set KESTREL_TESTDATA): {error}"))
    };
    let fa12 = read("michelson/mini_scenarios/fa12_reference.tz");
    let cpmm = read("michelson/protocol/cpmm.tz");
    let lqt = read("michelson/protocol/lqt.tz");
    let sources = Sources {
        fa12: &fa12,
        liquidity_baking: Some((&cpmm, &lqt)),
    };
    let mut group = c.benchmark_group("protocol_apply");
    group.sample_size(10);
    for (workload, name, block_size) in WORKLOADS {
        let directory =
            std::env::temp_dir().join(format!("kestrel-bench-apply-{name}-{}", std::process::id()));
        let chain = Chain::new(workload, ACCOUNTS_MAX, &sources, &directory).expect("chain");
        let chain = RefCell::new(chain);
        // The first block must apply entirely (apply_block fails on any operation not applied).
        let first = chain.borrow_mut().signed_block(block_size).expect("block");
        chain
            .borrow_mut()
            .apply_block(&first)
            .expect("every operation applied");
        group.throughput(Throughput::Elements(block_size as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || chain.borrow_mut().signed_block(block_size).expect("block"),
                |operations| {
                    chain
                        .borrow_mut()
                        .apply_block(&operations)
                        .expect("every operation applied")
                },
                BatchSize::PerIteration,
            )
        });
        let _ = std::fs::remove_dir_all(&directory);
    }
    group.finish();
}

criterion_group!(benches, apply_blocks);
criterion_main!(benches);
