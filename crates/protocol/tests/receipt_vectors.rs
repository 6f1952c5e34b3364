//! Octez's protocol-025 encoding regression vectors for receipts and the protocol's small values
//! (`octez-protocol/encoding/*.out`, `name: hex` lines): operations with metadata, internal
//! operations with their results, lazy storage diffs, and the scalar values. Each decodes,
//! re-encodes to the same bytes, and survives the JSON form (binary → JSON → value → binary).

use std::path::Path;

use kestrel_encoding::Reader;
use kestrel_protocol::receipt::lazy_storage::LazyStorageDiff;
use kestrel_protocol::{Field, InternalOperationResult, OperationWithMetadata};

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

/// Decodes `bytes` as one `T`, re-encodes, and round-trips through JSON; returns the JSON.
fn check_value<'a, T: Field<'a> + std::fmt::Debug + PartialEq>(
    name: &str,
    bytes: &'a [u8],
) -> String {
    let mut reader = Reader::new(bytes);
    let value = T::read(&mut reader).unwrap_or_else(|error| panic!("{name}: {error}"));
    assert_eq!(reader.remaining_bytes(), 0, "{name}: trailing bytes");
    let mut out = Vec::new();
    value.write(&mut out);
    assert_eq!(
        hex::encode(&out),
        hex::encode(bytes),
        "{name}: re-encoding {value:?}"
    );
    let mut json = String::new();
    value.write_json(&mut json).expect("JSON form");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let back =
        T::read_json(&parsed, "").unwrap_or_else(|error| panic!("{name}: {error} in {json}"));
    let mut again = Vec::new();
    back.write(&mut again);
    assert_eq!(
        hex::encode(&again),
        hex::encode(bytes),
        "{name}: from JSON {json}"
    );
    let mut json_again = String::new();
    back.write_json(&mut json_again).expect("JSON form");
    assert_eq!(json_again, json, "{name}: JSON round trip");
    json
}

/// Runs `check` on every vector of `file`; returns how many there were.
fn check_values(file: &str, check: Check) -> usize {
    let Some(path) = kestrel_testdata::require(
        &format!("octez-protocol/encoding/{file}"),
        "protocol encoding vectors",
    ) else {
        return 0;
    };
    let all = vectors(&path);
    for (name, bytes) in &all {
        check(name, bytes);
    }
    all.len()
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

/// A check of one vector.
type Check = fn(&str, &[u8]);

/// The value files of the protocol layer, each with its type; every file must have vectors.
#[test]
fn protocol_values() {
    use kestrel_protocol::block_header::Timestamp;
    use kestrel_protocol::values::{
        BallotTally, Fitness, Gas, GasCost, Level, Listing, Nonce, Period, Seed, VotingPeriod,
        VotingPeriodKind,
    };
    use kestrel_protocol::voting::Ballot;
    let files: [(&str, Check); 15] = [
        ("cycle.out", |n, b| drop(check_value::<i32>(n, b))),
        ("raw_level.out", |n, b| drop(check_value::<i32>(n, b))),
        ("level.out", |n, b| drop(check_value::<Level>(n, b))),
        ("fitness.out", |n, b| drop(check_value::<Fitness>(n, b))),
        ("gas.out", |n, b| drop(check_value::<Gas>(n, b))),
        ("gas.cost.out", |n, b| drop(check_value::<GasCost>(n, b))),
        ("nonce.out", |n, b| drop(check_value::<Nonce>(n, b))),
        ("seed.out", |n, b| drop(check_value::<Seed>(n, b))),
        ("period.out", |n, b| drop(check_value::<Period>(n, b))),
        ("timestamp.out", |n, b| drop(check_value::<Timestamp>(n, b))),
        ("vote.ballot.out", |n, b| drop(check_value::<Ballot>(n, b))),
        ("vote.ballots.out", |n, b| {
            drop(check_value::<BallotTally>(n, b))
        }),
        ("vote.listings.out", |n, b| {
            drop(check_value::<Vec<Listing>>(n, b))
        }),
        ("voting_period.kind.out", |n, b| {
            drop(check_value::<VotingPeriodKind>(n, b))
        }),
        ("voting_period.out", |n, b| {
            drop(check_value::<VotingPeriod>(n, b))
        }),
    ];
    for (file, check) in files {
        check_values(file, check);
    }
}
