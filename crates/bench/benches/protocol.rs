//! `kestrel-protocol`'s operation codec against `tezos_data_encoding` 0.6.0 (tezedge's codec,
//! with derived `NomReader`/`BinWriter` types written here for the same kinds), one criterion
//! group per direction, one benchmark per workload shape, all Octez's signed vectors
//! (`octez-protocol/encoding/operation.out`):
//!
//! - `transfer`: a tez transfer to an implicit account (the typical operation, 146 bytes);
//! - `call`: a contract call with a named entrypoint and Micheline parameters;
//! - `batch`: a reveal then a transfer (the reveal's ed25519 key is checked for canonical form
//!   and decompressed by Kestrel when read, as Octez does; the peer keeps 32 bytes).
//!
//! Both sides decode to values that re-encode to the input; the setup asserts it before
//! measuring. Kestrel borrows Micheline parameters from the input and reads Zarith fields into
//! machine integers; the peer allocates big integers and `Vec`s, as its types are.

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kestrel_protocol::{Operation, SignedOperation};
use tezos_data_encoding::enc::BinWriter;
use tezos_data_encoding::nom::NomReader;
use tezos_data_encoding::types::{Mutez, SizedBytes};

/// A signed operation: branch, contents up to the 64-byte suffix, suffix.
#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerOperation {
    branch: SizedBytes<32>,
    #[encoding(reserve = "64", list)]
    contents: Vec<PeerContents>,
    signature: SizedBytes<64>,
}

#[derive(Debug, Clone, NomReader, BinWriter)]
#[encoding(tags = "u8")]
enum PeerContents {
    #[encoding(tag = 107)]
    Reveal(PeerReveal),
    #[encoding(tag = 108)]
    Transaction(PeerTransaction),
}

#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerManagerHeader {
    source: SizedBytes<21>,
    fee: Mutez,
    counter: Mutez,
    gas_limit: Mutez,
    storage_limit: Mutez,
}

#[derive(Debug, Clone, NomReader, BinWriter)]
#[encoding(tags = "u8")]
enum PeerPublicKey {
    #[encoding(tag = 0)]
    Ed25519(SizedBytes<32>),
    #[encoding(tag = 1)]
    Secp256k1(SizedBytes<33>),
    #[encoding(tag = 2)]
    P256(SizedBytes<33>),
}

#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerReveal {
    header: PeerManagerHeader,
    public_key: PeerPublicKey,
    #[encoding(dynamic, bytes)]
    proof: Option<Vec<u8>>,
}

#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerTransaction {
    header: PeerManagerHeader,
    amount: Mutez,
    destination: SizedBytes<22>,
    parameters: Option<PeerParameters>,
}

#[derive(Debug, Clone, NomReader, BinWriter)]
#[encoding(tags = "u8")]
enum PeerEntrypoint {
    #[encoding(tag = 0)]
    Default,
    #[encoding(tag = 1)]
    Root,
    #[encoding(tag = 2)]
    Do,
    #[encoding(tag = 3)]
    SetDelegate,
    #[encoding(tag = 4)]
    RemoveDelegate,
    #[encoding(tag = 255)]
    Named(PeerEntrypointName),
}

#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerEntrypointName {
    #[encoding(short_dynamic, bytes)]
    name: Vec<u8>,
}

#[derive(Debug, Clone, NomReader, BinWriter)]
struct PeerParameters {
    entrypoint: PeerEntrypoint,
    #[encoding(dynamic, bytes)]
    value: Vec<u8>,
}

/// The vector `name` of `operation.out`.
fn vector(text: &str, name: &str) -> Vec<u8> {
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("vector {name}"));
    hex::decode(line.trim()).expect("hex vector")
}

const WORKLOADS: [(&str, &str); 3] = [
    ("transfer", "operation-transaction-to-implicit"),
    ("call", "operation-transaction-to-originated"),
    ("batch", "operation-batch-reveal-transaction"),
];

fn operation_benchmarks(c: &mut Criterion) {
    let Some(path) =
        kestrel_testdata::require("octez-protocol/encoding/operation.out", "protocol benches")
    else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("vectors readable");
    let inputs: Vec<(&str, Vec<u8>)> = WORKLOADS
        .iter()
        .map(|(workload, name)| (*workload, vector(&text, name)))
        .collect();
    for (workload, input) in &inputs {
        let ours = Operation::decode(input).expect("decodes");
        assert_eq!(&ours.encode(), input, "{workload}: Kestrel re-encodes");
        let (rest, peer) = PeerOperation::nom_read(input).expect("peer decodes");
        assert!(rest.is_empty(), "{workload}: peer reads everything");
        assert_eq!(peer.contents.len(), ours.contents.len());
        let mut peer_bytes = Vec::new();
        peer.bin_write(&mut peer_bytes).expect("peer encodes");
        assert_eq!(&peer_bytes, input, "{workload}: peer re-encodes");
    }

    let mut group = c.benchmark_group("protocol/operation_decode");
    for (workload, input) in &inputs {
        group.throughput(Throughput::Bytes(input.len() as u64));
        // Each decoded value is dropped inside the measured closure and kept from the
        // optimiser with `std::hint::black_box` of a reference (not criterion's volatile copy).
        group.bench_with_input(BenchmarkId::new("kestrel", workload), input, |b, input| {
            b.iter(|| {
                let operation = SignedOperation::decode(black_box(input)).expect("decodes");
                std::hint::black_box(&operation);
            })
        });
        group.bench_with_input(
            BenchmarkId::new("tezos_data_encoding", workload),
            input,
            |b, input| {
                b.iter(|| {
                    let operation = PeerOperation::nom_read(black_box(input)).expect("decodes");
                    std::hint::black_box(&operation);
                })
            },
        );
    }
    group.finish();

    let mut group = c.benchmark_group("protocol/operation_encode");
    for (workload, input) in &inputs {
        group.throughput(Throughput::Bytes(input.len() as u64));
        let ours = Operation::decode(input).expect("decodes");
        let (_, peer) = PeerOperation::nom_read(input).expect("peer decodes");
        let mut buffer = Vec::with_capacity(input.len());
        group.bench_function(BenchmarkId::new("kestrel", workload), |b| {
            b.iter(|| {
                buffer.clear();
                black_box(&ours).encode_into(&mut buffer);
                black_box(buffer.len())
            })
        });
        group.bench_function(BenchmarkId::new("tezos_data_encoding", workload), |b| {
            b.iter(|| {
                buffer.clear();
                black_box(&peer).bin_write(&mut buffer).expect("encodes");
                black_box(buffer.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, operation_benchmarks);
criterion_main!(benches);
