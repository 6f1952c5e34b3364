//! The synthetic Tezos-like replay workload (../shared/specs/context-replay-workload.md) and the
//! replay runner that measures the store on it.
//!
//! A [`Generator`] produces, from a seed, a genesis state (a `data/contracts/index` directory of
//! 10^5 contracts by default, big maps, rolls) and then blocks of operations with the published
//! mix (find 58 %, add 18 %, mem 14 %, mem_tree 8.8 %, remove 1.1 %, copy 0.1 %) on keys of depth
//! 3 to 6, mostly short values and a few of kilobytes. It models only which keys exist, never the
//! store, so the same stream can be fed to another store (the NOMT comparison in crates/bench) or
//! written as an Irmin trace. [`replay`] runs blocks against a [`Store`]: checkout of the previous
//! commit, the operations, one commit; only that is timed (generation is not).

use kestrel_context::ContextError;
use kestrel_context::Tree;
use kestrel_context::{CommitInfo, ContextHash};
use kestrel_context::{Store, StoreOptions};
use std::path::Path;
use std::time::Instant;

/// Operations per block on the first 10,310 mainnet blocks (context-replay-workload.md).
pub const OPERATIONS_PER_BLOCK_EARLY: u32 = 386;
/// Operations per block averaged over the 2018-2021 history (context-replay-workload.md).
pub const OPERATIONS_PER_BLOCK_HISTORY: u32 = 811;
/// Transactions per block behind the TPS-equivalent (1043 TPS x 23.2 ms, context-replay-workload.md).
pub const TRANSACTIONS_PER_BLOCK: f64 = 24.0;
/// Contracts in the genesis state: `data/contracts/index` starts with 10^5 children.
pub const INITIAL_CONTRACTS_DEFAULT: u64 = 100_000;
/// Big maps in the genesis state, and entries in each.
const INITIAL_BIG_MAPS: u64 = 64;
const INITIAL_BIG_MAP_ENTRIES: u64 = 200;
/// Rolls in the genesis state.
const INITIAL_ROLLS: u64 = 8_000;
/// Seconds between blocks (Hangzhou's minimal block delay was 30 s).
const BLOCK_DELAY_SECONDS: i64 = 30;
/// The genesis date: 2018-06-30, the mainnet launch.
const GENESIS_DATE_SECONDS: i64 = 1_530_316_800;

/// A key: a list of names.
pub type Key = Vec<String>;

/// One operation of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Read the contents at a key.
    Find(Key),
    /// Whether a key holds contents.
    Mem(Key),
    /// Whether a key holds anything.
    MemTree(Key),
    /// Bind contents to a key.
    Add(Key, Vec<u8>),
    /// Remove a key.
    Remove(Key),
    /// Copy the subtree at the first key to the second.
    Copy(Key, Key),
}

/// A small, fast, seeded generator (xoshiro256** seeded through SplitMix64): the workload must be
/// reproducible across machines, so no dependency on an external generator's stream.
#[derive(Clone, Debug)]
pub struct Random {
    state: [u64; 4],
}

impl Random {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Random {
        let mut mix = seed;
        let mut next = || {
            mix = mix.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = mix;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Random {
            state: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.state[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.state[1] << 17;
        self.state[2] ^= self.state[0];
        self.state[3] ^= self.state[1];
        self.state[1] ^= self.state[2];
        self.state[0] ^= self.state[3];
        self.state[2] ^= t;
        self.state[3] = self.state[3].rotate_left(45);
        result
    }

    /// A number in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A number in `0..bound` skewed towards 0 (a few hot accounts take most of the traffic).
    fn skewed(&mut self, bound: u64) -> u64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u * u) * bound as f64) as u64 % bound.max(1)
    }
}

/// The synthetic workload: genesis, then blocks.
#[derive(Clone, Debug)]
pub struct Generator {
    random: Random,
    contracts: u64,
    big_maps: u64,
    big_map_entries: u64,
    rolls: u64,
    level: u64,
}

/// A Tezos-style contract index name: 22 bytes (tag and 21-byte hash) in hexadecimal.
fn contract_name(contract: u64) -> String {
    let mixed = contract.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (contract >> 7);
    format!(
        "0000{mixed:016x}{:016x}{contract:08x}",
        mixed.rotate_left(29)
    )
}

fn big_map_entry_name(big_map: u64, entry: u64) -> String {
    let a = (big_map << 32 | entry).wrapping_mul(0xd6e8_feb8_6659_fd93);
    format!(
        "{a:016x}{:016x}{:016x}{:016x}",
        a.rotate_left(17),
        a.rotate_left(31),
        a ^ entry
    )
}

fn key(parts: &[&str]) -> Key {
    parts.iter().map(|part| (*part).to_owned()).collect()
}

impl Generator {
    /// A generator with `initial_contracts` contracts at genesis.
    pub fn new(seed: u64, initial_contracts: u64) -> Generator {
        Generator {
            random: Random::new(seed),
            contracts: initial_contracts.max(1),
            big_maps: INITIAL_BIG_MAPS,
            big_map_entries: INITIAL_BIG_MAP_ENTRIES,
            rolls: INITIAL_ROLLS,
            level: 0,
        }
    }

    fn contract_key(contract: u64, field: &str) -> Key {
        key(&[
            "data",
            "contracts",
            "index",
            &contract_name(contract),
            field,
        ])
    }

    fn big_map_key(big_map: u64, entry: u64) -> Key {
        key(&[
            "data",
            "big_maps",
            "index",
            &big_map.to_string(),
            "contents",
            &big_map_entry_name(big_map, entry),
            "data",
        ])
    }

    fn roll_key(roll: u64) -> Key {
        key(&[
            "data",
            "rolls",
            "owner",
            "current",
            &(roll % 256).to_string(),
            &(roll / 256 % 256).to_string(),
            &roll.to_string(),
        ])
    }

    fn short_value(&mut self) -> Vec<u8> {
        // Zarith-sized balances and counters, packed big-map values: mostly under 64 bytes.
        let length = 4 + self.random.below(44) as usize;
        (0..length).map(|_| self.random.next_u64() as u8).collect()
    }

    fn value(&mut self) -> Vec<u8> {
        if self.random.below(400) == 0 {
            // Contract code or a large storage: kilobytes.
            let length = 1024 + self.random.below(7 * 1024) as usize;
            return (0..length).map(|_| self.random.next_u64() as u8).collect();
        }
        self.short_value()
    }

    /// The genesis state as `Add` operations (one commit, not timed as a block).
    pub fn genesis(&mut self) -> Vec<Operation> {
        let mut operations = Vec::new();
        self.genesis_in_chunks(usize::MAX, |chunk| {
            operations.extend(chunk);
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|never| match never {});
        operations
    }

    /// The operations of [`Generator::genesis`], in the same order, handed to `consume` in chunks
    /// of at most `chunk_length` operations: applying them chunk by chunk builds the same tree
    /// without holding every operation at once (genesis's operations were most of the replay's
    /// peak memory).
    pub fn genesis_in_chunks<E>(
        &mut self,
        chunk_length: usize,
        mut consume: impl FnMut(Vec<Operation>) -> Result<(), E>,
    ) -> Result<(), E> {
        let chunk_length = chunk_length.max(1);
        let mut operations = Vec::new();
        let mut push = |operations: &mut Vec<Operation>, operation| -> Result<(), E> {
            operations.push(operation);
            if operations.len() >= chunk_length {
                consume(std::mem::take(operations))?;
            }
            Ok(())
        };
        push(
            &mut operations,
            Operation::Add(key(&["data", "v1", "constants"]), vec![7; 300]),
        )?;
        push(
            &mut operations,
            Operation::Add(key(&["protocol"]), vec![1; 32]),
        )?;
        for contract in 0..self.contracts {
            let balance = self.short_value();
            push(
                &mut operations,
                Operation::Add(Self::contract_key(contract, "balance"), balance),
            )?;
            push(
                &mut operations,
                Operation::Add(
                    Self::contract_key(contract, "counter"),
                    contract.to_be_bytes().to_vec(),
                ),
            )?;
        }
        for big_map in 0..self.big_maps {
            for entry in 0..self.big_map_entries {
                let value = self.short_value();
                push(
                    &mut operations,
                    Operation::Add(Self::big_map_key(big_map, entry), value),
                )?;
            }
        }
        for roll in 0..self.rolls {
            push(
                &mut operations,
                Operation::Add(Self::roll_key(roll), roll.to_be_bytes().to_vec()),
            )?;
        }
        if !operations.is_empty() {
            consume(operations)?;
        }
        Ok(())
    }

    fn existing_key(&mut self) -> Key {
        match self.random.below(10) {
            0..=6 => {
                let contract = self.random.skewed(self.contracts);
                let field = if self.random.below(2) == 0 {
                    "balance"
                } else {
                    "counter"
                };
                Self::contract_key(contract, field)
            }
            7 | 8 => {
                let big_map = self.random.skewed(self.big_maps);
                let entry = self.random.below(self.big_map_entries);
                Self::big_map_key(big_map, entry)
            }
            _ => {
                let roll = self.random.below(self.rolls);
                Self::roll_key(roll)
            }
        }
    }

    fn read_key(&mut self) -> Key {
        // One read in ten misses (a fresh contract, a missing big-map key).
        if self.random.below(10) == 0 {
            let contract = self.contracts + self.random.below(1000);
            return Self::contract_key(contract, "balance");
        }
        self.existing_key()
    }

    /// The operations of the next block (`count` of them).
    pub fn block(&mut self, count: u32) -> Vec<Operation> {
        self.level += 1;
        let mut operations = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let roll = self.random.below(1000);
            let operation = match roll {
                0..=579 => Operation::Find(self.read_key()),
                580..=759 => match self.random.below(20) {
                    0 => {
                        // A new contract (an origination or a first transfer to an implicit account).
                        let contract = self.contracts;
                        self.contracts += 1;
                        let value = self.short_value();
                        Operation::Add(Self::contract_key(contract, "balance"), value)
                    }
                    1..=3 => {
                        let big_map = self.random.skewed(self.big_maps);
                        let entry = self.big_map_entries + self.random.below(50);
                        if entry == self.big_map_entries {
                            self.big_map_entries += 1;
                        }
                        let value = self.value();
                        Operation::Add(Self::big_map_key(big_map, entry), value)
                    }
                    _ => {
                        let target = self.existing_key();
                        let value = self.value();
                        Operation::Add(target, value)
                    }
                },
                760..=899 => Operation::Mem(self.read_key()),
                900..=987 => {
                    let mut target = self.read_key();
                    target.pop();
                    Operation::MemTree(target)
                }
                988..=998 => {
                    let roll = self.random.below(self.rolls);
                    Operation::Remove(Self::roll_key(roll))
                }
                _ => {
                    // Roll snapshots copy a whole subtree (O(1) in a Merkle tree).
                    let cycle = (self.level / 4096).to_string();
                    let index = (self.level % 16).to_string();
                    Operation::Copy(
                        key(&["data", "rolls", "owner", "current"]),
                        key(&["data", "rolls", "owner", "snapshot", &cycle, &index]),
                    )
                }
            };
            operations.push(operation);
        }
        operations
    }

    /// The commit metadata of block `level`.
    pub fn commit_info(level: u64, operation_count: u32) -> CommitInfo {
        CommitInfo {
            date_seconds: GENESIS_DATE_SECONDS + level as i64 * BLOCK_DELAY_SECONDS,
            author: "Tezos".into(),
            message: format!("lvl {level}, fit 1:{level}, prio 0, {operation_count} ops"),
        }
    }
}

/// Applies `operations` to `tree`, returning the new tree and how many reads found something.
pub fn apply(
    store: &Store,
    tree: Tree,
    operations: &[Operation],
) -> Result<(Tree, u64), ContextError> {
    let mut tree = tree;
    let mut found = 0u64;
    for operation in operations {
        match operation {
            Operation::Find(key) => found += u64::from(tree.find(store, key)?.is_some()),
            Operation::Mem(key) => found += u64::from(tree.mem(store, key)?),
            Operation::MemTree(key) => found += u64::from(tree.mem_tree(store, key)?),
            Operation::Add(key, value) => tree.add_in_place(store, key, value)?,
            Operation::Remove(key) => tree.remove_in_place(store, key)?,
            Operation::Copy(from, to) => {
                if let Some(subtree) = tree.find_tree(store, from)? {
                    tree.add_tree_in_place(store, to, &subtree)?;
                }
            }
        }
    }
    Ok((tree, found))
}

/// Genesis operations generated and applied at a time by [`replay`]: small enough that the
/// operations waiting to be applied are a few megabytes, large enough to cost nothing.
pub const GENESIS_CHUNK_OPERATIONS: usize = 4096;

/// What a replay is asked to do.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Blocks to replay after genesis.
    pub blocks: u64,
    /// Operations per block.
    pub operations_per_block: u32,
    /// The workload seed.
    pub seed: u64,
    /// Contracts at genesis.
    pub initial_contracts: u64,
    /// Store options (sync mode, cache budget).
    pub store_options: StoreOptions,
    /// Stop after the first block that ends later than this after the first block started (the
    /// report then covers the blocks done); `None`: replay every block.
    pub time_limit: Option<std::time::Duration>,
    /// Diagnostics: every this many blocks, sample the process's resident memory and the store's
    /// own estimates of what it holds ([`ReplayReport::memory_samples`]); `None`: never (the
    /// sample walks the retained tree, outside the timed blocks).
    pub memory_sample_interval_blocks: Option<u64>,
}

/// One memory sample of a replay, taken between two blocks.
#[derive(Clone, Copy, Debug)]
pub struct MemorySample {
    /// The last block replayed.
    pub level: u64,
    /// `VmRSS` of /proc/self/status, in bytes.
    pub resident_bytes: u64,
    /// `RssAnon` of /proc/self/status (the heap and other private memory), in bytes.
    pub resident_anonymous_bytes: u64,
    /// The store's estimates.
    pub store: kestrel_context::MemoryStatistics,
}

/// What a replay measured.
#[derive(Clone, Debug)]
pub struct ReplayReport {
    /// Blocks replayed (genesis excluded).
    pub blocks: u64,
    /// Operations per block.
    pub operations_per_block: u32,
    /// Milliseconds to build and commit genesis.
    pub genesis_milliseconds: f64,
    /// Per-block times in nanoseconds (checkout + operations + commit).
    pub block_nanoseconds: Vec<u64>,
    /// Per-block time of the commit alone (hashing, writing, syncing), in nanoseconds.
    pub commit_nanoseconds: Vec<u64>,
    /// Per-block time this thread ran on a CPU, in nanoseconds (from /proc/thread-self/schedstat;
    /// empty where unavailable): on a shared machine, the figure that excludes waiting.
    pub block_cpu_nanoseconds: Vec<u64>,
    /// Per-block objects read from the pack (object-cache misses), to tell whether a slow block
    /// was slow because it missed the cache.
    pub block_objects_read: Vec<u32>,
    /// Reads that found something.
    pub reads_found: u64,
    /// Bytes on disk after the replay (pack, index, control).
    pub disk_bytes: u64,
    /// Bytes on disk after genesis.
    pub genesis_disk_bytes: u64,
    /// The last commit.
    pub head: Option<ContextHash>,
    /// The store's counters.
    pub statistics: kestrel_context::StoreStatistics,
    /// Nanoseconds this thread ran on a CPU during the timed blocks, and nanoseconds it waited
    /// runnable for one (from /proc/thread-self/schedstat; `None` where unavailable). On a shared
    /// machine the wall-clock block time is CPU time + run-queue wait + I/O wait.
    pub scheduler_nanoseconds: Option<(u64, u64)>,
    /// Bytes this process caused to be read from the storage device during the timed blocks
    /// (`read_bytes` of /proc/self/io; page-cache hits excluded; `None` where unavailable).
    pub device_read_bytes: Option<u64>,
    /// Memory samples ([`ReplayOptions::memory_sample_interval_blocks`]).
    pub memory_samples: Vec<MemorySample>,
    /// The store's bytes on disk ([`Store::disk_bytes`]) every [`DISK_SAMPLE_INTERVAL_BLOCKS`]
    /// blocks: (level, bytes).
    pub disk_samples: Vec<(u64, u64)>,
    /// Each GC that completed during the replay, with the level after which it was seen done.
    pub gc_reports: Vec<(u64, kestrel_context::GcReport)>,
}

/// Blocks between two samples of the store's disk use in a replay.
pub const DISK_SAMPLE_INTERVAL_BLOCKS: u64 = 1000;

/// Summary statistics of the block times, in milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct BlockTimeSummary {
    /// Mean.
    pub mean_milliseconds: f64,
    /// Standard deviation.
    pub standard_deviation_milliseconds: f64,
    /// 99th percentile.
    pub p99_milliseconds: f64,
    /// Maximum.
    pub max_milliseconds: f64,
}

impl BlockTimeSummary {
    /// Mean, standard deviation, p99 and max of `nanoseconds`, in milliseconds.
    pub fn of(nanoseconds: &[u64]) -> BlockTimeSummary {
        let count = nanoseconds.len().max(1) as f64;
        let milliseconds: Vec<f64> = nanoseconds
            .iter()
            .map(|nanoseconds| *nanoseconds as f64 / 1e6)
            .collect();
        let mean = milliseconds.iter().sum::<f64>() / count;
        let variance = milliseconds
            .iter()
            .map(|value| (value - mean) * (value - mean))
            .sum::<f64>()
            / count;
        let mut sorted = milliseconds.clone();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted
            .get(((sorted.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        BlockTimeSummary {
            mean_milliseconds: mean,
            standard_deviation_milliseconds: variance.sqrt(),
            p99_milliseconds: p99,
            max_milliseconds: sorted.last().copied().unwrap_or(0.0),
        }
    }
}

impl ReplayReport {
    /// Mean, standard deviation, p99 and max of the block times.
    pub fn summary(&self) -> BlockTimeSummary {
        BlockTimeSummary::of(&self.block_nanoseconds)
    }

    /// Operations per second over the timed blocks.
    pub fn operations_per_second(&self) -> f64 {
        let seconds = self.block_nanoseconds.iter().sum::<u64>() as f64 / 1e9;
        (self.blocks * u64::from(self.operations_per_block)) as f64 / seconds.max(1e-9)
    }

    /// Transactions per second at [`TRANSACTIONS_PER_BLOCK`] per block.
    pub fn tps_equivalent(&self) -> f64 {
        TRANSACTIONS_PER_BLOCK / (self.summary().mean_milliseconds / 1000.0).max(1e-12)
    }

    /// Bytes on disk added per block after genesis.
    pub fn disk_bytes_per_block(&self) -> f64 {
        (self.disk_bytes - self.genesis_disk_bytes) as f64 / self.blocks.max(1) as f64
    }
}

/// Replays the synthetic workload into a fresh store in `directory`, calling `progress` with the
/// number of blocks done after each block.
pub fn replay(
    directory: &Path,
    options: &ReplayOptions,
    mut progress: impl FnMut(u64),
) -> Result<ReplayReport, ContextError> {
    let mut store = Store::open(directory, options.store_options.clone())?;
    if store.head().is_some() {
        return Err(ContextError::InvalidArgument(format!(
            "{} already holds a store; replay needs an empty directory",
            directory.display()
        )));
    }
    let mut generator = Generator::new(options.seed, options.initial_contracts);
    let genesis_start = Instant::now();
    let mut genesis_tree = Some(Tree::empty());
    generator.genesis_in_chunks(GENESIS_CHUNK_OPERATIONS, |chunk| {
        let tree = genesis_tree.take().unwrap_or_else(Tree::empty);
        genesis_tree = Some(apply(&store, tree, &chunk)?.0);
        Ok::<(), ContextError>(())
    })?;
    let tree = genesis_tree.unwrap_or_else(Tree::empty);
    let mut head = store.commit(&tree, &[], &Generator::commit_info(0, 0))?;
    drop(tree);
    let genesis_milliseconds = genesis_start.elapsed().as_secs_f64() * 1e3;
    let genesis_disk_bytes = store.disk_bytes();
    let capacity = options.blocks.min(1 << 24) as usize;
    let mut block_nanoseconds = Vec::with_capacity(capacity);
    let mut commit_nanoseconds = Vec::with_capacity(capacity);
    let mut block_cpu_nanoseconds = Vec::with_capacity(capacity);
    let mut block_objects_read = Vec::with_capacity(capacity);
    let mut reads_found = 0;
    let mut scheduler = (0u64, 0u64);
    let mut scheduler_known = true;
    let mut blocks_done = 0;
    let mut memory_samples = Vec::new();
    let mut disk_samples = Vec::new();
    let mut gc_reports = Vec::new();
    let mut gc_seen = store.gc_completed();
    let device_read_start = process_device_read_bytes();
    let replay_start = Instant::now();
    for level in 1..=options.blocks {
        let operations = generator.block(options.operations_per_block);
        let info = Generator::commit_info(level, options.operations_per_block);
        let objects_read_start = store.statistics().objects_read;
        let scheduler_start = thread_scheduler_nanoseconds();
        let start = Instant::now();
        let tree = store
            .checkout_for_update(&head)?
            .ok_or(ContextError::UnknownCommit(head))?;
        let (tree, found) = apply(&store, tree, &operations)?;
        let commit_start = Instant::now();
        head = store.commit(&tree, &[head], &info)?;
        let end = Instant::now();
        block_nanoseconds.push((end - start).as_nanos() as u64);
        commit_nanoseconds.push((end - commit_start).as_nanos() as u64);
        let objects_read = store.statistics().objects_read - objects_read_start;
        block_objects_read.push(u32::try_from(objects_read).unwrap_or(u32::MAX));
        match (scheduler_start, thread_scheduler_nanoseconds()) {
            (Some((cpu_start, wait_start)), Some((cpu_end, wait_end))) => {
                let cpu = cpu_end.saturating_sub(cpu_start);
                scheduler.0 += cpu;
                scheduler.1 += wait_end.saturating_sub(wait_start);
                block_cpu_nanoseconds.push(cpu);
            }
            _ => scheduler_known = false,
        }
        reads_found += found;
        drop(tree);
        blocks_done = level;
        if store.gc_completed() > gc_seen {
            gc_seen = store.gc_completed();
            if let Some(report) = store.last_gc() {
                gc_reports.push((level, report.clone()));
            }
        }
        if level % DISK_SAMPLE_INTERVAL_BLOCKS == 0 {
            disk_samples.push((level, store.disk_bytes()));
        }
        if options
            .memory_sample_interval_blocks
            .is_some_and(|interval| level % interval.max(1) == 0)
        {
            let status = process_status_bytes(&["VmRSS:", "RssAnon:"]);
            memory_samples.push(MemorySample {
                level,
                resident_bytes: status[0].unwrap_or(0),
                resident_anonymous_bytes: status[1].unwrap_or(0),
                store: store.memory_statistics(),
            });
        }
        progress(level);
        if options
            .time_limit
            .is_some_and(|limit| replay_start.elapsed() > limit)
        {
            break;
        }
    }
    if !scheduler_known {
        block_cpu_nanoseconds.clear();
    }
    let device_read_bytes = device_read_start
        .zip(process_device_read_bytes())
        .map(|(start, end)| end.saturating_sub(start));
    // A GC still running ends first, so that the disk figure is the collected store's.
    store.wait_for_gc()?;
    if store.gc_completed() > gc_seen {
        if let Some(report) = store.last_gc() {
            gc_reports.push((blocks_done, report.clone()));
        }
    }
    store.checkpoint()?;
    Ok(ReplayReport {
        blocks: blocks_done,
        operations_per_block: options.operations_per_block,
        genesis_milliseconds,
        block_nanoseconds,
        commit_nanoseconds,
        block_cpu_nanoseconds,
        block_objects_read,
        reads_found,
        disk_bytes: store.disk_bytes(),
        genesis_disk_bytes,
        head: Some(head),
        statistics: store.statistics(),
        scheduler_nanoseconds: scheduler_known.then_some(scheduler),
        device_read_bytes,
        memory_samples,
        disk_samples,
        gc_reports,
    })
}

/// This thread's time on a CPU and time waiting to run, in nanoseconds
/// (/proc/thread-self/schedstat), if readable.
pub fn thread_scheduler_nanoseconds() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace();
    let cpu = fields.next()?.parse().ok()?;
    let wait = fields.next()?.parse().ok()?;
    Some((cpu, wait))
}

/// Bytes this process has caused to be read from the storage device (`read_bytes` of
/// /proc/self/io: reads served from the page cache are not counted), if readable.
pub fn process_device_read_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    let line = text.lines().find(|line| line.starts_with("read_bytes:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The values of `fields` (lines of /proc/self/status given in kB) in bytes, each `None` where
/// unreadable.
pub fn process_status_bytes<const N: usize>(fields: &[&str; N]) -> [Option<u64>; N] {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    fields.map(|field| {
        let line = status.lines().find(|line| line.starts_with(field))?;
        let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kilobytes * 1024)
    })
}

/// The peak resident set size of this process (`VmHWM` of /proc/self/status), if readable.
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunked genesis is the same operations in the same order, whatever the chunk length, and
    /// leaves the generator in the same state (the next block is the same).
    #[test]
    fn genesis_in_chunks_is_genesis() {
        let mut whole = Generator::new(3, 1000);
        let expected = whole.genesis();
        for chunk_length in [1, 7, 4096, usize::MAX] {
            let mut chunked = Generator::new(3, 1000);
            let mut operations = Vec::new();
            let mut chunks = 0usize;
            chunked
                .genesis_in_chunks(chunk_length, |chunk| {
                    assert!(!chunk.is_empty() && chunk.len() <= chunk_length);
                    chunks += 1;
                    operations.extend(chunk);
                    Ok::<(), ()>(())
                })
                .unwrap();
            assert_eq!(operations, expected, "chunk length {chunk_length}");
            assert_eq!(chunks, expected.len().div_ceil(chunk_length));
            assert_eq!(chunked.block(50), whole.clone().block(50));
        }
    }
}
