//! Michelson interpreter benchmarks (BENCHMARKS.md, "Michelson"):
//! (a) ns per instruction on a tight arithmetic loop (about 4 million instructions);
//! (b) typecheck and execution of real contracts: the Liquidity Baking CPMM's `xtzToToken` and
//!     the FA1.2 reference's `transfer`;
//! (c) a `LOOP { PUSH bool True }` run to the 1,040,000 gas operation limit.

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use kestrel_micheline::Node;
use kestrel_michelson::context::{Context, OtherContract};
use kestrel_michelson::interpret::{Interpreter, RunError, Tracer};
use kestrel_michelson::ir::Code;
use kestrel_michelson::literals::Address;
use kestrel_michelson::typecheck::{Script, Typechecker};
use kestrel_michelson::value::Value;
use std::rc::Rc;

/// The loop of the task statement as a full contract: sums 1..=n.
const LOOP_SCRIPT: &str =
    "parameter nat; storage int; code { CAR ; INT ; PUSH int 0 ; SWAP ; DUP ; GT ; \
    LOOP { DUP ; DIP { ADD } ; PUSH int -1 ; ADD ; DUP ; GT } ; DROP ; NIL operation ; PAIR }";
const LOOP_ITERATIONS: u64 = 500_000;
const GAS_SCRIPT: &str = "parameter unit; storage unit; code { DROP ; PUSH bool True ; LOOP { PUSH bool True } ; UNIT ; NIL operation ; PAIR }";

fn parse(text: &str) -> Node {
    kestrel_micheline::parse_toplevel(text).expect("benchmark script parses")
}

fn typecheck(context: &Context, script: &Node) -> Script {
    let mut tc = Typechecker::new(context);
    // Contracts originated before the current protocol (the CPMM uses `SUB` on mutez) run in
    // Octez's legacy mode.
    tc.legacy = true;
    tc.typecheck_script(script)
        .expect("benchmark script typechecks")
}

fn data(context: &Context, text: &str, ty: &kestrel_michelson::types::Type) -> Value {
    let node = kestrel_micheline::parse_expression(text).expect("benchmark data parses");
    Typechecker::new(context)
        .parse_data(&node, ty)
        .expect("benchmark data typechecks")
}

fn run(context: &mut Context, code: &Rc<Code>, input: Value) -> Result<Vec<Value>, RunError> {
    let gas = context.gas_limit_milli;
    Interpreter::new(context, gas).run(code, vec![input])
}

/// Counts executed steps (instructions and body ends), for the throughput figure.
struct Counter(u64);

impl Tracer for Counter {
    const ENABLED: bool = true;
    fn log(&mut self, _: u32, _: i64, _: &[Value]) {
        self.0 += 1;
    }
}

fn tight_loop(c: &mut Criterion) {
    let mut context = Context::default();
    let script = parse(LOOP_SCRIPT);
    let typed = typecheck(&context, &script);
    let input = Value::pair(Value::nat(LOOP_ITERATIONS), Value::Int(0.into()));
    let mut counter = Counter(0);
    let gas = context.gas_limit_milli;
    Interpreter::new(&mut context, gas)
        .run_traced(&typed.code, vec![input.clone()], &mut counter)
        .expect("loop runs");
    let mut group = c.benchmark_group("michelson_tight_loop");
    group.throughput(Throughput::Elements(counter.0));
    group.sample_size(10);
    group.bench_function("kestrel", |b| {
        b.iter(|| run(&mut context, &typed.code, input.clone()).expect("loop runs"))
    });
    group.finish();
}

struct Prepared {
    context: Context,
    script: Node,
    typed: Script,
    input: Value,
}

fn cpmm() -> Option<Prepared> {
    let path = kestrel_testdata::require("michelson/protocol/cpmm.tz", "michelson_bench")?;
    let text = std::fs::read_to_string(path).ok()?;
    let script = parse(&text);
    let mut context = Context::default();
    let token = Address::from_string("KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo")?;
    context.contracts.insert(
        token.destination,
        OtherContract {
            param: kestrel_micheline::parse_expression(
                "(pair %transfer address (pair address nat))",
            )
            .ok()?,
            storage: None,
            views: Vec::new(),
            balance: 0,
        },
    );
    context.self_param = match &script.kind {
        kestrel_micheline::NodeKind::Seq(items) => items.first()?.children().first()?.clone(),
        _ => return None,
    };
    context.amount = 1_000_000;
    context.balance = 100_000_000_000;
    context.now = 1_700_000_000.into();
    let typed = typecheck(&context, &script);
    let storage = data(
        &context,
        "Pair 1000000000 100000000000 1000000 \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\" \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\"",
        &typed.storage_type,
    );
    let param = data(
        &context,
        "Right (Right (Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" 1 \"2030-01-01T00:00:00Z\"))",
        &typed.param_type,
    );
    Some(Prepared {
        input: Value::pair(param, storage),
        context,
        script,
        typed,
    })
}

fn fa12() -> Option<Prepared> {
    let path = kestrel_testdata::require(
        "michelson/mini_scenarios/fa12_reference.tz",
        "michelson_bench",
    )?;
    let text = std::fs::read_to_string(path).ok()?;
    let script = parse(&text);
    let self_param = match &script.kind {
        kestrel_micheline::NodeKind::Seq(items) => items.first()?.children().first()?.clone(),
        _ => return None,
    };
    let context = Context {
        self_param,
        ..Context::default()
    };
    let typed = typecheck(&context, &script);
    let storage = data(
        &context,
        "Pair { Elt \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" (Pair 1000000 {}) } \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" False 1000000",
        &typed.storage_type,
    );
    let param = data(
        &context,
        "Left (Left (Left (Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" \"tz1cxcwwnzENRdhe2Kb8ZdTrdNy4bFNyScx5\" 10)))",
        &typed.param_type,
    );
    Some(Prepared {
        input: Value::pair(param, storage),
        context,
        script,
        typed,
    })
}

fn contracts(c: &mut Criterion) {
    let mut group = c.benchmark_group("michelson_contracts");
    group.throughput(Throughput::Elements(1));
    for (name, prepared) in [("cpmm_xtzToToken", cpmm()), ("fa12_transfer", fa12())] {
        let Some(mut prepared) = prepared else {
            continue;
        };
        group.bench_function(format!("kestrel_typecheck/{name}"), |b| {
            b.iter(|| typecheck(&prepared.context, &prepared.script))
        });
        run(
            &mut prepared.context,
            &prepared.typed.code,
            prepared.input.clone(),
        )
        .expect("contract runs");
        group.bench_function(format!("kestrel_execute/{name}"), |b| {
            b.iter_batched(
                || prepared.input.clone(),
                |input| {
                    run(&mut prepared.context, &prepared.typed.code, input).expect("contract runs")
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn gas_exhaustion(c: &mut Criterion) {
    let mut context = Context::default();
    let script = parse(GAS_SCRIPT);
    let typed = typecheck(&context, &script);
    let input = Value::pair(Value::Unit, Value::Unit);
    let mut group = c.benchmark_group("michelson_gas_exhaustion");
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.bench_function("kestrel", |b| {
        b.iter(|| {
            let result = run(&mut context, &typed.code, input.clone());
            assert!(matches!(result, Err(RunError::GasExhaustion)));
        })
    });
    group.finish();
}

criterion_group!(benches, tight_loop, contracts, gas_exhaustion);
criterion_main!(benches);
