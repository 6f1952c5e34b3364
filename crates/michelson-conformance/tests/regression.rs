//! Runs every recorded `octez-client run script` of `michelson-regression/{opcodes,macros}` with
//! [`kestrel_michelson_conformance::run_script`] and compares the final storage, emitted operations and
//! big_map diff (or the failure), and the macro expansions; reports how many traces match step
//! for step (location, stack and gas; the first step's gas, which counts Octez's typechecking,
//! is reported separately).

// The reader of recorded octez-client outputs, shared with `kestrel-michelson`'s gas oracle tests.
#[path = "../../michelson/tests/common/mod.rs"]
mod common;

use common::octez_output::{self, FailureKind, OctezOutput, Outcome, Run};
use kestrel_michelson::ExecutionError;
use kestrel_michelson_conformance::run_script::{
    parse_tez, run_script, RunScriptError, RunScriptOptions,
};

/// Runs whose storage, operations and big_map diff (or failure) must match; raise it as more do.
const MINIMUM_MATCHING_RUNS: usize = 183;
/// Runs whose trace must match step for step, the first step's gas (Octez's parsing and
/// typechecking) included; raise it as more do.
const MINIMUM_MATCHING_TRACES: usize = 183;

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn print(node: &kestrel_micheline::Node) -> String {
    one_line(&kestrel_micheline::print::to_text_indented_wrapped(node))
}

fn options_of(run: &Run) -> RunScriptOptions {
    let c = &run.command;
    RunScriptOptions {
        storage: c.storage.clone(),
        input: c.input.clone(),
        amount_mutez: c.amount.as_deref().and_then(parse_tez),
        balance_mutez: c.balance.as_deref().and_then(parse_tez),
        level: c.level,
        now: c.now.as_deref().and_then(|t| {
            t.parse()
                .ok()
                .or_else(|| kestrel_michelson::timestamp_from_rfc3339(t).and_then(|t| t.to_i64()))
        }),
        // octez-client's `--source` is `SENDER`, its `--payer` is `SOURCE`.
        sender: c.source.clone(),
        source: c
            .other_flags
            .iter()
            .find(|(flag, _)| flag == "--payer")
            .and_then(|(_, value)| value.clone()),
        self_address: c.self_address.clone(),
        entrypoint: c.entrypoint.clone(),
        trace_stack: true,
        gas_limit_milli: c
            .gas
            .as_deref()
            .and_then(|gas| gas.parse::<u64>().ok())
            .map(|gas| gas.saturating_mul(1000)),
    }
}

/// Compares one run; returns (outcome matches, trace matches except first gas, trace matches fully).
fn check_run(run: &Run, testdata: &std::path::Path) -> Result<(bool, bool), String> {
    let script =
        std::fs::read_to_string(run.command.script_path(testdata)).map_err(|e| e.to_string())?;
    let result = run_script(&script, &options_of(run));
    let trace = match (&run.outcome, &result) {
        (
            Outcome::Success {
                storage,
                emitted_operations,
                big_map_diff,
            },
            Ok(output),
        ) => {
            let actual = print(&output.storage);
            if &actual != storage {
                return Err(format!("storage: expected {storage}, got {actual}"));
            }
            if emitted_operations.iter().any(|l| !l.trim().is_empty())
                == output.operations.is_empty()
            {
                return Err(format!(
                    "operations: expected {emitted_operations:?}, got {:?}",
                    output.operations
                ));
            }
            let expected_diff: Vec<String> = big_map_diff
                .iter()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect();
            if expected_diff != output.big_map_diff {
                return Err(format!(
                    "big_map diff: expected {expected_diff:?}, got {:?}",
                    output.big_map_diff
                ));
            }
            &output.trace
        }
        (Outcome::Failure { kind, .. }, Err(RunScriptError::Execution { error, trace, .. })) => {
            let ok = match (kind, error) {
                (FailureKind::FailWith { value }, ExecutionError::Failed(v)) => {
                    let actual = print(&kestrel_michelson::normalize(
                        v,
                        kestrel_michelson::UnparsingMode::Readable,
                    ));
                    actual == *value
                        || actual.trim_start_matches('(').trim_end_matches(')')
                            == value.trim_start_matches('(').trim_end_matches(')')
                }
                (FailureKind::ArithmeticOverflow, ExecutionError::Overflow) => true,
                (FailureKind::GasExhausted, ExecutionError::GasExhaustion) => true,
                (FailureKind::Other(_), _) => true,
                _ => false,
            };
            if !ok {
                return Err(format!("failure: expected {kind:?}, got {error:?}"));
            }
            trace
        }
        (expected, Err(e)) => return Err(format!("expected {expected:?}, got error {e}")),
        (expected, Ok(_)) => return Err(format!("expected {expected:?}, got success")),
    };
    let same_steps = trace.len() == run.trace.len()
        && trace
            .iter()
            .zip(&run.trace)
            .enumerate()
            .all(|(index, (a, e))| {
                let stack: Vec<String> = a.stack.iter().map(print).collect();
                a.location == e.location
                    && stack == e.stack
                    && (index == 0 || a.gas_milli as u64 == e.gas_milli)
            });
    if !same_steps {
        let first_difference = trace
            .iter()
            .zip(&run.trace)
            .enumerate()
            .find(|(index, (a, e))| {
                let stack: Vec<String> = a.stack.iter().map(print).collect();
                a.location != e.location
                    || stack != e.stack
                    || (*index > 0 && a.gas_milli as u64 != e.gas_milli)
            });
        match first_difference {
            Some((index, (a, e))) => println!(
                "STEP {} step {index}: expected location {} gas {} stack {:?}, got location {} gas {} stack {:?}",
                run.command.script,
                e.location,
                e.gas_milli,
                e.stack,
                a.location,
                a.gas_milli,
                a.stack.iter().map(print).collect::<Vec<_>>()
            ),
            None => println!(
                "STEP {}: {} steps expected, {} got",
                run.command.script,
                run.trace.len(),
                trace.len()
            ),
        }
    }
    let first_gas = trace
        .first()
        .zip(run.trace.first())
        .is_some_and(|(a, e)| a.gas_milli as u64 == e.gas_milli);
    if let (Some(actual), Some(expected)) = (trace.first(), run.trace.first()) {
        if !first_gas {
            println!(
                "FIRST {} storage {} input {}: expected {} got {} (diff {})",
                run.command.script,
                run.command.storage,
                run.command.input,
                expected.gas_milli,
                actual.gas_milli,
                expected.gas_milli as i64 - actual.gas_milli
            );
        }
    }
    Ok((same_steps, same_steps && first_gas))
}

fn run_all() {
    let Some(dir) = kestrel_testdata::require("michelson-regression", "regression_outputs") else {
        return;
    };
    let testdata = kestrel_testdata::testdata_dir();
    let mut files = kestrel_testdata::files_with_suffix(&dir, ".out");
    files.sort();
    let (mut runs, mut matching, mut traces, mut traces_full) = (0, 0, 0, 0);
    let (mut expansions, mut expansions_matching) = (0, 0);
    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .display()
            .to_string();
        let output = octez_output::read_file(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        match &output {
            OctezOutput::MacroExpansion(text) => {
                expansions += 1;
                // `Macro_expansion-_macros-NAME.out` records `michelson/macros/NAME.tz`.
                let stem = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                let script_name = stem
                    .rsplit("-_macros-")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let script_path = testdata
                    .join("michelson/macros")
                    .join(format!("{script_name}.tz"));
                let Ok(script) = std::fs::read_to_string(&script_path) else {
                    failures.push(format!("{name}: no script {}", script_path.display()));
                    continue;
                };
                let node =
                    kestrel_micheline::parse_toplevel(&script).expect("recorded script parses");
                let expanded = kestrel_michelson::expand_macros(&node).expect("macros expand");
                let actual = one_line(&kestrel_micheline::print::to_text_indented(&expanded));
                if actual == one_line(text) {
                    expansions_matching += 1;
                } else {
                    failures.push(format!("{name}: expansion differs: {actual}"));
                }
            }
            OctezOutput::Runs(list) => {
                for run in list {
                    runs += 1;
                    match check_run(run, &testdata) {
                        Ok((trace, full)) => {
                            matching += 1;
                            traces += usize::from(trace);
                            traces_full += usize::from(full);
                        }
                        Err(why) => failures.push(format!("{name} (line {}): {why}", run.line)),
                    }
                }
            }
        }
    }
    for failure in &failures {
        println!("FAIL {failure}");
    }
    println!("{matching}/{runs} runs match (storage, operations, big_map diff or failure)");
    println!("{traces}/{runs} traces match step for step except the first step's gas; {traces_full} including it");
    println!("{expansions_matching}/{expansions} macro expansions match");
    assert!(
        matching >= MINIMUM_MATCHING_RUNS,
        "{matching} runs match, below {MINIMUM_MATCHING_RUNS}"
    );
    assert!(
        traces_full >= MINIMUM_MATCHING_TRACES,
        "{traces_full} traces match fully, below {MINIMUM_MATCHING_TRACES}"
    );
}

#[test]
fn regression_outputs() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run_all)
        .unwrap()
        .join()
        .unwrap();
}
