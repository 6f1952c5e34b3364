//! Fuzzes execution beyond "no panic": the input, split at `\u{1}` into a script, a storage and
//! a parameter, is typechecked and, when well typed, run twice on fresh contexts, once plain and
//! once traced. Both runs must agree (the same result or the same error, the same gas left),
//! the gas left must never be negative, and the traced run must log at least one step.

#![no_main]

use kestrel_michelson::context::Context;
use kestrel_michelson::interpret::{Interpreter, NoTrace, Tracer};
use kestrel_michelson::typecheck::Typechecker;
use kestrel_michelson::value::Value;
use libfuzzer_sys::fuzz_target;

/// A gas budget small enough that every input finishes quickly (10,000 gas).
const FUZZ_GAS_MILLI: i64 = 10_000_000;

/// Counts the steps a traced run logs, and checks the gas each one reports.
struct Steps(u64);

impl Tracer for Steps {
    const ENABLED: bool = true;
    fn log(&mut self, _: u32, gas_milli_remaining: i64, _: &[Value]) {
        assert!(gas_milli_remaining >= 0, "a step reports negative gas");
        self.0 += 1;
    }
}

fn fresh_context() -> Context {
    Context {
        gas_limit_milli: FUZZ_GAS_MILLI,
        ..Context::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parts: Vec<&str> = text.splitn(3, '\u{1}').collect();
    let [script, storage, parameter] = parts.as_slice() else {
        return;
    };
    let context = fresh_context();
    let Ok(node) = kestrel_micheline::parse_toplevel(script) else {
        return;
    };
    let Ok(typed) = Typechecker::new(&context).typecheck_script(&node) else {
        return;
    };
    let parse = |text: &str, ty| {
        let node = kestrel_micheline::parse_expression(text).ok()?;
        Typechecker::new(&context).parse_data(&node, ty).ok()
    };
    let (Some(storage), Some(parameter)) = (
        parse(storage, &typed.storage_type),
        parse(parameter, &typed.param_type),
    ) else {
        return;
    };
    let input = Value::pair(parameter, storage);

    let mut plain_context = fresh_context();
    let mut plain = Interpreter::new(&mut plain_context, FUZZ_GAS_MILLI);
    let plain_result = plain.run_traced(&typed.code, vec![input.clone()], &mut NoTrace);
    let plain_gas = plain.gas_milli_remaining;

    let mut traced_context = fresh_context();
    let mut traced = Interpreter::new(&mut traced_context, FUZZ_GAS_MILLI);
    let mut steps = Steps(0);
    let traced_result = traced.run_traced(&typed.code, vec![input], &mut steps);
    let traced_gas = traced.gas_milli_remaining;

    assert!(plain_gas >= 0 && traced_gas >= 0, "negative gas left");
    assert!(plain_gas <= FUZZ_GAS_MILLI, "more gas left than given");
    assert_eq!(plain_gas, traced_gas, "tracing changed the gas");
    assert_eq!(
        format!("{plain_result:?}"),
        format!("{traced_result:?}"),
        "tracing changed the outcome"
    );
    assert!(steps.0 > 0 || plain_result.is_err(), "a run logged no step");
});
