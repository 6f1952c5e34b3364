//! Octez's protocol-025 encoding regression vectors (`octez-protocol/encoding/*.out`, one
//! `name: hex` per line): every operation vector (signed, unsigned, raw, BLS-mode, internal), block
//! header, contract and tez vector decodes, re-encodes to the same bytes, and survives the JSON
//! form (binary → JSON → binary) unchanged; so do the receipts (operations with metadata, internal
//! operations with their results, lazy storage diffs) and the protocol's small values (levels,
//! fitness, gas, seeds, periods, voting periods, ballots).
//! Vectors of kinds the crate declares unsupported must fail with `UnsupportedKind`, never
//! decode to something else.

use std::path::Path;

use kestrel_encoding::Reader;
use kestrel_protocol::block_header::{BlockHeader, RawBlockHeader, UnsignedBlockHeader};
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::internal::InternalOperation;
use kestrel_protocol::receipt::lazy_storage::LazyStorageDiff;
use kestrel_protocol::{
    DecodeErrorKind, Field, InternalOperationResult, Mutez, Operation, OperationWithMetadata,
    RawOperation, SignedOperation,
};

/// The `name: hex` lines of a vector file.
fn vectors(path: &Path) -> Vec<(String, Vec<u8>)> {
    let text = std::fs::read_to_string(path).expect("readable vector file");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, hex_text) = line.split_once(": ").expect("`name: hex` line");
            (
                name.to_owned(),
                hex::decode(hex_text.trim()).expect("hex vector"),
            )
        })
        .collect()
}

enum Form {
    Signed,
    Unsigned,
}

/// Decodes, re-encodes, and round-trips through JSON; returns whether the vector is covered
/// (false for a declared-unsupported kind).
fn check_operation(name: &str, bytes: &[u8], form: &Form) -> bool {
    let decoded = match form {
        Form::Signed => SignedOperation::decode(bytes).map(|signed| {
            assert_eq!(signed.bytes, bytes);
            signed.operation
        }),
        Form::Unsigned => Operation::decode_unsigned(bytes),
    };
    let operation = match decoded {
        Ok(operation) => operation,
        Err(error) if matches!(error.kind, DecodeErrorKind::UnsupportedKind { .. }) => {
            return false
        }
        Err(error) => panic!("{name}: {error}"),
    };
    let encode = |operation: &Operation<'_>| match form {
        Form::Signed => operation.encode(),
        Form::Unsigned => operation.encode_unsigned(),
    };
    assert_eq!(
        hex::encode(encode(&operation)),
        hex::encode(bytes),
        "{name}: re-encoding"
    );
    let json = operation
        .to_json()
        .unwrap_or_else(|error| panic!("{name}: JSON: {error}"));
    let from_json = Operation::from_json_str(&json)
        .unwrap_or_else(|error| panic!("{name}: reading back {json}: {error}"));
    assert_eq!(from_json, operation, "{name}: JSON round trip of {json}");
    assert_eq!(
        hex::encode(encode(&from_json)),
        hex::encode(bytes),
        "{name}: bytes from JSON"
    );
    true
}

fn check_file(file: &str, form: Form, expected_covered: usize) {
    let Some(path) = kestrel_testdata::require(
        &format!("octez-protocol/encoding/{file}"),
        "protocol encoding vectors",
    ) else {
        return;
    };
    let all = vectors(&path);
    let mut uncovered = Vec::new();
    for (name, bytes) in &all {
        if !check_operation(name, bytes, &form) {
            uncovered.push(name.clone());
        }
    }
    assert_eq!(
        all.len() - uncovered.len(),
        expected_covered,
        "{file}: covered {} of {}, not covered: {uncovered:?}",
        all.len() - uncovered.len(),
        all.len()
    );
}

#[test]
fn signed_operations() {
    check_file("operation.out", Form::Signed, 26);
}

#[test]
fn unsigned_operations() {
    check_file("operation.unsigned.out", Form::Unsigned, 26);
}

/// Decodes `bytes` as one `T`, re-encodes, and round-trips through JSON.
fn check_value<'a, T: Field<'a> + std::fmt::Debug>(name: &str, bytes: &'a [u8]) {
    let mut reader = Reader::new(bytes);
    let value = T::read(&mut reader).unwrap_or_else(|error| panic!("{name}: {error}"));
    assert_eq!(reader.remaining_bytes(), 0, "{name}: trailing bytes");
    let mut out = Vec::new();
    value.write(&mut out);
    assert_eq!(out, bytes, "{name}: re-encoding {value:?}");
    let mut json = String::new();
    value.write_json(&mut json).expect("JSON form");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let back = T::read_json(&parsed, "").unwrap_or_else(|error| panic!("{name}: {error}"));
    let mut again = Vec::new();
    back.write(&mut again);
    assert_eq!(again, bytes, "{name}: from JSON {json}");
}

/// A check of one vector.
type Check = fn(&str, &[u8]);

/// Runs `check` on every vector of `file`.
fn check_values(file: &str, check: Check) {
    let Some(path) = kestrel_testdata::require(
        &format!("octez-protocol/encoding/{file}"),
        "protocol encoding vectors",
    ) else {
        return;
    };
    for (name, bytes) in vectors(&path) {
        check(&name, &bytes);
    }
}

#[test]
fn contracts() {
    check_values("contract.out", |name, bytes| {
        check_value::<Contract>(name, bytes)
    });
}

#[test]
fn tez() {
    check_values("tez.out", |name, bytes| check_value::<Mutez>(name, bytes));
}

#[test]
fn block_headers() {
    check_values("block_header.out", |name, bytes| {
        check_value::<BlockHeader<'_>>(name, bytes)
    });
    check_values("block_header.unsigned.out", |name, bytes| {
        check_value::<UnsignedBlockHeader<'_>>(name, bytes)
    });
    check_values("block_header.raw.out", |name, bytes| {
        check_value::<RawBlockHeader<'_>>(name, bytes)
    });
}

#[test]
fn internal_operations() {
    check_values("operation.internal.out", |name, bytes| {
        check_value::<InternalOperation<'_>>(name, bytes)
    });
}

#[test]
fn raw_operations() {
    check_values("operation.raw.out", |name, bytes| {
        check_value::<RawOperation<'_>>(name, bytes)
    });
}

#[test]
fn bls_mode_unsigned_operations() {
    check_values("operation.bls_mode_unsigned.out", |name, bytes| {
        let operation = Operation::decode_bls_mode_unsigned(bytes)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(operation.encode_bls_mode_unsigned(), bytes, "{name}");
        // The same operation in the ordinary form keeps slot 0 and re-reads to it.
        let ordinary = operation.encode_unsigned();
        assert_eq!(Operation::decode_unsigned(&ordinary), Ok(operation.clone()));
        // The slot-carrying tags are not BLS-mode contents.
        assert!(Operation::decode_bls_mode_unsigned(&ordinary).is_err());
    });
}

#[test]
fn operations_with_metadata() {
    check_values("operation.data_and_metadata.out", |name, bytes| {
        check_value::<OperationWithMetadata>(name, bytes);
    });
}

#[test]
fn internal_operations_with_results() {
    check_values("operation.internal_and_metadata.out", |name, bytes| {
        check_value::<InternalOperationResult>(name, bytes);
    });
}

#[test]
fn lazy_storage_diffs() {
    check_values("lazy_storage_diff.out", |name, bytes| {
        check_value::<LazyStorageDiff>(name, bytes);
    });
}

/// The value files of the protocol layer, each with its type.
#[test]
fn protocol_values() {
    use kestrel_protocol::block_header::Timestamp;
    use kestrel_protocol::values::{
        BallotTally, Fitness, Gas, GasCost, Level, Listing, Nonce, Period, Seed, VotingPeriod,
        VotingPeriodKind,
    };
    use kestrel_protocol::voting::Ballot;
    let files: [(&str, Check); 15] = [
        ("cycle.out", |n, b| check_value::<i32>(n, b)),
        ("raw_level.out", |n, b| check_value::<i32>(n, b)),
        ("level.out", |n, b| check_value::<Level>(n, b)),
        ("fitness.out", |n, b| check_value::<Fitness>(n, b)),
        ("gas.out", |n, b| check_value::<Gas>(n, b)),
        ("gas.cost.out", |n, b| check_value::<GasCost>(n, b)),
        ("nonce.out", |n, b| check_value::<Nonce>(n, b)),
        ("seed.out", |n, b| check_value::<Seed>(n, b)),
        ("period.out", |n, b| check_value::<Period>(n, b)),
        ("timestamp.out", |n, b| check_value::<Timestamp>(n, b)),
        ("vote.ballot.out", |n, b| check_value::<Ballot>(n, b)),
        ("vote.ballots.out", |n, b| check_value::<BallotTally>(n, b)),
        ("vote.listings.out", |n, b| {
            check_value::<Vec<Listing>>(n, b)
        }),
        ("voting_period.kind.out", |n, b| {
            check_value::<VotingPeriodKind>(n, b)
        }),
        ("voting_period.out", |n, b| {
            check_value::<VotingPeriod>(n, b)
        }),
    ];
    for (file, check) in files {
        check_values(file, check);
    }
}
