//! Differential test of the ingest stage (`kestrel-scheduler`): every packet the stage accepts is
//! one that `agave-transaction-view` 6.1.0 sanitizes, whose signatures pass `verify_strict` (Agave's
//! sigverify), whose lookups resolve, whose account locks Agave's `validate_account_locks` allows
//! (at most 64, none twice), whose compute-budget instructions Agave's
//! `process_compute_budget_instructions` (`solana-compute-budget-instruction` 3.1.14) accepts, and
//! whose first signature was not accepted before — and every such packet is accepted. For accepted
//! packets the cost and the reward must be those computed from Agave's answers: the compute-unit
//! limit, price and loaded-data limit from its compute-budget rules, the write locks from its
//! resolved view with the reserved keys of `solana-sdk-ids`. A packet whose blockhash is unknown
//! is accepted only as a durable-nonce transaction (`SVMMessage::get_durable_nonce` of
//! `solana-svm-transaction` 5; the test's nonce source vouches for every nonce); a simple vote
//! (`solana-transaction`'s `is_simple_vote_transaction_impl`) costs `SIMPLE_VOTE_USAGE_COST`; the
//! account data a transaction may allocate is its System instructions decoded as
//! `solana-system-interface`'s `SystemInstruction` by bincode with Agave's options, summed as
//! `CostModel::calculate_allocated_accounts_data_size` does.
//!
//! Inputs: the 308 mainnet transactions; generated legacy/v0/v1 transactions signed with real keys
//! whose compute-budget instructions are drawn from valid, duplicate, truncated, unknown and
//! out-of-range requests, some with an unknown blockhash and an AdvanceNonceAccount instruction,
//! some shaped as simple votes, some creating or allocating accounts; byte-level mutants of both, re-signed when their signers are known (so
//! they reach the rules behind the signature check) or left as they are.
//! `KESTREL_DIFF_CASES` sets the number of generated and of mutated inputs (default 3,000 each).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use agave_transaction_view::resolved_transaction_view::ResolvedTransactionView as AgaveResolved;
use agave_transaction_view::sanitize::SanitizeConfig as AgaveConfig;
use agave_transaction_view::transaction_version::TransactionVersion as AgaveVersion;
use agave_transaction_view::transaction_view::TransactionView as AgaveView;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use kestrel_bench::rng::Rng;
use kestrel_scheduler::{
    program_id, AddressTableSource, BlockhashSource, LookupError, RejectReason, SchedulerConfig,
    Stage, StageConfig,
};
use kestrel_txview::{
    AddressTableLookupSpec, Hash, InstructionSpec, MessageHeader, Transaction, TransactionConfig,
    TransactionVersion, UnsanitizedTransactionView,
};
use solana_message::v0::LoadedAddresses as AgaveLoadedAddresses;
use solana_pubkey::Pubkey;
use solana_svm_transaction::svm_message::{SVMMessage, SVMStaticMessage};
use std::collections::{HashMap, HashSet};

type Address = [u8; 32];

const AGAVE_CONFIG: AgaveConfig = AgaveConfig {
    min_requested_heap_size: 32 * 1024,
    max_requested_heap_size: 256 * 1024,
    max_instructions: 64,
    max_accounts_per_instruction: 255,
};

fn cases() -> usize {
    std::env::var("KESTREL_DIFF_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(3_000)
}

/// Every blockhash is known but `UNKNOWN_BLOCKHASH`; every durable nonce is vouched for.
const BLOCKHASH: Hash = [9; 32];
const UNKNOWN_BLOCKHASH: Hash = [8; 32];

struct KnownBlockhash;

impl BlockhashSource for KnownBlockhash {
    fn last_valid_slot(&mut self, blockhash: &Hash, _: u64) -> Option<u64> {
        (*blockhash != UNKNOWN_BLOCKHASH).then_some(u64::MAX)
    }

    fn durable_nonce_last_valid_slot(&mut self, _: &Address, _: &Hash, _: u64) -> Option<u64> {
        Some(u64::MAX)
    }
}

/// Agave's `SIMPLE_VOTE_USAGE_COST` (`solana-cost-model` `transaction_cost.rs`, a private constant).
const SIMPLE_VOTE_USAGE_COST: u64 = 3_428;

/// Account data the System instructions may allocate (`CostModel::
/// calculate_allocated_accounts_data_size`): decoded with `limited_deserialize`'s options
/// (`PACKET_DATA_SIZE` limit, fixed-width integers, trailing bytes allowed); an undecodable or
/// over-10-MiB one makes it 0; capped at 20 MiB.
fn oracle_allocated_data_bytes<'a>(
    instructions: impl Iterator<Item = (&'a Pubkey, &'a [u8])>,
) -> u64 {
    use bincode::Options;
    use solana_system_interface::instruction::SystemInstruction;
    const MAX_PERMITTED_DATA_LENGTH: u64 = 10 * 1024 * 1024;
    let mut total = 0u64;
    for (program, data) in instructions {
        if program.to_bytes() != solana_sdk_ids::system_program::ID.to_bytes() {
            continue;
        }
        let decoded: Result<SystemInstruction, _> = bincode::options()
            .with_limit(1_232)
            .with_fixint_encoding()
            .allow_trailing_bytes()
            .deserialize(data);
        let space = match decoded {
            Err(_) => return 0,
            Ok(
                SystemInstruction::CreateAccount { space, .. }
                | SystemInstruction::CreateAccountWithSeed { space, .. }
                | SystemInstruction::Allocate { space }
                | SystemInstruction::AllocateWithSeed { space, .. },
            ) => space,
            Ok(_) => 0,
        };
        if space > MAX_PERMITTED_DATA_LENGTH {
            return 0;
        }
        total = total.saturating_add(space);
    }
    total.min(2 * MAX_PERMITTED_DATA_LENGTH)
}

const TABLE: Address = [0x7A; 32];
const TABLE_LENGTH: usize = 40;

fn tables() -> HashMap<Address, Vec<Address>> {
    let mut rng = Rng(77);
    let mut addresses: Vec<Address> = (0..TABLE_LENGTH).map(|_| rng.address()).collect();
    // Reserved and program keys in the table too: demotion applies to loaded addresses.
    addresses[3] = program_id::SYSTEM;
    addresses[4] = program_id::SYSVAR_CLOCK;
    addresses[5] = kestrel_txview::limits::BPF_LOADER_UPGRADEABLE_ID;
    [(TABLE, addresses)].into_iter().collect()
}

/// The reserved keys, from `solana-sdk-ids`.
fn agave_reserved() -> HashSet<Pubkey> {
    use solana_sdk_ids::*;
    [
        address_lookup_table::ID,
        bpf_loader::ID,
        bpf_loader_deprecated::ID,
        bpf_loader_upgradeable::ID,
        compute_budget::ID,
        config::ID,
        ed25519_program::ID,
        feature::ID,
        loader_v4::ID,
        secp256k1_program::ID,
        secp256r1_program::ID,
        stake::config::ID,
        stake::ID,
        system_program::ID,
        vote::ID,
        zk_elgamal_proof_program::ID,
        zk_token_proof_program::ID,
        sysvar::clock::ID,
        sysvar::epoch_rewards::ID,
        sysvar::epoch_schedule::ID,
        sysvar::fees::ID,
        sysvar::instructions::ID,
        sysvar::last_restart_slot::ID,
        sysvar::recent_blockhashes::ID,
        sysvar::rent::ID,
        sysvar::rewards::ID,
        sysvar::slot_hashes::ID,
        sysvar::slot_history::ID,
        sysvar::stake_history::ID,
        native_loader::ID,
        sysvar::ID,
    ]
    .into_iter()
    .map(|id| Pubkey::from(id.to_bytes()))
    .collect()
}

#[test]
fn reserved_keys_are_agaves() {
    let ours: HashSet<Pubkey> = program_id::RESERVED
        .iter()
        .map(|key| Pubkey::from(*key))
        .collect();
    assert_eq!(ours, agave_reserved());
}

/// What Agave's rules say of one packet: rejected, or accepted with this cost and reward.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Reject(&'static str),
    Accept {
        cost: u64,
        reward: u64,
        allocated_data_bytes: u64,
    },
}

/// Agave's answer, with the cost and reward computed from its compute budget and write locks.
fn oracle(
    bytes: &[u8],
    tables: &HashMap<Address, Vec<Address>>,
    reserved: &HashSet<Pubkey>,
) -> Verdict {
    let Ok(view) = AgaveView::try_new_sanitized(bytes, &AGAVE_CONFIG) else {
        return Verdict::Reject("sanitize");
    };
    let message = view.message_data();
    let keys = view.static_account_keys();
    for (index, signature) in view.signatures().iter().enumerate() {
        let Ok(key) = VerifyingKey::from_bytes(&keys[index].to_bytes()) else {
            return Verdict::Reject("signature");
        };
        let signature = ed25519_dalek::Signature::from_bytes(&(*signature).into());
        if key.verify_strict(message, &signature).is_err() {
            return Verdict::Reject("signature");
        }
    }
    let mut writable = Vec::new();
    let mut readonly = Vec::new();
    for lookup in view.address_table_lookup_iter() {
        let Some(table) = tables.get(&lookup.account_key.to_bytes()) else {
            return Verdict::Reject("lookup");
        };
        for (indexes, out) in [
            (lookup.writable_indexes, &mut writable),
            (lookup.readonly_indexes, &mut readonly),
        ] {
            for &index in indexes {
                let Some(address) = table.get(usize::from(index)) else {
                    return Verdict::Reject("lookup");
                };
                out.push(Pubkey::from(*address));
            }
        }
    }
    let version = view.version();
    let loaded =
        matches!(version, AgaveVersion::V0).then(|| AgaveLoadedAddresses { writable, readonly });
    let Ok(resolved) = AgaveResolved::try_new(view, loaded, reserved) else {
        return Verdict::Reject("resolve");
    };
    let account_keys = resolved.account_keys();
    if account_keys.len() > 64 {
        return Verdict::Reject("account_locks");
    }
    let unique: HashSet<&Pubkey> = account_keys.iter().collect();
    if unique.len() != account_keys.len() {
        return Verdict::Reject("account_locks");
    }
    if resolved.recent_blockhash().to_bytes() == UNKNOWN_BLOCKHASH
        && resolved.get_durable_nonce().is_none()
    {
        return Verdict::Reject("blockhash");
    }
    let num_write_locks = (0..account_keys.len())
        .filter(|&index| resolved.is_writable(index))
        .count() as u64;
    // Precompile signatures and instruction data, as Agave's signature details count them.
    let mut precompile_signatures = [0u64; 3];
    let mut data_bytes = 0u16;
    for (program, instruction) in resolved.program_instructions_iter() {
        data_bytes = data_bytes.saturating_add(instruction.data.len() as u16);
        let count = u64::from(instruction.data.first().copied().unwrap_or(0));
        let program = program.to_bytes();
        if program == solana_sdk_ids::ed25519_program::ID.to_bytes() {
            precompile_signatures[0] += count;
        } else if program == solana_sdk_ids::secp256k1_program::ID.to_bytes() {
            precompile_signatures[1] += count;
        } else if program == solana_sdk_ids::secp256r1_program::ID.to_bytes() {
            precompile_signatures[2] += count;
        }
    }
    let (compute_unit_limit, loaded_bytes, priority_fee) = if matches!(version, AgaveVersion::V1) {
        let view = UnsanitizedTransactionView::try_new_unsanitized(bytes).unwrap();
        let config = view.transaction_config().unwrap();
        (
            u64::from(config.compute_unit_limit().unwrap_or(0).min(1_400_000)),
            u64::from(
                config
                    .loaded_accounts_data_size_limit()
                    .unwrap_or(0)
                    .min(64 << 20),
            ),
            config.priority_fee_lamports().unwrap_or(0),
        )
    } else {
        let pubkeys: Vec<solana_pubkey_3::Pubkey> = resolved
            .static_account_keys()
            .iter()
            .map(|key| solana_pubkey_3::Pubkey::new_from_array(key.to_bytes()))
            .collect();
        let collected: Vec<(u8, &[u8], &[u8])> = resolved
            .instructions_iter()
            .map(|instruction| {
                (
                    instruction.program_id_index,
                    instruction.accounts,
                    instruction.data,
                )
            })
            .collect();
        let instructions = collected.iter().map(|&(program_id_index, accounts, data)| {
            (
                &pubkeys[usize::from(program_id_index)],
                solana_svm_transaction_3::instruction::SVMInstruction {
                    program_id_index,
                    accounts,
                    data,
                },
            )
        });
        let limits = match solana_compute_budget_instruction::instructions_processor::process_compute_budget_instructions(
            instructions,
            &agave_feature_set_3::FeatureSet::default(),
        ) {
            Ok(limits) => limits,
            Err(_) => return Verdict::Reject("compute_budget"),
        };
        let micro_lamports =
            u128::from(limits.compute_unit_price) * u128::from(limits.compute_unit_limit);
        (
            u64::from(limits.compute_unit_limit),
            u64::from(limits.loaded_accounts_bytes.get()),
            u64::try_from(micro_lamports.div_ceil(1_000_000)).unwrap_or(u64::MAX),
        )
    };
    let num_signatures = u64::from(resolved.num_signatures());
    // Cost model constants: solana-cost-model block_cost_limits.rs (720, 6,690, 2,400, 4,800, 300,
    // 4 bytes per unit, 8 units per 32 KiB page).
    let is_simple_vote =
        solana_transaction::simple_vote_transaction_checker::is_simple_vote_transaction_impl(
            resolved.signatures(),
            matches!(version, AgaveVersion::Legacy),
            resolved
                .program_instructions_iter()
                .map(|(program, _)| program),
        );
    let allocated_data_bytes = oracle_allocated_data_bytes(
        resolved
            .program_instructions_iter()
            .map(|(program, instruction)| (program, instruction.data)),
    );
    let cost = num_signatures * 720
        + precompile_signatures[0] * 2_400
        + precompile_signatures[1] * 6_690
        + precompile_signatures[2] * 4_800
        + num_write_locks * 300
        + u64::from(data_bytes) / 4
        + compute_unit_limit
        + loaded_bytes.div_ceil(32 * 1024) * 8;
    let cost = if is_simple_vote {
        SIMPLE_VOTE_USAGE_COST
    } else {
        cost
    };
    if cost > 24_000_000 {
        return Verdict::Reject("cost");
    }
    let signature_fee = (num_signatures + precompile_signatures.iter().sum::<u64>()) * 5_000;
    Verdict::Accept {
        cost,
        reward: (signature_fee - signature_fee / 2).saturating_add(priority_fee),
        allocated_data_bytes,
    }
}

/// Runs the stage over `inputs` and compares with the oracle; returns (accepted, rejected).
fn compare(inputs: &[Vec<u8>]) -> (usize, usize) {
    let tables = tables();
    let reserved = agave_reserved();
    let mut stage = Stage::new(StageConfig {
        verify_threads: 1,
        max_ingest_packets: 512,
        scheduler: SchedulerConfig {
            capacity: 1_000_000,
            ..SchedulerConfig::default()
        },
        large_packet_slots: 1_024,
        ..StageConfig::default()
    });
    let mut accepted_signatures: HashSet<[u8; 64]> = HashSet::new();
    let mut expected: Vec<Verdict> = Vec::with_capacity(inputs.len());
    for bytes in inputs {
        let mut verdict = oracle(bytes, &tables, &reserved);
        if let Verdict::Accept { .. } = verdict {
            let signature = AgaveView::try_new_sanitized(&bytes[..], &AGAVE_CONFIG)
                .unwrap()
                .signatures()[0];
            if !accepted_signatures.insert(signature.into()) {
                verdict = Verdict::Reject("duplicate");
            }
        }
        expected.push(verdict);
    }
    let mut rejected_by_stage: HashMap<usize, RejectReason> = HashMap::new();
    let mut scheduled: HashMap<[u8; 64], (u64, u64, u64)> = HashMap::new();
    for (chunk_index, chunk) in inputs.chunks(512).enumerate() {
        let slices: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        stage.ingest(&slices, &tables, &mut KnownBlockhash, |index, reason| {
            rejected_by_stage.insert(chunk_index * 512 + index, reason);
        });
        loop {
            let mut batches = Vec::new();
            stage.schedule(|batch| batches.push(batch), |_| panic!("nothing expires"));
            if batches.is_empty() {
                break;
            }
            for batch in &batches {
                for &id in batch.transactions() {
                    let meta = stage.meta(id);
                    let signature = stage.transaction(id).signatures()[0];
                    scheduled.insert(
                        signature,
                        (meta.cost, meta.reward, meta.allocated_data_bytes),
                    );
                }
                stage.complete(batch);
            }
            // A new block for the limits, at the same slot: the dedup window (150 slots) must
            // cover the whole run, as the oracle remembers every signature.
            stage.new_block(stage.slot());
        }
    }
    let (mut accepted, mut rejected) = (0, 0);
    for (index, (bytes, verdict)) in inputs.iter().zip(&expected).enumerate() {
        let context = || format!("input {index}: {}", hex::encode(bytes));
        match (verdict, rejected_by_stage.get(&index)) {
            (Verdict::Reject(_), Some(_)) => rejected += 1,
            (Verdict::Reject(why), None) => {
                panic!(
                    "the stage accepted what Agave rejects ({why}): {}",
                    context()
                )
            }
            (Verdict::Accept { .. }, Some(reason)) => {
                panic!(
                    "the stage rejected ({reason}) what Agave accepts: {}",
                    context()
                )
            }
            (
                Verdict::Accept {
                    cost,
                    reward,
                    allocated_data_bytes,
                },
                None,
            ) => {
                let signature: [u8; 64] = bytes_signature(bytes);
                assert_eq!(
                    scheduled.get(&signature),
                    Some(&(*cost, *reward, *allocated_data_bytes)),
                    "cost, reward and allocated data of {}",
                    context()
                );
                accepted += 1;
            }
        }
    }
    (accepted, rejected)
}

fn bytes_signature(bytes: &[u8]) -> [u8; 64] {
    UnsanitizedTransactionView::try_new_unsanitized(bytes)
        .unwrap()
        .signatures()[0]
}

/// Signers the generator uses: their keys are known, so mutants can be signed again.
fn signers() -> Vec<SigningKey> {
    (0..16u8)
        .map(|seed| SigningKey::from_bytes(&[seed + 1; 32]))
        .collect()
}

fn compute_budget_data(rng: &mut Rng) -> Vec<u8> {
    let u32_request = |discriminant: u8, value: u32| {
        let mut data = vec![discriminant];
        data.extend(value.to_le_bytes());
        data
    };
    let heap_sizes = [
        0,
        1_024,
        32 * 1_024,
        32 * 1_024 + 1,
        33 * 1_024,
        256 * 1_024,
        257 * 1_024,
        u32::MAX,
    ];
    let mut data = match rng.below(12) {
        0 | 1 => u32_request(
            2,
            [0, 1, 200_000, 1_400_000, 1_400_001, u32::MAX][rng.below(6)],
        ),
        2 | 3 => {
            let mut data = vec![3];
            data.extend([0u64, 1, 1_000, 999_999, 5_000_000, u64::MAX][rng.below(6)].to_le_bytes());
            data
        }
        4 | 5 => u32_request(1, heap_sizes[rng.below(heap_sizes.len())]),
        6 | 7 => u32_request(
            4,
            [0, 1, 32 * 1_024, 64 << 20, (64 << 20) + 1, u32::MAX][rng.below(6)],
        ),
        8 => vec![],
        9 => vec![[0, 5, 6, 255][rng.below(4)]; 1 + rng.below(9)],
        10 => u32_request(0, 7),
        _ => vec![1 + rng.below(4) as u8, 1],
    };
    if rng.chance(6) {
        data.push(0xEE);
    }
    data
}

/// System instruction data: allocating kinds with sizes around Agave's limits, seeds (some not
/// UTF-8), other kinds, truncations and random bytes.
fn system_data(rng: &mut Rng) -> Vec<u8> {
    let spaces = [0u64, 1, 10 << 20, (10 << 20) + 1, 7 << 20, u64::MAX];
    let space = spaces[rng.below(spaces.len())];
    let seed = |rng: &mut Rng| {
        let text: Vec<u8> = if rng.chance(5) {
            vec![0xFF, 0xC0]
        } else {
            b"seed"[..rng.below(5)].to_vec()
        };
        let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
        bytes.extend(text);
        bytes
    };
    let mut data = match rng.below(10) {
        0 | 1 => [
            0u32.to_le_bytes().to_vec(),
            1u64.to_le_bytes().to_vec(),
            space.to_le_bytes().to_vec(),
            vec![3; 32],
        ]
        .concat(),
        2 => [
            3u32.to_le_bytes().to_vec(),
            vec![1; 32],
            seed(rng),
            1u64.to_le_bytes().to_vec(),
            space.to_le_bytes().to_vec(),
            vec![3; 32],
        ]
        .concat(),
        3 | 4 => [8u32.to_le_bytes().to_vec(), space.to_le_bytes().to_vec()].concat(),
        5 => [
            9u32.to_le_bytes().to_vec(),
            vec![1; 32],
            seed(rng),
            space.to_le_bytes().to_vec(),
            vec![3; 32],
        ]
        .concat(),
        6 => [2u32.to_le_bytes().to_vec(), 5u64.to_le_bytes().to_vec()].concat(),
        7 => (rng.below(16) as u32).to_le_bytes().to_vec(),
        _ => (0..rng.below(30)).map(|_| rng.next_u64() as u8).collect(),
    };
    if rng.chance(5) {
        let length = data.len();
        data.truncate(rng.below(length + 1));
    } else if rng.chance(5) {
        data.push(0xEE);
    }
    data
}

/// A generated transaction, signed.
fn generate(rng: &mut Rng, signers: &[SigningKey]) -> Vec<u8> {
    let version = match rng.below(10) {
        0..=4 => TransactionVersion::Legacy,
        5..=7 => TransactionVersion::V0,
        _ => TransactionVersion::V1,
    };
    let num_signers = 1 + rng.below(3);
    let first = rng.below(signers.len());
    let keys_signing: Vec<SigningKey> = (0..num_signers)
        .map(|offset| signers[(first + offset * 5) % signers.len()].clone())
        .collect();
    let mut account_keys: Vec<Address> = keys_signing
        .iter()
        .map(|key| key.verifying_key().to_bytes())
        .collect();
    let programs = [
        program_id::COMPUTE_BUDGET,
        program_id::SYSTEM,
        program_id::ED25519,
        program_id::SECP256K1,
        program_id::VOTE,
        program_id::BPF_LOADER_UPGRADEABLE,
        [0x42; 32],
        [0x43; 32],
    ];
    for _ in 0..rng.below(4) {
        account_keys.push(rng.address());
    }
    if rng.chance(20) {
        account_keys.push(account_keys[0]);
    }
    let first_program = account_keys.len();
    let mut used_programs = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let program = programs[rng.below(programs.len())];
        if !used_programs.contains(&program) {
            used_programs.push(program);
            account_keys.push(program);
        }
    }
    if !used_programs.contains(&program_id::COMPUTE_BUDGET) && rng.chance(2) {
        used_programs.push(program_id::COMPUTE_BUDGET);
        account_keys.push(program_id::COMPUTE_BUDGET);
    }
    let num_non_signers = account_keys.len() - num_signers;
    let header = MessageHeader {
        num_required_signatures: num_signers as u8,
        num_readonly_signed_accounts: rng.below(num_signers) as u8,
        num_readonly_unsigned_accounts: rng.below(num_non_signers + 1) as u8,
    };
    let num_static = account_keys.len();
    let lookups = if version == TransactionVersion::V0 && rng.chance(2) {
        vec![AddressTableLookupSpec {
            account_key: if rng.chance(10) { [0x7B; 32] } else { TABLE },
            writable_indexes: (0..rng.below(4))
                .map(|_| rng.below(TABLE_LENGTH + 2) as u8)
                .collect(),
            readonly_indexes: (0..1 + rng.below(3))
                .map(|_| rng.below(TABLE_LENGTH + 2) as u8)
                .collect(),
        }]
    } else {
        vec![]
    };
    let mut instructions: Vec<InstructionSpec> = (0..rng.below(6))
        .map(|_| {
            let program = used_programs[rng.below(used_programs.len())];
            let program_id_index = (first_program
                + account_keys[first_program..]
                    .iter()
                    .position(|key| *key == program)
                    .unwrap()) as u8;
            let data = if program == program_id::COMPUTE_BUDGET {
                compute_budget_data(rng)
            } else if program == program_id::ED25519 || program == program_id::SECP256K1 {
                vec![rng.below(3) as u8, 0]
            } else if program == program_id::SYSTEM {
                system_data(rng)
            } else {
                (0..rng.below(30)).map(|_| rng.next_u64() as u8).collect()
            };
            InstructionSpec {
                program_id_index,
                accounts: (0..rng.below(4))
                    .map(|_| rng.below(num_static) as u8)
                    .collect(),
                data,
            }
        })
        .collect();
    // A durable-nonce transaction: AdvanceNonceAccount first (its nonce account may be readonly
    // or a loaded address, and the marker may be another System instruction).
    if rng.chance(5) {
        if let Some(position) = account_keys[first_program..]
            .iter()
            .position(|key| *key == program_id::SYSTEM)
        {
            let mut data = if rng.chance(6) { 5u32 } else { 4u32 }
                .to_le_bytes()
                .to_vec();
            if rng.chance(4) {
                data.push(0xEE);
            }
            instructions.insert(
                0,
                InstructionSpec {
                    program_id_index: (first_program + position) as u8,
                    accounts: (0..rng.below(3))
                        .map(|_| rng.below(num_static + 2) as u8)
                        .collect(),
                    data,
                },
            );
        }
    }
    // A simple vote: legacy, one instruction, of the vote program.
    if version == TransactionVersion::Legacy && rng.chance(8) {
        if let Some(position) = account_keys[first_program..]
            .iter()
            .position(|key| *key == program_id::VOTE)
        {
            instructions = vec![InstructionSpec {
                program_id_index: (first_program + position) as u8,
                accounts: vec![0, rng.below(num_static) as u8],
                data: (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect(),
            }];
        }
    }
    let blockhash = if rng.chance(4) {
        UNKNOWN_BLOCKHASH
    } else {
        BLOCKHASH
    };
    let mut transaction = Transaction::new(version, header, account_keys, blockhash, instructions);
    transaction.address_table_lookups = lookups;
    if version == TransactionVersion::V1 {
        transaction.config = TransactionConfig {
            priority_fee_lamports: rng.chance(2).then(|| rng.next_u64() % 100_000),
            compute_unit_limit: rng.chance(2).then(|| (rng.next_u64() % 2_000_000) as u32),
            loaded_accounts_data_size_limit: rng
                .chance(2)
                .then(|| (rng.next_u64() % (80 << 20)) as u32),
            requested_heap_size: rng.chance(4).then_some(64 * 1_024),
        };
    }
    transaction.sign(&keys_signing);
    transaction.serialize()
}

/// Flips, overwrites, truncates, inserts or deletes a few bytes.
fn mutate(base: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for _ in 0..1 + rng.below(2) {
        let length = bytes.len();
        match rng.below(5) {
            0 | 1 if length > 0 => {
                let position = rng.below(length);
                bytes[position] ^= 1 << rng.below(8);
            }
            2 if length > 0 => {
                let position = rng.below(length);
                bytes[position] = [0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF][rng.below(8)];
            }
            3 => bytes.truncate(rng.below(length + 1)),
            _ if length > 0 => {
                let position = rng.below(length);
                bytes.remove(position);
            }
            _ => bytes.push(rng.next_u64() as u8),
        }
    }
    bytes
}

/// Signs a mutant again when it frames and its signers are known keys.
fn sign_again(bytes: &mut [u8], signers: &HashMap<Address, SigningKey>) {
    let Ok(view) = UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]) else {
        return;
    };
    let count = view.signatures().len();
    let keys = view.static_account_keys();
    if count > keys.len() {
        return;
    }
    let Some(keys): Option<Vec<&SigningKey>> =
        keys[..count].iter().map(|key| signers.get(key)).collect()
    else {
        return;
    };
    let message = view.message_data().to_vec();
    let signatures: Vec<[u8; 64]> = keys
        .iter()
        .map(|key| key.sign(&message).to_bytes())
        .collect();
    let start = if view.version() == TransactionVersion::V1 {
        bytes.len() - 64 * count
    } else {
        1
    };
    for (index, signature) in signatures.iter().enumerate() {
        bytes[start + 64 * index..start + 64 * (index + 1)].copy_from_slice(signature);
    }
}

fn mainnet_transactions() -> Vec<Vec<u8>> {
    let Some(path) =
        kestrel_testdata::require("solana/mainnet-legacy-308.hex", "scheduler_differential")
    else {
        return Vec::new();
    };
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| hex::decode(line.trim()).unwrap())
        .collect()
}

#[test]
fn mainnet_transactions_are_all_accepted_with_agaves_cost() {
    let inputs = mainnet_transactions();
    let (accepted, rejected) = compare(&inputs);
    assert_eq!((accepted, rejected), (inputs.len(), 0));
    eprintln!("mainnet: {accepted} accepted");
}

#[test]
fn generated_transactions_and_mutants_agree() {
    let mut rng = Rng(0x5EED_0022);
    let signers = signers();
    let known: HashMap<Address, SigningKey> = signers
        .iter()
        .map(|key| (key.verifying_key().to_bytes(), key.clone()))
        .collect();
    let mainnet = mainnet_transactions();
    let mut inputs: Vec<Vec<u8>> = (0..cases()).map(|_| generate(&mut rng, &signers)).collect();
    let generated = inputs.len();
    for _ in 0..cases() {
        let base = if !mainnet.is_empty() && rng.chance(4) {
            &mainnet[rng.below(mainnet.len())]
        } else {
            &inputs[rng.below(generated)]
        };
        let mut mutant = mutate(base, &mut rng);
        if rng.chance(2) {
            sign_again(&mut mutant, &known);
        }
        inputs.push(mutant);
    }
    // Some exact duplicates.
    for _ in 0..cases() / 20 {
        let copy = inputs[rng.below(inputs.len())].clone();
        inputs.push(copy);
    }
    let (accepted, rejected) = compare(&inputs);
    eprintln!("generated and mutants: {accepted} accepted, {rejected} rejected");
    // The generator must exercise both sides.
    assert!(accepted > inputs.len() / 10 && rejected > inputs.len() / 10);
}

/// The table source the stage and the oracle share.
#[test]
fn table_source_answers_as_the_oracle_reads() {
    let tables = tables();
    let mut out = Vec::new();
    assert_eq!(
        tables.load(&[0x7B; 32], &[0], &mut out),
        Err(LookupError::TableNotFound)
    );
    assert_eq!(
        tables.load(&TABLE, &[TABLE_LENGTH as u8], &mut out),
        Err(LookupError::InvalidIndex)
    );
    tables.load(&TABLE, &[3, 4], &mut out).unwrap();
    assert_eq!(out, [program_id::SYSTEM, program_id::SYSVAR_CLOCK]);
}
