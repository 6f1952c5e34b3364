//! Micro-benchmarks of the context store: hashing directories (flat and inode-shaped) and
//! directory operations on a large directory. The peer in the hashing groups is a bare BLAKE2b-256
//! over the same encoded bytes (the floor any Tezos-compatible store pays); the store-level peer
//! (NOMT, on the replay workload) is in `context_replay_peer.rs`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use kestrel_context::hash::{contents_hash, encode_flat_node};
use kestrel_context::{InMemory, Kind, Tree};
use std::hint::black_box;

fn names(count: usize) -> Vec<String> {
    (0..count)
        .map(|index| format!("{:044x}", index as u64 * 0x9e37_79b9_7f4a_7c15))
        .collect()
}

fn build(names: &[String]) -> Tree {
    let mut tree = Tree::empty();
    for name in names {
        tree = tree
            .add(&InMemory, &[name], name.as_bytes())
            .expect("in memory");
    }
    tree
}

fn hash_directory(c: &mut Criterion) {
    for count in [256usize, 1000] {
        let mut group = c.benchmark_group(format!("context_hash_directory_{count}"));
        group.throughput(Throughput::Elements(count as u64));
        let names = names(count);
        let tree = build(&names);
        group.bench_function("kestrel_context", |b| {
            // Rebuilding from the same entries gives fresh, unhashed objects each time.
            b.iter_batched(
                || build(&names),
                |fresh| black_box(fresh.hash()),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("kestrel_context_cached", |b| {
            b.iter(|| black_box(tree.hash()))
        });
        let mut sorted: Vec<(Vec<u8>, _)> = names
            .iter()
            .map(|name| (name.as_bytes().to_vec(), contents_hash(name.as_bytes())))
            .collect();
        sorted.sort();
        // The floor: encode the same entries in flat-node form (in chunks of at most 256, the
        // flat limit) and hash the bytes once.
        group.bench_function("blake2b_of_flat_encoding", |b| {
            b.iter(|| {
                let mut encoding = Vec::new();
                for chunk in sorted.chunks(256) {
                    encode_flat_node(
                        &mut encoding,
                        chunk.iter().map(|(n, h)| (&n[..], Kind::Contents, h)),
                    );
                }
                black_box(kestrel_crypto::hash::blake2b_256(&encoding))
            })
        });
        group.finish();
    }
}

fn large_directory(c: &mut Criterion) {
    let count = 100_000;
    let names = names(count);
    let tree = build(&names);
    let mut group = c.benchmark_group("context_directory_100k");
    group.throughput(Throughput::Elements(1));
    let mut index = 0usize;
    group.bench_function("find", |b| {
        b.iter(|| {
            index = (index + 7919) % count;
            black_box(tree.find(&InMemory, &[&names[index]]).expect("in memory"))
        })
    });
    group.bench_function("add_then_hash", |b| {
        b.iter(|| {
            index = (index + 7919) % count;
            let updated = tree
                .add(&InMemory, &[&names[index]], b"new value")
                .expect("in memory");
            black_box(updated.hash())
        })
    });
    group.finish();
}

criterion_group!(benches, hash_directory, large_directory);
criterion_main!(benches);
