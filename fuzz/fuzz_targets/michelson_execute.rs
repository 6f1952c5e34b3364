//! Fuzzes `kestrel_michelson::execute` through its public API: the input, split at `\u{1}` into a
//! script, a storage and a parameter, is typechecked and executed twice, untraced and traced.
//! Beyond "no panic", it asserts the outcome is the same both ways, that no more gas is consumed
//! than the limit, and that the gas the tracer sees never goes negative nor up.

#![no_main]

use kestrel_michelson::{
    execute, execute_traced, Call, Config, EmptyHost, Environment, Script, Tracer, Value,
};
use libfuzzer_sys::fuzz_target;

/// A gas budget small enough that every input finishes quickly (10,000 gas).
const FUZZ_GAS_MILLI: u64 = 10_000_000;

/// Checks the gas each step reports.
struct GasWatch {
    last_remaining: i64,
}

impl Tracer for GasWatch {
    const ENABLED: bool = true;
    fn log(&mut self, _: u32, gas_milli_remaining: i64, _: &[Value]) {
        assert!(gas_milli_remaining >= 0, "negative gas");
        assert!(
            gas_milli_remaining <= self.last_remaining,
            "gas went up: {gas_milli_remaining} after {}",
            self.last_remaining
        );
        self.last_remaining = gas_milli_remaining;
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
    let config = Config {
        legacy: false,
        gas_limit_milli: FUZZ_GAS_MILLI,
    };
    let Ok(script) = Script::parse(script, &config) else {
        return;
    };
    let (Ok(storage), Ok(parameter)) = (
        kestrel_micheline::parse_expression(storage),
        kestrel_micheline::parse_expression(parameter),
    ) else {
        return;
    };
    let environment = Environment::default();
    let plain = execute(
        &script,
        "default",
        &parameter,
        &storage,
        &environment,
        &mut EmptyHost::default(),
        FUZZ_GAS_MILLI,
    );
    let call = Call {
        entrypoint: "default",
        parameter: &parameter,
        storage: &storage,
    };
    let mut watch = GasWatch {
        last_remaining: i64::MAX,
    };
    let traced = execute_traced(
        &script,
        &call,
        &environment,
        &mut EmptyHost::default(),
        FUZZ_GAS_MILLI,
        &mut watch,
    );
    if let Ok(execution) = &plain {
        assert!(execution.consumed_milligas <= FUZZ_GAS_MILLI);
    }
    assert_eq!(
        format!("{plain:?}"),
        format!("{traced:?}"),
        "traced and untraced runs differ"
    );
});
