//! `kestrel-encoding` against its peers, one criterion group per workload shape:
//!
//! - `encoding/tree`: a binary tree of 2^20 nodes as a recursive union (`Leaf of int64 |
//!   Node of tree * tree`), encode and decode, against a hand-written codec of the same bytes
//!   (the best a person could write for this one type; its decode counts depth as Kestrel does,
//!   its encode does not).
//! - `encoding/block_header`: the real 206-byte Tezos block header of the P2P test data, decode
//!   and encode, against `tezos_data_encoding` 0.6.0 with its derived `NomReader`/`BinWriter`.
//!
//! Both sides produce and accept the same bytes; the setup asserts it before measuring.
//!
//! The tree and its baseline are in `encoding_support/tree_workload.rs`, shared with
//! `encoding_tree_driver.rs`. Criterion measures Kestrel's window and then the baseline's; the
//! tree encode is memory-bound, and this machine's memory state changes over seconds, moving both
//! sides alike, so a change between the two windows moves criterion's ratio (BENCHMARKS.md,
//! `## encoding`): read it over several rounds, or take the driver's paired ratios. The order was
//! measured not to favour either side, so it is unchanged.

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kestrel_encoding::Encoding;
use tezos_data_encoding::enc::BinWriter;
use tezos_data_encoding::nom::NomReader;

// ---------------------------------------------------------------------------------------------
// Workload 1: a recursive union (the tree shared with the encoding tests).

#[path = "../../encoding/tests/support/tree.rs"]
mod tree;
use tree::tree_encoding;

#[path = "encoding_support/tree_workload.rs"]
mod tree_workload;
use tree_workload::{baseline, build_tree};

fn tree_benchmarks(c: &mut Criterion) {
    // 2^20 - 1 nodes: 2^19 leaves and 2^19 - 1 inner nodes.
    const LEVELS: u32 = 20;
    let encoding = tree_encoding().expect("tree encoding builds");
    let tree = build_tree(LEVELS, &mut 0);
    let bytes = encoding.encode(&tree).expect("tree encodes");
    let mut baseline_bytes = Vec::new();
    baseline::encode(&tree, &mut baseline_bytes);
    assert_eq!(bytes, baseline_bytes, "both codecs write the same bytes");
    assert_eq!(encoding.decode(&bytes).expect("decodes"), tree);
    assert_eq!(baseline::decode(&bytes).expect("decodes"), tree);

    let mut group = c.benchmark_group("encoding/tree");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(10);
    let mut buffer = Vec::with_capacity(bytes.len());
    group.bench_function(BenchmarkId::new("encode", "kestrel"), |b| {
        b.iter(|| {
            buffer.clear();
            encoding
                .encode_into(black_box(&tree), &mut buffer)
                .expect("encodes");
            black_box(buffer.len())
        })
    });
    group.bench_function(BenchmarkId::new("encode", "baseline"), |b| {
        b.iter(|| {
            buffer.clear();
            baseline::encode(black_box(&tree), &mut buffer);
            black_box(buffer.len())
        })
    });
    // As for the block header: the decoded tree is held and dropped inside the closure.
    group.bench_function(BenchmarkId::new("decode", "kestrel"), |b| {
        b.iter(|| {
            let tree = encoding.decode(black_box(&bytes)).expect("decodes");
            std::hint::black_box(&tree);
        })
    });
    group.bench_function(BenchmarkId::new("decode", "baseline"), |b| {
        b.iter(|| {
            let tree = baseline::decode(black_box(&bytes)).expect("decodes");
            std::hint::black_box(&tree);
        })
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// Workload 2: the shell block header.
#[path = "../../encoding/tests/support/block_header.rs"]
mod block_header;
use block_header::block_header_encoding;

/// The peer's block header, with its derives (the layout of tezedge's `BlockHeader`).
#[derive(Debug, PartialEq, NomReader, BinWriter)]
struct PeerBlockHeader {
    level: i32,
    proto: u8,
    #[encoding(sized = "32", bytes)]
    predecessor: Vec<u8>,
    timestamp: i64,
    validation_pass: u8,
    #[encoding(sized = "32", bytes)]
    operations_hash: Vec<u8>,
    #[encoding(dynamic, list, dynamic, bytes)]
    fitness: Vec<Vec<u8>>,
    #[encoding(sized = "32", bytes)]
    context: Vec<u8>,
    #[encoding(bytes)]
    protocol_data: Vec<u8>,
}

fn block_header_benchmarks(c: &mut Criterion) {
    let Some(path) =
        kestrel_testdata::require("encoding/p2p/block-header.msg", "block_header_benchmarks")
    else {
        return;
    };
    let input = std::fs::read(path).expect("block header readable");
    let encoding = block_header_encoding().expect("block header encoding builds");
    let header = encoding.decode(&input).expect("decodes");
    let (rest, peer_header) = PeerBlockHeader::nom_read(&input).expect("peer decodes");
    assert!(rest.is_empty());
    assert_eq!(peer_header.level, header.level);
    assert_eq!(peer_header.protocol_data, header.protocol_data);
    let mut peer_bytes = Vec::new();
    peer_header
        .bin_write(&mut peer_bytes)
        .expect("peer encodes");
    assert_eq!(peer_bytes, input);
    assert_eq!(encoding.encode(&header).expect("encodes"), input);

    let mut group = c.benchmark_group("encoding/block_header");
    group.throughput(Throughput::Bytes(input.len() as u64));
    // Each side's decoded header is held in memory (`std::hint::black_box` of a reference)
    // and dropped inside the measured closure. Returning it instead would have criterion's own
    // `black_box` (a volatile read of the whole value) copy it byte by byte: ~120
    // instructions for Kestrel's header, which holds its three hashes inline as `[u8; 32]`,
    // against a few words for the peer's, which holds them behind `Vec` pointers.
    group.bench_function(BenchmarkId::new("decode", "kestrel"), |b| {
        b.iter(|| {
            let header = encoding.decode(black_box(&input)).expect("decodes");
            std::hint::black_box(&header);
        })
    });
    group.bench_function(BenchmarkId::new("decode", "tezos_data_encoding"), |b| {
        b.iter(|| {
            let header = PeerBlockHeader::nom_read(black_box(&input)).expect("decodes");
            std::hint::black_box(&header);
        })
    });
    let mut buffer = Vec::with_capacity(input.len());
    group.bench_function(BenchmarkId::new("encode", "kestrel"), |b| {
        b.iter(|| {
            buffer.clear();
            encoding
                .encode_into(black_box(&header), &mut buffer)
                .expect("encodes");
            black_box(buffer.len())
        })
    });
    group.bench_function(BenchmarkId::new("encode", "tezos_data_encoding"), |b| {
        b.iter(|| {
            buffer.clear();
            black_box(&peer_header)
                .bin_write(&mut buffer)
                .expect("encodes");
            black_box(buffer.len())
        })
    });
    group.finish();
}

criterion_group!(benches, tree_benchmarks, block_header_benchmarks);
criterion_main!(benches);
