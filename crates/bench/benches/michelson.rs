//! Michelson interpreter benchmarks (BENCHMARKS.md, "Michelson"):
//! (a) ns per instruction on a tight arithmetic loop (about 4 million instructions);
//! (b) typecheck and execution of real contracts: the Liquidity Baking CPMM's `xtzToToken` and
//!     the FA1.2 reference's `transfer`;
//! (c) a `LOOP { PUSH bool True }` run to the 1,040,000 gas operation limit.

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kestrel_michelson::{ExecutionError, Tracer, Value};

#[path = "michelson_support/fixtures.rs"]
mod fixtures;
use fixtures::{cpmm, fa12, parse, typecheck, Prepared, LOOP_SCRIPT};

/// The allocator the `kestrel` binary runs Michelson with (`crates/cli/src/main.rs`), so that
/// the figures are the binary's (typechecking makes many small allocations).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const LOOP_ITERATIONS: u64 = 500_000;
const GAS_SCRIPT: &str = "parameter unit; storage unit; code { DROP ; PUSH bool True ; LOOP { PUSH bool True } ; UNIT ; NIL operation ; PAIR }";

/// Counts executed steps (instructions and body ends), for the throughput figure.
struct Counter(u64);

impl Tracer for Counter {
    const ENABLED: bool = true;
    fn log(&mut self, _: u32, _: i64, _: &[Value]) {
        self.0 += 1;
    }
}

fn tight_loop(c: &mut Criterion) {
    let mut prepared = Prepared::new(
        parse(LOOP_SCRIPT),
        "default",
        &LOOP_ITERATIONS.to_string(),
        "0",
    );
    let typed = typecheck(&prepared.script);
    let mut counter = Counter(0);
    prepared
        .execute_traced(&typed, &mut counter)
        .expect("loop runs");
    let mut group = c.benchmark_group("michelson_tight_loop");
    group.throughput(Throughput::Elements(counter.0));
    group.sample_size(10);
    group.bench_function("kestrel", |b| {
        b.iter(|| prepared.execute(&typed).expect("loop runs"))
    });
    group.finish();
}

fn contracts(c: &mut Criterion) {
    let mut group = c.benchmark_group("michelson_contracts");
    group.throughput(Throughput::Elements(1));
    for (name, prepared) in [("cpmm_xtzToToken", cpmm()), ("fa12_transfer", fa12())] {
        let Some(mut prepared) = prepared else {
            continue;
        };
        let typed = typecheck(&prepared.script);
        prepared.execute(&typed).expect("contract runs");
        group.bench_function(format!("kestrel_typecheck/{name}"), |b| {
            b.iter(|| typecheck(&prepared.script))
        });
        // Execute alone: parsing the storage and the parameter, running, extracting the diff.
        group.bench_function(format!("kestrel_execute/{name}"), |b| {
            b.iter(|| prepared.execute(&typed).expect("contract runs"))
        });
        group.bench_function(format!("kestrel_typecheck_execute/{name}"), |b| {
            b.iter(|| {
                let typed = typecheck(&prepared.script);
                prepared.execute(&typed).expect("contract runs")
            })
        });
    }
    group.finish();
}

fn gas_exhaustion(c: &mut Criterion) {
    let mut prepared = Prepared::new(parse(GAS_SCRIPT), "default", "Unit", "Unit");
    let typed = typecheck(&prepared.script);
    let mut group = c.benchmark_group("michelson_gas_exhaustion");
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.bench_function("kestrel", |b| {
        b.iter(|| {
            let result = prepared.execute(&typed);
            assert!(matches!(result, Err(ExecutionError::GasExhaustion)));
        })
    });
    group.finish();
}

criterion_group!(benches, tight_loop, contracts, gas_exhaustion);
criterion_main!(benches);
