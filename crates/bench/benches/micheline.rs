//! Micheline codecs on a real contract: the Liquidity Baking CPMM (`michelson/protocol/cpmm.tz`,
//! 36.7 KB of text, 4.5 KB of binary). Throughput is in bytes of the input form (binary bytes
//! for decode and encode, text bytes for parse and print, JSON bytes for JSON).
//!
//! No peer: no published Rust crate decodes generic binary Micheline trees (the smart-rollup
//! encoding crate handles only fixed typed shapes, MIR is not published), so figures are MB/s
//! alone.

use criterion::{black_box, criterion_main, Criterion, Throughput};
use kestrel_micheline::{binary, json, parse_toplevel, print};

fn cpmm_source() -> Option<String> {
    let path = kestrel_testdata::require("michelson/protocol/cpmm.tz", "micheline benchmarks")?;
    std::fs::read_to_string(path).ok()
}

pub(crate) fn micheline_cpmm(c: &mut Criterion) {
    let Some(source) = cpmm_source() else {
        return;
    };
    let script = parse_toplevel(&source).expect("cpmm.tz parses");
    let encoded = binary::encode(&script).expect("cpmm.tz has only table primitives");
    let printed = print::to_text_indented(&script);
    let json_text = json::to_json_string(&script);

    let mut group = c.benchmark_group("micheline_binary_cpmm");
    group.throughput(Throughput::Bytes(encoded.len() as u64));
    group.bench_function("decode", |b| {
        b.iter(|| binary::decode(black_box(&encoded)).expect("decodes"))
    });
    let mut out = Vec::with_capacity(encoded.len());
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            binary::encode_into(black_box(&script), &mut out).expect("encodes");
            out.len()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("micheline_text_cpmm");
    group.throughput(Throughput::Bytes(source.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| parse_toplevel(black_box(&source)).expect("parses"))
    });
    group.throughput(Throughput::Bytes(printed.len() as u64));
    group.bench_function("print_indented", |b| {
        b.iter(|| print::to_text_indented(black_box(&script)))
    });
    group.finish();

    let mut group = c.benchmark_group("micheline_json_cpmm");
    group.throughput(Throughput::Bytes(json_text.len() as u64));
    group.bench_function("read", |b| {
        b.iter(|| json::from_json_str(black_box(&json_text)).expect("reads"))
    });
    group.bench_function("write", |b| {
        b.iter(|| json::to_json_string(black_box(&script)))
    });
    group.finish();
}

// criterion_group! generates an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::micheline_cpmm);
}
use group::benches;
criterion_main!(benches);
