//! Transaction parsing: `kestrel-txview` against `agave-transaction-view` 6.1.0 and full
//! deserialization of `VersionedTransaction` (wincode 0.6, and serde + bincode 1), in the same
//! criterion groups.
//!
//! Workloads: the 308 mainnet transactions in `../shared/testdata/solana/mainnet-legacy-308.hex`,
//! and Agave's own five benchmark shapes (`agave-transaction-view/benches/transaction_view.rs`),
//! 1024 transactions each, built here with the same layout: minimum-sized (no instructions), simple
//! transfer, 60 packed transfers, 64 packed no-op instructions, 31 packed lookup tables.
//!
//! Time is the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall time: the machine
//! is shared by several builds at once, and CPU time leaves out the time the thread waits for a
//! core. Every result is passed whole to `std::hint::black_box`, so no parser's work can be optimized
//! away. Not criterion 0.5's own `black_box`: that one is a `read_volatile` copy of the value, which
//! LLVM lowers according to the value's IR type — 40 one-byte loads for kestrel's `Result` (niche-encoded
//! in the frame's version field, so its IR type is byte arrays around the tag), 10 eight-byte loads
//! for Agave's — so it charged each
//! parser a different cost per transaction that belongs to neither (criterion's own doc comment
//! says this stable variant "may cause some performance overhead").

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use agave_transaction_view::sanitize::SanitizeConfig as AgaveConfig;
use agave_transaction_view::transaction_view::TransactionView as AgaveView;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use kestrel_txview::{
    AddressTableLookupSpec, InstructionSpec, MessageHeader, SanitizeConfig,
    SanitizedTransactionView, Transaction, TransactionVersion, UnsanitizedTransactionView,
};
use solana_transaction::versioned::VersionedTransaction;
use std::hint::black_box;

/// The config Agave's benchmark uses (today's mainnet values).
const AGAVE_CONFIG: AgaveConfig = AgaveConfig {
    min_requested_heap_size: 32 * 1024,
    max_requested_heap_size: 256 * 1024,
    max_instructions: 64,
    max_accounts_per_instruction: 255,
};
/// Agave's benchmark size per scenario.
const NUM_TRANSACTIONS: usize = 1024;

#[path = "measurement_support/thread_cpu_time.rs"]
mod thread_cpu_time;
use thread_cpu_time::ThreadCpuTime;

fn bench_parsers(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, transactions: &[Vec<u8>]) {
    group.throughput(Throughput::Elements(transactions.len() as u64));
    group.bench_function("kestrel unsanitized", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let view = UnsanitizedTransactionView::try_new_unsanitized(black_box(&bytes[..]));
                let _ = black_box(view);
            }
        })
    });
    group.bench_function("agave unsanitized", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let view = AgaveView::try_new_unsanitized(black_box(&bytes[..]));
                let _ = black_box(view);
            }
        })
    });
    group.bench_function("kestrel sanitized", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let view = SanitizedTransactionView::try_new_sanitized(
                    black_box(&bytes[..]),
                    &SanitizeConfig::MAINNET,
                );
                let _ = black_box(view);
            }
        })
    });
    group.bench_function("agave sanitized", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let view = AgaveView::try_new_sanitized(black_box(&bytes[..]), &AGAVE_CONFIG);
                let _ = black_box(view);
            }
        })
    });
    group.bench_function("wincode VersionedTransaction", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let transaction =
                    wincode::deserialize::<VersionedTransaction>(black_box(&bytes[..]));
                let _ = black_box(transaction);
            }
        })
    });
    group.bench_function("bincode VersionedTransaction", |bencher| {
        bencher.iter(|| {
            for bytes in transactions {
                let transaction =
                    bincode::deserialize::<VersionedTransaction>(black_box(&bytes[..]));
                let _ = black_box(transaction);
            }
        })
    });
}

/// Deterministic pseudo-random keys (xorshift64*), standing in for `Keypair::new` and
/// `Pubkey::new_unique`; parsing cost does not depend on key values.
struct Keys(u64);

impl Keys {
    fn next(&mut self) -> [u8; 32] {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            chunk.copy_from_slice(&self.0.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        key
    }
}

fn signed(mut transaction: Transaction, keys: &mut Keys) -> Vec<u8> {
    transaction.signatures = vec![[keys.next(), keys.next()]
        .concat()
        .try_into()
        .unwrap_or([0; 64])];
    transaction.serialize()
}

fn header(num_readonly_unsigned_accounts: u8) -> MessageHeader {
    MessageHeader {
        num_required_signatures: 1,
        num_readonly_signed_accounts: 0,
        num_readonly_unsigned_accounts,
    }
}

/// `system_instruction::transfer(from, to, 1)` compiled against keys `[from, to, system]`.
fn transfer() -> InstructionSpec {
    InstructionSpec {
        program_id_index: 2,
        accounts: vec![0, 1],
        data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    }
}

fn scenario(build: impl Fn(&mut Keys) -> Transaction) -> Vec<Vec<u8>> {
    let mut keys = Keys(0x0123_4567_89AB_CDEF);
    (0..NUM_TRANSACTIONS)
        .map(|_| {
            let transaction = build(&mut keys);
            signed(transaction, &mut keys)
        })
        .collect()
}

fn scenarios() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    vec![
        (
            "txview min sized transactions",
            scenario(|keys| {
                Transaction::new(
                    TransactionVersion::Legacy,
                    header(0),
                    vec![keys.next()],
                    [0; 32],
                    vec![],
                )
            }),
        ),
        (
            "txview simple transfers",
            scenario(|keys| {
                Transaction::new(
                    TransactionVersion::Legacy,
                    header(1),
                    vec![keys.next(), keys.next(), [0; 32]],
                    [0; 32],
                    vec![transfer()],
                )
            }),
        ),
        (
            "txview packed transfers",
            scenario(|keys| {
                Transaction::new(
                    TransactionVersion::Legacy,
                    header(1),
                    vec![keys.next(), keys.next(), [0; 32]],
                    [0; 32],
                    vec![transfer(); 60],
                )
            }),
        ),
        (
            "txview packed noops",
            scenario(|keys| {
                Transaction::new(
                    TransactionVersion::Legacy,
                    header(1),
                    vec![keys.next(), keys.next()],
                    [0; 32],
                    vec![
                        InstructionSpec {
                            program_id_index: 1,
                            accounts: vec![],
                            data: vec![],
                        };
                        64
                    ],
                )
            }),
        ),
        (
            "txview packed atls",
            scenario(|keys| {
                let mut transaction = Transaction::new(
                    TransactionVersion::V0,
                    header(0),
                    vec![keys.next()],
                    [0; 32],
                    vec![],
                );
                transaction.address_table_lookups = (0..31)
                    .map(|_| AddressTableLookupSpec {
                        account_key: keys.next(),
                        writable_indexes: vec![0],
                        readonly_indexes: vec![],
                    })
                    .collect();
                transaction
            }),
        ),
    ]
}

fn mainnet() -> Vec<Vec<u8>> {
    let Some(path) = kestrel_testdata::require("solana/mainnet-legacy-308.hex", "txview bench")
    else {
        return Vec::new();
    };
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter_map(|line| hex::decode(line.trim()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn check_accepted(name: &str, transactions: &[Vec<u8>]) {
    for bytes in transactions {
        assert!(
            SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET)
                .is_ok()
                && AgaveView::try_new_sanitized(&bytes[..], &AGAVE_CONFIG).is_ok()
                && wincode::deserialize::<VersionedTransaction>(&bytes[..]).is_ok(),
            "{name}: every benchmark transaction must be accepted by all parsers"
        );
    }
}

fn txview(criterion: &mut Criterion<ThreadCpuTime>) {
    let transactions = mainnet();
    if !transactions.is_empty() {
        check_accepted("mainnet", &transactions);
        let mut group = criterion.benchmark_group("txview mainnet 308");
        bench_parsers(&mut group, &transactions);
        group.finish();
    }
    for (name, transactions) in scenarios() {
        check_accepted(name, &transactions);
        let mut group = criterion.benchmark_group(name);
        bench_parsers(&mut group, &transactions);
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = txview
}
criterion_main!(benches);
