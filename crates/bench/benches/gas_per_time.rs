//! Gas per time over adversarial programs (BENCHMARKS.md, "Michelson: gas per time"): Octez
//! calibrates its gas so that one unit costs about 1 µs, so a program that takes much longer
//! per unit of gas is a way to slow a node down for a fixed fee. Each class runs one program to
//! completion or to the 1,040,000 gas operation limit, in a process of its own (this binary
//! re-executed with the class name) so that its peak RSS (`VmHWM`) is its own.
//!
//! `cargo bench -p kestrel-bench --bench gas_per_time` prints one line per class: gas consumed,
//! wall time, the process's CPU time (on a shared machine the wall time includes waiting for a
//! core), µs of CPU per gas unit, peak RSS. Not criterion: each run is long and deterministic.
//! `gas_per_time '<class name>' <gas>` runs one class alone with a smaller gas limit (for
//! profiling, e.g. under `valgrind --tool=callgrind`).

use kestrel_bench::serialization::cpu::{cpu_time, CpuClock};
use kestrel_micheline::{Node, Prim};
use kestrel_michelson::{
    execute, Config, EmptyHost, Environment, ExecutionError, Script,
    HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use std::process::Command;

/// The allocator the `kestrel` binary runs Michelson with (`crates/cli/src/main.rs`): with
/// glibc's, a class that allocates multi-megabyte values spends most of its time in the kernel
/// mapping and faulting fresh pages for each one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::Instant;

/// The classes: a name and a script taking `unit` and storing `unit`.
fn classes() -> Vec<(&'static str, String)> {
    let wrap = |body: &str| {
        format!(
            "parameter unit; storage unit; code {{ DROP ; {body} ; UNIT ; NIL operation ; PAIR }}"
        )
    };
    vec![
        (
            "mul: 24 × DUP; MUL from 7",
            wrap(&format!("PUSH int 7 ; {} DROP", "DUP ; MUL ; ".repeat(24))),
        ),
        (
            "recursion: LAMBDA_REC int int { EXEC } on 0",
            wrap("PUSH int 0 ; LAMBDA_REC int int { EXEC } ; SWAP ; EXEC ; DROP"),
        ),
        (
            "recursion alternating two call sites",
            wrap(
                "PUSH bool True ; LAMBDA_REC bool unit \
                 { IF { PUSH bool False ; EXEC } { PUSH bool True ; EXEC } } ; SWAP ; EXEC ; DROP",
            ),
        ),
        (
            "apply: APPLYs capturing lambdas (each typechecked again)",
            wrap(
                "LAMBDA unit unit { } ; PUSH int 500000 ; DUP ; GT ; \
                 LOOP { PUSH int 1 ; SWAP ; SUB ; \
                 DIP { LAMBDA (pair (lambda unit unit) unit) unit { CDR } ; SWAP ; APPLY } ; \
                 DUP ; GT } ; DROP 2",
            ),
        ),
        (
            "set: UPDATE a growing set of nats",
            wrap(
                "EMPTY_SET nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DIP { PUSH bool True ; SWAP ; UPDATE } ; PUSH nat 1 ; ADD ; \
                 PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "set: UPDATE a growing set of nats in scattered order",
            // x ← (x + 2654435761) mod 2^32: every key lands far from the previous one.
            wrap(
                "EMPTY_SET nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DIP { PUSH bool True ; SWAP ; UPDATE } ; \
                 PUSH nat 2654435761 ; ADD ; PUSH nat 4294967295 ; AND ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "set: UPDATE a growing set of bytes, equal 8-byte start, scattered",
            wrap(
                "EMPTY_SET bytes ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; BYTES ; PUSH bytes 0x6162636465666768 ; CONCAT ; \
                 DIG 2 ; PUSH bool True ; DIG 2 ; UPDATE ; SWAP ; \
                 PUSH nat 2654435761 ; ADD ; PUSH nat 4294967295 ; AND ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "set: UPDATE a growing set of pairs, equal left, scattered",
            wrap(
                "EMPTY_SET (pair nat nat) ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; PUSH nat 0 ; PAIR ; \
                 DIG 2 ; PUSH bool True ; DIG 2 ; UPDATE ; SWAP ; \
                 PUSH nat 2654435761 ; ADD ; PUSH nat 4294967295 ; AND ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "set: MEM in a set of 1,000,000 nats, scattered",
            wrap(
                "EMPTY_SET nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DIP { PUSH bool True ; SWAP ; UPDATE } ; \
                 PUSH nat 2654435761 ; ADD ; PUSH nat 4294967295 ; AND ; \
                 DUP 2 ; SIZE ; PUSH nat 1000000 ; COMPARE ; GT } ; \
                 PUSH bool True ; \
                 LOOP { DUP 2 ; DUP 2 ; MEM ; DROP ; \
                 PUSH nat 2654435769 ; ADD ; PUSH nat 4294967295 ; AND ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "set: DUP and UPDATE a shared set of 100,000 nats",
            // Each UPDATE writes to a set the stack also holds unchanged (then drops the copy).
            wrap(
                "EMPTY_SET nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DIP { PUSH bool True ; SWAP ; UPDATE } ; PUSH nat 1 ; ADD ; \
                 DUP 2 ; SIZE ; PUSH nat 100000 ; COMPARE ; GT } ; \
                 PUSH bool True ; \
                 LOOP { DUP 2 ; PUSH bool True ; DUP 3 ; UPDATE ; DROP ; PUSH nat 1 ; ADD ; \
                 PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "list: DUP and CONS onto a shared list of 100,000 elements",
            // Each CONS writes to a list the stack also holds unchanged (then drops the copy).
            wrap(
                "NIL nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DIP { CONS } ; PUSH nat 1 ; ADD ; \
                 DUP 2 ; SIZE ; PUSH nat 100000 ; COMPARE ; GT } ; \
                 PUSH bool True ; \
                 LOOP { DUP 2 ; DUP 2 ; CONS ; DROP ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "map: DUP and UPDATE a shared map of 100,000 nats",
            // Each UPDATE writes to a map the stack also holds unchanged (then drops the copy).
            wrap(
                "EMPTY_MAP nat nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DUP ; SOME ; SWAP ; DIG 3 ; DUG 2 ; UPDATE ; SWAP ; \
                 PUSH nat 1 ; ADD ; DUP 2 ; SIZE ; PUSH nat 100000 ; COMPARE ; GT } ; \
                 PUSH bool True ; \
                 LOOP { DUP 2 ; DUP 2 ; SOME ; DUP 3 ; UPDATE ; DROP ; PUSH nat 1 ; ADD ; \
                 PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "map: UPDATE a growing map of nats",
            wrap(
                "EMPTY_MAP nat nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DUP ; SOME ; SWAP ; DIG 3 ; DUG 2 ; UPDATE ; \
                 SWAP ; PUSH nat 1 ; ADD ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "map: UPDATE a growing map of nats in scattered order",
            wrap(
                "EMPTY_MAP nat nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DUP ; SOME ; SWAP ; DIG 3 ; DUG 2 ; UPDATE ; \
                 SWAP ; PUSH nat 2654435761 ; ADD ; PUSH nat 4294967295 ; AND ; \
                 PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "map: MAP over a map of 100,000 nats",
            // Each MAP builds a new map of 100,000 bindings in key order.
            wrap(
                "EMPTY_MAP nat nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DUP ; SOME ; SWAP ; DIG 3 ; DUG 2 ; UPDATE ; SWAP ; \
                 PUSH nat 1 ; ADD ; DUP 2 ; SIZE ; PUSH nat 100000 ; COMPARE ; GT } ; \
                 PUSH bool True ; \
                 LOOP { DUP 2 ; MAP { CDR ; PUSH nat 1 ; ADD } ; DROP ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "big map: UPDATE a growing big map",
            wrap(
                "EMPTY_BIG_MAP nat nat ; PUSH nat 0 ; PUSH bool True ; \
                 LOOP { DUP ; DUP ; SOME ; SWAP ; DIG 3 ; DUG 2 ; UPDATE ; \
                 SWAP ; PUSH nat 1 ; ADD ; PUSH bool True } ; DROP 2",
            ),
        ),
        (
            "pack/unpack: a 1,000-element list",
            wrap(
                "NIL int ; PUSH int 1000 ; DUP ; GT ; \
                 LOOP { DUP ; DIP { CONS } ; PUSH int 1 ; SWAP ; SUB ; DUP ; GT } ; DROP ; \
                 PUSH bool True ; \
                 LOOP { PACK ; UNPACK (list int) ; ASSERT_SOME ; PUSH bool True } ; DROP",
            ),
        ),
        (
            "concat: a string doubled 20 times, then concatenated again",
            wrap(&format!(
                "PUSH string \"ab\" ; {} PUSH bool True ; \
                 LOOP {{ DUP ; DUP ; CONCAT ; DROP ; PUSH bool True }} ; DROP",
                "DUP ; CONCAT ; ".repeat(20)
            )),
        ),
        (
            "compare: two equal 1 MB bytes",
            wrap(&format!(
                "PUSH bytes 0x{} ; {} DUP ; PUSH bool True ; \
                 LOOP {{ DUP 2 ; DUP 2 ; COMPARE ; DROP ; PUSH bool True }} ; DROP 2",
                "ab".repeat(1 << 10),
                "DUP ; CONCAT ; ".repeat(10)
            )),
        ),
    ]
}

/// The process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs one class and prints its line.
fn run_class(name: &str, script: &str, gas_limit: u64) {
    let unit = Node::prim(Prim::D_Unit, vec![]);
    let started = Instant::now();
    let cpu_started = cpu_time(CpuClock::SelfProcess);
    let script = Script::parse(script, &Config::default()).expect("benchmark script typechecks");
    let outcome = execute(
        &script,
        "default",
        &unit,
        &unit,
        &Environment::default(),
        &mut EmptyHost::default(),
        gas_limit,
    );
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = match (cpu_started, cpu_time(CpuClock::SelfProcess)) {
        (Some(before), Some(after)) => after.saturating_sub(before).as_secs_f64(),
        _ => f64::NAN,
    };
    let (gas_milli, ended) = match outcome {
        Ok(execution) => (execution.consumed_milligas, "done"),
        Err(ExecutionError::GasExhaustion) => (gas_limit, "out of gas"),
        Err(ExecutionError::InvalidConstant(_)) => (gas_limit, "out of gas in a constant"),
        Err(_) => (0, "failed"),
    };
    let gas = gas_milli as f64 / 1_000.0;
    println!(
        "{name:<66} {gas:>12.3} gas {seconds:>8.3} s wall {cpu_seconds:>8.3} s CPU {:>7.3} µs/gas {:>9} KiB peak ({ended})",
        cpu_seconds * 1e6 / gas.max(1e-3),
        peak_rss_kib().unwrap_or(0),
    );
}

fn main() {
    let classes = classes();
    let requested: Vec<String> = std::env::args().skip(1).collect();
    if let Some((name, script)) = classes
        .iter()
        .find(|(name, _)| requested.iter().any(|argument| argument == name))
    {
        let gas_limit = requested
            .iter()
            .find_map(|argument| argument.parse::<u64>().ok())
            .map_or(HARD_GAS_LIMIT_PER_OPERATION_MILLI, |gas| {
                gas.saturating_mul(1_000)
                    .min(HARD_GAS_LIMIT_PER_OPERATION_MILLI)
            });
        run_class(name, script, gas_limit);
        return;
    }
    let program = std::env::current_exe().expect("the benchmark knows its own path");
    for (name, _) in &classes {
        let status = Command::new(&program)
            .arg(name)
            .status()
            .expect("the benchmark re-executes itself");
        if !status.success() {
            println!("{name:<66} aborted ({status})");
        }
    }
}
