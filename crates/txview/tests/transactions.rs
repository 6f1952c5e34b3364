//! Whole-transaction tests: sanitization rules written as data, resolved roles, v1 config, signature
//! checks on the mainnet corpus, and a builder/parser round-trip property.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use kestrel_txview::{
    limits, verify_signatures, verify_signatures_batch, verify_signatures_cached, AccountRole,
    Address, AddressTableLookupSpec, InstructionSpec, KeyCache, LoadedAddresses, MessageHeader,
    ParseError, ResolveError, ResolvedTransactionView, SanitizeConfig, SanitizeError,
    SanitizedTransactionView, Transaction, TransactionConfig, TransactionVersion,
    TransactionViewError, UnsanitizedTransactionView, VerifyError,
};
use proptest::prelude::*;

/// A valid transaction: 2 signers (1 readonly), 2 unsigned keys (1 readonly program), 2 instructions.
fn base(version: TransactionVersion) -> Transaction {
    let mut transaction = Transaction::new(
        version,
        MessageHeader {
            num_required_signatures: 2,
            num_readonly_signed_accounts: 1,
            num_readonly_unsigned_accounts: 1,
        },
        vec![[1; 32], [2; 32], [3; 32], [4; 32]],
        [9; 32],
        vec![
            InstructionSpec {
                program_id_index: 3,
                accounts: vec![0, 1, 2],
                data: vec![1, 2, 3],
            },
            InstructionSpec {
                program_id_index: 3,
                accounts: vec![],
                data: vec![],
            },
        ],
    );
    transaction.signatures = vec![[5; 64], [6; 64]];
    transaction
}

fn check(transaction: &Transaction, expected: Result<(), SanitizeError>) {
    let bytes = transaction.serialize();
    let result = SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET)
        .map(|_| ());
    assert_eq!(
        result,
        expected.map_err(TransactionViewError::Sanitize),
        "{transaction:?}"
    );
}

#[test]
fn sanitization_rules_as_data() {
    type Edit = fn(&mut Transaction);
    let cases: Vec<(&str, Edit, Result<(), SanitizeError>)> = vec![
        ("valid", |_| {}, Ok(())),
        (
            "fee payer readonly",
            |t| t.header.num_readonly_signed_accounts = 2,
            Err(SanitizeError::FeePayerReadonly {
                num_readonly_signed_accounts: 2,
                num_required_signatures: 2,
            }),
        ),
        (
            "readonly unsigned overlap",
            |t| t.header.num_readonly_unsigned_accounts = 3,
            Err(SanitizeError::ReadonlyUnsignedOverlap {
                num_readonly_unsigned_accounts: 3,
                num_static_account_keys: 4,
            }),
        ),
        (
            "signature count mismatch",
            |t| t.signatures.push([7; 64]),
            Err(SanitizeError::SignatureCountMismatch {
                num_signatures: 3,
                num_required_signatures: 2,
            }),
        ),
        (
            "program is fee payer",
            |t| t.instructions[1].program_id_index = 0,
            Err(SanitizeError::ProgramIdIsFeePayer { instruction: 1 }),
        ),
        (
            "program index out of range",
            |t| t.instructions[1].program_id_index = 4,
            Err(SanitizeError::ProgramIdIndexOutOfRange {
                instruction: 1,
                program_id_index: 4,
            }),
        ),
        (
            "account index out of range",
            |t| t.instructions[0].accounts[2] = 4,
            Err(SanitizeError::AccountIndexOutOfRange {
                instruction: 0,
                account_index: 4,
            }),
        ),
        (
            "64 instructions",
            |t| t.instructions.resize(64, t.instructions[1].clone()),
            Ok(()),
        ),
        (
            "65 instructions",
            |t| t.instructions.resize(65, t.instructions[1].clone()),
            Err(SanitizeError::TooManyInstructions {
                num_instructions: 65,
            }),
        ),
        (
            "255 accounts in an instruction",
            |t| t.instructions[0].accounts = vec![1; 255],
            Ok(()),
        ),
        (
            "256 accounts in an instruction",
            |t| t.instructions[0].accounts = vec![1; 256],
            Err(SanitizeError::TooManyInstructionAccounts {
                instruction: 0,
                num_accounts: 256,
            }),
        ),
        (
            "larger than a packet",
            |t| t.instructions[0].data = vec![0; 1200],
            // The size differs by version; checked below.
            Err(SanitizeError::TransactionTooLarge {
                size_bytes: 0,
                max_bytes: 1232,
            }),
        ),
    ];
    for (name, edit, expected) in cases {
        for version in [
            TransactionVersion::Legacy,
            TransactionVersion::V0,
            TransactionVersion::V1,
        ] {
            if version == TransactionVersion::V1 && name == "256 accounts in an instruction" {
                // A v1 account count is a u8: 256 cannot be written.
                continue;
            }
            let mut transaction = base(version);
            edit(&mut transaction);
            if name == "larger than a packet" {
                // The exact size differs by version; check the rule, not the arithmetic.
                let bytes = transaction.serialize();
                let result = SanitizedTransactionView::try_new_sanitized(
                    &bytes[..],
                    &SanitizeConfig::MAINNET,
                );
                if version == TransactionVersion::V1 {
                    assert!(result.is_ok(), "v1 allows 4096 bytes");
                } else {
                    assert!(matches!(
                        result,
                        Err(TransactionViewError::Sanitize(
                            SanitizeError::TransactionTooLarge {
                                max_bytes: 1232,
                                ..
                            }
                        ))
                    ));
                }
                continue;
            }
            if version == TransactionVersion::V1 && name == "signature count mismatch" {
                // v1 has no signature count: an extra signature is a trailing 64 bytes.
                let bytes = transaction.serialize();
                assert!(matches!(
                    UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]),
                    Err(ParseError::TrailingBytes {
                        trailing_bytes: 64,
                        ..
                    })
                ));
                continue;
            }
            check(&transaction, expected);
        }
    }
}

#[test]
fn lookup_and_v1_rules() {
    let mut transaction = base(TransactionVersion::V0);
    // An empty lookup takes 34 bytes, one less than the 35 per lookup that framing demands up
    // front, so it is followed by a longer one here (as Agave, an empty last lookup fails framing).
    transaction.address_table_lookups = vec![
        AddressTableLookupSpec {
            account_key: [8; 32],
            writable_indexes: vec![],
            readonly_indexes: vec![],
        },
        AddressTableLookupSpec {
            account_key: [9; 32],
            writable_indexes: vec![0, 0],
            readonly_indexes: vec![],
        },
    ];
    check(
        &transaction,
        Err(SanitizeError::EmptyAddressTableLookup { lookup: 0 }),
    );
    transaction.address_table_lookups.truncate(1);
    transaction.address_table_lookups[0].writable_indexes = vec![0; 252];
    check(&transaction, Ok(()));
    transaction.address_table_lookups[0]
        .writable_indexes
        .push(0);
    check(
        &transaction,
        Err(SanitizeError::TooManyAccounts {
            total_accounts: 257,
            max_accounts: 256,
        }),
    );

    let mut transaction = base(TransactionVersion::V1);
    for (heap, expected) in [
        (32 * 1024, Ok(())),
        (256 * 1024, Ok(())),
        (31 * 1024, Err(())),
        (257 * 1024, Err(())),
        (33 * 1024 + 1, Err(())),
    ] {
        transaction.config.requested_heap_size = Some(heap);
        check(
            &transaction,
            expected.map_err(|()| SanitizeError::InvalidRequestedHeapSize {
                requested_bytes: heap,
            }),
        );
    }
    transaction.config = TransactionConfig {
        priority_fee_lamports: Some(u64::MAX - 1),
        compute_unit_limit: Some(1_400_000),
        loaded_accounts_data_size_limit: Some(65_536),
        requested_heap_size: None,
    };
    let bytes = transaction.serialize();
    let view =
        SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET).unwrap();
    let config = view.transaction_config().unwrap();
    assert_eq!(config.mask(), 0b1111);
    assert_eq!(config.priority_fee_lamports(), Some(u64::MAX - 1));
    assert_eq!(config.compute_unit_limit(), Some(1_400_000));
    assert_eq!(config.loaded_accounts_data_size_limit(), Some(65_536));
    assert_eq!(config.requested_heap_size(), None);
    assert_eq!(view.v1_instruction_header(0), Some((3, 3, 3)));
    assert_eq!(view.v1_instruction_header(2), None);
    // 65 addresses exceed the v1 limit of 64.
    transaction.account_keys = (0..65).map(|n| [n; 32]).collect();
    check(
        &transaction,
        Err(SanitizeError::TooManyAccounts {
            total_accounts: 65,
            max_accounts: 64,
        }),
    );
}

#[test]
fn resolved_roles() {
    let mut transaction = base(TransactionVersion::V0);
    transaction.address_table_lookups = vec![AddressTableLookupSpec {
        account_key: [8; 32],
        writable_indexes: vec![3, 4],
        readonly_indexes: vec![5],
    }];
    // Instruction 0 invokes static key 2, which is writable by position: it is demoted unless the
    // upgradeable loader is present.
    transaction.instructions[0].program_id_index = 2;
    let bytes = transaction.serialize();
    let loaded_writable = [[20; 32], [0; 32]];
    let loaded_readonly = [[22; 32]];
    let loaded = LoadedAddresses {
        writable: &loaded_writable,
        readonly: &loaded_readonly,
    };
    let view = || {
        SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET).unwrap()
    };
    let resolved =
        ResolvedTransactionView::try_new(view(), Some(loaded), |key| key == &[0; 32]).unwrap();
    let roles: Vec<(bool, bool)> = (0..resolved.num_accounts())
        .map(|index| {
            let AccountRole { signer, writable } = resolved.account_role(index).unwrap();
            (signer, writable)
        })
        .collect();
    assert_eq!(
        roles,
        [
            (true, true),   // fee payer
            (true, false),  // readonly signer
            (false, false), // writable by position, but invoked as a program
            (false, false), // readonly unsigned
            (false, true),  // loaded writable
            (false, false), // loaded writable but reserved
            (false, false), // loaded readonly
        ]
    );
    assert_eq!(resolved.account_key(4), Some(&[20; 32]));
    assert_eq!(resolved.account_role(7), None);

    let loader = [limits::BPF_LOADER_UPGRADEABLE_ID, [0; 32]];
    let with_loader = LoadedAddresses {
        writable: &loader,
        readonly: &loaded_readonly,
    };
    let resolved = ResolvedTransactionView::try_new(view(), Some(with_loader), |_| false).unwrap();
    assert!(
        resolved.is_writable(2),
        "the upgradeable loader keeps programs writable"
    );

    assert_eq!(
        ResolvedTransactionView::try_new(view(), None, |_| false).err(),
        Some(ResolveError::MissingLoadedAddresses)
    );
    assert!(matches!(
        ResolvedTransactionView::try_new(view(), Some(LoadedAddresses::default()), |_| false),
        Err(ResolveError::LoadedAddressCountMismatch { .. })
    ));
}

fn mainnet() -> Vec<Vec<u8>> {
    let Some(path) = kestrel_testdata::require("solana/mainnet-legacy-308.hex", "txview mainnet")
    else {
        return Vec::new();
    };
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| hex::decode(line.trim()).unwrap())
        .collect()
}

#[test]
fn mainnet_signatures_verify_singly_and_in_batch() {
    let transactions = mainnet();
    let views: Vec<_> = transactions
        .iter()
        .map(|bytes| {
            SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET)
                .unwrap()
        })
        .collect();
    for view in &views {
        assert_eq!(verify_signatures(view), Ok(()));
    }
    assert_eq!(verify_signatures_batch(&views), Ok(()));
    if transactions.len() < 10 {
        return;
    }
    // One flipped message byte in transaction 7 fails both checks, which name it.
    let mut corrupted = transactions.clone();
    let last = corrupted[7].len() - 1;
    corrupted[7][last] ^= 1;
    let views: Vec<_> = corrupted
        .iter()
        .map(|bytes| UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]).unwrap())
        .collect();
    assert_eq!(
        verify_signatures(&views[7]),
        Err(VerifyError::InvalidSignature { index: 0 })
    );
    assert_eq!(
        verify_signatures_batch(&views),
        Err(VerifyError::InTransaction {
            transaction: 7,
            index: 0
        })
    );
}

#[test]
fn signing_with_the_builder_verifies() {
    let keys: Vec<_> = (1..=2u8)
        .map(|seed| ed25519_dalek::SigningKey::from_bytes(&[seed; 32]))
        .collect();
    for version in [
        TransactionVersion::Legacy,
        TransactionVersion::V0,
        TransactionVersion::V1,
    ] {
        let mut transaction = base(version);
        transaction.account_keys[0] = keys[0].verifying_key().to_bytes();
        transaction.account_keys[1] = keys[1].verifying_key().to_bytes();
        transaction.sign(&keys);
        let bytes = transaction.serialize();
        let view =
            SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET)
                .unwrap();
        assert_eq!(verify_signatures(&view), Ok(()), "{version:?}");
        assert_eq!(view.message_data(), transaction.message_bytes());
    }
}

#[test]
fn cached_keys_answer_as_decompressing_each_time() {
    // Two signers whose keys share the cache's slot (their first byte), so they evict each other.
    let signer = |seed: u16| {
        let mut bytes = [7; 32];
        bytes[..2].copy_from_slice(&seed.to_le_bytes());
        ed25519_dalek::SigningKey::from_bytes(&bytes)
    };
    let signers: Vec<_> = (0..300).map(signer).collect();
    let (first, second) = (0..signers.len())
        .flat_map(|a| (a + 1..signers.len()).map(move |b| (a, b)))
        .find(|&(a, b)| {
            signers[a].verifying_key().as_bytes()[0] == signers[b].verifying_key().as_bytes()[0]
        })
        .unwrap();
    let (a, b, c) = (&signers[first], &signers[second], &signer(1_000));
    // Bytes in the same slot that are not a curve point.
    let mut not_a_point = *a.verifying_key().as_bytes();
    while ed25519_dalek::VerifyingKey::from_bytes(&not_a_point).is_ok() {
        not_a_point[9] = not_a_point[9].wrapping_add(1);
    }
    // Signed by `keys`; `first_key` in place of the first signer's key, when given.
    let signed = |keys: [&ed25519_dalek::SigningKey; 2], first_key: Option<Address>| {
        let mut transaction = base(TransactionVersion::Legacy);
        transaction.account_keys[0] =
            first_key.unwrap_or_else(|| keys[0].verifying_key().to_bytes());
        transaction.account_keys[1] = keys[1].verifying_key().to_bytes();
        transaction.sign(&[keys[0].clone(), keys[1].clone()]);
        transaction.serialize()
    };
    let mut identity = [0; 32];
    identity[0] = 1;
    let cases = [
        (signed([a, c], None), Ok(())),
        (signed([b, a], None), Ok(())),
        (signed([a, c], None), Ok(())),
        // Signed by `a` under `b`'s key (same slot), right after `a` was cached.
        (
            signed([a, c], Some(b.verifying_key().to_bytes())),
            Err(VerifyError::InvalidSignature { index: 0 }),
        ),
        (
            signed([a, c], Some(not_a_point)),
            Err(VerifyError::InvalidPublicKey { index: 0 }),
        ),
        (signed([c, a], None), Ok(())),
        // A small-order key: `verify_strict` refuses it whatever the signature.
        (
            signed([a, c], Some(identity)),
            Err(VerifyError::InvalidSignature { index: 0 }),
        ),
        (signed([a, b], None), Ok(())),
    ];
    let mut cache = KeyCache::default();
    for round in 0..2 {
        for (position, (bytes, expected)) in cases.iter().enumerate() {
            let view = UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]).unwrap();
            assert_eq!(verify_signatures(&view), *expected, "{round} {position}");
            assert_eq!(
                verify_signatures_cached(&view, &mut cache),
                *expected,
                "{round} {position}"
            );
        }
    }
}

fn instruction_strategy() -> impl Strategy<Value = InstructionSpec> {
    (
        1u8..6,
        prop::collection::vec(0u8..6, 0..8),
        prop::collection::vec(any::<u8>(), 0..60),
    )
        .prop_map(|(program_id_index, accounts, data)| InstructionSpec {
            program_id_index,
            accounts,
            data,
        })
}

proptest! {
    #[test]
    fn builder_and_views_round_trip(
        version in prop_oneof![Just(TransactionVersion::Legacy), Just(TransactionVersion::V0), Just(TransactionVersion::V1)],
        instructions in prop::collection::vec(instruction_strategy(), 0..8),
        lookups in prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u8>(), 0..4), prop::collection::vec(any::<u8>(), 1..4)), 0..3),
        fee in proptest::option::of(any::<u64>()),
        trailing in prop::collection::vec(any::<u8>(), 0..5),
    ) {
        let mut transaction = base(version);
        transaction.account_keys = (1..=6).map(|n| [n; 32]).collect();
        transaction.instructions = instructions;
        if version == TransactionVersion::V0 {
            transaction.address_table_lookups = lookups
                .into_iter()
                .map(|(key, writable_indexes, readonly_indexes)| AddressTableLookupSpec {
                    account_key: [key; 32],
                    writable_indexes,
                    readonly_indexes,
                })
                .collect();
        }
        if version == TransactionVersion::V1 {
            transaction.config.priority_fee_lamports = fee;
        }
        let bytes = transaction.serialize();
        let view = SanitizedTransactionView::try_new_sanitized(&bytes[..], &SanitizeConfig::MAINNET).unwrap();
        prop_assert_eq!(Transaction::from_view(&view), transaction.clone());
        let mut padded = bytes.clone();
        padded.extend(&trailing);
        let (prefix_view, length) = UnsanitizedTransactionView::try_new_unsanitized_from_prefix(&padded[..]).unwrap();
        prop_assert_eq!(length, bytes.len());
        prop_assert_eq!(prefix_view.data(), &bytes[..]);
        // Owned buffers give the same view.
        let owned = UnsanitizedTransactionView::try_new_unsanitized(bytes.clone().into_boxed_slice()).unwrap();
        prop_assert_eq!(owned.message_data(), transaction.message_bytes());
        // Every strict prefix fails to parse exactly.
        for length in 0..bytes.len() {
            prop_assert!(UnsanitizedTransactionView::try_new_unsanitized(&bytes[..length]).is_err());
        }
    }
}
