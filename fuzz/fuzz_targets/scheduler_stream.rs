//! Fuzzes the ingest stage and the scheduler with streams: the input's first part is a stream of
//! u16-LE-length-prefixed packets fed to the stage (any bytes: a typed rejection or acceptance,
//! never a panic, and the arena, dedup and container stay within their bounds); its second part
//! drives the scheduler directly — inserts naming accounts from a small pool, schedules,
//! completions and new blocks — checking after each step that no two transactions in flight
//! conflict and that no block limit is exceeded.

#![no_main]

use kestrel_scheduler::{
    Batch, BlockLimits, BlockhashSource, Scheduler, SchedulerConfig, Stage, StageConfig,
    TransactionMeta,
};
use kestrel_txview::Hash;
use libfuzzer_sys::fuzz_target;
use std::collections::{HashMap, HashSet};

struct FuzzClock;

impl BlockhashSource for FuzzClock {
    fn last_valid_slot(&mut self, blockhash: &Hash, slot: u64) -> Option<u64> {
        (blockhash[0] != 0).then_some(slot + u64::from(blockhash[1]))
    }

    fn durable_nonce_last_valid_slot(
        &mut self,
        nonce_account: &[u8; 32],
        _: &Hash,
        slot: u64,
    ) -> Option<u64> {
        (nonce_account[0] & 1 == 0).then_some(slot)
    }
}

fn stage_stream(mut bytes: &[u8]) {
    let mut stage = Stage::new(StageConfig {
        verify_threads: 0,
        max_ingest_packets: 8,
        large_packet_slots: 2,
        scheduler: SchedulerConfig {
            capacity: 16,
            ..SchedulerConfig::default()
        },
        dedup_capacity: 8,
        ..StageConfig::default()
    });
    let tables: HashMap<[u8; 32], Vec<[u8; 32]>> =
        [([1; 32], vec![[2; 32], [3; 32]])].into_iter().collect();
    let mut packets: Vec<&[u8]> = Vec::new();
    while let Some((length, rest)) = bytes.split_first_chunk::<2>() {
        let length = usize::from(u16::from_le_bytes(*length)).min(rest.len());
        packets.push(&rest[..length]);
        bytes = &rest[length..];
        if packets.len() == 8 {
            stage.ingest(&packets, &tables, &mut FuzzClock, |_, _| {});
            packets.clear();
            let mut batches = Vec::new();
            stage.schedule(|batch| batches.push(batch), |_| {});
            for batch in &batches {
                stage.complete(batch);
            }
            stage.new_block(stage.slot() + 1);
        }
    }
    stage.ingest(&packets, &tables, &mut FuzzClock, |_, _| {});
    assert!(stage.scheduler().counts().queued <= 16);
    assert!(stage.packets_held() <= 16 + 8 + 4 * 64);
}

fn scheduler_ops(bytes: &[u8]) {
    let limits = BlockLimits {
        block_units: 2_000,
        account_units: 700,
        account_data_bytes: 500,
    };
    let mut scheduler = Scheduler::new(SchedulerConfig {
        workers: 2,
        batches_per_worker: 2,
        batch_transactions: 3,
        capacity: 12,
        limits,
    });
    let pool: Vec<[u8; 32]> = (0..8u8).map(|index| [index; 32]).collect();
    let mut in_flight: Vec<Batch> = Vec::new();
    let mut accounts_of: HashMap<u32, Vec<(u8, bool)>> = HashMap::new();
    let mut costs: HashMap<u32, u64> = HashMap::new();
    let mut block_units = 0;
    let mut account_units: HashMap<u8, u64> = HashMap::new();
    for (step, chunk) in bytes.chunks(4).enumerate() {
        let [op, a, b, c] = [0, 1, 2, 3].map(|index| chunk.get(index).copied().unwrap_or(0));
        match op % 4 {
            0 | 1 => {
                let accounts: Vec<(u8, bool)> = [a, b, c]
                    .iter()
                    .take(1 + usize::from(op >> 6))
                    .map(|byte| (byte % 8, byte & 0x80 != 0))
                    .collect();
                let meta = TransactionMeta {
                    priority: u64::from(a ^ c),
                    cost: u64::from(b) * 3,
                    reward: 0,
                    last_valid_slot: u64::from(c % 4) + step as u64 / 16,
                    allocated_data_bytes: u64::from(a & 0x7F) * 4,
                    packet: step as u32,
                };
                let addresses: Vec<([u8; 32], bool)> = accounts
                    .iter()
                    .map(|(account, writable)| (pool[usize::from(*account)], *writable))
                    .collect();
                if let Ok(inserted) = scheduler.insert(meta, addresses.iter().map(|(a, w)| (a, *w)))
                {
                    accounts_of.insert(inserted.id, accounts);
                    costs.insert(inserted.id, meta.cost);
                }
            }
            2 => {
                scheduler.schedule(step as u64 / 16, |batch| {
                    for &id in batch.transactions() {
                        block_units += costs[&id];
                        for &(account, writable) in &accounts_of[&id] {
                            if writable {
                                *account_units.entry(account).or_default() += costs[&id];
                            }
                        }
                    }
                    in_flight.push(batch);
                });
                scheduler.drain_dropped().for_each(drop);
            }
            _ => {
                if in_flight.is_empty() {
                    scheduler.new_block();
                    block_units = 0;
                    account_units.clear();
                } else {
                    let batch = in_flight.swap_remove(usize::from(a) % in_flight.len());
                    scheduler.complete(&batch);
                }
            }
        }
        assert!(block_units <= limits.block_units);
        assert!(account_units
            .values()
            .all(|&units| units <= limits.account_units));
        let mut writers = HashSet::new();
        let mut readers = HashSet::new();
        for batch in &in_flight {
            for id in batch.transactions() {
                for &(account, writable) in &accounts_of[id] {
                    assert!(!writers.contains(&account));
                    if writable {
                        assert!(!readers.contains(&account));
                        writers.insert(account);
                    } else {
                        readers.insert(account);
                    }
                }
            }
        }
    }
}

fuzz_target!(|bytes: &[u8]| {
    let split = bytes
        .first()
        .map_or(0, |&byte| usize::from(byte))
        .min(bytes.len());
    let (stream, ops) = bytes.split_at(split);
    stage_stream(stream);
    scheduler_ops(ops);
});
