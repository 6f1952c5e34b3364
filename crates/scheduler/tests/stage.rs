//! The ingest stage end to end: signed legacy, v0 (through lookup tables) and v1 transactions are
//! accepted with the priority Agave's rules give them; each kind of bad packet gets its typed
//! rejection; the 308 mainnet transactions all pass; a flood of duplicates and a window far above
//! the container's capacity stay bounded.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ed25519_dalek::SigningKey;
use kestrel_scheduler::{
    program_id, AddressTableSource, Batch, BlockhashSource, ComputeBudgetError, InsertError,
    LookupError, NoAddressTables, RejectReason, SchedulerConfig, Stage, StageConfig,
};
use kestrel_txview::{
    Address, AddressTableLookupSpec, Hash, InstructionSpec, MessageHeader, Transaction,
    TransactionConfig, TransactionVersion,
};
use std::collections::HashMap;

/// Every blockhash is valid for 150 slots from the slot it is first seen in (a test clock).
#[derive(Default)]
struct FirstSeenClock(HashMap<Hash, u64>);

impl BlockhashSource for FirstSeenClock {
    fn last_valid_slot(&mut self, blockhash: &Hash, slot: u64) -> Option<u64> {
        Some(*self.0.entry(*blockhash).or_insert(slot) + 150)
    }

    fn durable_nonce_last_valid_slot(&mut self, _: &Address, _: &Hash, _: u64) -> Option<u64> {
        unreachable!("every blockhash is known")
    }
}

/// Only one known blockhash, and one nonce account, which holds `NONCE`.
struct OneBlockhash(Hash);

const NONCE_ACCOUNT: Address = [0x4A; 32];
const NONCE: Hash = [0x4E; 32];

impl BlockhashSource for OneBlockhash {
    fn last_valid_slot(&mut self, blockhash: &Hash, _slot: u64) -> Option<u64> {
        (*blockhash == self.0).then_some(150)
    }

    fn durable_nonce_last_valid_slot(
        &mut self,
        nonce_account: &Address,
        nonce: &Hash,
        _slot: u64,
    ) -> Option<u64> {
        (*nonce_account == NONCE_ACCOUNT && *nonce == NONCE).then_some(150)
    }
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn compute_budget(data: Vec<u8>) -> InstructionSpec {
    InstructionSpec {
        program_id_index: 2,
        accounts: vec![],
        data,
    }
}

fn unit_limit(units: u32) -> Vec<u8> {
    let mut data = vec![2];
    data.extend(units.to_le_bytes());
    data
}

fn unit_price(micro_lamports: u64) -> Vec<u8> {
    let mut data = vec![3];
    data.extend(micro_lamports.to_le_bytes());
    data
}

/// A signed v1 transaction whose config sets a 1,000-lamport priority fee and a 50,000-unit limit.
fn v1_with_fee() -> Transaction {
    let mut v1 = Transaction::new(
        TransactionVersion::V1,
        MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 1,
        },
        vec![key(3).verifying_key().to_bytes(), [0x56; 32]],
        [9; 32],
        vec![InstructionSpec {
            program_id_index: 1,
            accounts: vec![0],
            data: vec![1, 2, 3, 4],
        }],
    );
    v1.config = TransactionConfig {
        priority_fee_lamports: Some(1_000),
        compute_unit_limit: Some(50_000),
        ..TransactionConfig::default()
    };
    v1.sign(&[key(3)]);
    v1
}

/// A transfer-like legacy transaction from `payer` to `to`, with compute-budget instructions.
fn legacy(payer: &SigningKey, to: u8, budget: Vec<Vec<u8>>) -> Transaction {
    let mut instructions: Vec<InstructionSpec> = budget.into_iter().map(compute_budget).collect();
    instructions.push(InstructionSpec {
        program_id_index: 3,
        accounts: vec![0, 1],
        data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    });
    let mut transaction = Transaction::new(
        TransactionVersion::Legacy,
        MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 2,
        },
        vec![
            payer.verifying_key().to_bytes(),
            [to; 32],
            program_id::COMPUTE_BUDGET,
            program_id::SYSTEM,
        ],
        [9; 32],
        instructions,
    );
    transaction.sign(std::slice::from_ref(payer));
    transaction
}

struct Outcome {
    rejected: Vec<(usize, RejectReason)>,
}

fn ingest(stage: &mut Stage, packets: &[Vec<u8>], tables: &impl AddressTableSource) -> Outcome {
    let mut clock = FirstSeenClock::default();
    let slices: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
    let mut rejected = Vec::new();
    for (chunk_index, chunk) in slices.chunks(4_096).enumerate() {
        stage.ingest(chunk, tables, &mut clock, |index, reason| {
            rejected.push((chunk_index * 4_096 + index, reason))
        });
    }
    Outcome { rejected }
}

fn drain(stage: &mut Stage) -> Vec<Batch> {
    let mut all = Vec::new();
    loop {
        let mut batches = Vec::new();
        stage.schedule(|batch| batches.push(batch), |_| {});
        if batches.is_empty() {
            return all;
        }
        for batch in &batches {
            stage.complete(batch);
        }
        all.extend(batches);
    }
}

fn small_stage() -> Stage {
    Stage::new(StageConfig {
        verify_threads: 1,
        ..StageConfig::default()
    })
}

#[test]
fn signed_legacy_transactions_get_agaves_priority() {
    let mut stage = small_stage();
    let payer = key(1);
    let transaction = legacy(&payer, 7, vec![unit_limit(10_000), unit_price(2_000_000)]);
    let outcome = ingest(&mut stage, &[transaction.serialize()], &NoAddressTables);
    assert!(outcome.rejected.is_empty(), "{:?}", outcome.rejected);
    let mut batches = Vec::new();
    stage.schedule(|batch| batches.push(batch), |_| {});
    assert_eq!(batches.len(), 1);
    let id = batches[0].transactions()[0];
    let meta = *stage.meta(id);
    // 1 signature (720) + 2 write locks (payer and recipient; the programs are readonly) + 26
    // instruction data bytes / 4 + 10,000 units + 2,048 pages × 8 of default loaded data.
    let cost = 720 + 600 + (5 + 9 + 12) / 4 + 10_000 + 16_384;
    assert_eq!(meta.cost, cost);
    // 2,500 of the signature fee plus 2 lamports per unit × 10,000.
    let reward = 2_500 + 20_000;
    assert_eq!(meta.reward, reward);
    assert_eq!(meta.priority, reward * 1_000_000 / (cost + 1));
    assert_eq!(
        stage.transaction(id).signatures()[0],
        transaction.signatures[0]
    );
    stage.complete(&batches[0]);
    assert_eq!(stage.packets_held(), 0);
}

#[test]
fn v0_lookups_resolve_through_the_table_source_and_v1_config_sets_the_budget() {
    let mut stage = small_stage();
    let payer = key(2);
    let table_address = [0x7A; 32];
    let tables: HashMap<_, _> = [(table_address, vec![[0x11; 32], [0x12; 32], [0x13; 32]])]
        .into_iter()
        .collect();
    let mut v0 = Transaction::new(
        TransactionVersion::V0,
        MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 1,
        },
        vec![payer.verifying_key().to_bytes(), [0x55; 32]],
        [9; 32],
        vec![InstructionSpec {
            program_id_index: 1,
            accounts: vec![0, 2, 3],
            data: vec![],
        }],
    );
    v0.address_table_lookups = vec![AddressTableLookupSpec {
        account_key: table_address,
        writable_indexes: vec![2],
        readonly_indexes: vec![0],
    }];
    v0.sign(std::slice::from_ref(&payer));
    let mut missing_table = v0.clone();
    missing_table.address_table_lookups[0].account_key = [0x7B; 32];
    missing_table.sign(std::slice::from_ref(&payer));
    let mut bad_index = v0.clone();
    bad_index.address_table_lookups[0].readonly_indexes = vec![9];
    bad_index.sign(std::slice::from_ref(&payer));
    let v1 = v1_with_fee();
    let packets = [
        v0.serialize(),
        missing_table.serialize(),
        bad_index.serialize(),
        v1.serialize(),
    ];
    let outcome = ingest(&mut stage, &packets, &tables);
    assert_eq!(
        outcome.rejected,
        [
            (1, RejectReason::Lookup(LookupError::TableNotFound)),
            (2, RejectReason::Lookup(LookupError::InvalidIndex)),
        ]
    );
    let batches = drain(&mut stage);
    let scheduled: usize = batches.iter().map(|b| b.transactions().len()).sum();
    assert_eq!(scheduled, 2);
    assert_eq!(stage.scheduler().counts().queued, 0);
}

#[test]
fn v1_config_gives_cost_and_reward() {
    let mut stage = small_stage();
    let v1 = v1_with_fee();
    assert!(ingest(&mut stage, &[v1.serialize()], &NoAddressTables)
        .rejected
        .is_empty());
    let mut batches = Vec::new();
    stage.schedule(|batch| batches.push(batch), |_| {});
    let meta = *stage.meta(batches[0].transactions()[0]);
    // 720 + 300 + 4 / 4 + 50,000 + no loaded data (absent means 0 in v1).
    assert_eq!(meta.cost, 720 + 300 + 1 + 50_000);
    assert_eq!(meta.reward, 2_500 + 1_000);
}

#[test]
fn bad_packets_get_typed_rejections() {
    let mut stage = small_stage();
    let payer = key(4);
    let good = legacy(&payer, 1, vec![]);
    let mut bad_signature = legacy(&payer, 2, vec![]);
    bad_signature.signatures[0][5] ^= 1;
    let duplicate_budget = legacy(&payer, 3, vec![unit_limit(1), unit_limit(2)]);
    let unknown_request = legacy(&payer, 4, vec![vec![9, 0, 0, 0, 0]]);
    let short_request = legacy(&payer, 5, vec![vec![2, 1, 0]]);
    let mut heap = vec![1];
    heap.extend(1_000u32.to_le_bytes());
    let bad_heap = legacy(&payer, 6, vec![unit_limit(5), heap]);
    let mut zero_loaded = vec![4];
    zero_loaded.extend(0u32.to_le_bytes());
    let zero_loaded = legacy(&payer, 7, vec![zero_loaded]);
    let packets = vec![
        good.serialize(),
        good.serialize(),
        bad_signature.serialize(),
        duplicate_budget.serialize(),
        unknown_request.serialize(),
        short_request.serialize(),
        bad_heap.serialize(),
        zero_loaded.serialize(),
        vec![0; 5_000],
        vec![1, 2, 3],
        vec![],
    ];
    let outcome = ingest(&mut stage, &packets, &NoAddressTables);
    let mut rejected = outcome.rejected.clone();
    rejected.sort_by_key(|(index, _)| *index);
    let kinds: Vec<(usize, &str)> = rejected
        .iter()
        .map(|(index, reason)| (*index, reason.kind()))
        .collect();
    assert_eq!(
        &kinds[..],
        &[
            (1, "duplicate_signature"),
            (2, "invalid_signature"),
            (3, "duplicate_compute_budget_instruction"),
            (4, "invalid_compute_budget_instruction_data"),
            (5, "invalid_compute_budget_instruction_data"),
            (6, "invalid_compute_budget_instruction_data"),
            (7, "invalid_loaded_accounts_data_size_limit"),
            (8, "packet_too_large"),
            (9, "truncated"),
            (10, "truncated"),
        ][..]
    );
    assert!(matches!(rejected[8].1, RejectReason::Malformed(_)));
    assert!(matches!(rejected[9].1, RejectReason::Malformed(_)));
    assert_eq!(
        rejected[2].1,
        RejectReason::ComputeBudget(ComputeBudgetError::DuplicateInstruction {
            instruction_index: 1
        })
    );
    assert_eq!(
        rejected[5].1,
        RejectReason::ComputeBudget(ComputeBudgetError::InvalidInstructionData {
            instruction_index: 1
        })
    );
    // An unknown blockhash.
    let mut clock = OneBlockhash([8; 32]);
    let fresh = legacy(&key(5), 1, vec![]).serialize();
    let mut rejected = Vec::new();
    stage.ingest(&[&fresh[..]], &NoAddressTables, &mut clock, |_, reason| {
        rejected.push(reason)
    });
    assert_eq!(rejected, [RejectReason::BlockhashNotFound]);
    // Only the good transaction is held.
    assert_eq!(stage.packets_held(), 1);
    drain(&mut stage);
    assert_eq!(stage.packets_held(), 0);
}

/// A signed legacy transaction from `payer` naming `keys` after it (the last
/// `readonly_unsigned` of them readonly).
fn signed_legacy(
    payer: &SigningKey,
    keys: &[Address],
    readonly_unsigned: u8,
    blockhash: Hash,
    instructions: Vec<InstructionSpec>,
) -> Vec<u8> {
    let mut account_keys = vec![payer.verifying_key().to_bytes()];
    account_keys.extend_from_slice(keys);
    let mut transaction = Transaction::new(
        TransactionVersion::Legacy,
        MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: readonly_unsigned,
        },
        account_keys,
        blockhash,
        instructions,
    );
    transaction.sign(std::slice::from_ref(payer));
    transaction.serialize()
}

fn instruction(program_id_index: u8, accounts: Vec<u8>, data: Vec<u8>) -> InstructionSpec {
    InstructionSpec {
        program_id_index,
        accounts,
        data,
    }
}

/// Agave's rule: AdvanceNonceAccount first, its nonce account a writable static key; the caller
/// vouches for the nonce. Anything else with an unknown blockhash is "blockhash not found".
#[test]
fn durable_nonce_transactions_are_accepted_in_place_of_a_blockhash() {
    let advance = || instruction(2, vec![1, 0], vec![4, 0, 0, 0]);
    let transfer = || instruction(2, vec![0, 1], vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    let writable = [NONCE_ACCOUNT, program_id::SYSTEM];
    let cases: Vec<(Vec<u8>, Option<RejectReason>)> = vec![
        (
            signed_legacy(&key(1), &writable, 1, NONCE, vec![advance(), transfer()]),
            None,
        ),
        // Trailing bytes after the discriminant are allowed.
        (
            signed_legacy(
                &key(2),
                &writable,
                1,
                NONCE,
                vec![instruction(2, vec![1], vec![4, 0, 0, 0, 9])],
            ),
            None,
        ),
        // The nonce account readonly.
        (
            signed_legacy(
                &key(3),
                &[program_id::SYSTEM, NONCE_ACCOUNT],
                2,
                NONCE,
                vec![instruction(1, vec![2, 0], vec![4, 0, 0, 0])],
            ),
            Some(RejectReason::BlockhashNotFound),
        ),
        // Not the first instruction.
        (
            signed_legacy(&key(4), &writable, 1, NONCE, vec![transfer(), advance()]),
            Some(RejectReason::BlockhashNotFound),
        ),
        // Another System instruction first.
        (
            signed_legacy(
                &key(5),
                &writable,
                1,
                NONCE,
                vec![instruction(2, vec![1], vec![5, 0, 0, 0])],
            ),
            Some(RejectReason::BlockhashNotFound),
        ),
        // The nonce account does not hold this nonce.
        (
            signed_legacy(&key(6), &writable, 1, [0x4F; 32], vec![advance()]),
            Some(RejectReason::BlockhashNotFound),
        ),
    ];
    let mut stage = small_stage();
    let packets: Vec<&[u8]> = cases.iter().map(|(bytes, _)| &bytes[..]).collect();
    let mut rejected = vec![None; cases.len()];
    stage.ingest(
        &packets,
        &NoAddressTables,
        &mut OneBlockhash([8; 32]),
        |index, reason| rejected[index] = Some(reason),
    );
    let expected: Vec<Option<RejectReason>> = cases.iter().map(|(_, reason)| *reason).collect();
    assert_eq!(rejected, expected);
    assert_eq!(stage.scheduler().counts().queued, 2);
}

/// Agave's cost model: a legacy transaction with 1 or 2 signatures and one vote instruction costs
/// 3,428 units, whatever its data; a second instruction makes it an ordinary transaction.
#[test]
fn simple_votes_cost_3428_units() {
    let vote = || instruction(2, vec![1, 0], vec![0xAB; 180]);
    let packets = [
        signed_legacy(
            &key(1),
            &[[0x66; 32], program_id::VOTE],
            1,
            [9; 32],
            vec![vote()],
        ),
        signed_legacy(
            &key(2),
            &[[0x67; 32], program_id::VOTE],
            1,
            [9; 32],
            vec![vote(), vote()],
        ),
    ];
    let mut stage = small_stage();
    assert!(ingest(&mut stage, &packets, &NoAddressTables)
        .rejected
        .is_empty());
    let mut batches = Vec::new();
    stage.schedule(|batch| batches.push(batch), |_| {});
    let mut costs: Vec<(u64, u64)> = batches
        .iter()
        .flat_map(|batch| batch.transactions().to_vec())
        .map(|id| (stage.meta(id).cost, stage.meta(id).reward))
        .collect();
    costs.sort_unstable();
    // The second: 720 + 2 × 300 + 360 / 4 + 2 × 3,000 (builtin) + 64 MiB of loaded data
    // (2,048 pages × 8).
    assert_eq!(
        costs,
        [(3_428, 2_500), (720 + 600 + 90 + 6_000 + 16_384, 2_500)]
    );
}

/// Each transaction creates two 10 MiB accounts (the most one may allocate, 20 MiB): four fit
/// in a block's 100,000,000 bytes of growth, the fifth waits for the next block.
#[test]
fn account_data_growth_is_bounded_per_block() {
    let ten_mib: u64 = 10 * 1024 * 1024;
    let create = |new_account: u8| {
        let mut data = 0u32.to_le_bytes().to_vec();
        data.extend(1u64.to_le_bytes());
        data.extend(ten_mib.to_le_bytes());
        data.extend(program_id::SYSTEM);
        instruction(3, vec![0, new_account], data)
    };
    let packets: Vec<Vec<u8>> = (0..6u8)
        .map(|index| {
            signed_legacy(
                &key(10 + index),
                &[[20 + index; 32], [40 + index; 32], program_id::SYSTEM],
                1,
                [9; 32],
                vec![create(1), create(2)],
            )
        })
        .collect();
    let mut stage = small_stage();
    assert!(ingest(&mut stage, &packets, &NoAddressTables)
        .rejected
        .is_empty());
    let first_block: usize = drain(&mut stage)
        .iter()
        .map(|batch| batch.transactions().len())
        .sum();
    assert_eq!(first_block, 4);
    assert_eq!(stage.scheduler().counts().block_data_bytes, 4 * 2 * ten_mib);
    stage.new_block(1);
    let second_block: usize = drain(&mut stage)
        .iter()
        .map(|batch| batch.transactions().len())
        .sum();
    assert_eq!(second_block, 2);
}

#[test]
fn signature_verdicts_land_on_their_packets_whatever_the_threads() {
    // Payers repeat (the verify threads' key caches) and every 7th signature is bad; every 11th
    // packet is malformed, so packets reach the verify pool at shifted positions, across many of
    // its chunks.
    let payers: Vec<SigningKey> = (20..24).map(key).collect();
    let mut packets = Vec::new();
    let mut expected = Vec::new();
    for index in 0..200usize {
        if index % 11 == 0 {
            packets.push(vec![1, 2, 3]);
            expected.push((index, "truncated"));
            continue;
        }
        let to = u8::try_from(index % 256).unwrap();
        let mut transaction = legacy(
            &payers[index % payers.len()],
            to,
            vec![unit_limit(u32::try_from(1_000 + index).unwrap())],
        );
        if index % 7 == 0 {
            transaction.signatures[0][40] ^= 1;
            expected.push((index, "invalid_signature"));
        }
        packets.push(transaction.serialize());
    }
    for verify_threads in [0, 1, 3] {
        let mut stage = Stage::new(StageConfig {
            verify_threads,
            ..StageConfig::default()
        });
        let mut rejected: Vec<(usize, &str)> = ingest(&mut stage, &packets, &NoAddressTables)
            .rejected
            .iter()
            .map(|(index, reason)| (*index, reason.kind()))
            .collect();
        rejected.sort_unstable();
        assert_eq!(rejected, expected, "{verify_threads} verify threads");
        assert_eq!(stage.packets_held(), 200 - expected.len());
        // A second round through the same pool.
        let resent: Vec<Vec<u8>> = (0..40u8)
            .map(|to| {
                let mut transaction = legacy(&payers[0], to, vec![unit_limit(77)]);
                if to % 3 == 0 {
                    transaction.signatures[0][0] ^= 1;
                }
                transaction.serialize()
            })
            .collect();
        let rejected: Vec<usize> = ingest(&mut stage, &resent, &NoAddressTables)
            .rejected
            .iter()
            .map(|(index, _)| *index)
            .collect();
        let mut sorted = rejected.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..40).step_by(3).collect::<Vec<_>>());
    }
}

#[test]
fn mainnet_transactions_all_pass() {
    let Some(path) = kestrel_testdata::require(
        "solana/mainnet-legacy-308.hex",
        "mainnet_transactions_all_pass",
    ) else {
        return;
    };
    let packets: Vec<Vec<u8>> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| hex::decode(line.trim()).unwrap())
        .collect();
    assert_eq!(packets.len(), 308);
    let mut stage = small_stage();
    let outcome = ingest(&mut stage, &packets, &NoAddressTables);
    assert!(outcome.rejected.is_empty(), "{:?}", outcome.rejected);
    let batches = drain(&mut stage);
    let scheduled: usize = batches.iter().map(|b| b.transactions().len()).sum();
    assert_eq!(scheduled, 308);
    assert_eq!(stage.packets_held(), 0);
}

#[test]
fn duplicate_floods_and_huge_windows_stay_bounded() {
    let mut stage = Stage::new(StageConfig {
        verify_threads: 1,
        scheduler: SchedulerConfig {
            capacity: 500,
            ..SchedulerConfig::default()
        },
        large_packet_slots: 16,
        max_ingest_packets: 1_000,
        ..StageConfig::default()
    });
    let payer = key(6);
    let one = legacy(&payer, 1, vec![]).serialize();
    let flood: Vec<&[u8]> = vec![&one[..]; 1_000];
    let mut clock = FirstSeenClock::default();
    let mut duplicates = 0;
    let summary = stage.ingest(&flood, &NoAddressTables, &mut clock, |_, reason| {
        assert_eq!(reason, RejectReason::Duplicate);
        duplicates += 1;
    });
    assert_eq!((summary.accepted, duplicates), (1, 999));
    // 2,000 distinct transactions into a container of 500: the best 500 stay.
    let packets: Vec<Vec<u8>> = (0..2_000u32)
        .map(|index| {
            let price = u64::from(index % 997) * 1_000;
            legacy(
                &payer,
                (index % 200) as u8 + 10,
                vec![unit_limit(1_000 + index), unit_price(price)],
            )
            .serialize()
        })
        .collect();
    for chunk in packets.chunks(1_000) {
        let slices: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        stage.ingest(&slices, &NoAddressTables, &mut clock, |_, reason| {
            assert!(
                matches!(reason, RejectReason::Scheduler(InsertError::ContainerFull)),
                "{reason:?}"
            );
        });
    }
    assert_eq!(stage.scheduler().counts().queued, 500);
    assert_eq!(stage.packets_held(), 500);
}
