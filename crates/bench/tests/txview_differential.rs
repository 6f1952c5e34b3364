//! Differential test: `kestrel-txview` against `agave-transaction-view` 6.1.0 with today's mainnet
//! `SanitizeConfig`. Every input must get the same answer from both: accept or reject (and the same
//! Agave error kind) when parsing, when sanitizing, and through the one-call and prefix
//! constructors; and, when accepted, identical accessor values, identical writable/signer roles in
//! the resolved view, and a builder round trip to the same bytes.
//!
//! Inputs: the 308 mainnet transactions in `../shared/testdata/solana/mainnet-legacy-308.hex`,
//! generated legacy/v0/v1 transactions (many instructions, lookup tables, edge counts), and
//! mutations of both (bit flips, interesting bytes, truncations, insertions, deletions).
//! `KESTREL_DIFF_CASES` sets the number of generated and of mutated inputs (default 20,000 each);
//! `KESTREL_DIFF_SEED` changes the seed.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use agave_transaction_view::resolved_transaction_view::ResolvedTransactionView as AgaveResolved;
use agave_transaction_view::result::TransactionViewError as AgaveError;
use agave_transaction_view::sanitize::SanitizeConfig as AgaveConfig;
use agave_transaction_view::transaction_version::TransactionVersion as AgaveVersion;
use agave_transaction_view::transaction_view::TransactionView as AgaveView;
use kestrel_bench::rng::Rng;
use kestrel_txview::{
    limits, Address, AddressTableLookupSpec, ErrorClass, InstructionSpec, LoadedAddresses,
    MessageHeader, ResolvedTransactionView, SanitizeConfig, SanitizedTransactionView, Transaction,
    TransactionConfig, TransactionVersion, UnsanitizedTransactionView,
};
use solana_message::v0::LoadedAddresses as AgaveLoadedAddresses;
use solana_pubkey::Pubkey;
use solana_svm_transaction::svm_message::{SVMMessage, SVMStaticMessage};
use std::collections::HashSet;

const AGAVE_CONFIG: AgaveConfig = AgaveConfig {
    min_requested_heap_size: 32 * 1024,
    max_requested_heap_size: 256 * 1024,
    max_instructions: 64,
    max_accounts_per_instruction: 255,
};
const CONFIG: SanitizeConfig = SanitizeConfig::MAINNET;

fn cases() -> usize {
    std::env::var("KESTREL_DIFF_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(20_000)
}

fn seed() -> u64 {
    std::env::var("KESTREL_DIFF_SEED")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(0x5EED_CAFE_F00D_0001)
}

fn class(error: &AgaveError) -> ErrorClass {
    match error {
        AgaveError::ParseError => ErrorClass::Parse,
        AgaveError::SanitizeError => ErrorClass::Sanitize,
        AgaveError::AddressLookupMismatch => ErrorClass::AddressLookupMismatch,
    }
}

fn version(version: AgaveVersion) -> TransactionVersion {
    match version {
        AgaveVersion::Legacy => TransactionVersion::Legacy,
        AgaveVersion::V0 => TransactionVersion::V0,
        AgaveVersion::V1 => TransactionVersion::V1,
    }
}

/// What the comparison saw, for the summary line.
#[derive(Default, Debug)]
struct Tally {
    inputs: usize,
    parsed: usize,
    sanitized: usize,
    resolved: usize,
    versions: [usize; 3],
}

/// Compares every accessor of two views of the same bytes.
fn compare_accessors<const S: bool, const T: bool>(
    bytes: &[u8],
    ours: &kestrel_txview::TransactionView<&[u8], S>,
    theirs: &AgaveView<T, &[u8]>,
) {
    let context = || format!("input {}", hex::encode(bytes));
    assert_eq!(ours.version(), version(theirs.version()), "{}", context());
    assert_eq!(
        ours.num_signatures(),
        theirs.num_signatures(),
        "{}",
        context()
    );
    assert_eq!(
        ours.num_required_signatures(),
        theirs.num_required_signatures(),
        "{}",
        context()
    );
    assert_eq!(
        ours.num_readonly_signed_static_accounts(),
        theirs.num_readonly_signed_static_accounts()
    );
    assert_eq!(
        ours.num_readonly_unsigned_static_accounts(),
        theirs.num_readonly_unsigned_static_accounts()
    );
    assert_eq!(
        ours.num_static_account_keys(),
        theirs.num_static_account_keys()
    );
    assert_eq!(
        ours.num_instructions(),
        theirs.num_instructions(),
        "{}",
        context()
    );
    assert_eq!(
        ours.num_address_table_lookups(),
        theirs.num_address_table_lookups()
    );
    assert_eq!(
        ours.total_writable_lookup_accounts(),
        theirs.total_writable_lookup_accounts()
    );
    assert_eq!(
        ours.total_readonly_lookup_accounts(),
        theirs.total_readonly_lookup_accounts()
    );
    assert_eq!(ours.signatures().len(), theirs.signatures().len());
    for (mine, theirs) in ours.signatures().iter().zip(theirs.signatures()) {
        assert_eq!(&mine[..], theirs.as_ref());
    }
    assert_eq!(
        ours.static_account_keys().len(),
        theirs.static_account_keys().len()
    );
    for (mine, theirs) in ours
        .static_account_keys()
        .iter()
        .zip(theirs.static_account_keys())
    {
        assert_eq!(&mine[..], theirs.as_ref());
    }
    assert_eq!(
        &ours.recent_blockhash()[..],
        theirs.recent_blockhash().as_ref()
    );
    let mut their_instructions = theirs.instructions_iter();
    let mut our_instructions = ours.instructions_iter();
    assert_eq!(our_instructions.len(), their_instructions.len());
    loop {
        match (our_instructions.next(), their_instructions.next()) {
            (None, None) => break,
            (Some(mine), Some(theirs)) => {
                assert_eq!(
                    mine.program_id_index,
                    theirs.program_id_index,
                    "{}",
                    context()
                );
                assert_eq!(mine.accounts, theirs.accounts, "{}", context());
                assert_eq!(mine.data, theirs.data, "{}", context());
            }
            other => panic!("instruction counts differ: {other:?} for {}", context()),
        }
    }
    let our_lookups: Vec<_> = ours.address_table_lookup_iter().collect();
    let their_lookups: Vec<_> = theirs.address_table_lookup_iter().collect();
    assert_eq!(our_lookups.len(), their_lookups.len());
    for (mine, theirs) in our_lookups.iter().zip(&their_lookups) {
        assert_eq!(&mine.account_key[..], theirs.account_key.as_ref());
        assert_eq!(mine.writable_indexes, theirs.writable_indexes);
        assert_eq!(mine.readonly_indexes, theirs.readonly_indexes);
    }
    match (ours.transaction_config(), theirs.transaction_config()) {
        (None, None) => {}
        (Some(mine), Some(theirs)) => {
            assert_eq!(mine.mask(), theirs.mask());
            assert_eq!(mine.priority_fee_lamports(), theirs.priority_fee_lamports());
            assert_eq!(mine.compute_unit_limit(), theirs.compute_unit_limit());
            assert_eq!(
                mine.loaded_accounts_data_size_limit(),
                theirs.loaded_accounts_data_size_limit()
            );
            assert_eq!(mine.requested_heap_size(), theirs.requested_heap_size());
        }
        other => panic!("config presence differs: {:?}", other.0.map(|c| c.mask())),
    }
    assert_eq!(ours.data(), theirs.data());
    assert_eq!(ours.message_data(), theirs.message_data(), "{}", context());
}

/// Resolves both sanitized views with the same loaded addresses and reserved keys and compares
/// every account's roles.
fn compare_resolved(bytes: &[u8], rng: &mut Rng, tally: &mut Tally) {
    let ours = SanitizedTransactionView::try_new_sanitized(bytes, &CONFIG).unwrap();
    let theirs = AgaveView::try_new_sanitized(bytes, &AGAVE_CONFIG).unwrap();
    assert_eq!(ours.total_num_accounts(), theirs.total_num_accounts());
    assert_eq!(
        ours.num_requested_write_locks(),
        theirs.num_requested_write_locks()
    );
    let writable: Vec<Address> = (0..ours.total_writable_lookup_accounts())
        .map(|_| loaded_address(rng))
        .collect();
    let readonly: Vec<Address> = (0..ours.total_readonly_lookup_accounts())
        .map(|_| loaded_address(rng))
        .collect();
    // Reserve a few keys: sometimes the system program, sometimes a key of this transaction.
    let mut reserved: HashSet<Address> = HashSet::new();
    if rng.chance(2) {
        reserved.insert([0; 32]);
    }
    if rng.chance(3) {
        let keys = ours.static_account_keys();
        reserved.insert(keys[rng.below(keys.len())]);
    }
    if rng.chance(4) && !writable.is_empty() {
        reserved.insert(writable[rng.below(writable.len())]);
    }
    let agave_reserved: HashSet<Pubkey> = reserved.iter().map(|key| Pubkey::from(*key)).collect();
    // Agave requires loaded addresses for v0; give them to other versions sometimes too.
    let supply = ours.version() == TransactionVersion::V0 || rng.chance(2);
    let our_loaded = supply.then_some(LoadedAddresses {
        writable: &writable,
        readonly: &readonly,
    });
    let their_loaded = supply.then(|| AgaveLoadedAddresses {
        writable: writable.iter().map(|key| Pubkey::from(*key)).collect(),
        readonly: readonly.iter().map(|key| Pubkey::from(*key)).collect(),
    });
    let ours = ResolvedTransactionView::try_new(ours, our_loaded, |key| reserved.contains(key));
    let theirs = AgaveResolved::try_new(theirs, their_loaded, &agave_reserved);
    let (ours, theirs) = match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => (ours, theirs),
        (Err(mine), Err(theirs)) => {
            assert_eq!(mine.class(), class(&theirs));
            return;
        }
        (ours, theirs) => panic!(
            "resolve differs on {}: ours {:?}, agave {:?}",
            hex::encode(bytes),
            ours.err(),
            theirs.err()
        ),
    };
    tally.resolved += 1;
    let their_keys = theirs.account_keys();
    assert_eq!(ours.num_accounts(), their_keys.len());
    for (index, key) in ours.account_keys().enumerate() {
        assert_eq!(&key[..], their_keys[index].as_ref());
    }
    for index in 0..=257 {
        assert_eq!(
            ours.is_writable(index),
            theirs.is_writable(index),
            "is_writable({index}) on {}",
            hex::encode(bytes)
        );
        assert_eq!(ours.is_signer(index), theirs.is_signer(index));
    }
}

/// A loaded address: usually random, sometimes the upgradeable loader (which keeps writable
/// programs writable), sometimes the system program.
fn loaded_address(rng: &mut Rng) -> Address {
    match rng.below(16) {
        0 => limits::BPF_LOADER_UPGRADEABLE_ID,
        1 => [0; 32],
        _ => rng.address(),
    }
}

/// Compares everything for one input.
fn check(bytes: &[u8], rng: &mut Rng, tally: &mut Tally) {
    tally.inputs += 1;
    let ours = UnsanitizedTransactionView::try_new_unsanitized(bytes);
    let theirs = AgaveView::try_new_unsanitized(bytes);
    let (ours, theirs) = match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => (ours, theirs),
        (Err(mine), Err(theirs)) => {
            assert_eq!(
                mine.class(),
                class(&theirs),
                "parse error kinds differ on {}: ours {mine}",
                hex::encode(bytes)
            );
            check_one_call_and_prefix(bytes, rng);
            return;
        }
        (ours, theirs) => panic!(
            "parse differs on {}: ours {:?}, agave {:?}",
            hex::encode(bytes),
            ours.err(),
            theirs.err()
        ),
    };
    tally.parsed += 1;
    tally.versions[match ours.version() {
        TransactionVersion::Legacy => 0,
        TransactionVersion::V0 => 1,
        TransactionVersion::V1 => 2,
    }] += 1;
    compare_accessors(bytes, &ours, &theirs);
    // The builder writes back exactly the parsed bytes.
    assert_eq!(
        Transaction::from_view(&ours).serialize(),
        bytes,
        "builder round trip of {}",
        hex::encode(bytes)
    );
    let our_sanitized = ours.check_sanitized(&CONFIG);
    let their_sanitized = theirs.sanitize(&AGAVE_CONFIG);
    match (&our_sanitized, &their_sanitized) {
        (Ok(()), Ok(theirs)) => {
            let ours = ours.sanitize(&CONFIG).unwrap();
            compare_accessors(bytes, &ours, theirs);
            tally.sanitized += 1;
        }
        (Err(mine), Err(theirs)) => assert_eq!(mine.class(), class(theirs)),
        _ => panic!(
            "sanitize differs on {}: ours {:?}, agave {:?}",
            hex::encode(bytes),
            our_sanitized.err(),
            their_sanitized.err()
        ),
    }
    check_one_call_and_prefix(bytes, rng);
    if our_sanitized.is_ok() {
        compare_resolved(bytes, rng, tally);
    }
}

/// The one-call sanitized constructor and the prefix constructors agree with Agave's.
fn check_one_call_and_prefix(bytes: &[u8], rng: &mut Rng) {
    let ours = SanitizedTransactionView::try_new_sanitized(bytes, &CONFIG);
    let theirs = AgaveView::try_new_sanitized(bytes, &AGAVE_CONFIG);
    match (&ours, &theirs) {
        (Ok(_), Ok(_)) => {}
        (Err(mine), Err(theirs)) => assert_eq!(mine.class(), class(theirs)),
        _ => panic!(
            "one-call sanitize differs on {}: ours {:?}, agave {:?}",
            hex::encode(bytes),
            ours.err(),
            theirs.err()
        ),
    }
    let mut padded = bytes.to_vec();
    let trailing = rng.below(4);
    padded.extend(rng.bytes(trailing));
    let ours = UnsanitizedTransactionView::try_new_unsanitized_from_prefix(&padded[..]);
    let theirs = AgaveView::try_new_unsanitized_from_prefix(&padded[..]);
    match (&ours, &theirs) {
        (Ok((mine, our_length)), Ok((theirs, their_length))) => {
            assert_eq!(our_length, their_length);
            assert_eq!(mine.data(), theirs.data());
        }
        (Err(mine), Err(theirs)) => assert_eq!(mine.class(), class(theirs)),
        _ => panic!(
            "prefix parse differs on {}: ours {:?}, agave {:?}",
            hex::encode(&padded),
            ours.as_ref().err(),
            theirs.as_ref().err()
        ),
    }
    let ours = SanitizedTransactionView::try_new_sanitized_from_prefix(&padded[..], &CONFIG);
    let theirs = AgaveView::try_new_sanitized_from_prefix(&padded[..], &AGAVE_CONFIG);
    match (&ours, &theirs) {
        (Ok((_, our_length)), Ok((_, their_length))) => assert_eq!(our_length, their_length),
        (Err(mine), Err(theirs)) => assert_eq!(mine.class(), class(theirs)),
        _ => panic!(
            "prefix sanitize differs on {}: ours {:?}, agave {:?}",
            hex::encode(&padded),
            ours.as_ref().err(),
            theirs.as_ref().err()
        ),
    }
}

/// A generated transaction of a random version, mostly valid, with edge counts now and then.
fn generate(rng: &mut Rng) -> Transaction {
    let version = match rng.below(3) {
        0 => TransactionVersion::Legacy,
        1 => TransactionVersion::V0,
        _ => TransactionVersion::V1,
    };
    let num_required_signatures = match rng.below(20) {
        0 => 0,
        1 => 12,
        2 => 13,
        _ => 1 + rng.below(4) as u8,
    };
    let num_readonly_signed_accounts = match rng.below(10) {
        0 => num_required_signatures,
        _ => rng.below(usize::from(num_required_signatures)) as u8,
    };
    let max_keys = if version == TransactionVersion::V1 {
        66
    } else {
        38
    };
    let num_keys = match rng.below(12) {
        0 => rng.below(max_keys + 1),
        1 => max_keys,
        2 => usize::from(num_required_signatures).saturating_sub(1),
        _ => usize::from(num_required_signatures) + 1 + rng.below(6),
    }
    .min(if version == TransactionVersion::V1 {
        255
    } else {
        38
    });
    let unsigned = num_keys.saturating_sub(usize::from(num_required_signatures));
    let num_readonly_unsigned_accounts = match rng.below(10) {
        0 => (unsigned + 1) as u8,
        _ => rng.below(unsigned + 1) as u8,
    };
    let account_keys: Vec<Address> = (0..num_keys)
        .map(|_| match rng.below(30) {
            0 => limits::BPF_LOADER_UPGRADEABLE_ID,
            1 => [0; 32],
            _ => rng.address(),
        })
        .collect();
    let mut lookups = Vec::new();
    if version == TransactionVersion::V0 {
        let count = match rng.below(10) {
            0 => 31,
            1..=3 => 0,
            _ => 1 + rng.below(4),
        };
        for _ in 0..count {
            let bound = if rng.chance(20) { 200 } else { 5 };
            let writable = rng.below(bound);
            let readonly = rng.below(5);
            lookups.push(AddressTableLookupSpec {
                account_key: rng.address(),
                writable_indexes: rng.bytes(writable),
                readonly_indexes: rng.bytes(readonly),
            });
        }
    }
    let total_accounts = num_keys
        + lookups
            .iter()
            .map(|l| l.writable_indexes.len() + l.readonly_indexes.len())
            .sum::<usize>();
    let num_instructions = match rng.below(15) {
        0 => 64,
        1 => 65,
        2 => 0,
        3 => 20 + rng.below(40),
        _ => 1 + rng.below(5),
    };
    let instructions = (0..num_instructions)
        .map(|_| {
            let program_id_index = match rng.below(40) {
                0 => 0,
                1 => num_keys as u8,
                _ => 1 + rng.below(num_keys.saturating_sub(1)) as u8,
            };
            let num_accounts = match rng.below(40) {
                0 => 255,
                1 => 256,
                _ => rng.below(6),
            };
            let accounts = (0..num_accounts)
                .map(|_| match rng.below(60) {
                    0 => total_accounts as u8,
                    1 => 255,
                    _ => rng.below(total_accounts) as u8,
                })
                .collect();
            let data_length = match rng.below(30) {
                0 => 128 + rng.below(300),
                _ => rng.below(40),
            };
            InstructionSpec {
                program_id_index,
                accounts: if version == TransactionVersion::V1 && num_accounts > 255 {
                    rng.bytes(255)
                } else {
                    accounts
                },
                data: rng.bytes(data_length),
            }
        })
        .collect();
    let config = if version == TransactionVersion::V1 {
        TransactionConfig {
            priority_fee_lamports: rng.chance(2).then(|| rng.next_u64()),
            compute_unit_limit: rng.chance(2).then(|| rng.next_u64() as u32),
            loaded_accounts_data_size_limit: rng.chance(3).then(|| rng.next_u64() as u32),
            requested_heap_size: rng.chance(3).then(|| match rng.below(5) {
                0 => 32 * 1024,
                1 => 256 * 1024,
                2 => 31 * 1024,
                3 => 257 * 1024,
                _ => (32 + rng.below(300) as u32) * 1024 + if rng.chance(4) { 1 } else { 0 },
            }),
        }
    } else {
        TransactionConfig::default()
    };
    let num_signatures = if version != TransactionVersion::V1 && rng.chance(15) {
        1 + rng.below(13)
    } else {
        usize::from(num_required_signatures)
    };
    let signatures = (0..num_signatures)
        .map(|_| {
            let mut signature = [0u8; 64];
            for chunk in signature.chunks_mut(8) {
                chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
            signature
        })
        .collect();
    Transaction {
        version,
        signatures,
        header: MessageHeader {
            num_required_signatures,
            num_readonly_signed_accounts,
            num_readonly_unsigned_accounts,
        },
        account_keys,
        recent_blockhash: rng.address(),
        instructions,
        address_table_lookups: lookups,
        config,
    }
}

/// One mutation of `base`.
fn mutate(base: &[u8], rng: &mut Rng) -> Vec<u8> {
    const INTERESTING: [u8; 16] = [
        0, 1, 2, 3, 12, 13, 31, 32, 38, 39, 64, 65, 0x7F, 0x80, 0x81, 0xFF,
    ];
    let mut bytes = base.to_vec();
    for _ in 0..1 + rng.below(3) {
        let length = bytes.len();
        match rng.below(7) {
            0 | 1 if length > 0 => {
                let position = rng.below(length);
                bytes[position] ^= 1 << rng.below(8);
            }
            2 if length > 0 => {
                let position = rng.below(length);
                bytes[position] = INTERESTING[rng.below(INTERESTING.len())];
            }
            3 => bytes.truncate(rng.below(length + 1)),
            4 => {
                let position = rng.below(length + 1);
                let count = 1 + rng.below(40);
                let insert = rng.bytes(count);
                bytes.splice(position..position, insert);
            }
            5 if length > 0 => {
                let start = rng.below(length);
                let end = (start + 1 + rng.below(40)).min(length);
                bytes.drain(start..end);
            }
            _ => {
                let count = 1 + rng.below(3);
                bytes.extend(rng.bytes(count))
            }
        }
    }
    bytes
}

fn mainnet_transactions() -> Vec<Vec<u8>> {
    let Some(path) =
        kestrel_testdata::require("solana/mainnet-legacy-308.hex", "txview_differential")
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
fn mainnet_transactions_agree_and_all_sanitize() {
    let mut rng = Rng(seed());
    let mut tally = Tally::default();
    let transactions = mainnet_transactions();
    for bytes in &transactions {
        check(bytes, &mut rng, &mut tally);
    }
    assert_eq!(
        tally.sanitized,
        transactions.len(),
        "every mainnet transaction sanitizes"
    );
    if !transactions.is_empty() {
        assert_eq!(transactions.len(), 308);
    }
    eprintln!("mainnet: {tally:?}");
}

#[test]
fn edge_transactions_agree() {
    let mut rng = Rng(seed() ^ 1);
    let mut tally = Tally::default();
    let key = |n: u8| [n; 32];
    let base = |version, keys: u8, instructions: Vec<InstructionSpec>| {
        let mut transaction = Transaction::new(
            version,
            MessageHeader {
                num_required_signatures: 1,
                num_readonly_signed_accounts: 0,
                num_readonly_unsigned_accounts: 1,
            },
            (1..=keys).map(key).collect(),
            [9; 32],
            instructions,
        );
        transaction.signatures = vec![[1; 64]];
        transaction
    };
    let noop = |program: u8| InstructionSpec {
        program_id_index: program,
        accounts: vec![],
        data: vec![],
    };
    for version in [
        TransactionVersion::Legacy,
        TransactionVersion::V0,
        TransactionVersion::V1,
    ] {
        // Instruction counts 0, 1, 64 (the limit) and 65.
        for count in [0usize, 1, 64, 65] {
            check(
                &base(version, 2, vec![noop(1); count]).serialize(),
                &mut rng,
                &mut tally,
            );
        }
        // Accounts per instruction: 255 (the limit) and 256.
        for accounts in [255usize, 256] {
            let mut transaction = base(version, 2, vec![]);
            if version == TransactionVersion::V1 && accounts > 255 {
                continue;
            }
            transaction.instructions.push(InstructionSpec {
                program_id_index: 1,
                accounts: vec![0; accounts],
                data: vec![],
            });
            check(&transaction.serialize(), &mut rng, &mut tally);
        }
        // Static keys: the most a packet holds and one more.
        for keys in [38u8, 39, 64, 65] {
            check(
                &base(version, keys, vec![noop(1)]).serialize(),
                &mut rng,
                &mut tally,
            );
        }
    }
    // v0 lookup tables: 31 (the most a packet holds), 32, an empty one, and 256 accounts.
    for (tables, writable) in [(31usize, 1usize), (32, 1), (1, 0), (1, 255), (1, 254)] {
        let mut transaction = base(TransactionVersion::V0, 2, vec![noop(1)]);
        transaction.address_table_lookups = (0..tables)
            .map(|index| AddressTableLookupSpec {
                account_key: key(index as u8),
                writable_indexes: vec![0; writable],
                readonly_indexes: vec![],
            })
            .collect();
        check(&transaction.serialize(), &mut rng, &mut tally);
    }
    // v1 size limit: 4096 bytes and beyond.
    for data in [3900usize, 3990, 4000, 5000] {
        let transaction = base(
            TransactionVersion::V1,
            2,
            vec![InstructionSpec {
                program_id_index: 1,
                accounts: vec![],
                data: vec![7; data],
            }],
        );
        check(&transaction.serialize(), &mut rng, &mut tally);
    }
    // Transactions ending beyond u16::MAX: five 16383-byte instructions (a parse error in both),
    // and five lookups of 16383 writable indexes (a u16 overflow of the lookup totals, which Agave
    // reports as a sanitize error while parsing).
    let big = InstructionSpec {
        program_id_index: 1,
        accounts: vec![],
        data: vec![0; 16383],
    };
    for version in [TransactionVersion::Legacy, TransactionVersion::V0] {
        check(
            &base(version, 2, vec![big.clone(); 5]).serialize(),
            &mut rng,
            &mut tally,
        );
    }
    let mut transaction = base(TransactionVersion::V0, 2, vec![]);
    transaction.address_table_lookups = (0..5)
        .map(|index| AddressTableLookupSpec {
            account_key: key(index),
            writable_indexes: vec![0; 16383],
            readonly_indexes: vec![],
        })
        .collect();
    check(&transaction.serialize(), &mut rng, &mut tally);
    // v1 with 255 signers and with 255 instructions.
    let mut transaction = base(TransactionVersion::V1, 255, vec![noop(1); 255]);
    transaction.header.num_required_signatures = 255;
    transaction.signatures = vec![[2; 64]; 255];
    check(&transaction.serialize(), &mut rng, &mut tally);
    assert!(
        tally.sanitized > 10 && tally.sanitized < tally.inputs,
        "{tally:?}"
    );
    eprintln!("edges: {tally:?}");
}

#[test]
fn generated_transactions_agree() {
    let mut rng = Rng(seed() ^ 2);
    let mut tally = Tally::default();
    for _ in 0..cases() {
        let transaction = generate(&mut rng);
        check(&transaction.serialize(), &mut rng, &mut tally);
    }
    // The generator must reach every version and both answers, or the test proves little.
    assert!(
        tally.versions.iter().all(|&count| count > cases() / 10),
        "{tally:?}"
    );
    assert!(
        tally.sanitized > cases() / 10 && tally.resolved > cases() / 10,
        "{tally:?}"
    );
    assert!(tally.sanitized < tally.parsed, "{tally:?}");
    eprintln!("generated: {tally:?}");
}

#[test]
fn mutated_inputs_agree() {
    let mut rng = Rng(seed() ^ 3);
    let mut tally = Tally::default();
    let mut corpus = mainnet_transactions();
    for _ in 0..200 {
        corpus.push(generate(&mut rng).serialize());
    }
    for _ in 0..cases() {
        let base = &corpus[rng.below(corpus.len())];
        let mutated = mutate(base, &mut rng);
        check(&mutated, &mut rng, &mut tally);
    }
    assert!(
        tally.parsed > cases() / 20 && tally.sanitized > cases() / 50,
        "{tally:?}"
    );
    assert!(tally.parsed < tally.inputs, "{tally:?}");
    eprintln!("mutated: {tally:?}");
}
