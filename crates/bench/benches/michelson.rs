//! Michelson interpreter benchmarks (BENCHMARKS.md, "Michelson"):
//! (a) ns per instruction on a tight arithmetic loop (about 4 million instructions);
//! (b) typecheck and execution of real contracts: the Liquidity Baking CPMM's `xtzToToken` and
//!     the FA1.2 reference's `transfer`;
//! (c) a `LOOP { PUSH bool True }` run to the 1,040,000 gas operation limit.

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kestrel_micheline::Node;
use kestrel_michelson::{
    execute, execute_traced, Address, Call, Config, Environment, ExecutionError, Script, Tracer,
    Value, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use kestrel_michelson_conformance::fixtures::{FixtureContract, FixtureHost};

/// The allocator the `kestrel` binary runs Michelson with (`crates/cli/src/main.rs`), so that
/// the figures are the binary's (typechecking makes many small allocations).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The loop of the task statement as a full contract: sums 1..=n.
const LOOP_SCRIPT: &str =
    "parameter nat; storage int; code { CAR ; INT ; PUSH int 0 ; SWAP ; DUP ; GT ; \
    LOOP { DUP ; DIP { ADD } ; PUSH int -1 ; ADD ; DUP ; GT } ; DROP ; NIL operation ; PAIR }";
const LOOP_ITERATIONS: u64 = 500_000;
const GAS_SCRIPT: &str = "parameter unit; storage unit; code { DROP ; PUSH bool True ; LOOP { PUSH bool True } ; UNIT ; NIL operation ; PAIR }";

/// Contracts originated before the current protocol (the CPMM uses `SUB` on mutez) run in
/// Octez's legacy mode.
const CONFIG: Config = Config {
    legacy: true,
    gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};

fn parse(text: &str) -> Node {
    kestrel_micheline::parse_toplevel(text).expect("benchmark script parses")
}

fn expression(text: &str) -> Node {
    kestrel_micheline::parse_expression(text).expect("benchmark data parses")
}

fn typecheck(script: &Node) -> Script {
    Script::typecheck(script, &CONFIG).expect("benchmark script typechecks")
}

/// Counts executed steps (instructions and body ends), for the throughput figure.
struct Counter(u64);

impl Tracer for Counter {
    const ENABLED: bool = true;
    fn log(&mut self, _: u32, _: i64, _: &[Value]) {
        self.0 += 1;
    }
}

/// A call ready to run: the script, the call's data and its world.
struct Prepared {
    script: Node,
    entrypoint: &'static str,
    parameter: Node,
    storage: Node,
    environment: Environment,
    host: FixtureHost,
}

impl Prepared {
    fn new(script: Node, entrypoint: &'static str, parameter: &str, storage: &str) -> Prepared {
        Prepared {
            script,
            entrypoint,
            parameter: expression(parameter),
            storage: expression(storage),
            environment: Environment::default(),
            host: FixtureHost::new(0),
        }
    }

    fn execute(&mut self, typed: &Script) -> Result<kestrel_michelson::Execution, ExecutionError> {
        execute(
            typed,
            self.entrypoint,
            &self.parameter,
            &self.storage,
            &self.environment,
            &mut self.host,
            HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        )
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
    let call = Call {
        entrypoint: "default",
        parameter: &prepared.parameter,
        storage: &prepared.storage,
    };
    execute_traced(
        &typed,
        &call,
        &prepared.environment,
        &mut prepared.host,
        HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        &mut counter,
    )
    .expect("loop runs");
    let mut group = c.benchmark_group("michelson_tight_loop");
    group.throughput(Throughput::Elements(counter.0));
    group.sample_size(10);
    group.bench_function("kestrel", |b| {
        b.iter(|| prepared.execute(&typed).expect("loop runs"))
    });
    group.finish();
}

fn cpmm() -> Option<Prepared> {
    let path = kestrel_testdata::require("michelson/protocol/cpmm.tz", "michelson_bench")?;
    let text = std::fs::read_to_string(path).ok()?;
    let mut prepared = Prepared::new(
        parse(&text),
        "xtzToToken",
        "Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" 1 \"2030-01-01T00:00:00Z\"",
        "Pair 1000000000 100000000000 1000000 \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\" \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\"",
    );
    let token = Address::from_string("KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo")?;
    prepared.host.contracts.insert(
        token.destination,
        FixtureContract {
            parameter: expression("(pair %transfer address (pair address nat))"),
            storage: None,
            views: Vec::new(),
            balance_mutez: 0,
        },
    );
    prepared.environment.amount_mutez = 1_000_000;
    prepared.environment.balance_mutez = 100_000_000_000;
    prepared.environment.now_seconds = 1_700_000_000;
    Some(prepared)
}

fn fa12() -> Option<Prepared> {
    let path = kestrel_testdata::require(
        "michelson/mini_scenarios/fa12_reference.tz",
        "michelson_bench",
    )?;
    let text = std::fs::read_to_string(path).ok()?;
    Some(Prepared::new(
        parse(&text),
        "default",
        "Left (Left (Left (Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" \"tz1cxcwwnzENRdhe2Kb8ZdTrdNy4bFNyScx5\" 10)))",
        "Pair { Elt \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" (Pair 1000000 {}) } \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" False 1000000",
    ))
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
