//! Properties of the scheduler under random conflict patterns: no two transactions in flight
//! conflict on an account (write/write or write/read, within or across batches); the block's and
//! each writable account's compute units, and the block's account data growth, never exceed their
//! limits; every transaction is
//! scheduled exactly once, in the end (none is lost in a lock queue); the container's capacity
//! holds.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use kestrel_scheduler::{
    Batch, BlockLimits, InsertError, Scheduler, SchedulerConfig, TransactionMeta,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug)]
struct Transaction {
    priority: u64,
    cost: u64,
    allocated_data_bytes: u64,
    accounts: Vec<(u8, bool)>,
}

fn transaction(accounts_in_pool: u8) -> impl Strategy<Value = Transaction> {
    (
        0u64..1_000,
        1u64..400,
        prop_oneof![Just(0u64), 0u64..300],
        proptest::collection::vec((0..accounts_in_pool, any::<bool>()), 1..8),
    )
        .prop_map(|(priority, cost, allocated_data_bytes, mut accounts)| {
            let mut seen = HashSet::new();
            accounts.retain(|(account, _)| seen.insert(*account));
            Transaction {
                priority,
                cost,
                allocated_data_bytes,
                accounts,
            }
        })
}

fn address(account: u8) -> [u8; 32] {
    let mut address = [0u8; 32];
    address[0] = account;
    address[31] = 0xA5;
    address
}

#[derive(Clone, Debug)]
struct Scenario {
    transactions: Vec<Transaction>,
    workers: usize,
    batches_per_worker: usize,
    batch_transactions: usize,
    limits: BlockLimits,
    /// Transactions inserted before each scheduling round.
    arrivals_per_round: usize,
    /// Which in-flight batch completes next (index modulo the in-flight count).
    completion_choices: Vec<usize>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1u8..24).prop_flat_map(|accounts_in_pool| {
        (
            proptest::collection::vec(transaction(accounts_in_pool), 1..250),
            1usize..5,
            1usize..3,
            1usize..=64,
            (400u64..4_000, 400u64..2_000, 200u64..1_000),
            1usize..100,
            proptest::collection::vec(any::<usize>(), 64),
        )
            .prop_map(
                |(
                    transactions,
                    workers,
                    batches_per_worker,
                    batch_transactions,
                    (block_units, account_units, account_data_bytes),
                    arrivals_per_round,
                    completion_choices,
                )| Scenario {
                    transactions,
                    workers,
                    batches_per_worker,
                    batch_transactions,
                    limits: BlockLimits {
                        block_units,
                        account_units,
                        account_data_bytes,
                    },
                    arrivals_per_round,
                    completion_choices,
                },
            )
    })
}

/// Runs a scenario, checking the invariants after every step; returns the order in which
/// transactions (by index) were scheduled.
fn run(scenario: &Scenario) -> Vec<usize> {
    let mut scheduler = Scheduler::new(SchedulerConfig {
        workers: scenario.workers,
        batches_per_worker: scenario.batches_per_worker,
        batch_transactions: scenario.batch_transactions,
        capacity: 10_000,
        limits: scenario.limits,
    });
    let mut id_to_index = HashMap::new();
    let mut expected = HashSet::new();
    let mut in_flight: Vec<Batch> = Vec::new();
    let mut scheduled = Vec::new();
    let mut block_units = 0u64;
    let mut block_data_bytes = 0u64;
    let mut account_units: HashMap<u8, u64> = HashMap::new();
    let mut next = 0;
    let mut round = 0usize;
    let mut idle_blocks = 0;
    loop {
        let arrivals = scenario
            .arrivals_per_round
            .min(scenario.transactions.len() - next);
        for index in next..next + arrivals {
            let transaction = &scenario.transactions[index];
            let addresses: Vec<_> = transaction
                .accounts
                .iter()
                .map(|&(account, writable)| (address(account), writable))
                .collect();
            let meta = TransactionMeta {
                priority: transaction.priority,
                cost: transaction.cost,
                reward: 0,
                last_valid_slot: u64::MAX,
                allocated_data_bytes: transaction.allocated_data_bytes,
                packet: index as u32,
            };
            match scheduler.insert(meta, addresses.iter().map(|(a, w)| (a, *w))) {
                Ok(inserted) => {
                    assert_eq!(inserted.evicted_packet, None);
                    id_to_index.insert(inserted.id, index);
                    expected.insert(index);
                }
                Err(InsertError::CostExceedsLimit { cost }) => {
                    assert!(
                        cost > scenario.limits.block_units || cost > scenario.limits.account_units
                    );
                }
                Err(InsertError::AccountDataExceedsLimit { bytes }) => {
                    assert!(bytes > scenario.limits.account_data_bytes);
                }
                Err(error) => panic!("unexpected refusal {error}"),
            }
        }
        next += arrivals;
        let mut emitted = Vec::new();
        scheduler.schedule(0, |batch| emitted.push(batch));
        for batch in &emitted {
            assert!(!batch.transactions().is_empty());
            assert!(batch.transactions().len() <= scenario.batch_transactions);
            for &id in batch.transactions() {
                let index = id_to_index[&id];
                let transaction = &scenario.transactions[index];
                block_units += transaction.cost;
                block_data_bytes += transaction.allocated_data_bytes;
                for &(account, writable) in &transaction.accounts {
                    if writable {
                        *account_units.entry(account).or_default() += transaction.cost;
                    }
                }
                scheduled.push(index);
            }
        }
        in_flight.extend(emitted);
        // Limits hold.
        assert!(block_units <= scenario.limits.block_units);
        assert!(block_data_bytes <= scenario.limits.account_data_bytes);
        assert_eq!(scheduler.counts().block_data_bytes, block_data_bytes);
        for (&account, &units) in &account_units {
            assert!(
                units <= scenario.limits.account_units,
                "account {account}: {units} units"
            );
        }
        assert_eq!(scheduler.counts().block_units, block_units);
        // No conflict among all transactions in flight.
        let mut writers = HashSet::new();
        let mut readers = HashSet::new();
        for batch in &in_flight {
            for &id in batch.transactions() {
                for &(account, writable) in &scenario.transactions[id_to_index[&id]].accounts {
                    assert!(!writers.contains(&account), "account {account} conflicts");
                    if writable {
                        assert!(!readers.contains(&account), "account {account} conflicts");
                        writers.insert(account);
                    } else {
                        readers.insert(account);
                    }
                }
            }
        }
        // Complete one batch, or start a new block when nothing is in flight.
        if in_flight.is_empty() {
            let counts = scheduler.counts();
            if counts.queued == 0 && next == scenario.transactions.len() {
                break;
            }
            if next == scenario.transactions.len() {
                idle_blocks += 1;
                assert!(idle_blocks < 10_000, "no progress");
            }
            scheduler.new_block();
            block_units = 0;
            block_data_bytes = 0;
            account_units.clear();
        } else {
            let choice = scenario.completion_choices[round % scenario.completion_choices.len()];
            let batch = in_flight.swap_remove(choice % in_flight.len());
            scheduler.complete(&batch);
        }
        round += 1;
    }
    // Written accounts keep their block totals until the block ends.
    scheduler.new_block();
    let counts = scheduler.counts();
    assert_eq!(
        (counts.queued, counts.in_flight, counts.accounts),
        (0, 0, 0)
    );
    let scheduled_set: HashSet<_> = scheduled.iter().copied().collect();
    assert_eq!(scheduled_set.len(), scheduled.len(), "scheduled twice");
    assert_eq!(scheduled_set, expected, "a transaction was lost");
    scheduled
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn batches_in_flight_never_conflict_and_limits_hold(scenario in scenario()) {
        run(&scenario);
    }
}

fn chain_scenario(length: usize, workers: usize) -> Scenario {
    Scenario {
        transactions: (0..length)
            .map(|index| Transaction {
                priority: index as u64,
                cost: 10,
                allocated_data_bytes: 0,
                accounts: vec![(0, true), ((index % 200) as u8 + 1, false)],
            })
            .collect(),
        workers,
        batches_per_worker: 2,
        batch_transactions: 64,
        limits: BlockLimits::default(),
        arrivals_per_round: length,
        completion_choices: vec![0],
    }
}

#[test]
fn a_chain_on_one_account_runs_one_at_a_time_in_priority_order() {
    let order = run(&chain_scenario(1_000, 4));
    let expected: Vec<usize> = (0..1_000).rev().collect();
    assert_eq!(order, expected);
}

#[test]
fn independent_transactions_fill_batches_in_priority_order() {
    let scenario = Scenario {
        transactions: (0..256)
            .map(|index| Transaction {
                priority: (index * 7 % 256) as u64,
                cost: 10,
                allocated_data_bytes: 0,
                accounts: vec![(index as u8, true)],
            })
            .collect(),
        workers: 2,
        batches_per_worker: 2,
        batch_transactions: 64,
        limits: BlockLimits::default(),
        arrivals_per_round: 256,
        completion_choices: vec![0],
    };
    let order = run(&scenario);
    let priorities: Vec<u64> = order
        .iter()
        .map(|&index| scenario.transactions[index].priority)
        .collect();
    let mut sorted = priorities.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(priorities, sorted);
}

#[test]
fn a_full_container_evicts_the_lowest_priority() {
    let mut scheduler = Scheduler::new(SchedulerConfig {
        capacity: 2,
        ..SchedulerConfig::default()
    });
    let key = address(1);
    let meta = |priority, packet| TransactionMeta {
        priority,
        cost: 1,
        reward: 0,
        last_valid_slot: u64::MAX,
        allocated_data_bytes: 0,
        packet,
    };
    scheduler.insert(meta(5, 0), [(&key, true)]).unwrap();
    scheduler.insert(meta(3, 1), [(&key, true)]).unwrap();
    assert_eq!(
        scheduler.insert(meta(2, 2), [(&key, true)]),
        Err(InsertError::ContainerFull)
    );
    let inserted = scheduler.insert(meta(9, 3), [(&key, true)]).unwrap();
    assert_eq!(inserted.evicted_packet, Some(1));
    assert_eq!(scheduler.counts().queued, 2);
}

#[test]
fn expired_transactions_are_dropped() {
    let mut scheduler = Scheduler::new(SchedulerConfig::default());
    let key = address(1);
    let meta = TransactionMeta {
        priority: 1,
        cost: 1,
        reward: 0,
        last_valid_slot: 10,
        allocated_data_bytes: 0,
        packet: 7,
    };
    scheduler.insert(meta, [(&key, true)]).unwrap();
    assert_eq!(scheduler.schedule(11, |_| panic!("nothing to schedule")), 0);
    let dropped: Vec<_> = scheduler.drain_dropped().collect();
    assert_eq!(dropped, [(7, kestrel_scheduler::DropReason::Expired)]);
    assert_eq!(scheduler.counts().queued, 0);
    assert_eq!(scheduler.counts().accounts, 0);
}

#[test]
fn invalid_account_sets_are_refused() {
    let mut scheduler = Scheduler::new(SchedulerConfig::default());
    let key = address(1);
    let meta = TransactionMeta::default();
    assert_eq!(
        scheduler.insert(meta, [(&key, true), (&key, false)]),
        Err(InsertError::AccountLoadedTwice)
    );
    let many: Vec<_> = (0..65u8).map(address).collect();
    assert_eq!(
        scheduler.insert(meta, many.iter().map(|a| (a, false))),
        Err(InsertError::TooManyAccountLocks { count: 65 })
    );
    // Too many accounts outranks a duplicate among them, wherever the duplicate is.
    let mut duplicated = many.clone();
    duplicated[1] = duplicated[0];
    assert_eq!(
        scheduler.insert(meta, duplicated.iter().map(|a| (a, false))),
        Err(InsertError::TooManyAccountLocks { count: 65 })
    );
    assert_eq!(scheduler.counts().accounts, 0);
    assert_eq!(scheduler.counts().queued, 0);
}

/// A scheduler kept across windows that drain (it then starts its ids and, outside a block's
/// account units, its account table afresh) schedules each window as a fresh one would, and a
/// block's units on an account survive the drain.
#[test]
fn a_drained_scheduler_restarts_and_keeps_the_blocks_account_units() {
    let mut scheduler = Scheduler::new(SchedulerConfig {
        capacity: 4,
        limits: BlockLimits {
            block_units: 1_000,
            account_units: 10,
            account_data_bytes: u64::MAX,
        },
        ..SchedulerConfig::default()
    });
    let accounts: Vec<[u8; 32]> = (0..8).map(address).collect();
    let meta = |priority, cost, packet| TransactionMeta {
        priority,
        cost,
        reward: 0,
        last_valid_slot: u64::MAX,
        allocated_data_bytes: 0,
        packet,
    };
    let drain = |scheduler: &mut Scheduler| {
        let mut packets = Vec::new();
        let mut in_flight: Vec<Batch> = Vec::new();
        loop {
            scheduler.schedule(0, |batch| in_flight.push(batch));
            let Some(batch) = in_flight.pop() else {
                return packets;
            };
            for &id in batch.transactions() {
                packets.push(scheduler.meta(id).packet);
            }
            scheduler.complete(&batch);
        }
    };
    for window in 0..3u32 {
        // Two transactions writing account 0 (and three accounts each of their own).
        for (index, range) in [(0u32, 1..4), (1, 4..7)] {
            let names = core::iter::once((&accounts[0], true))
                .chain(accounts[range].iter().map(|address| (address, true)));
            let inserted = scheduler
                .insert(meta(10 - u64::from(index), 6, 2 * window + index), names)
                .unwrap();
            assert_eq!(inserted.id, index, "ids restart once drained");
        }
        // Account 0 takes one 6-unit transaction a block: the second waits for the next block,
        // also after the scheduler drained.
        assert_eq!(drain(&mut scheduler), [2 * window]);
        assert_eq!(scheduler.counts().queued, 1);
        scheduler.new_block();
        assert_eq!(drain(&mut scheduler), [2 * window + 1]);
        assert_eq!(scheduler.counts().accounts, 0);
        scheduler
            .insert(meta(1, 6, 99), [(&accounts[0], true)])
            .unwrap();
        assert_eq!(drain(&mut scheduler), [] as [u32; 0], "account 0 is full");
        scheduler.new_block();
        assert_eq!(drain(&mut scheduler), [99]);
        scheduler.new_block();
    }
}

/// A window of a million transactions into a container of 100,000: the best stay, the rest are
/// evicted or refused, the container never holds more than its capacity, and draining it schedules
/// every one it kept (sweeps of idle accounts and compactions of account lists happen on the way).
#[test]
fn a_million_transaction_window_stays_within_capacity() {
    const CAPACITY: usize = 100_000;
    let mut scheduler = Scheduler::new(SchedulerConfig {
        capacity: CAPACITY,
        ..SchedulerConfig::default()
    });
    let pool: Vec<[u8; 32]> = (0..200_000u32)
        .map(|index| {
            let mut address = [0u8; 32];
            address[..4].copy_from_slice(&index.to_le_bytes());
            address[31] = 1;
            address
        })
        .collect();
    let mut state = 0x1234_5678_9ABC_DEF0u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut evicted, mut refused) = (0, 0);
    for index in 0..1_000_000u32 {
        let accounts: Vec<([u8; 32], bool)> = (0..8)
            .map(|position| (pool[next() as usize % pool.len()], position == 0))
            .collect();
        let mut unique = HashSet::new();
        if !accounts.iter().all(|(address, _)| unique.insert(*address)) {
            continue;
        }
        let meta = TransactionMeta {
            priority: next() % 1_000_000,
            cost: 1_000,
            reward: 0,
            last_valid_slot: u64::MAX,
            allocated_data_bytes: 0,
            packet: index,
        };
        match scheduler.insert(meta, accounts.iter().map(|(a, w)| (a, *w))) {
            Ok(inserted) => evicted += usize::from(inserted.evicted_packet.is_some()),
            Err(InsertError::ContainerFull) => refused += 1,
            Err(error) => panic!("{error}"),
        }
        assert!(scheduler.counts().queued <= CAPACITY);
        // Every 100,000 arrivals, schedule and complete a block's worth.
        if index % 100_000 == 99_999 {
            let mut batches = Vec::new();
            scheduler.schedule(0, |batch| batches.push(batch));
            for batch in &batches {
                scheduler.complete(batch);
            }
            scheduler.new_block();
        }
    }
    assert!(
        evicted > 100_000 && refused > 100_000,
        "{evicted} evicted, {refused} refused"
    );
    assert!(scheduler.counts().accounts <= 8 * CAPACITY);
    let kept = scheduler.counts().queued;
    assert!(kept >= CAPACITY - 4 * 64);
    let mut scheduled = 0;
    loop {
        let mut batches = Vec::new();
        scheduler.schedule(0, |batch| batches.push(batch));
        if batches.is_empty() {
            break;
        }
        for batch in &batches {
            scheduled += batch.transactions().len();
            scheduler.complete(batch);
        }
        scheduler.new_block();
    }
    assert_eq!(scheduled, kept);
    let counts = scheduler.counts();
    assert_eq!(
        (counts.queued, counts.in_flight, counts.accounts),
        (0, 0, 0)
    );
}
