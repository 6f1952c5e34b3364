//! The scheduler against `prio-graph` 0.3 (the graph under Agave's PrioGraphScheduler), and the
//! whole ingest stage against the same stage built from `agave-transaction-view`,
//! `ed25519-dalek`, Agave's compute-budget rules and `prio-graph`, in the same criterion groups.
//!
//! Scheduler workloads (`solana-block-production-ingest.md` §2): windows of 2,048, 10,000 and
//! 100,000 transactions naming 8 accounts (12 for 100,000), drawn without conflicts (fresh
//! accounts), uniformly from 1 k, 100 k or 1 M accounts, or with one of 4 hot accounts written by
//! every transaction; and the shape of Agave's published greedy-scheduler figures, 16,384
//! single-instruction transfers (payer and recipient written, the System program read) from
//! unique payers or from one payer. One iteration takes the window, unordered, to completion: 4
//! workers, batches of 64, a batch completes when the workers are full. prio-graph must see transactions in
//! priority order, so its side sorts the window first (Agave pulls them from its priority
//! container in that order). No block limit applies to the timing runs; the reward each scheduler
//! packs into one block (60 M CU, 24 M CU per account) is printed once per workload. `kestrel` and
//! `prio-graph` build their structures afresh each iteration (prio-graph's maps then grow from
//! empty, which Agave's reused graph does not pay; Kestrel's fresh table appends every account's
//! row); `kestrel-reused` and `prio-graph-reused` keep one scheduler and one graph (cleared, as
//! Agave clears it each pass) across iterations, the steady state of a block producer.
//!
//! The scheduler comparisons are single-threaded and timed in the thread's CPU time (the machine
//! is shared, see `benches/txview.rs`); the stage comparison (16,384 signed transfers per
//! iteration) runs 2 threads and is timed in wall time. Each group builds its inputs when it is
//! first measured, so `-- stage` runs the stage groups alone (about a minute).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use agave_transaction_view::sanitize::SanitizeConfig as AgaveConfig;
use agave_transaction_view::transaction_view::TransactionView as AgaveView;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use ed25519_dalek::{SigningKey, VerifyingKey};
use kestrel_scheduler::{
    program_id, Batch, BlockLimits, BlockhashSource, NoAddressTables, Scheduler, SchedulerConfig,
    Stage, StageConfig, TransactionMeta,
};
use kestrel_txview::{Hash, InstructionSpec, MessageHeader, Transaction, TransactionVersion};
use prio_graph::{AccessKind, GraphNode, PrioGraph, TopLevelId};
use std::cmp::Reverse;
use std::collections::{HashSet, VecDeque};
use std::hint::black_box;
use std::time::Duration;

type Address = [u8; 32];

const WORKERS: usize = 4;
const BATCH: usize = 64;

#[path = "measurement_support/thread_cpu_time.rs"]
mod thread_cpu_time;
use kestrel_bench::rng::Rng;
use thread_cpu_time::ThreadCpuTime;

/// One transaction of a window.
struct Tx {
    priority: u64,
    cost: u64,
    reward: u64,
    accounts: Vec<(Address, bool)>,
}

#[derive(Copy, Clone)]
enum Pattern {
    NoConflicts,
    Random(usize),
    Hot(usize),
    /// Agave's scheduler benchmark's shape: single-instruction transfers (payer and recipient
    /// written, the System program read), each from a payer of its own or all from one payer.
    Transfers {
        one_payer: bool,
    },
}

fn window(size: usize, accounts_per_tx: usize, pattern: Pattern, seed: u64) -> Vec<Tx> {
    let mut rng = Rng(seed);
    let pool: Vec<Address> = match pattern {
        Pattern::NoConflicts | Pattern::Transfers { .. } => Vec::new(),
        Pattern::Random(pool) | Pattern::Hot(pool) => (0..pool).map(|_| rng.address()).collect(),
    };
    let hot: Vec<Address> = (0..4).map(|_| rng.address()).collect();
    (0..size)
        .map(|_| {
            let mut accounts: Vec<(Address, bool)> = Vec::with_capacity(accounts_per_tx);
            match pattern {
                Pattern::Hot(_) => accounts.push((hot[rng.below(hot.len())], true)),
                Pattern::Transfers { one_payer } => {
                    let payer = if one_payer { hot[0] } else { rng.address() };
                    accounts.extend([
                        (payer, true),
                        (rng.address(), true),
                        (program_id::SYSTEM, false),
                    ]);
                }
                Pattern::NoConflicts | Pattern::Random(_) => {}
            }
            while accounts.len() < accounts_per_tx {
                let address = match pattern {
                    Pattern::NoConflicts | Pattern::Transfers { .. } => rng.address(),
                    Pattern::Random(_) | Pattern::Hot(_) => pool[rng.below(pool.len())],
                };
                if accounts.iter().all(|(known, _)| *known != address) {
                    let writable = accounts.is_empty() || rng.below(2) == 0;
                    accounts.push((address, writable));
                }
            }
            let cost = 1_000 + rng.below(200_000) as u64;
            let reward = 2_500 + rng.below(1_000_000) as u64;
            Tx {
                priority: kestrel_scheduler::priority(reward, cost),
                cost,
                reward,
                accounts,
            }
        })
        .collect()
}

fn unlimited() -> BlockLimits {
    BlockLimits {
        block_units: u64::MAX / 2,
        account_units: u64::MAX / 2,
        account_data_bytes: u64::MAX / 2,
    }
}

/// Kestrel: insert the window, schedule it to completion; returns the reward scheduled.
fn run_kestrel(window: &[Tx], limits: BlockLimits) -> u64 {
    run_kestrel_on(&mut kestrel_scheduler(window, limits), window)
}

/// A scheduler sized for `window`.
fn kestrel_scheduler(window: &[Tx], limits: BlockLimits) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        workers: WORKERS,
        batches_per_worker: 1,
        batch_transactions: BATCH,
        capacity: window.len(),
        limits,
    })
}

/// Kestrel on an existing, empty scheduler: insert the window, schedule it to completion.
fn run_kestrel_on(scheduler: &mut Scheduler, window: &[Tx]) -> u64 {
    for (index, tx) in window.iter().enumerate() {
        let meta = TransactionMeta {
            priority: tx.priority,
            cost: tx.cost,
            reward: tx.reward,
            last_valid_slot: u64::MAX,
            allocated_data_bytes: 0,
            packet: index as u32,
        };
        let inserted = scheduler.insert(meta, tx.accounts.iter().map(|(a, w)| (a, *w)));
        assert!(inserted.is_ok(), "the window fits");
    }
    let mut in_flight: VecDeque<Batch> = VecDeque::with_capacity(WORKERS);
    let mut reward = 0;
    loop {
        scheduler.schedule(0, |batch| in_flight.push_back(batch));
        let Some(batch) = in_flight.pop_front() else {
            return reward;
        };
        for &id in batch.transactions() {
            reward += scheduler.meta(id).reward;
        }
        scheduler.complete(&batch);
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct TopLevel {
    priority: u64,
    id: Reverse<u32>,
}

impl TopLevelId<u32> for TopLevel {
    fn id(&self) -> u32 {
        self.id.0
    }
}

/// Block limits applied outside prio-graph, as Agave's scheduler applies them: a transaction that
/// does not fit is left out of the block and unblocks its successors.
struct BlockCost {
    limits: BlockLimits,
    block: u64,
    accounts: std::collections::HashMap<Address, u64>,
}

impl BlockCost {
    fn try_add(&mut self, tx: &Tx) -> bool {
        if self.block + tx.cost > self.limits.block_units {
            return false;
        }
        let over = tx.accounts.iter().any(|(address, writable)| {
            *writable
                && self.accounts.get(address).copied().unwrap_or(0) + tx.cost
                    > self.limits.account_units
        });
        if over {
            return false;
        }
        self.block += tx.cost;
        for (address, writable) in &tx.accounts {
            if *writable {
                *self.accounts.entry(*address).or_default() += tx.cost;
            }
        }
        true
    }
}

/// prio-graph: sort by priority, insert, pop batches of 64 for 4 workers, unblock a batch when
/// the workers are full; returns the reward scheduled.
fn run_prio_graph(window: &[Tx], limits: Option<BlockLimits>) -> u64 {
    run_prio_graph_on(&mut prio_graph(window), window, limits)
}

/// A graph for `window`'s transactions.
fn prio_graph(
    window: &[Tx],
) -> PrioGraph<u32, Address, TopLevel, impl Fn(&u32, &GraphNode<u32>) -> TopLevel + '_> {
    PrioGraph::new(|id: &u32, _: &GraphNode<u32>| TopLevel {
        priority: window[*id as usize].priority,
        id: Reverse(*id),
    })
}

/// prio-graph on an existing graph, cleared first (as Agave's scheduler clears its graph before
/// each pass: the maps keep their capacity).
fn run_prio_graph_on(
    graph: &mut PrioGraph<u32, Address, TopLevel, impl Fn(&u32, &GraphNode<u32>) -> TopLevel>,
    window: &[Tx],
    limits: Option<BlockLimits>,
) -> u64 {
    graph.clear();
    let mut order: Vec<u32> = (0..window.len() as u32).collect();
    order.sort_unstable_by_key(|&id| (Reverse(window[id as usize].priority), id));
    for &id in &order {
        graph.insert_transaction(
            id,
            window[id as usize]
                .accounts
                .iter()
                .map(|(address, writable)| {
                    let kind = if *writable {
                        AccessKind::Write
                    } else {
                        AccessKind::Read
                    };
                    (*address, kind)
                }),
        );
    }
    let mut block = limits.map(|limits| BlockCost {
        limits,
        block: 0,
        accounts: Default::default(),
    });
    let mut in_flight: VecDeque<Vec<u32>> = VecDeque::with_capacity(WORKERS);
    let mut reward = 0;
    loop {
        while in_flight.len() < WORKERS {
            let mut batch = Vec::with_capacity(BATCH);
            while batch.len() < BATCH {
                let Some(id) = graph.pop() else { break };
                let tx = &window[id as usize];
                let fits = block.as_mut().is_none_or(|block| block.try_add(tx));
                if fits {
                    reward += tx.reward;
                    batch.push(id);
                } else {
                    graph.unblock(&id);
                }
            }
            if batch.is_empty() {
                break;
            }
            in_flight.push_back(batch);
        }
        let Some(batch) = in_flight.pop_front() else {
            return reward;
        };
        for id in batch {
            graph.unblock(&id);
        }
    }
}

fn bench_schedulers(criterion: &mut Criterion<ThreadCpuTime>) {
    let cases: Vec<(usize, usize, Pattern, &str)> = vec![
        (2_048, 8, Pattern::NoConflicts, "no-conflicts"),
        (2_048, 8, Pattern::Random(1_000), "random-1k"),
        (2_048, 8, Pattern::Random(100_000), "random-100k"),
        (2_048, 8, Pattern::Random(1_000_000), "random-1M"),
        (2_048, 8, Pattern::Hot(100_000), "hot-4-of-100k"),
        (10_000, 8, Pattern::NoConflicts, "no-conflicts"),
        (10_000, 8, Pattern::Random(1_000), "random-1k"),
        (10_000, 8, Pattern::Random(100_000), "random-100k"),
        (10_000, 8, Pattern::Hot(100_000), "hot-4-of-100k"),
        (100_000, 12, Pattern::NoConflicts, "no-conflicts"),
        (100_000, 12, Pattern::Random(100_000), "random-100k"),
        (100_000, 12, Pattern::Random(1_000_000), "random-1M"),
        (100_000, 12, Pattern::Hot(1_000_000), "hot-4-of-1M"),
        // The shape of Agave's published greedy-scheduler figures (16 K single-instruction
        // transactions: 2.76 M/s with unique payers, 137 K/s with one payer).
        (
            16_384,
            3,
            Pattern::Transfers { one_payer: false },
            "transfers-unique-payers",
        ),
        (
            16_384,
            3,
            Pattern::Transfers { one_payer: true },
            "transfers-one-payer",
        ),
    ];
    for (size, accounts, pattern, name) in cases {
        // Built, checked and its rewards printed when the group is first measured, so that a run
        // filtered to other groups (`-- stage`) skips the windows' set-up.
        let cell = std::cell::OnceCell::new();
        let window = || {
            cell.get_or_init(|| {
                let window = window(size, accounts, pattern, size as u64 ^ 0x5EED);
                let kestrel_all = run_kestrel(&window, unlimited());
                let prio_graph_all = run_prio_graph(&window, None);
                assert_eq!(
                    kestrel_all, prio_graph_all,
                    "both schedule the whole window"
                );
                let kestrel_block = run_kestrel_one_block(&window);
                let prio_graph_block = run_prio_graph(&window, Some(BlockLimits::default()));
                eprintln!(
                    "reward in one block, {size} x {accounts} {name}: kestrel {kestrel_block}, \
                     prio-graph {prio_graph_block} lamports ({:.4}x)",
                    kestrel_block as f64 / prio_graph_block as f64
                );
                window
            })
        };
        let mut group = criterion.benchmark_group(format!("scheduler/{size}x{accounts}/{name}"));
        group.throughput(Throughput::Elements(size as u64));
        if size >= 100_000 {
            group.sample_size(10);
        }
        group.bench_function("kestrel", |bencher| {
            let window = window();
            bencher.iter(|| black_box(run_kestrel(black_box(window), unlimited())))
        });
        group.bench_function("prio-graph", |bencher| {
            let window = window();
            bencher.iter(|| black_box(run_prio_graph(black_box(window), None)))
        });
        // The steady state both are built for: one scheduler, one graph (cleared each time, as
        // Agave clears its graph each pass), across windows.
        group.bench_function("kestrel-reused", |bencher| {
            let window = window();
            let mut scheduler = kestrel_scheduler(window, unlimited());
            let reward = run_kestrel_on(&mut scheduler, window);
            assert_eq!(reward, run_kestrel(window, unlimited()), "the same work");
            bencher.iter(|| black_box(run_kestrel_on(&mut scheduler, black_box(window))))
        });
        group.bench_function("prio-graph-reused", |bencher| {
            let window = window();
            let mut graph = prio_graph(window);
            let reward = run_prio_graph_on(&mut graph, window, None);
            assert_eq!(reward, run_prio_graph(window, None), "the same work");
            bencher.iter(|| black_box(run_prio_graph_on(&mut graph, black_box(window), None)))
        });
        group.finish();
    }
}

/// Kestrel within one block's limits: schedules until nothing more fits.
fn run_kestrel_one_block(window: &[Tx]) -> u64 {
    run_kestrel(window, BlockLimits::default())
}

/// Every blockhash is valid.
struct AnyBlockhash;

impl BlockhashSource for AnyBlockhash {
    fn last_valid_slot(&mut self, _: &Hash, _: u64) -> Option<u64> {
        Some(u64::MAX)
    }

    fn durable_nonce_last_valid_slot(&mut self, _: &Address, _: &Hash, _: u64) -> Option<u64> {
        Some(u64::MAX)
    }
}

/// Signed transfers with a compute-unit price: from distinct payers, or all from one.
fn transfers(count: usize, one_payer: bool) -> Vec<Vec<u8>> {
    let mut rng = Rng(0xFEE);
    let payer_of = |index: usize| {
        let mut seed = [7u8; 32];
        if !one_payer {
            seed[..8].copy_from_slice(&(index as u64).to_le_bytes());
        }
        SigningKey::from_bytes(&seed)
    };
    (0..count)
        .map(|index| {
            let payer = payer_of(index);
            let mut price = vec![3];
            price.extend((rng.below(10_000) as u64).to_le_bytes());
            let mut limit = vec![2];
            limit.extend(450u32.to_le_bytes());
            let mut transfer = vec![2, 0, 0, 0];
            transfer.extend((1 + index as u64).to_le_bytes());
            let mut transaction = Transaction::new(
                TransactionVersion::Legacy,
                MessageHeader {
                    num_required_signatures: 1,
                    num_readonly_signed_accounts: 0,
                    num_readonly_unsigned_accounts: 2,
                },
                vec![
                    payer.verifying_key().to_bytes(),
                    rng.address(),
                    program_id::COMPUTE_BUDGET,
                    program_id::SYSTEM,
                ],
                [9; 32],
                vec![
                    InstructionSpec {
                        program_id_index: 2,
                        accounts: vec![],
                        data: price,
                    },
                    InstructionSpec {
                        program_id_index: 2,
                        accounts: vec![],
                        data: limit,
                    },
                    InstructionSpec {
                        program_id_index: 3,
                        accounts: vec![0, 1],
                        data: transfer,
                    },
                ],
            );
            transaction.sign(&[payer]);
            transaction.serialize()
        })
        .collect()
}

/// The Kestrel stage with one verify thread beside the caller: ingest, then schedule to
/// completion; returns the transactions scheduled.
fn kestrel_stage(packets: &[&[u8]]) -> usize {
    // No block limits, as on the peer's side: every transfer from one payer fits.
    let mut stage = Stage::new(StageConfig {
        verify_threads: 1,
        max_ingest_packets: packets.len(),
        scheduler: SchedulerConfig {
            limits: unlimited(),
            ..SchedulerConfig::default()
        },
        ..StageConfig::default()
    });
    stage.ingest(packets, &NoAddressTables, &mut AnyBlockhash, |_, _| {});
    let mut scheduled = 0;
    let mut in_flight: VecDeque<Batch> = VecDeque::new();
    loop {
        stage.schedule(|batch| in_flight.push_back(batch), |_| {});
        let Some(batch) = in_flight.pop_front() else {
            return scheduled;
        };
        scheduled += batch.transactions().len();
        stage.complete(&batch);
    }
}

const AGAVE_CONFIG: AgaveConfig = AgaveConfig {
    min_requested_heap_size: 32 * 1024,
    max_requested_heap_size: 256 * 1024,
    max_instructions: 64,
    max_accounts_per_instruction: 255,
};

/// The peer stage: agave-transaction-view parses and sanitizes, a set of signatures dedups,
/// ed25519-dalek's `verify_strict` checks signatures on 2 threads, Agave's compute-budget rules
/// give the budget, and prio-graph schedules; returns the transactions scheduled.
fn peer_stage(packets: &[&[u8]]) -> usize {
    let mut seen: HashSet<[u8; 64]> = HashSet::with_capacity(packets.len());
    let views: Vec<AgaveView<true, &[u8]>> = packets
        .iter()
        .filter_map(|packet| AgaveView::try_new_sanitized(*packet, &AGAVE_CONFIG).ok())
        .filter(|view| seen.insert(view.signatures()[0].into()))
        .collect();
    let verify = |views: &[AgaveView<true, &[u8]>]| -> Vec<bool> {
        views
            .iter()
            .map(|view| {
                let message = view.message_data();
                view.signatures()
                    .iter()
                    .zip(view.static_account_keys())
                    .all(|(signature, key)| {
                        VerifyingKey::from_bytes(&key.to_bytes()).is_ok_and(|key| {
                            key.verify_strict(
                                message,
                                &ed25519_dalek::Signature::from_bytes(&(*signature).into()),
                            )
                            .is_ok()
                        })
                    })
            })
            .collect()
    };
    let (first, second) = views.split_at(views.len() / 2);
    let verified: Vec<bool> = std::thread::scope(|scope| {
        let other = scope.spawn(|| verify(second));
        let mut verified = verify(first);
        verified.extend(other.join().expect("verify thread"));
        verified
    });
    let feature_set = agave_feature_set_3::FeatureSet::default();
    let mut window = Vec::with_capacity(views.len());
    for (view, ok) in views.iter().zip(verified) {
        if !ok {
            continue;
        }
        let keys: Vec<solana_pubkey_3::Pubkey> = view
            .static_account_keys()
            .iter()
            .map(|key| solana_pubkey_3::Pubkey::new_from_array(key.to_bytes()))
            .collect();
        let instructions = view.instructions_iter().map(|instruction| {
            (
                &keys[usize::from(instruction.program_id_index)],
                solana_svm_transaction_3::instruction::SVMInstruction {
                    program_id_index: instruction.program_id_index,
                    accounts: instruction.accounts,
                    data: instruction.data,
                },
            )
        });
        let Ok(limits) = solana_compute_budget_instruction::instructions_processor::process_compute_budget_instructions(instructions, &feature_set) else {
            continue;
        };
        let num_writable = view.num_requested_write_locks();
        let cost = 720 + 300 * num_writable + u64::from(limits.compute_unit_limit);
        let reward = 2_500
            + (u128::from(limits.compute_unit_price) * u128::from(limits.compute_unit_limit))
                .div_ceil(1_000_000) as u64;
        let writable_static = usize::from(view.num_static_account_keys())
            - usize::from(view.num_readonly_unsigned_static_accounts());
        let accounts = view
            .static_account_keys()
            .iter()
            .enumerate()
            .map(|(index, key)| {
                let signer = index < usize::from(view.num_required_signatures());
                let writable = if signer {
                    index
                        < usize::from(view.num_required_signatures())
                            - usize::from(view.num_readonly_signed_static_accounts())
                } else {
                    index < writable_static
                };
                (key.to_bytes(), writable)
            })
            .collect();
        window.push(Tx {
            priority: kestrel_scheduler::priority(reward, cost),
            cost,
            reward,
            accounts,
        });
    }
    let mut scheduled = 0;
    let mut order: Vec<u32> = (0..window.len() as u32).collect();
    order.sort_unstable_by_key(|&id| (Reverse(window[id as usize].priority), id));
    let mut graph = PrioGraph::new(|id: &u32, _| TopLevel {
        priority: window[*id as usize].priority,
        id: Reverse(*id),
    });
    for &id in &order {
        graph.insert_transaction(
            id,
            window[id as usize]
                .accounts
                .iter()
                .map(|(address, writable)| {
                    (
                        *address,
                        if *writable {
                            AccessKind::Write
                        } else {
                            AccessKind::Read
                        },
                    )
                }),
        );
    }
    let mut in_flight: VecDeque<Vec<u32>> = VecDeque::new();
    loop {
        while in_flight.len() < WORKERS {
            let mut batch = Vec::with_capacity(BATCH);
            while batch.len() < BATCH {
                let Some(id) = graph.pop() else { break };
                batch.push(id);
            }
            if batch.is_empty() {
                break;
            }
            scheduled += batch.len();
            in_flight.push_back(batch);
        }
        let Some(batch) = in_flight.pop_front() else {
            return scheduled;
        };
        for id in batch {
            graph.unblock(&id);
        }
    }
}

/// Transfers per stage iteration: as many as Agave's published greedy-scheduler figures schedule.
const STAGE_TRANSFERS: usize = 16_384;

fn bench_stage(criterion: &mut Criterion) {
    for (name, one_payer) in [("unique-payers", false), ("one-payer", true)] {
        // Signed and checked when the group is first measured (skipped by `-- scheduler/`).
        let cell = std::cell::OnceCell::new();
        let packets = || {
            cell.get_or_init(|| {
                let packets = transfers(STAGE_TRANSFERS, one_payer);
                let slices: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
                assert_eq!(kestrel_stage(&slices), STAGE_TRANSFERS);
                assert_eq!(peer_stage(&slices), STAGE_TRANSFERS);
                packets
            })
        };
        let mut group =
            criterion.benchmark_group(format!("stage/{STAGE_TRANSFERS}-transfers/{name}"));
        group.throughput(Throughput::Elements(STAGE_TRANSFERS as u64));
        // One iteration takes a few hundred milliseconds: ten samples of one iteration each.
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.warm_up_time(Duration::from_secs(1));
        group.bench_function("kestrel", |bencher| {
            let slices: Vec<&[u8]> = packets().iter().map(Vec::as_slice).collect();
            bencher.iter(|| black_box(kestrel_stage(black_box(&slices))))
        });
        group.bench_function("agave-view+dalek+prio-graph", |bencher| {
            let slices: Vec<&[u8]> = packets().iter().map(Vec::as_slice).collect();
            bencher.iter(|| black_box(peer_stage(black_box(&slices))))
        });
        group.finish();
    }
}

criterion_group! {
    name = schedulers;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = bench_schedulers
}
criterion_group!(stage, bench_stage);
criterion_main!(schedulers, stage);
