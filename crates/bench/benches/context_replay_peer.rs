//! The replay workload (context-replay-workload.md) through kestrel-context and, on the same
//! stream of key updates and commits, through NOMT. Not a criterion benchmark: a block is the unit
//! and its latency distribution is the result. Run with
//! `cargo bench -p kestrel-bench --bench context_replay_peer`; `KESTREL_BENCH_BLOCKS` (default
//! 300), `KESTREL_BENCH_OPS` (default 386) and `KESTREL_BENCH_CONTRACTS` (default 100000) size it.
//!
//! NOMT is a flat key-value Merkle trie: each Tezos path is hashed (BLAKE2b-256 of the path joined
//! by '/') into its 32-byte key path; find/mem/mem_tree are reads of that key (mem_tree of a
//! directory, which NOMT cannot express, reads the directory's own key); copy of a subtree has no
//! NOMT equivalent and is skipped for NOMT (0.1 % of operations).

use kestrel_context::{Store, StoreOptions, SyncMode, Tree};
use kestrel_context_replay::workload::{apply, Generator, Operation};
use nomt::hasher::Blake3Hasher;
use nomt::{KeyReadWrite, Nomt, Options, SessionParams};
use std::collections::BTreeMap;
use std::time::Instant;

fn variable(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn key_path(key: &[String]) -> [u8; 32] {
    kestrel_crypto::hash::blake2b_256(key.join("/").as_bytes())
}

struct Summary {
    mean_milliseconds: f64,
    p99_milliseconds: f64,
    max_milliseconds: f64,
}

fn summarize(nanoseconds: &[u64]) -> Summary {
    let mut sorted: Vec<f64> = nanoseconds
        .iter()
        .map(|value| *value as f64 / 1e6)
        .collect();
    sorted.sort_by(f64::total_cmp);
    let count = sorted.len().max(1);
    Summary {
        mean_milliseconds: sorted.iter().sum::<f64>() / count as f64,
        p99_milliseconds: sorted[((count as f64 * 0.99).ceil() as usize)
            .saturating_sub(1)
            .min(count - 1)],
        max_milliseconds: *sorted.last().unwrap_or(&0.0),
    }
}

fn report(name: &str, blocks: &[u64], commits: &[u64], updates: u64) {
    let block = summarize(blocks);
    let commit = summarize(commits);
    let seconds = blocks.iter().sum::<u64>() as f64 / 1e9;
    println!(
        "{name:>16}: block {:.3} ms mean, {:.3} p99, {:.3} max | commit {:.3} ms mean, {:.3} p99 | {:.0} updates/s",
        block.mean_milliseconds,
        block.p99_milliseconds,
        block.max_milliseconds,
        commit.mean_milliseconds,
        commit.p99_milliseconds,
        updates as f64 / seconds
    );
}

fn is_update(operation: &Operation) -> bool {
    matches!(operation, Operation::Add(..) | Operation::Remove(..))
}

fn main() {
    let blocks = variable("KESTREL_BENCH_BLOCKS", 300);
    let operations_per_block = variable("KESTREL_BENCH_OPS", 386) as u32;
    let contracts = variable("KESTREL_BENCH_CONTRACTS", 100_000);
    let seed = 1;
    let root = std::env::temp_dir().join(format!("kestrel-bench-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    println!("replay: {blocks} blocks of {operations_per_block} operations, {contracts} contracts at genesis, seed {seed}");

    // kestrel-context: checkout, operations, commit (fdatasync per commit).
    // NOMT syncs every commit, so kestrel-context does too here (its default syncs at checkpoints).
    let options = StoreOptions {
        sync_mode: SyncMode::EveryCommit,
        ..StoreOptions::default()
    };
    let mut store = Store::open(&root.join("kestrel"), options).expect("open");
    let mut generator = Generator::new(seed, contracts);
    let (tree, _) = apply(&store, Tree::empty(), &generator.genesis()).expect("genesis");
    let mut head = store
        .commit(&tree, &[], &Generator::commit_info(0, 0))
        .expect("commit");
    drop(tree);
    let (mut block_times, mut commit_times, mut updates) = (Vec::new(), Vec::new(), 0u64);
    for level in 1..=blocks {
        let operations = generator.block(operations_per_block);
        updates += operations
            .iter()
            .filter(|operation| is_update(operation))
            .count() as u64;
        let info = Generator::commit_info(level, operations_per_block);
        let start = Instant::now();
        let tree = store
            .checkout_for_update(&head)
            .expect("checkout")
            .expect("head");
        let (tree, _) = apply(&store, tree, &operations).expect("apply");
        let commit_start = Instant::now();
        head = store.commit(&tree, &[head], &info).expect("commit");
        commit_times.push(commit_start.elapsed().as_nanos() as u64);
        block_times.push(start.elapsed().as_nanos() as u64);
    }
    report("kestrel-context", &block_times, &commit_times, updates);
    drop(store);

    // NOMT on the same stream.
    let mut options = Options::new();
    options.path(root.join("nomt"));
    options.commit_concurrency(1);
    let nomt = Nomt::<Blake3Hasher>::open(options).expect("nomt open");
    let mut generator = Generator::new(seed, contracts);
    let genesis = generator.genesis();
    let mut actuals: BTreeMap<[u8; 32], KeyReadWrite> = BTreeMap::new();
    for operation in &genesis {
        if let Operation::Add(key, value) = operation {
            actuals.insert(key_path(key), KeyReadWrite::Write(Some(value.clone())));
        }
    }
    let session = nomt.begin_session(SessionParams::default());
    session
        .finish(actuals.into_iter().collect())
        .expect("finish")
        .commit(&nomt)
        .expect("commit");
    let (mut block_times, mut commit_times, mut updates) = (Vec::new(), Vec::new(), 0u64);
    for _ in 1..=blocks {
        let operations = generator.block(operations_per_block);
        let start = Instant::now();
        let session = nomt.begin_session(SessionParams::default());
        let mut actuals: BTreeMap<[u8; 32], KeyReadWrite> = BTreeMap::new();
        for operation in &operations {
            match operation {
                Operation::Find(key) | Operation::Mem(key) | Operation::MemTree(key) => {
                    let path = key_path(key);
                    match actuals.get_mut(&path) {
                        Some(_) => {}
                        None => {
                            let value = session.read(path).expect("read");
                            actuals.insert(path, KeyReadWrite::Read(value));
                        }
                    }
                }
                Operation::Add(key, value) => {
                    let path = key_path(key);
                    session.warm_up(path);
                    actuals
                        .entry(path)
                        .and_modify(|slot| slot.write(Some(value.clone())))
                        .or_insert_with(|| KeyReadWrite::Write(Some(value.clone())));
                    updates += 1;
                }
                Operation::Remove(key) => {
                    let path = key_path(key);
                    session.warm_up(path);
                    actuals
                        .entry(path)
                        .and_modify(|slot| slot.write(None))
                        .or_insert(KeyReadWrite::Write(None));
                    updates += 1;
                }
                Operation::Copy(..) => {}
            }
        }
        let commit_start = Instant::now();
        session
            .finish(actuals.into_iter().collect())
            .expect("finish")
            .commit(&nomt)
            .expect("commit");
        commit_times.push(commit_start.elapsed().as_nanos() as u64);
        block_times.push(start.elapsed().as_nanos() as u64);
    }
    report("nomt", &block_times, &commit_times, updates);
    drop(nomt);
    let _ = std::fs::remove_dir_all(&root);
}
